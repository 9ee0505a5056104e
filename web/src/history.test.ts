// @vitest-environment node
import { describe, expect, it } from 'vitest'
import { entries, entrySeq, failureError, lastUserSeq, restoreOfRecord, turnSeqs, withCheckpoints, type Entry } from './history'
import { applyEvent, decide, newTurn, type Block, type ToolCard } from './turn'
import type { Checkpoint, HearthEvent, RestoreInfo, StoredMessage, ToolRun } from './types'

let seq = 0
const at = '2025-01-01T00:00:00Z'
const msg = (m: Partial<StoredMessage> & Pick<StoredMessage, 'role'>): StoredMessage => ({ seq: ++seq, created_at: at, ...m })
const user = (content: string) => msg({ role: 'user', content })
const asst = (m: Partial<StoredMessage> = {}) => msg({ role: 'assistant', ...m })
const toolMsg = (id: string, content: string, name = 'read_file') => msg({ role: 'tool', tool_call_id: id, tool_name: name, content })
const tc = (id: string, name = 'read_file', args: unknown = { file_path: 'a.txt' }) => ({ id, name, args })
const run = (call_id: string, ok: boolean, out: string): ToolRun => ({ call_id, name: 'read_file', ok, ...(ok ? { output: out } : { error: out }) })

/** What the page draws of a block, without what only a live stream has. */
function shape(b: Block) {
  if (b.kind !== 'tool') return b
  return { kind: 'tool', id: b.id, name: b.name, args: b.args, state: b.state, result: b.result }
}
const assistantBlocks = (es: Entry[]) => es.filter((e) => e.kind === 'assistant').map((e) => (e as { blocks: Block[] }).blocks.map(shape))

describe('entries', () => {
  it('rebuilds the blocks a live turn made (the example of docs/events.md)', () => {
    seq = 0
    const live: HearthEvent[] = [
      { type: 'session', session_id: 's', provider: 'ollama', model: 'm' },
      { type: 'thinking_start' },
      { type: 'thinking_delta', text: 'I should read the file.' },
      { type: 'thinking_end' },
      { type: 'text_delta', text: 'Let me look.' },
      { type: 'tool_call', id: 'c1', name: 'read_file', args: { file_path: 'a.txt' } },
      { type: 'tool_call', id: 'c2', name: 'read_file', args: { file_path: 'b.txt' } },
      { type: 'tool_result', id: 'c1', name: 'read_file', ok: true, output: 'hello\n' },
      { type: 'tool_result', id: 'c2', name: 'read_file', ok: false, error: 'no such file' },
      { type: 'thinking_start' },
      { type: 'thinking_delta', text: 'one is missing' },
      { type: 'thinking_end' },
      { type: 'text_delta', text: 'It says hello.' },
      { type: 'done', reason: 'stop', text: 'It says hello.' },
    ]
    const t = live.reduce(applyEvent, newTurn('what is in a.txt?'))
    const stored = {
      messages: [
        user('what is in a.txt?'),
        asst({ thinking: 'I should read the file.', content: 'Let me look.', tool_calls: [tc('c1'), tc('c2', 'read_file', { file_path: 'b.txt' })] }),
        toolMsg('c1', 'hello\n'),
        toolMsg('c2', 'Error: no such file'),
        asst({ thinking: 'one is missing', content: 'It says hello.' }),
      ],
      tool_runs: [run('c1', true, 'hello\n'), run('c2', false, 'no such file')],
    }
    const es = entries(stored)
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant'])
    expect(es[0]).toMatchObject({ kind: 'user', text: 'what is in a.txt?' })
    expect(assistantBlocks(es)).toEqual([t.blocks.map(shape)])
    expect(es[1]).toMatchObject({ partial: false })
  })

  // A turn that fails leaves a record of why (session.FailureMessage:
  // "Provider request failed: " and the error event's message). Rebuilt,
  // the turn shows what it showed live: the same blocks, and the error
  // under them, not the record as an answer.
  const failed: [string, HearthEvent[], () => StoredMessage[], ToolRun[]][] = [
    [
      'before the model answered (the server is unreachable)',
      [
        { type: 'session', session_id: 's', provider: 'ollama', model: 'm' },
        { type: 'error', code: 'provider_unreachable', message: 'ollama chat: cannot reach http://127.0.0.1:11434; is Ollama running?', retryable: true },
        { type: 'done', reason: 'error', text: '' },
      ],
      () => [user('q'), asst({ content: 'Provider request failed: ollama chat: cannot reach http://127.0.0.1:11434; is Ollama running?', failure: true })],
      [],
    ],
    [
      'mid-answer, after a tool call',
      [
        { type: 'thinking_start' },
        { type: 'thinking_delta', text: 'read it' },
        { type: 'thinking_end' },
        { type: 'text_delta', text: 'Let me look.' },
        { type: 'tool_call', id: 'c1', name: 'read_file', args: { file_path: 'a.txt' } },
        { type: 'tool_result', id: 'c1', name: 'read_file', ok: true, output: 'hello\n' },
        { type: 'text_delta', text: 'It says hel' },
        { type: 'error', code: 'provider_server', message: 'ollama chat: model runner crashed', retryable: true },
        { type: 'done', reason: 'error', text: '' },
      ],
      () => [
        user('q'),
        asst({ thinking: 'read it', content: 'Let me look.', tool_calls: [tc('c1')] }),
        toolMsg('c1', 'hello\n'),
        asst({ content: 'It says hel', partial: true }),
        asst({ content: 'Provider request failed: ollama chat: model runner crashed', failure: true }),
      ],
      [run('c1', true, 'hello\n')],
    ],
    [
      'for a reason of the agent’s own',
      [
        { type: 'text_delta', text: 'Again.' },
        { type: 'error', code: 'agent_error', message: 'something broke' },
        { type: 'done', reason: 'error', text: '' },
      ],
      () => [user('q'), asst({ content: 'Again.', partial: true }), asst({ content: 'The turn failed: something broke', failure: true })],
      [],
    ],
  ]
  it.each(failed)('a turn that failed %s shows its blocks and its error as it did live', (_, live, stored, runs) => {
    seq = 0
    const t = live.reduce(applyEvent, newTurn('q'))
    const es = entries({ messages: stored(), tool_runs: runs })
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant'])
    expect(assistantBlocks(es)).toEqual([t.blocks.map(shape)])
    const a = es[1] as Extract<Entry, { kind: 'assistant' }>
    expect(t.status).toBe('error')
    expect(a.error?.message).toBe(t.error?.message)
    // titled alike: "The model server failed." for any provider_ code
    expect(a.error?.code.startsWith('provider_')).toBe(t.error?.code.startsWith('provider_'))
    expect(JSON.stringify(a.blocks)).not.toMatch(/Provider request failed|The turn failed/)
  })

  it('a failure record is never an answer; a retry that answered is a turn of its own', () => {
    seq = 0
    const es = entries({
      messages: [
        user('q'),
        asst({ content: 'Provider request failed: ollama chat: cannot reach', failure: true }),
        // `hearth run --context ID` runs the unanswered message again: it fails once more, then answers
        asst({ content: 'Provider request failed: ollama chat: model runner crashed', failure: true }),
        asst({ content: 'The answer.' }),
      ],
      tool_runs: [],
    })
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant', 'assistant', 'assistant'])
    expect(es.slice(1).map((e) => (e as Extract<Entry, { kind: 'assistant' }>).error)).toEqual([
      { code: 'provider_error', message: 'ollama chat: cannot reach' },
      { code: 'provider_error', message: 'ollama chat: model runner crashed' },
      undefined,
    ])
    expect(assistantBlocks(es)).toEqual([[], [], [{ kind: 'text', text: 'The answer.' }]])
    expect(new Set(es.map((e) => e.key)).size).toBe(es.length)
  })

  it('failureError reads the record: the message, and a code titled as the live error was', () => {
    expect(failureError('Provider request failed: ollama chat: boom')).toEqual({ code: 'provider_error', message: 'ollama chat: boom' })
    expect(failureError('The turn failed: boom')).toEqual({ code: 'agent_error', message: 'boom' })
    expect(failureError('something else')).toEqual({ code: 'agent_error', message: 'something else' })
  })

  it('a denied call is failed in the history as it was live', () => {
    seq = 0
    const evs: HearthEvent[] = [
      { type: 'tool_call', id: 'w', name: 'write_file', args: { file_path: 'x' } },
      { type: 'approval_required', id: 'w', name: 'write_file', args: { file_path: 'x' }, reason: 'write x' },
    ]
    let t = evs.reduce(applyEvent, newTurn('q'))
    t = decide(t, 'w', 'deny')
    t = applyEvent(t, { type: 'tool_result', id: 'w', name: 'write_file', ok: false, error: 'the user denied this call' })
    // a denied call runs no tool: it has a tool message and no tool run
    const es = entries({ messages: [user('q'), asst({ tool_calls: [tc('w', 'write_file', { file_path: 'x' })] }), toolMsg('w', 'Error: the user denied this call', 'write_file')], tool_runs: [] })
    const card = (es[1] as { blocks: Block[] }).blocks[0]
    expect(card).toMatchObject({ kind: 'tool', id: 'w', state: 'failed' })
    expect((t.blocks[0] as { state: string }).state).toBe('failed')
  })

  const okCases: [string, string, ToolRun[], string, string | undefined][] = [
    ['a run that succeeded', 'whatever', [run('c', true, 'out')], 'done', 'out'],
    ['a run that failed', 'Error: boom', [run('c', false, 'boom')], 'failed', 'boom'],
    ['no run, plain content', 'hello', [], 'done', 'hello'],
    ['no run, an error', 'Error: no such tool', [], 'failed', 'Error: no such tool'],
    ['no run, cancelled', 'cancelled: context canceled', [], 'failed', 'cancelled: context canceled'],
  ]
  it.each(okCases)('a tool message with %s', (_, content, runs, state, result) => {
    seq = 0
    const es = entries({ messages: [user('q'), asst({ tool_calls: [tc('c')] }), toolMsg('c', content)], tool_runs: runs })
    expect((es[1] as { blocks: Block[] }).blocks[0]).toMatchObject({ kind: 'tool', state, result })
  })

  // agent/agent.go adds "not run: the turn was cancelled" (or "not run: "
  // and why) as the result of each call a cancel or a tool loop stopped
  // before it ran; no tool run is recorded for it. The live turn showed
  // those cards failed (done fails what did not finish); the history shows
  // them "done" with a ✓, because only /^(error|denied|cancelled)\b/ counts
  // as a failure.
  it('a call that never ran (cut short by a cancel) is failed, not done', () => {
    seq = 0
    const es = entries({
      messages: [user('q'), asst({ tool_calls: [tc('a'), tc('b')] }), toolMsg('a', 'hello'), toolMsg('b', 'not run: the turn was cancelled')],
      tool_runs: [run('a', true, 'hello')],
    })
    const blocks = (es[1] as { blocks: Block[] }).blocks
    expect(blocks.map((b) => (b as { state: string }).state)).toEqual(['done', 'failed'])
  })

  it('matches tool runs to calls in order when an id comes back in a later turn', () => {
    seq = 0
    const es = entries({
      messages: [user('1'), asst({ tool_calls: [tc('call_1')] }), toolMsg('call_1', 'first'), asst({ content: 'ok' }), user('2'), asst({ tool_calls: [tc('call_1')] }), toolMsg('call_1', 'Error: second'), asst({ content: 'no' })],
      tool_runs: [run('call_1', true, 'first'), run('call_1', false, 'second')],
    })
    const cards = assistantBlocks(es).map((bs) => bs.filter((b) => b.kind === 'tool'))
    expect(cards).toEqual([[expect.objectContaining({ state: 'done', result: 'first' })], [expect.objectContaining({ state: 'failed', result: 'second' })]])
  })

  it('a call with no result is failed: the turn ended before it ran', () => {
    seq = 0
    const es = entries({ messages: [user('q'), asst({ content: 'Let me', tool_calls: [tc('c')], partial: true })], tool_runs: [] })
    expect(es[1]).toMatchObject({ kind: 'assistant', partial: true })
    expect((es[1] as { blocks: Block[] }).blocks[1]).toMatchObject({ kind: 'tool', state: 'failed' })
    expect((es[1] as { blocks: Block[] }).blocks[1]).toHaveProperty('result', expect.stringMatching(/./))
  })

  it('one assistant entry per turn, a summary entry of its own, no system messages', () => {
    seq = 0
    const es = entries({
      messages: [
        msg({ role: 'system', content: 'you are' }),
        user('a'),
        asst({ content: 'A1', tool_calls: [tc('x')] }),
        toolMsg('x', 'r'),
        asst({ content: 'A2' }),
        msg({ role: 'user', content: '[Summary of the earlier conversation]\nstuff', summary: true }),
        user('b'),
        asst({ content: 'B', partial: true }),
      ],
      tool_runs: [],
    })
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant', 'summary', 'user', 'assistant'])
    expect(es[1]).toMatchObject({ partial: false })
    expect((es[1] as { blocks: Block[] }).blocks.map((b) => b.kind)).toEqual(['text', 'tool', 'text'])
    expect(es[2]).toMatchObject({ kind: 'summary', text: expect.stringContaining('stuff') })
    expect(es[4]).toMatchObject({ partial: true })
    expect(new Set(es.map((e) => e.key)).size).toBe(es.length)
    expect(JSON.stringify(es)).not.toContain('you are')
  })

  it('tolerates missing fields', () => {
    expect(entries({ messages: [], tool_runs: [] })).toEqual([])
    expect(entries({ messages: null as unknown as StoredMessage[], tool_runs: null as unknown as ToolRun[] })).toEqual([])
    seq = 0
    expect(entries({ messages: [user('q'), asst({})], tool_runs: [] })).toHaveLength(2)
  })
})

describe('entries with upTo (a running turn, after a reload)', () => {
  it('keeps what came before the running turn and leaves the turn itself to its events', () => {
    seq = 0
    const s = { messages: [user('1'), asst({ content: 'one' }), user('2'), asst({ content: 'partial so far', partial: true })], tool_runs: [] }
    const upTo = lastUserSeq(s)
    expect(upTo).toBe(3)
    const es = entries(s, upTo)
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant'])
    expect(JSON.stringify(es)).not.toContain('partial so far')
    expect(entries(s).map((e) => e.kind)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })

  it('lastUserSeq is the last user message, or undefined', () => {
    seq = 0
    expect(lastUserSeq({ messages: [] })).toBeUndefined()
    expect(lastUserSeq({ messages: [asst({ content: 'x' })] })).toBeUndefined()
    seq = 0
    expect(lastUserSeq({ messages: [user('a'), asst({}), user('b'), asst({})] })).toBe(3)
  })

  // GET /v1/sessions/{id} lists messages "in conversation order"
  // (session.InOrder): a summary is stored with seq = max+1 and placed
  // before the message `before`. When the running turn compressed the
  // context, its summary has a seq above the running turn's user message
  // but sits before earlier messages, and entries(s, upTo) stops at it
  // (`break` on the first seq >= upTo), dropping every earlier message
  // that follows it in the list.
  it('keeps earlier messages placed after a summary the running turn made', () => {
    const s = {
      messages: [
        { role: 'user', content: 'old question', seq: 1, compacted: true, created_at: at },
        { role: 'assistant', content: 'old answer', seq: 2, compacted: true, created_at: at },
        { role: 'user', content: '[Summary of the earlier conversation]\nold stuff', seq: 6, summary: true, created_at: at },
        { role: 'user', content: 'kept question', seq: 3, created_at: at },
        { role: 'assistant', content: 'kept answer', seq: 4, created_at: at },
        { role: 'user', content: 'running question', seq: 5, created_at: at },
      ] as StoredMessage[],
      tool_runs: [],
    }
    const upTo = lastUserSeq(s)
    expect(upTo).toBe(5)
    const text = JSON.stringify(entries(s, upTo))
    expect(text).toContain('kept question')
    expect(text).toContain('kept answer')
    expect(text).not.toContain('running question')
  })
})

describe('seqs, checkpoints and restores', () => {
  const cp = (c: Partial<Checkpoint> & Pick<Checkpoint, 'id' | 'kind' | 'seq'>): Checkpoint => ({ session_id: 's', created_at: at, ...c })
  // Two turns that write: user 1, call 2, result 3, answer 4; user 5, call 6, result 7, answer 8.
  const session = () => {
    seq = 0
    return {
      messages: [
        user('write one'),
        asst({ tool_calls: [tc('w', 'write_file', { file_path: 'one.txt' })] }),
        toolMsg('w', 'written', 'write_file'),
        asst({ content: 'one' }),
        user('write two'),
        asst({ tool_calls: [tc('w', 'write_file', { file_path: 'two.txt' })] }),
        toolMsg('w', 'written', 'write_file'),
        asst({ content: 'two' }),
      ],
      tool_runs: [],
    }
  }

  it('entries carry the seqs a rewind needs: the user message, and the last message of an answer', () => {
    const es = entries(session())
    expect(es.map((e) => entrySeq(e))).toEqual([1, 4, 5, 8])
    seq = 0
    const unanswered = entries({ messages: [user('q')], tool_runs: [] })
    expect(unanswered.map((e) => entrySeq(e))).toEqual([1, 1])
  })

  it('marks each tool card with the checkpoint taken before it, in order of a reused call id', () => {
    const cps = [
      cp({ id: 10, kind: 'before', seq: 2, turn: 1, call_id: 'w', tool: 'write_file', detail: { files: 3 } }),
      cp({ id: 11, kind: 'after', seq: 4, turn: 1 }),
      cp({ id: 12, kind: 'before', seq: 6, turn: 5, call_id: 'w', tool: 'write_file', detail: { too_large: ['big.bin'] } }),
    ]
    const plain = entries(session())
    const es = withCheckpoints(plain, cps)
    const cards = es.flatMap((e) => (e.kind === 'assistant' ? e.blocks.filter((b) => b.kind === 'tool') : [])) as ToolCard[]
    expect(cards.map((c) => [c.checkpoint, c.tooLarge])).toEqual([
      [10, undefined],
      [12, ['big.bin']],
    ])
    // The entries given are left as they were.
    expect(plain.flatMap((e) => (e.kind === 'assistant' ? e.blocks : [])).some((b) => b.kind === 'tool' && b.checkpoint)).toBe(false)
  })

  it('puts each restore after the message it was recorded at, the page’s own version where it has one', () => {
    const cps = [
      cp({ id: 20, kind: 'undo', seq: 8, detail: { paths: ['two.txt'], turn: 5 } }),
      cp({ id: 21, kind: 'redo', seq: 8, detail: { paths: ['two.txt'], turn: 5 } }),
      cp({ id: 22, kind: 'rewind', seq: 4, detail: { paths: ['two.txt', 'one.txt'], through: 4, kept: ['one.txt'] } }),
    ]
    const live: RestoreInfo[] = [{ op: 'redo', checkpoint: 21, turn: 5, files: [{ path: 'two.txt', action: 'create' }] }]
    const es = withCheckpoints(entries(session()), cps, live)
    expect(es.map((e) => e.kind)).toEqual(['user', 'assistant', 'restore', 'user', 'assistant', 'restore', 'restore'])
    const restores = es.filter((e) => e.kind === 'restore').map((e) => (e as Extract<Entry, { kind: 'restore' }>).restore)
    expect(restores[0]).toMatchObject({ op: 'rewind', checkpoint: 22, through: 4, kept: ['one.txt'], files: [{ path: 'two.txt' }, { path: 'one.txt' }] })
    expect(restores[1]).toMatchObject({ op: 'undo', turn: 5, files: [{ path: 'two.txt' }] })
    expect(restores[2]).toEqual(live[0])
  })

  it('a restore of this page with no record (the conversation alone) goes at the end; one whose record is gone, nowhere', () => {
    const live: RestoreInfo[] = [
      { op: 'undo', checkpoint: 30, turn: 5, files: [{ path: 'two.txt', action: 'delete' }] },
      { op: 'rewind', through: 4, files: [], conversation: { through: 4, removed: 4, archived: 's-old' } },
    ]
    const es = withCheckpoints(entries(session()), [], live)
    expect(es.filter((e) => e.kind === 'restore')).toEqual([{ kind: 'restore', key: 'live1', restore: live[1] }])
    expect(es[es.length - 1]).toMatchObject({ kind: 'restore', restore: live[1] })
  })

  it('restoreOfRecord reads what a record says', () => {
    expect(restoreOfRecord(cp({ id: 3, kind: 'rewind', seq: 1, detail: { paths: ['a'], to: 2 } }))).toEqual({
      op: 'rewind', checkpoint: 3, turn: undefined, through: undefined, files: [{ path: 'a' }], kept: undefined, failed: undefined,
    })
  })

  it('turnSeqs finds the live turns in the session read back, skipping a turn never saved', () => {
    const s = session()
    expect(turnSeqs(s, ['write one', 'write two'])).toEqual([
      { user: 1, last: 4 },
      { user: 5, last: 8 },
    ])
    expect(turnSeqs(s, ['write two', 'not saved'])).toEqual([{ user: 5, last: 8 }, undefined])
    expect(turnSeqs(s, ['write two'])).toEqual([{ user: 5, last: 8 }])
    expect(turnSeqs({ messages: [] }, ['x'])).toEqual([undefined])
  })
})
