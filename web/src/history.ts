// A stored session turned into what the page shows: the same blocks a live
// turn makes (turn.ts), so that a reloaded session looks as it did.

import type { Block, ToolCard } from './turn'
import type { SessionDetail, StoredMessage, ToolRun } from './types'

/** An entry of the conversation as the page shows it. */
export type Entry =
  | { kind: 'user'; key: string; text: string }
  | {
      kind: 'assistant'
      key: string
      blocks: Block[]
      partial: boolean
      /** Why the turn failed, from its stored record: shown as a live turn's error. */
      error?: TurnError
    }
  | { kind: 'summary'; key: string; text: string }

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
  let current: Extract<Entry, { kind: 'assistant' }> | undefined
  const assistant = (m: StoredMessage) => {
    if (!current) {
      current = { kind: 'assistant', key: `a${m.seq}`, blocks: [], partial: false }
      out.push(current)
    }
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
    switch (m.role) {
      case 'user':
        current = undefined
        out.push({ kind: 'user', key: `u${m.seq}`, text: m.content ?? '' })
        break
      case 'assistant': {
        const a = assistant(m)
        if (m.thinking) a.blocks.push({ kind: 'thinking', text: m.thinking, live: false })
        if (m.content) a.blocks.push({ kind: 'text', text: m.content })
        for (const c of m.tool_calls ?? []) {
          a.blocks.push({ kind: 'tool', id: c.id, name: c.name, args: c.args, state: 'pending', output: '', steps: [] })
        }
        if (m.partial) a.partial = true
        break
      }
      case 'tool': {
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
      out.splice(i + 1, 0, { kind: 'assistant', key: `${e.key}-none`, blocks: [], partial: true })
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

/** lastUserSeq is the seq of the session's last user message, or undefined. */
export function lastUserSeq(s: Pick<SessionDetail, 'messages'>): number | undefined {
  for (let i = s.messages.length - 1; i >= 0; i--) {
    if (s.messages[i].role === 'user') return s.messages[i].seq
  }
  return undefined
}
