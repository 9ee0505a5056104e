// The stream state machine: a turn's events folded into what the page
// shows (thinking, answer text, tool cards), as a pure function so that it
// can be tested without a browser. docs/events.md is the contract.

import { openSteps, planAfter, type PlanSteps } from './plan'
import type { Decision, DoneReason, HearthEvent } from './types'

/**
 * The states of a tool card:
 * pending (the model asked) → approval (waiting for the user) → running
 * (answered, or a tool that streams output) → done | failed.
 */
export type ToolState = 'pending' | 'approval' | 'running' | 'done' | 'failed'

/** A tool call as the page shows it. */
export interface ToolCard {
  kind: 'tool'
  id: string
  name: string
  args: unknown
  state: ToolState
  /** What the call will do, in a line, when it needs approval. */
  reason?: string
  /** The user's answer, once given. */
  decision?: Decision
  /** Output the tool streamed while it ran. */
  output: string
  /** The result (ok) or error (failed). */
  result?: string
  /** A diff to show in place of the result, when the tool made one. */
  display?: string
  /** A sub-agent's own tool calls, for a tool that runs one. */
  steps: { id: string; name: string; state: ToolState }[]
  /**
   * The checkpoint taken before the call ran (the files as they were then,
   * which undo and rewind can bring back), for a call that may change them.
   */
  checkpoint?: number
  /** Files over the checkpoint's size cap: not kept, not restorable. */
  tooLarge?: string[]
}

/** One part of an assistant's turn, in the order the stream made them. */
export type Block =
  | { kind: 'thinking'; text: string; live: boolean }
  | { kind: 'text'; text: string }
  | ToolCard
  | { kind: 'compressed'; text: string }
  /**
   * Hearth sent the model back to its plan (strict_plan): open steps were
   * left when it answered; text is what the model was told. Hearth's note,
   * not a prompt of the user's.
   */
  | { kind: 'reminder'; open?: number; text: string }

/** How a turn stands. */
export type TurnStatus = 'running' | DoneReason

/** A turn as the page shows it. */
export interface Turn {
  /** The user's message that started it. */
  message: string
  sessionId?: string
  model?: string
  blocks: Block[]
  status: TurnStatus
  error?: { code: string; message: string }
  usage: { input: number; output: number }
  /** The plan as this turn's events left it (null: cleared); undefined while the turn has not changed it. */
  plan?: PlanSteps
}

/** newTurn is a turn that has just been sent. */
export function newTurn(message: string, sessionId?: string): Turn {
  return { message, sessionId, blocks: [], status: 'running', usage: { input: 0, output: 0 } }
}

/** applyEvent returns t with ev applied; t itself is not changed. */
export function applyEvent(t: Turn, ev: HearthEvent): Turn {
  const next: Turn = { ...t }
  switch (ev.type) {
    case 'session':
      next.sessionId = ev.session_id
      next.model = ev.model
      return next
    case 'thinking_start':
      next.blocks = [...endThinking(t.blocks), { kind: 'thinking', text: '', live: true }]
      return next
    case 'thinking_delta': {
      const blocks = [...t.blocks]
      const last = blocks[blocks.length - 1]
      if (last?.kind === 'thinking' && last.live) {
        blocks[blocks.length - 1] = { ...last, text: last.text + ev.text }
      } else {
        blocks.push({ kind: 'thinking', text: ev.text, live: true })
      }
      next.blocks = blocks
      return next
    }
    case 'thinking_end':
      next.blocks = endThinking(t.blocks)
      return next
    case 'text_delta': {
      const blocks = endThinking(t.blocks).slice()
      const last = blocks[blocks.length - 1]
      if (last?.kind === 'text') {
        blocks[blocks.length - 1] = { ...last, text: last.text + ev.text }
      } else {
        blocks.push({ kind: 'text', text: ev.text })
      }
      next.blocks = blocks
      return next
    }
    case 'thinking_reclassified': {
      // The reply's text so far was reasoning (a lone </think> ended it):
      // it comes off the end of the answer shown and is shown as the
      // reasoning it was, live until thinking_end, as if thinking_start
      // and a thinking_delta had come in place of those text deltas.
      const blocks = endThinking(t.blocks).slice()
      const last = blocks[blocks.length - 1]
      if (last?.kind === 'text') {
        const kept = last.text.endsWith(ev.text) ? last.text.slice(0, last.text.length - ev.text.length) : ''
        if (kept.trim() === '') blocks.pop()
        else blocks[blocks.length - 1] = { ...last, text: kept }
      }
      blocks.push({ kind: 'thinking', text: ev.text, live: true })
      next.blocks = blocks
      return next
    }
    case 'tool_call': {
      const blocks = endThinking(t.blocks).slice()
      if (findTool(blocks, ev.id) < 0) {
        blocks.push({ kind: 'tool', id: ev.id, name: ev.name, args: ev.args, state: 'pending', output: '', steps: [] })
      }
      next.blocks = blocks
      return next
    }
    case 'approval_required': {
      let blocks = endThinking(t.blocks)
      // Only the call's own card: same name, not finished. A sub-agent's
      // call ids may repeat this turn's (even the running parent's).
      const i = findTool(blocks, ev.id, (c) => c.name === ev.name && (c.state === 'pending' || c.state === 'approval'))
      const c = i < 0 ? undefined : (blocks[i] as ToolCard)
      if (c) {
        blocks = blocks.slice()
        blocks[i] = { ...c, state: 'approval', reason: ev.reason, args: ev.args ?? c.args }
      } else {
        // No card waits for this id: a sub-agent's call, whose ids may repeat
        // the finished calls of this turn. It gets a card of its own.
        blocks = [...blocks, { kind: 'tool', id: ev.id, name: ev.name, args: ev.args, state: 'approval', reason: ev.reason, output: '', steps: [] }]
      }
      next.blocks = blocks
      return next
    }
    case 'tool_output': {
      let blocks = updateTool(t.blocks, ev.id, ev.name, (c) => {
        // Output means the call runs: a card still waiting for approval was
        // answered (by another page, or before this page rebuilt the turn).
        const state = c.state === 'pending' || c.state === 'approval' ? 'running' : c.state
        const card: ToolCard = { ...c, state, output: c.output + (ev.text ?? '') }
        if (ev.event) card.steps = step(c.steps, ev.event)
        return card
      })
      // A sub-agent's call that needed approval has a card of its own (its
      // approval_required came unnested); its result comes nested.
      const sub = ev.event
      if (sub?.type === 'tool_result' || sub?.type === 'tool_output') {
        const parent = findTool(blocks, ev.id)
        const i = findTool(blocks, sub.id, (c, j) => j !== parent && c.name === sub.name && c.state !== 'done' && c.state !== 'failed')
        if (i >= 0) {
          blocks = blocks.slice()
          const c = blocks[i] as ToolCard
          blocks[i] =
            sub.type === 'tool_result'
              ? { ...c, state: sub.ok ? 'done' : 'failed', result: sub.ok ? sub.output : sub.error || sub.output, display: sub.display }
              : { ...c, state: 'running', output: c.output + (sub.text ?? '') }
        }
      }
      next.blocks = blocks
      return next
    }
    case 'tool_result':
      next.blocks = updateTool(t.blocks, ev.id, ev.name, (c) => ({
        ...c,
        state: ev.ok ? 'done' : 'failed',
        result: ev.ok ? ev.output : ev.error || ev.output,
        display: ev.display,
      }))
      return next
    case 'checkpoint': {
      // Marks the call's card; a card that is not there (never shown) gets none.
      const i = findTool(t.blocks, ev.id, (c) => c.name === ev.name)
      if (i < 0) return next
      const blocks = t.blocks.slice()
      blocks[i] = { ...(blocks[i] as ToolCard), checkpoint: ev.checkpoint, tooLarge: ev.too_large?.length ? ev.too_large : undefined }
      next.blocks = blocks
      return next
    }
    case 'plan': {
      next.plan = planAfter(t.plan ?? null, ev)
      if (ev.reminder) {
        next.blocks = [...endThinking(t.blocks), { kind: 'reminder', open: openSteps(ev.steps ?? []), text: ev.reminder }]
      }
      return next
    }
    case 'usage':
      next.usage = { input: t.usage.input + ev.input_tokens, output: t.usage.output + ev.output_tokens }
      return next
    case 'compressed':
      next.blocks = [...t.blocks, { kind: 'compressed', text: ev.text }]
      return next
    case 'error':
      next.error = { code: ev.code, message: ev.hint ? `${ev.message} ${ev.hint}` : ev.message }
      return next
    case 'done': {
      next.status = ev.reason
      // The stream is over: nothing still thinks, nothing still runs.
      next.blocks = endThinking(t.blocks).map((b) =>
        b.kind === 'tool' && b.state !== 'done' && b.state !== 'failed'
          ? { ...b, state: 'failed' as const, result: b.result ?? (ev.reason === 'cancelled' ? 'cancelled' : 'did not finish') }
          : b,
      )
      // An answer the stream did not deliver as deltas (a server that
      // does not stream) arrives whole in done.text.
      if (ev.text && !next.blocks.some((b) => b.kind === 'text')) {
        next.blocks = [...next.blocks, { kind: 'text', text: ev.text }]
      }
      return next
    }
    default:
      return next // a type added to the contract later: ignored
  }
}

/** decide records the user's answer to an approval: the card runs. */
export function decide(t: Turn, id: string, decision: Decision): Turn {
  return {
    ...t,
    blocks: updateTool(t.blocks, id, undefined, (c) =>
      c.state === 'approval' ? { ...c, decision, state: decision === 'deny' ? 'failed' : 'running', result: decision === 'deny' ? 'denied' : c.result } : c,
    ),
  }
}

/** undecide puts a card back to waiting when sending the answer failed. */
export function undecide(t: Turn, id: string): Turn {
  const i = findTool(t.blocks, id, (c) => c.decision !== undefined)
  if (i < 0) return t
  const c = t.blocks[i] as ToolCard
  // Only while nothing came from the stream since the answer: a card that
  // ran, or ended, is left as the stream says.
  const optimistic =
    c.output === '' && (c.decision === 'deny' ? c.state === 'failed' && c.result === 'denied' : c.state === 'running' && c.result === undefined)
  if (!optimistic) return t
  const blocks = t.blocks.slice()
  blocks[i] = { ...c, decision: undefined, state: 'approval', result: undefined }
  return { ...t, blocks }
}

/** pendingApprovals lists the cards waiting for the user. */
export function pendingApprovals(t: Turn): ToolCard[] {
  return t.blocks.filter((b): b is ToolCard => b.kind === 'tool' && b.state === 'approval')
}

/** answerText is the turn's answer: its text blocks joined. */
export function answerText(t: { blocks: Block[] }): string {
  return t.blocks
    .filter((b) => b.kind === 'text')
    .map((b) => (b as { text: string }).text)
    .join('\n\n')
}

function endThinking(blocks: Block[]): Block[] {
  const i = blocks.findIndex((b) => b.kind === 'thinking' && b.live)
  if (i < 0) return blocks
  return blocks.map((b) => (b.kind === 'thinking' && b.live ? { ...b, live: false } : b))
}

function findTool(blocks: Block[], id: string, ok: (c: ToolCard, i: number) => boolean = () => true): number {
  // The latest card with the id: servers may reuse ids across model calls.
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]
    if (b.kind === 'tool' && b.id === id && ok(b, i)) return i
  }
  return -1
}

function updateTool(blocks: Block[], id: string, name: string | undefined, f: (c: ToolCard) => ToolCard): Block[] {
  const out = blocks.slice()
  let i = findTool(out, id)
  if (i < 0) {
    // An event for a call whose tool_call was never seen (a sub-agent's
    // approval): it gets its own card.
    out.push({ kind: 'tool', id, name: name ?? 'tool', args: {}, state: 'pending', output: '', steps: [] })
    i = out.length - 1
  }
  out[i] = f(out[i] as ToolCard)
  return out
}

function step(steps: ToolCard['steps'], ev: HearthEvent): ToolCard['steps'] {
  if (ev.type === 'tool_call') return [...steps, { id: ev.id, name: ev.name, state: 'running' }]
  if (ev.type === 'tool_result') {
    return steps.map((s) => (s.id === ev.id && s.state === 'running' ? { ...s, state: ev.ok ? 'done' : 'failed' } : s))
  }
  return steps
}

/**
 * takeFrame splits the queue of events received but not yet shown into
 * what to apply in this animation frame and what to leave for the next.
 * Text and reasoning deltas are taken in bulk; an event that changes a
 * tool card's state ends the frame, so that every state of a card is on
 * screen for at least one frame even when a tool finishes at once:
 * tool_call (pending), approval_required, a call's first tool_output
 * (running; streaming names the calls whose output has begun), and
 * tool_result; and a plan event, so that every state of the plan is
 * painted. A frame also ends before thinking_end, so that reasoning is seen
 * live before it folds.
 */
export function takeFrame<T extends { ev: HearthEvent }>(queue: T[], streaming: ReadonlySet<string> = new Set()): [T[], T[]] {
  for (let i = 0; i < queue.length; i++) {
    const ev = queue[i].ev
    switch (ev.type) {
      case 'tool_output':
        if (streaming.has(ev.id)) continue
        break
      case 'thinking_end':
        // Reasoning received so far is painted live before it folds.
        if (i > 0) return [queue.slice(0, i), queue.slice(i)]
        continue
      case 'tool_call':
      case 'approval_required':
      case 'tool_result':
      case 'plan':
        break
      default:
        continue
    }
    return [queue.slice(0, i + 1), queue.slice(i + 1)]
  }
  return [queue, []]
}
