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
  /** The files were snapshotted before the call id runs: undo and rewind can bring them back to this state. */
  | {
      type: 'checkpoint'
      id: string
      name: string
      checkpoint: number
      seq: number
      files: number
      stored: number
      too_large?: string[]
    }
  /** Files (and perhaps the conversation) were brought back; it comes from a restore, not a turn. */
  | ({ type: 'restore' } & RestoreInfo)
  /**
   * The model's whole plan, each time it changes (after its update_plan
   * call id, before the call's result). With reminder (and no id): the
   * model answered with steps open and Hearth sent it back (strict_plan).
   */
  | { type: 'plan'; id?: string; steps: PlanStep[]; reminder?: string }
  | { type: 'error'; code: string; message: string; retryable?: boolean; hint?: string }
  | { type: 'done'; reason: DoneReason; text: string }

/** The state of a step of the plan: at most one is in_progress; a skipped one has a reason. */
export type PlanStatus = 'pending' | 'in_progress' | 'done' | 'skipped'

/** One step of the model's plan (the update_plan tool; docs/events.md, The plan). */
export interface PlanStep {
  step: string
  status: PlanStatus
  reason?: string
}

/** The checklist the model keeps of a task with several steps. */
export interface Plan {
  steps: PlanStep[]
}

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
  /** Hidden from the list unless archived ones are asked for; nothing in it is deleted. */
  archived?: boolean
  /** The session this one was forked from, and the last message it took. */
  fork_of?: string
  fork_seq?: number
  /** What its own model calls cost, in micro-units: null when none was priced (absent from an older server). */
  cost?: number | null
  /** Its calls without a price. */
  unpriced?: number
}

/** A workspace the store knows (GET /v1/workspaces). */
export interface Workspace {
  /** Absolute, symlinks resolved; "" is the unknown workspace. */
  path: string
  name: string
  trust: TrustLevel
  /**
   * Whether the user chose the trust (false: untrusted by default, and a UI
   * should ask once; absent from an older server).
   */
  trust_chosen?: boolean
  /**
   * The workspace is trusted, but its .hearth/config.toml appeared or
   * changed since: it is read as untrusted until the user trusts it again.
   */
  config_changed?: boolean
  created_at: string
  last_used: string
  sessions: number
}

/** How far Hearth trusts a workspace's folder (see trustLevels in workspaces.ts). */
export type TrustLevel = 'untrusted' | 'read-only' | 'trusted'

/** GET /v1/workspaces. */
export interface WorkspaceList {
  workspaces: Workspace[]
  /** The server's own workspace: where sessions that name none go (absent from an older server). */
  default?: string
  /** Whether sessions may be made in the other workspaces (absent from an older server: no). */
  multiple?: boolean
  /** The trust in force in the server's own workspace when it is not the store's (hearth serve --trust). */
  default_trust?: { trust: TrustLevel; source: string }
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
  /**
   * A user message Hearth wrote, not the user: the reminder strict_plan
   * sent when the model answered with steps of its plan open.
   */
  reminder?: boolean
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
  /** The plan the model keeps now (null: none; absent from an older server). */
  plan?: Plan | null
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

/** Model calls summed: tokens and cost (cost in micro-units, null when none was priced). */
export interface UsageFigures {
  calls?: number
  input_tokens: number
  output_tokens: number
  cached_input_tokens?: number
  cost?: number | null
  unpriced?: number
}

/** One day of GET /v1/usage. */
export interface DayUsage extends UsageFigures {
  day: string
}

/** GET /v1/usage. */
export interface Usage {
  since: string
  days: DayUsage[]
  total: UsageFigures
  sessions: {
    id: string
    title: string
    model?: string
    workspace?: string
    updated_at: string
    input_tokens: number
    output_tokens: number
    cost?: number | null
    unpriced?: number
  }[]
  /** With by=: the grouping and its groups. */
  by?: 'day' | 'model' | 'session' | 'workspace'
  groups?: (UsageFigures & { key: string })[]
}

/** An approval answer. */
export type Decision = 'allow' | 'deny' | 'always'

/** What a restore changes in a path: create (it comes back), delete (it goes), modify, chmod, retype. */
export type FileAction = 'create' | 'delete' | 'modify' | 'chmod' | 'retype'

/** The restore event's fields (docs/events.md): what an undo, a redo or a rewind did. */
export interface RestoreInfo {
  op: 'undo' | 'redo' | 'rewind'
  /** The restore's own checkpoint: the files just before it (absent in a preview). */
  checkpoint?: number
  /** The turn undone or redone: the seq of its user message. */
  turn?: number
  /** The message rewound to. */
  through?: number
  files: { path: string; action: FileAction }[]
  /** Conflicting paths left as the user had them. */
  kept?: string[]
  failed?: { path: string; reason: string }[]
  /** How the conversation was cut (absent: it was not). */
  conversation?: { through: number; removed: number; archived?: string }
}

/** The answer of POST …/undo, …/redo and …/rewind. */
export interface RestoreResult extends RestoreInfo {
  type: 'restore'
  /** Files changed after the agent changed them, which the restore would overwrite. */
  conflicts: string[]
  /** A preview: nothing was changed. */
  dry_run: boolean
}

/** The options of an undo or a redo. */
export interface RestoreOptions {
  overwrite?: boolean
  keep?: string[]
  dry_run?: boolean
}

/** The body of POST …/rewind: through (a message's seq) or checkpoint. */
export interface RewindRequest extends RestoreOptions {
  through?: number
  /** To the start of the session: no message left, the files as before it changed any. */
  start?: boolean
  checkpoint?: number
  files_only?: boolean
  conversation_only?: boolean
}

/** The body of POST …/fork. */
export interface ForkRequest {
  through?: number
  files?: boolean
  title?: string
  overwrite?: boolean
  keep?: string[]
}

/** A fork made: the new session, and what bringing the files back did. */
export interface ForkResult extends Session {
  files?: RestoreResult
}

/** A recorded state of the session's files (GET /v1/sessions/{id}/checkpoints). */
export interface Checkpoint {
  id: number
  session_id: string
  /** before a tool call, after a turn, or the user's files just before a restore. */
  kind: 'before' | 'after' | 'undo' | 'redo' | 'rewind'
  turn?: number
  seq: number
  call_id?: string
  tool?: string
  /** The checkpoint store's own record: what a restore restored, how many files a snapshot kept. */
  detail?: {
    paths?: string[]
    kept?: string[]
    failed?: { path: string; reason: string }[]
    turn?: number
    through?: number
    to?: number
    files?: number
    too_large?: string[]
  }
  created_at: string
}
