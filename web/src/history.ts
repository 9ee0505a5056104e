// A stored session turned into what the page shows: the same blocks a live
// turn makes (turn.ts), so that a reloaded session looks as it did.

import { openInReminder, openSteps, planTool, PlanTracker } from './plan'
import type { Block, ToolCard } from './turn'
import type { Checkpoint, FileAction, RestoreInfo, SessionDetail, StoredMessage, ToolRun } from './types'

/** An entry of the conversation as the page shows it. */
export type Entry =
  | { kind: 'user'; key: string; text: string; /** The message's seq. */ seq?: number }
  | {
      kind: 'assistant'
      key: string
      blocks: Block[]
      partial: boolean
      /** Why the turn failed, from its stored record: shown as a live turn's error. */
      error?: TurnError
      /** The seq of the last stored message the entry shows (a rewind "to here" keeps it). */
      last?: number
    }
  | { kind: 'summary'; key: string; text: string }
  | { kind: 'restore'; key: string; restore: RestoreView }

/**
 * A restore as the page shows it: the restore event's fields, where a
 * restore read back from its checkpoint record does not know what it did
 * to each path.
 */
export type RestoreView = Omit<RestoreInfo, 'files'> & { files: { path: string; action?: FileAction }[] }

/** A turn's error as the page shows it (Turn.error). */
export type TurnError = { code: string; message: string }

// The words session.FailureMessage starts a failure record with, and the
// error code of the live turn's error event each stands for (the record
// does not keep the code itself: any provider_ code, and any other, are
// titled alike).
const failurePrefixes: [string, string][] = [
  ['Provider request failed: ', 'provider_error'],
  ['The turn failed: ', 'agent_error'],
]

/**
 * failureError is the error a failure record stands for: the message the
 * live turn's error event carried (the record's text without the words
 * the page's own title says), with a code titled as that event's was.
 */
export function failureError(content: string): TurnError {
  for (const [prefix, code] of failurePrefixes) {
    if (content.startsWith(prefix)) return { code, message: content.slice(prefix.length) }
  }
  return { code: 'agent_error', message: content }
}

/**
 * entries turns a session's stored messages into entries. upTo, when set,
 * keeps only messages before that seq (a running turn's own messages are
 * rebuilt from its events instead).
 */
export function entries(s: Pick<SessionDetail, 'messages' | 'tool_runs'>, upTo?: number): Entry[] {
  const runs = new Map<string, ToolRun[]>()
  for (const r of s.tool_runs ?? []) {
    const list = runs.get(r.call_id) ?? []
    list.push(r)
    runs.set(r.call_id, list)
  }
  const out: Entry[] = []
  // The plan as the messages so far leave it: a reminder says how many of
  // its steps were open.
  const plan = new PlanTracker()
  let current: Extract<Entry, { kind: 'assistant' }> | undefined
  const assistant = (m: StoredMessage) => {
    if (!current) {
      current = { kind: 'assistant', key: `a${m.seq}`, blocks: [], partial: false }
      out.push(current)
    }
    current.last = m.seq
    return current
  }
  for (const m of s.messages ?? []) {
    // Not break: a summary the running turn made has a higher seq than its
    // place in the list, before messages that are to be shown.
    if (upTo !== undefined && m.seq >= upTo) continue
    if (m.role === 'system') continue
    if (m.summary) {
      current = undefined
      out.push({ kind: 'summary', key: `s${m.seq}`, text: m.content ?? '' })
      continue
    }
    if (m.failure) {
      // Why the turn failed: the turn's error, as it was shown live, not
      // an answer. It ends the turn's entry: what follows (a retry of the
      // same message, `hearth run --context ID`) is shown apart.
      assistant(m).error = failureError(m.content ?? '')
      current = undefined
      continue
    }
    if (m.role === 'user' && m.reminder) {
      // Hearth's words (strict_plan sent the model back to its plan), not
      // the user's: a note inside the turn, as the live turn shows it, with
      // none of a prompt's actions.
      const text = m.content ?? ''
      assistant(m).blocks.push({ kind: 'reminder', open: plan.plan ? openSteps(plan.plan) : openInReminder(text), text })
      continue
    }
    switch (m.role) {
      case 'user':
        current = undefined
        out.push({ kind: 'user', key: `u${m.seq}`, text: m.content ?? '', seq: m.seq })
        break
      case 'assistant': {
        const a = assistant(m)
        if (m.thinking) a.blocks.push({ kind: 'thinking', text: m.thinking, live: false })
        if (m.content) a.blocks.push({ kind: 'text', text: m.content })
        for (const c of m.tool_calls ?? []) {
          if (c.name === planTool) plan.call(c.id, c.args)
          a.blocks.push({ kind: 'tool', id: c.id, name: c.name, args: c.args, state: 'pending', output: '', steps: [] })
        }
        if (m.partial) a.partial = true
        break
      }
      case 'tool': {
        if (m.tool_name === planTool) plan.result(m.tool_call_id ?? '', m.content ?? '')
        const a = assistant(m)
        const card = lastCard(a.blocks, m.tool_call_id ?? '')
        const run = runs.get(m.tool_call_id ?? '')?.shift()
        const ok = run ? run.ok : !/^(error|denied|cancelled|not run)\b/i.test(m.content ?? '')
        if (card) {
          card.state = ok ? 'done' : 'failed'
          card.result = run ? (run.ok ? run.output : run.error || run.output) : m.content
        }
        break
      }
    }
  }
  // A message the model never answered (the turn failed or was stopped
  // before any reply was saved): say so, rather than show nothing.
  for (let i = out.length - 1; i >= 0; i--) {
    const e = out[i]
    const next = out[i + 1]
    if (e.kind === 'user' && (!next || next.kind === 'user')) {
      out.splice(i + 1, 0, { kind: 'assistant', key: `${e.key}-none`, blocks: [], partial: true, last: e.seq })
    }
  }
  // A call with no result: the turn was cut short before it ran.
  for (const e of out) {
    if (e.kind !== 'assistant') continue
    for (const b of e.blocks) {
      if (b.kind === 'tool' && b.state === 'pending') {
        b.state = 'failed'
        b.result = 'did not run: the turn ended first'
      }
    }
  }
  return out
}

function lastCard(blocks: Block[], id: string): ToolCard | undefined {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]
    if (b.kind === 'tool' && b.id === id && b.state === 'pending') return b
  }
  return undefined
}

/**
 * lastUserSeq is the seq of the session's last user message, or undefined:
 * the user's, not a reminder Hearth sent within a turn.
 */
export function lastUserSeq(s: Pick<SessionDetail, 'messages'>): number | undefined {
  for (let i = s.messages.length - 1; i >= 0; i--) {
    if (s.messages[i].role === 'user' && !s.messages[i].reminder) return s.messages[i].seq
  }
  return undefined
}

/** entrySeq is the seq of the last stored message an entry shows, if it shows one. */
export function entrySeq(e: Entry): number | undefined {
  return e.kind === 'user' ? e.seq : e.kind === 'assistant' ? e.last : undefined
}

/**
 * restoreOfRecord is the restore a checkpoint record of kind undo, redo or
 * rewind stands for (its detail says which paths it restored, not how).
 */
export function restoreOfRecord(c: Checkpoint): RestoreView {
  const d = c.detail ?? {}
  return {
    op: c.kind as RestoreInfo['op'],
    checkpoint: c.id,
    turn: d.turn || undefined,
    through: d.through || undefined,
    files: (d.paths ?? []).map((path) => ({ path })),
    kept: d.kept,
    failed: d.failed,
  }
}

/**
 * withCheckpoints adds a session's checkpoints to its entries: each tool
 * card gets the checkpoint taken before its call, and each restore (from
 * its record, or from live, this page's own restores, which say more)
 * becomes an entry after the message it happened at. A live restore that
 * left no record (a rewind of the conversation alone, or of files already
 * as they were) goes at the end.
 * The entries given are not changed.
 */
export function withCheckpoints(es: Entry[], cps: Checkpoint[], live: RestoreInfo[] = []): Entry[] {
  const before = new Map<string, Checkpoint[]>()
  for (const c of cps) {
    if (c.kind !== 'before' || !c.call_id) continue
    const list = before.get(c.call_id) ?? []
    list.push(c)
    before.set(c.call_id, list)
  }
  const out: Entry[] = es.map((e) => {
    if (e.kind !== 'assistant' || !e.blocks.some((b) => b.kind === 'tool' && before.has(b.id))) return e
    const blocks = e.blocks.map((b) => {
      if (b.kind !== 'tool') return b
      const c = before.get(b.id)?.shift()
      if (!c) return b
      const tooLarge = c.detail?.too_large
      return { ...b, checkpoint: c.id, tooLarge: tooLarge?.length ? tooLarge : undefined }
    })
    return { ...e, blocks }
  })
  const byCheckpoint = new Map(live.filter((r) => r.checkpoint).map((r) => [r.checkpoint, r]))
  for (const c of cps) {
    if (c.kind !== 'undo' && c.kind !== 'redo' && c.kind !== 'rewind') continue
    const restore: RestoreView = byCheckpoint.get(c.id) ?? restoreOfRecord(c)
    byCheckpoint.delete(c.id)
    // After the last entry at or before the message it was recorded at.
    let at = -1
    for (let i = 0; i < out.length; i++) {
      const seq = entrySeq(out[i])
      if (seq !== undefined && seq <= c.seq) at = i
      else if (out[i].kind === 'restore' && at === i - 1) at = i // after restores there already
    }
    out.splice(at + 1, 0, { kind: 'restore', key: `r${c.id}`, restore })
  }
  // A live restore whose record is gone went with the part of the
  // conversation a later rewind removed.
  live.forEach((r, i) => {
    if (!r.checkpoint) out.push({ kind: 'restore', key: `live${i}`, restore: r })
  })
  return out
}

/** The seqs of one turn: its user message's, and the last message's it holds. */
export interface TurnSeqs {
  user: number
  last: number
}

/**
 * turnSeqs finds, in a session read back from the server, the seqs of the
 * turns the page ran live (by their messages, in order): the last turns
 * of the session whose prompts are those messages. A turn not found (its
 * message was never saved) gets undefined.
 */
export function turnSeqs(s: Pick<SessionDetail, 'messages'>, messages: string[]): (TurnSeqs | undefined)[] {
  const groups: (TurnSeqs & { text: string })[] = []
  for (const m of s.messages ?? []) {
    if (m.role === 'system' || m.summary) continue
    // A reminder is part of the turn it was sent in.
    if (m.role === 'user' && !m.reminder) groups.push({ user: m.seq, last: m.seq, text: m.content ?? '' })
    else if (groups.length > 0) groups[groups.length - 1].last = m.seq
  }
  const out: (TurnSeqs | undefined)[] = messages.map(() => undefined)
  let j = groups.length - 1
  for (let i = messages.length - 1; i >= 0 && j >= 0; i--) {
    if (groups[j].text !== messages[i]) continue
    out[i] = { user: groups[j].user, last: groups[j].last }
    j--
  }
  return out
}
