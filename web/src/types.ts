// The shapes of Hearth's HTTP API (server/openapi.json) and of its event
// stream (docs/events.md), as the page uses them.

/** One event of a turn's stream: the contract of docs/events.md. */
export type HearthEvent =
  | { type: 'session'; session_id: string; provider: string; model: string }
  | { type: 'thinking_start' }
  | { type: 'thinking_delta'; text: string }
  | { type: 'thinking_end' }
  | { type: 'text_delta'; text: string }
  /** The reply's text so far (the text_delta events just before) was reasoning. */
  | { type: 'thinking_reclassified'; text: string }
  | { type: 'tool_call'; id: string; name: string; args: unknown }
  | { type: 'approval_required'; id: string; name: string; args: unknown; reason: string }
  | { type: 'tool_output'; id: string; name: string; text: string; event?: HearthEvent }
  | {
      type: 'tool_result'
      id: string
      name: string
      ok: boolean
      output?: string
      error?: string
      display?: string
    }
  | { type: 'usage'; input_tokens: number; output_tokens: number }
  | { type: 'compressed'; text: string }
  | { type: 'error'; code: string; message: string; retryable?: boolean; hint?: string }
  | { type: 'done'; reason: DoneReason; text: string }

/** Why a turn ended. */
export type DoneReason = 'stop' | 'max_turns' | 'cancelled' | 'error'

/** A session as GET /v1/sessions lists it. */
export interface Session {
  id: string
  title: string
  provider?: string
  model?: string
  workspace?: string
  created_at: string
  updated_at: string
  message_count: number
  input_tokens: number
  output_tokens: number
  running_turn?: string
}

/** A tool call inside a stored assistant message. */
export interface StoredToolCall {
  id: string
  name: string
  args: unknown
}

/** A stored message of a session. */
export interface StoredMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content?: string
  thinking?: string
  tool_calls?: StoredToolCall[]
  tool_call_id?: string
  tool_name?: string
  seq: number
  partial?: boolean
  compacted?: boolean
  summary?: boolean
  /**
   * The record of why a turn failed ("Provider request failed: …"):
   * Hearth's words, not the model's, never sent to a model.
   */
  failure?: boolean
  created_at: string
}

/** The durable record of one tool call. */
export interface ToolRun {
  call_id: string
  name: string
  ok: boolean
  output?: string
  error?: string
}

/** GET /v1/sessions/{id}. */
export interface SessionDetail extends Session {
  messages: StoredMessage[]
  tool_runs: ToolRun[]
}

/** A model GET /v1/models lists. */
export interface ModelInfo {
  name: string
  capabilities?: string[]
  context_length?: number
  parameter_size?: string
}

/** An error body of the API, or of a provider inside health. */
export interface APIErrorBody {
  code: string
  message: string
  hint?: string
}

/** GET /v1/health. */
export interface Health {
  status: 'ok' | 'degraded'
  version?: string
  provider: {
    kind: string
    base_url?: string
    reachable: boolean
    version?: string
    latency_ms: number
    error?: APIErrorBody
  }
  model?: { name: string; available: boolean; context_length?: number; error?: APIErrorBody }
  tools: string[]
  approval_mode: string
  mcp?: { name: string; state: string; error?: string; tools?: string[] }[]
}

/** One day of GET /v1/usage. */
export interface DayUsage {
  day: string
  input_tokens: number
  output_tokens: number
}

/** GET /v1/usage. */
export interface Usage {
  since: string
  days: DayUsage[]
  total: { input_tokens: number; output_tokens: number }
  sessions: {
    id: string
    title: string
    model?: string
    updated_at: string
    input_tokens: number
    output_tokens: number
  }[]
}

/** An approval answer. */
export type Decision = 'allow' | 'deny' | 'always'
