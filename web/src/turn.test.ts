// @vitest-environment node
import { describe, expect, it } from 'vitest'
import { answerText, applyEvent, decide, newTurn, pendingApprovals, takeFrame, undecide, type Block, type ToolCard, type Turn } from './turn'
import type { HearthEvent } from './types'

const fold = (evs: HearthEvent[], t: Turn = newTurn('hi', 's-1')): Turn => evs.reduce(applyEvent, t)
const tools = (t: Turn) => t.blocks.filter((b): b is ToolCard => b.kind === 'tool')
const tool = (t: Turn, id: string) => tools(t).find((c) => c.id === id)!

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o)
    for (const v of Object.values(o)) deepFreeze(v)
  }
  return o
}

const call = (id: string, name = 'read_file', args: unknown = { file_path: 'a.txt' }): HearthEvent => ({ type: 'tool_call', id, name, args })
const result = (id: string, ok = true, extra: Partial<Extract<HearthEvent, { type: 'tool_result' }>> = {}): HearthEvent => ({
  type: 'tool_result', id, name: 'read_file', ok, ...(ok ? { output: 'out-' + id } : { error: 'err-' + id }), ...extra,
})
const approval = (id: string, reason = 'will do it', name = 'read_file'): HearthEvent => ({ type: 'approval_required', id, name, args: { path: 'x' }, reason })
const output = (id: string, text: string, event?: HearthEvent): HearthEvent => ({ type: 'tool_output', id, name: 'run_shell_command', text, ...(event ? { event } : {}) })

describe('applyEvent: the example of docs/events.md', () => {
  const example: HearthEvent[] = [
    { type: 'session', session_id: 's-7kq2m9xwa3', provider: 'ollama', model: 'qwen3:4b' },
    { type: 'thinking_start' },
    { type: 'thinking_delta', text: 'I should read the file.' },
    { type: 'thinking_end' },
    { type: 'tool_call', id: 'call_pk0bqbxd', name: 'read_file', args: { file_path: 'a.txt' } },
    { type: 'usage', input_tokens: 1412, output_tokens: 31 },
    { type: 'tool_result', id: 'call_pk0bqbxd', name: 'read_file', ok: true, output: 'hello\n' },
    { type: 'text_delta', text: 'It says hello.' },
    { type: 'usage', input_tokens: 1460, output_tokens: 6 },
    { type: 'done', reason: 'stop', text: 'It says hello.' },
  ]

  it('folds into thinking, a done tool card and the answer, once each', () => {
    const t = fold(example)
    expect(t.sessionId).toBe('s-7kq2m9xwa3')
    expect(t.model).toBe('qwen3:4b')
    expect(t.status).toBe('stop')
    expect(t.usage).toEqual({ input: 2872, output: 37 })
    expect(t.error).toBeUndefined()
    expect(t.blocks.map((b) => b.kind)).toEqual(['thinking', 'tool', 'text'])
    expect(t.blocks[0]).toEqual({ kind: 'thinking', text: 'I should read the file.', live: false })
    expect(t.blocks[1]).toMatchObject({ kind: 'tool', id: 'call_pk0bqbxd', name: 'read_file', args: { file_path: 'a.txt' }, state: 'done', result: 'hello\n' })
    // done.text repeats the streamed answer: it must not be shown twice
    expect(answerText(t)).toBe('It says hello.')
  })

  it('never changes the turn it is given', () => {
    let t = deepFreeze(newTurn('hi'))
    const evs: HearthEvent[] = [...example.slice(0, 5), approval('call_pk0bqbxd'), output('call_pk0bqbxd', 'x'), ...example.slice(5)]
    for (const ev of evs) {
      const before = JSON.stringify(t)
      const next = applyEvent(t, deepFreeze(ev))
      expect(JSON.stringify(t)).toBe(before)
      t = deepFreeze(next)
    }
    const d = deepFreeze(fold([call('c'), approval('c')]))
    const s = JSON.stringify(d)
    decide(d, 'c', 'allow')
    undecide(decide(d, 'c', 'deny'), 'c')
    expect(JSON.stringify(d)).toBe(s)
  })
})

describe('applyEvent: thinking', () => {
  const cases: { name: string; evs: HearthEvent[]; want: Block[] }[] = [
    {
      name: 'is live while it streams',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: 'a' }, { type: 'thinking_delta', text: 'b' }],
      want: [{ kind: 'thinking', text: 'ab', live: true }],
    },
    {
      name: 'stops being live at thinking_end',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: 'a' }, { type: 'thinking_end' }],
      want: [{ kind: 'thinking', text: 'a', live: false }],
    },
    {
      name: 'collapses when the answer starts, even without thinking_end',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: 'a' }, { type: 'text_delta', text: 'A' }],
      want: [{ kind: 'thinking', text: 'a', live: false }, { kind: 'text', text: 'A' }],
    },
    {
      name: 'stops when a tool call begins, even without thinking_end',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: 'a' }, call('c')],
      want: [{ kind: 'thinking', text: 'a', live: false }, { kind: 'tool', id: 'c', name: 'read_file', args: { file_path: 'a.txt' }, state: 'pending', output: '', steps: [] }],
    },
    {
      name: 'a delta with no thinking_start still makes a live block',
      evs: [{ type: 'thinking_delta', text: 'x' }],
      want: [{ kind: 'thinking', text: 'x', live: true }],
    },
    {
      name: 'a second reasoning phase (after a tool) is its own block',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: '1' }, { type: 'thinking_end' }, { type: 'text_delta', text: 'A' }, { type: 'thinking_start' }, { type: 'thinking_delta', text: '2' }],
      want: [{ kind: 'thinking', text: '1', live: false }, { kind: 'text', text: 'A' }, { kind: 'thinking', text: '2', live: true }],
    },
    {
      name: 'done ends a thinking still live',
      evs: [{ type: 'thinking_start' }, { type: 'thinking_delta', text: 'a' }, { type: 'done', reason: 'cancelled', text: '' }],
      want: [{ kind: 'thinking', text: 'a', live: false }],
    },
  ]
  for (const c of cases) it(c.name, () => expect(fold(c.evs).blocks).toEqual(c.want))
})

describe('applyEvent: answer text', () => {
  it('appends deltas to the last text block, and starts a new one after a tool card', () => {
    const t = fold([{ type: 'text_delta', text: 'Let me ' }, { type: 'text_delta', text: 'look.' }, call('c'), result('c'), { type: 'text_delta', text: 'Found.' }])
    expect(t.blocks.map((b) => b.kind)).toEqual(['text', 'tool', 'text'])
    expect(answerText(t)).toBe('Let me look.\n\nFound.')
  })

  it('shows done.text when the stream sent no deltas, and not twice when it did', () => {
    expect(answerText(fold([{ type: 'done', reason: 'stop', text: 'whole' }]))).toBe('whole')
    expect(answerText(fold([{ type: 'text_delta', text: 'whole' }, { type: 'done', reason: 'stop', text: 'whole' }]))).toBe('whole')
    expect(fold([{ type: 'done', reason: 'stop', text: '' }]).blocks).toEqual([])
  })

  it('keeps a compressed note where it came', () => {
    const t = fold([{ type: 'text_delta', text: 'a' }, { type: 'compressed', text: 'sum' }, { type: 'text_delta', text: 'b' }])
    expect(t.blocks).toEqual([{ kind: 'text', text: 'a' }, { kind: 'compressed', text: 'sum' }, { kind: 'text', text: 'b' }])
  })
})

describe('applyEvent: the tool card state machine', () => {
  type Step = HearthEvent | { decide: 'allow' | 'deny' | 'always' } | 'undecide'
  const run = (steps: Step[]) => {
    let t = newTurn('hi')
    const states: string[] = []
    for (const s of steps) {
      if (s === 'undecide') t = undecide(t, 'c')
      else if ('decide' in s) t = decide(t, 'c', s.decide)
      else t = applyEvent(t, s)
      states.push(tools(t).find((x) => x.id === 'c')?.state ?? '-')
    }
    return { t, states }
  }
  const cases: { name: string; steps: Step[]; states: string[] }[] = [
    { name: 'call then result ok', steps: [call('c'), result('c')], states: ['pending', 'done'] },
    { name: 'call then result failed', steps: [call('c'), result('c', false)], states: ['pending', 'failed'] },
    { name: 'streaming output makes it run', steps: [call('c'), output('c', 'a'), output('c', 'b'), result('c')], states: ['pending', 'running', 'running', 'done'] },
    { name: 'approval, allow, output, result', steps: [call('c'), approval('c'), { decide: 'allow' }, output('c', 'x'), result('c')], states: ['pending', 'approval', 'running', 'running', 'done'] },
    { name: 'approval, always', steps: [call('c'), approval('c'), { decide: 'always' }, result('c')], states: ['pending', 'approval', 'running', 'done'] },
    { name: 'approval, deny, failed result', steps: [call('c'), approval('c'), { decide: 'deny' }, result('c', false)], states: ['pending', 'approval', 'failed', 'failed'] },
    { name: 'sending the answer failed: back to approval', steps: [call('c'), approval('c'), { decide: 'allow' }, 'undecide'], states: ['pending', 'approval', 'running', 'approval'] },
    { name: 'decide on a card not waiting does nothing', steps: [call('c'), { decide: 'allow' }, result('c'), { decide: 'deny' }], states: ['pending', 'pending', 'done', 'done'] },
    { name: 'done fails what still waits', steps: [call('c'), approval('c'), { type: 'done', reason: 'cancelled', text: '' }], states: ['pending', 'approval', 'failed'] },
    { name: 'done fails what still runs', steps: [call('c'), output('c', 'x'), { type: 'done', reason: 'error', text: '' }], states: ['pending', 'running', 'failed'] },
    { name: 'done leaves finished cards alone', steps: [call('c'), result('c'), { type: 'done', reason: 'stop', text: '' }], states: ['pending', 'done', 'done'] },
    { name: 'a replayed tool_call does not make a second card', steps: [call('c'), call('c'), result('c')], states: ['pending', 'pending', 'done'] },
  ]
  for (const c of cases) {
    it(c.name, () => {
      const { t, states } = run(c.steps)
      expect(states).toEqual(c.states)
      expect(tools(t)).toHaveLength(1)
    })
  }

  it('records result, error, display, decision and reason', () => {
    let t = fold([call('a'), result('a', true, { display: '--- a\n+++ b' }), call('b'), result('b', false), call('c'), { type: 'tool_result', id: 'c', name: 'x', ok: false, output: 'only output' }])
    expect(tool(t, 'a')).toMatchObject({ state: 'done', result: 'out-a', display: '--- a\n+++ b' })
    expect(tool(t, 'b')).toMatchObject({ state: 'failed', result: 'err-b' })
    expect(tool(t, 'c')).toMatchObject({ state: 'failed', result: 'only output' })
    t = fold([call('d'), approval('d', 'Write 3 lines to x')])
    expect(tool(t, 'd')).toMatchObject({ state: 'approval', reason: 'Write 3 lines to x', args: { path: 'x' } })
    expect(pendingApprovals(t).map((c) => c.id)).toEqual(['d'])
    t = decide(t, 'd', 'always')
    expect(tool(t, 'd')).toMatchObject({ state: 'running', decision: 'always' })
    expect(pendingApprovals(t)).toEqual([])
    t = decide(undecide(t, 'd'), 'd', 'deny')
    expect(tool(t, 'd')).toMatchObject({ state: 'failed', decision: 'deny', result: 'denied' })
    t = undecide(t, 'd')
    expect(tool(t, 'd').state).toBe('approval')
    expect(tool(t, 'd').decision).toBeUndefined()
    expect(tool(t, 'd').result).toBeUndefined()
  })

  it('a done cancelled says so on what it stopped', () => {
    const t = fold([call('a'), call('b'), output('b', 'x'), { type: 'done', reason: 'cancelled', text: '' }])
    expect(tool(t, 'a')).toMatchObject({ state: 'failed', result: 'cancelled' })
    expect(tool(t, 'b')).toMatchObject({ state: 'failed', result: 'cancelled' })
    expect(t.status).toBe('cancelled')
  })

  it('collects streamed output in order', () => {
    const t = fold([call('c'), output('c', 'one\n'), output('c', 'two\n')])
    expect(tool(t, 'c').output).toBe('one\ntwo\n')
  })

  it("a sub-agent's approval (an id never called in this turn) gets its own card", () => {
    const t = fold([call('call_1', 'codebase_investigator'), output('call_1', '→ write\n', call('call_9', 'write_file')), approval('call_9', 'write x', 'write_file')])
    expect(tools(t).map((c) => [c.id, c.state])).toEqual([['call_1', 'running'], ['call_9', 'approval']])
    expect(tool(t, 'call_9')).toMatchObject({ name: 'write_file', reason: 'write x' })
    const t2 = decide(t, 'call_9', 'allow')
    expect(tool(t2, 'call_9').state).toBe('running')
    expect(tool(t2, 'call_1').state).toBe('running')
    // Its result comes nested in the parent's output, and ends its card.
    const t3 = applyEvent(t2, output('call_1', '✓ write_file\n', { type: 'tool_result', id: 'call_9', name: 'write_file', ok: true, output: 'wrote x' }))
    expect(tools(t3).map((c) => [c.id, c.state])).toEqual([['call_1', 'running'], ['call_9', 'done']])
    expect(tool(t3, 'call_9').result).toBe('wrote x')
  })

  it("a sub-agent's approval with the running parent's own id does not take over the parent's card", () => {
    const t = fold([call('call_1', 'codebase_investigator'), approval('call_1', 'rm -rf build', 'run_shell_command')])
    expect(tools(t).map((c) => [c.name, c.state])).toEqual([['codebase_investigator', 'pending'], ['run_shell_command', 'approval']])
  })

  it('a failed answer does not reopen a card the stream has moved on', () => {
    for (const d of ['allow', 'deny'] as const) {
      let t = decide(fold([call('c'), approval('c')]), 'c', d)
      t = applyEvent(t, result('c', d === 'allow'))
      expect(undecide(t, 'c'), d).toBe(t)
    }
    let t = decide(fold([call('c'), approval('c')]), 'c', 'allow')
    t = applyEvent(t, output('c', 'x'))
    expect(undecide(t, 'c')).toBe(t)
  })

  // docs/api.md: "answered (running; the API sends no event for the
  // answer…) → tool_output* → tool_result". A tool_output can only come
  // once the call was answered, so a card still showing "approval" (the
  // answer came from elsewhere: another tab, or before a reload, when
  // followTurn rebuilds the turn from its first event) must now run, not
  // keep offering Allow / Deny buttons that would get 404 no_approval.
  it('tool_output on a card waiting for approval means it was answered: the card runs', () => {
    const t = fold([call('c'), approval('c'), output('c', 'compiling…\n')])
    expect(tool(t, 'c').state).toBe('running')
    expect(pendingApprovals(t)).toEqual([])
  })
})

describe('applyEvent: sub-agent events nested in tool_output', () => {
  const sub: HearthEvent[] = [
    call('call_1', 'codebase_investigator', { task: 'where?' }),
    output('call_1', '[sub-agent session s-3k9]\n', { type: 'session', session_id: 's-3k9', provider: 'ollama', model: 'small' }),
    output('call_1', '', { type: 'thinking_start' }),
    output('call_1', '', { type: 'thinking_delta', text: 'sub thinks' }),
    output('call_1', '→ grep_search {}\n', { type: 'tool_call', id: 'call_2', name: 'grep_search', args: {} }),
    output('call_1', '→ read_file {}\n', { type: 'tool_call', id: 'call_3', name: 'read_file', args: {} }),
    output('call_1', '✓ grep_search\n', { type: 'tool_result', id: 'call_2', name: 'grep_search', ok: true, output: 'x' }),
    output('call_1', '✗ read_file: nope\n', { type: 'tool_result', id: 'call_3', name: 'read_file', ok: false, error: 'nope' }),
    output('call_1', '', { type: 'text_delta', text: 'sub answer' }),
    output('call_1', '', { type: 'usage', input_tokens: 100, output_tokens: 100 }),
    output('call_1', '', { type: 'error', code: 'agent_error', message: 'sub failed' }),
    output('call_1', '', { type: 'done', reason: 'stop', text: 'sub answer' }),
  ]

  it("show as the card's steps and never leak into the caller's turn", () => {
    const t = fold([{ type: 'session', session_id: 's-1', provider: 'ollama', model: 'big' }, ...sub])
    expect(t.sessionId).toBe('s-1')
    expect(t.model).toBe('big')
    expect(t.status).toBe('running')
    expect(t.error).toBeUndefined()
    expect(t.usage).toEqual({ input: 0, output: 0 })
    expect(t.blocks.map((b) => b.kind)).toEqual(['tool'])
    const c = tool(t, 'call_1')
    expect(c.state).toBe('running')
    expect(c.steps).toEqual([
      { id: 'call_2', name: 'grep_search', state: 'done' },
      { id: 'call_3', name: 'read_file', state: 'failed' },
    ])
    expect(c.output).toContain('✓ grep_search')
    const end = fold([{ type: 'tool_result', id: 'call_1', name: 'codebase_investigator', ok: true, output: '{"summary":"s"}' }], t)
    expect(tool(end, 'call_1')).toMatchObject({ state: 'done', result: '{"summary":"s"}' })
    expect(tool(end, 'call_1').steps).toHaveLength(2)
  })
})

describe('applyEvent: the rest of the contract', () => {
  it('sums usage over model calls', () => {
    const t = fold([{ type: 'usage', input_tokens: 10, output_tokens: 1 }, { type: 'usage', input_tokens: 5, output_tokens: 2 }])
    expect(t.usage).toEqual({ input: 15, output: 3 })
  })

  it('keeps the error and its hint, and done error ends the turn', () => {
    const t = fold([
      { type: 'error', code: 'provider_unreachable', message: 'Ollama is not running.', hint: 'Start it with `ollama serve`.', retryable: true },
      { type: 'done', reason: 'error', text: '' },
    ])
    expect(t.status).toBe('error')
    expect(t.error?.code).toBe('provider_unreachable')
    expect(t.error?.message).toContain('Ollama is not running.')
    expect(t.error?.message).toContain('ollama serve')
  })

  it.each(['stop', 'max_turns', 'cancelled', 'error'] as const)('done %s sets the status', (reason) => {
    expect(fold([{ type: 'done', reason, text: '' }]).status).toBe(reason)
  })

  it('ignores an event type added to the contract later', () => {
    const before = fold([{ type: 'text_delta', text: 'a' }])
    const after = applyEvent(before, { type: 'brand_new', x: 1 } as unknown as HearthEvent)
    expect(after.blocks).toEqual(before.blocks)
    expect(after.status).toBe('running')
  })
})

describe('thinking_reclassified', () => {
  // A reply whose template opened <think> in the prompt streams its
  // reasoning as text until a lone </think>; then the event takes it back.
  const reasoning = 'The user asks what a.txt holds.\n'
  const lone: HearthEvent[] = [
    { type: 'session', session_id: 's-1', provider: 'openai', model: 'qwq' },
    { type: 'text_delta', text: 'The user asks ' },
    { type: 'text_delta', text: 'what a.txt holds.\n' },
    { type: 'thinking_reclassified', text: reasoning },
    { type: 'thinking_delta', text: 'Read it.' },
    { type: 'thinking_end' },
    { type: 'tool_call', id: 'call_1', name: 'read_file', args: { file_path: 'a.txt' } },
    { type: 'tool_result', id: 'call_1', name: 'read_file', ok: true, output: 'hello' },
    { type: 'thinking_start' },
    { type: 'thinking_delta', text: 'It says hello.' },
    { type: 'thinking_end' },
    { type: 'text_delta', text: 'It says hello.' },
    { type: 'done', reason: 'stop', text: 'It says hello.' },
  ]

  it('turns the text shown into live reasoning', () => {
    const t = fold(lone.slice(0, 4))
    expect(t.blocks).toEqual([{ kind: 'thinking', text: reasoning, live: true }])
    expect(answerText(t)).toBe('')
  })

  it('ends with the reasoning apart and the answer alone', () => {
    const t = fold(lone)
    expect(t.blocks.map((b) => b.kind)).toEqual(['thinking', 'tool', 'thinking', 'text'])
    expect(t.blocks[0]).toEqual({ kind: 'thinking', text: reasoning + 'Read it.', live: false })
    expect(answerText(t)).toBe('It says hello.')
  })

  it('takes back only the end of a text block that does not hold only it', () => {
    const t = fold([
      { type: 'text_delta', text: 'Before. ' },
      { type: 'text_delta', text: 'reasoning' },
      { type: 'thinking_reclassified', text: 'reasoning' },
      { type: 'thinking_end' },
      { type: 'text_delta', text: 'Answer.' },
    ])
    expect(t.blocks).toEqual([
      { kind: 'text', text: 'Before. ' },
      { kind: 'thinking', text: 'reasoning', live: false },
      { kind: 'text', text: 'Answer.' },
    ])
  })

  it('never changes the turn it is given', () => {
    let t = deepFreeze(newTurn('hi'))
    for (const ev of lone) t = deepFreeze(applyEvent(t, deepFreeze(ev)))
    expect(answerText(t)).toBe('It says hello.')
  })
})

describe('approval_required for an id whose card has finished', () => {
  // A sub-agent's calls may repeat the ids of this turn's finished calls:
  // its approval must not reopen the finished card, nor be lost.
  it('leaves the finished card alone and opens a card of its own', () => {
    let t = newTurn('m')
    for (const ev of [
      { type: 'tool_call', id: 'call_1', name: 'read_file', args: {} },
      { type: 'tool_result', id: 'call_1', name: 'read_file', ok: true, output: 'x' },
      { type: 'approval_required', id: 'call_1', name: 'run_shell_command', args: { command: 'ls' }, reason: 'run ls' },
    ] as HearthEvent[]) t = applyEvent(t, ev)
    const cards = t.blocks.filter((b): b is ToolCard => b.kind === 'tool')
    expect(cards.map((c) => [c.name, c.state])).toEqual([
      ['read_file', 'done'],
      ['run_shell_command', 'approval'],
    ])
    expect(pendingApprovals(t).map((c) => c.name)).toEqual(['run_shell_command'])
  })
})

describe('takeFrame', () => {
  const q = (...types: string[]) => types.map((type) => ({ ev: { type, id: 'c', name: 'n', text: 't', ok: true, args: {}, reason: 'r' } as unknown as HearthEvent }))
  const types = (x: { ev: HearthEvent }[]) => x.map((e) => e.ev.type)
  const cases: [string[], string[], string[]][] = [
    [[], [], []],
    [['text_delta', 'text_delta', 'thinking_delta', 'usage'], ['text_delta', 'text_delta', 'thinking_delta', 'usage'], []],
    [['text_delta', 'tool_call', 'tool_result'], ['text_delta', 'tool_call'], ['tool_result']],
    [['tool_call', 'approval_required'], ['tool_call'], ['approval_required']],
    [['approval_required', 'text_delta'], ['approval_required'], ['text_delta']],
    [['tool_result', 'done'], ['tool_result'], ['done']],
    [['thinking_start', 'thinking_delta', 'thinking_end', 'text_delta'], ['thinking_start', 'thinking_delta'], ['thinking_end', 'text_delta']],
    [['thinking_end', 'text_delta', 'text_delta'], ['thinking_end', 'text_delta', 'text_delta'], []],
    [['tool_output', 'tool_output'], ['tool_output'], ['tool_output']],
  ]
  it.each(cases)('%j → %j then %j', (input, now, rest) => {
    const [a, b] = takeFrame(q(...input))
    expect(types(a)).toEqual(now)
    expect(types(b)).toEqual(rest)
  })
  it('takes the later output of a call already streaming in bulk', () => {
    const [a, b] = takeFrame(q('tool_output', 'tool_output', 'text_delta', 'tool_result'), new Set(['c']))
    expect(types(a)).toEqual(['tool_output', 'tool_output', 'text_delta', 'tool_result'])
    expect(types(b)).toEqual([])
  })
})

describe('applyEvent: checkpoint', () => {
  const cp = (id: string, n: number, name = 'write_file', tooLarge?: string[]): HearthEvent => ({
    type: 'checkpoint', id, name, checkpoint: n, seq: 2, files: 10, stored: 100, ...(tooLarge ? { too_large: tooLarge } : {}),
  })

  it('marks the call it came before, between its call and its result, and nothing else', () => {
    const t = deepFreeze(fold([call('c1', 'write_file'), call('c2', 'read_file'), cp('c1', 12), result('c1')]))
    expect(tool(t, 'c1')).toMatchObject({ checkpoint: 12, state: 'done' })
    expect(tool(t, 'c1').tooLarge).toBeUndefined()
    expect(tool(t, 'c2').checkpoint).toBeUndefined()
  })

  it('keeps the files over the size cap', () => {
    const t = fold([call('c1', 'write_file'), cp('c1', 4, 'write_file', ['big.bin'])])
    expect(tool(t, 'c1')).toMatchObject({ checkpoint: 4, tooLarge: ['big.bin'], state: 'pending' })
  })

  it('of a call never shown, or of another tool, changes nothing', () => {
    const before = fold([call('c1', 'write_file')])
    expect(applyEvent(before, cp('nope', 1)).blocks).toEqual(before.blocks)
    expect(applyEvent(before, cp('c1', 1, 'edit')).blocks).toEqual(before.blocks)
  })

  it('a restore event (never in a turn) changes nothing', () => {
    const before = fold([call('c1', 'write_file')])
    expect(applyEvent(before, { type: 'restore', op: 'undo', files: [] }).blocks).toEqual(before.blocks)
  })
})
