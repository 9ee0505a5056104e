// @vitest-environment node
import { describe, expect, it } from 'vitest'
import { entries, lastUserSeq, turnSeqs, type Entry } from './history'
import {
  currentPlan,
  openInReminder,
  planAfter,
  planAnnouncement,
  planCallText,
  planOfSession,
  progress,
  reminderText,
  stepsOfArgs,
  type PlanSteps,
} from './plan'
import { applyEvent, newTurn, takeFrame, type Block, type Turn } from './turn'
import type { HearthEvent, PlanStatus, PlanStep, StoredMessage } from './types'

/** steps makes a plan from "text:status" strings. */
function steps(...specs: string[]): PlanStep[] {
  return specs.map((s) => {
    const [step, status, reason] = s.split(':')
    return { step, status: status as PlanStatus, ...(reason ? { reason } : {}) }
  })
}
const statuses = (p: PlanSteps | undefined) => (p === undefined ? 'unchanged' : p === null ? 'none' : p.map((s) => s.status).join(','))
const planEvent = (id: string, p: PlanStep[]): HearthEvent => ({ type: 'plan', id, steps: p })
const call = (id: string, p: PlanStep[]): HearthEvent[] => [
  { type: 'tool_call', id, name: 'update_plan', args: { steps: p } },
  planEvent(id, p),
  { type: 'tool_result', id, name: 'update_plan', ok: true, output: `Plan saved: ${progress(p).finished} of ${p.length} steps finished.` },
]

describe('the plan from events', () => {
  it('each plan event replaces the plan whole; other events leave it', () => {
    let p: PlanSteps = null
    p = planAfter(p, { type: 'text_delta', text: 'hi' })
    expect(p).toBeNull()
    p = planAfter(p, planEvent('c1', steps('a:pending', 'b:pending')))
    expect(statuses(p)).toBe('pending,pending')
    p = planAfter(p, planEvent('c2', steps('a:done', 'b:in_progress')))
    expect(p).toEqual(steps('a:done', 'b:in_progress'))
    expect(planAfter(p, { type: 'usage', input_tokens: 1, output_tokens: 1 })).toBe(p)
    // An empty plan: the model cleared it.
    expect(planAfter(p, planEvent('c3', []))).toBeNull()
  })

  it('a turn keeps the plan its events left, from pending to in progress to done', () => {
    let t: Turn = newTurn('do three things')
    expect(t.plan).toBeUndefined() // not changed by this turn (yet)
    const seen: string[] = []
    const evs: HearthEvent[] = [
      { type: 'session', session_id: 's', provider: 'ollama', model: 'm' },
      ...call('c1', steps('one:pending', 'two:pending', 'three:pending')),
      ...call('c2', steps('one:in_progress', 'two:pending', 'three:pending')),
      ...call('c3', steps('one:done', 'two:in_progress', 'three:pending')),
      ...call('c4', steps('one:done', 'two:done', 'three:done')),
      { type: 'text_delta', text: 'Done.' },
      { type: 'done', reason: 'stop', text: 'Done.' },
    ]
    for (const ev of evs) {
      t = applyEvent(t, ev)
      if (ev.type === 'plan') seen.push(statuses(t.plan))
    }
    expect(seen).toEqual(['pending,pending,pending', 'in_progress,pending,pending', 'done,in_progress,pending', 'done,done,done'])
    expect(statuses(t.plan)).toBe('done,done,done')
    // The calls stay as tool cards (shown as quiet lines), no other block.
    expect(t.blocks.map((b) => b.kind)).toEqual(['tool', 'tool', 'tool', 'tool', 'text'])
    expect(t.blocks.filter((b) => b.kind === 'tool').every((b) => b.kind === 'tool' && b.state === 'done')).toBe(true)
  })

  it('a reminder becomes Hearth’s note in the turn, with the steps it left open', () => {
    let t = newTurn('go')
    for (const ev of call('c1', steps('a:done', 'b:in_progress', 'c:pending'))) t = applyEvent(t, ev)
    t = applyEvent(t, { type: 'text_delta', text: 'Finished.' })
    t = applyEvent(t, {
      type: 'plan',
      steps: steps('a:done', 'b:in_progress', 'c:pending'),
      reminder: 'Your plan still has 2 open step(s): "b" (in progress), "c" (pending). Finish them…',
    })
    const last = t.blocks[t.blocks.length - 1]
    expect(last).toEqual({ kind: 'reminder', open: 2, text: expect.stringContaining('still has 2 open step(s)') })
    expect(statuses(t.plan)).toBe('done,in_progress,pending')
    // Nothing of the user's: the turn's message is still the prompt.
    expect(t.message).toBe('go')
  })

  it('a plan event ends the frame, so that every state of the plan is painted', () => {
    const q = [
      ...call('c1', steps('a:in_progress')),
      ...call('c2', steps('a:done')),
    ].map((ev) => ({ ev }))
    const frames: string[][] = []
    let rest = q
    while (rest.length > 0) {
      const [now, later] = takeFrame(rest)
      frames.push(now.map((x) => x.ev.type))
      rest = later
    }
    expect(frames).toEqual([['tool_call'], ['plan'], ['tool_result'], ['tool_call'], ['plan'], ['tool_result']])
  })

  it('the plan shown: the latest turn that changed it, else the session’s', () => {
    const session = steps('old:pending')
    const a = { plan: steps('x:done', 'y:in_progress') }
    expect(currentPlan(session, [])).toBe(session)
    expect(currentPlan(session, [{}, {}])).toBe(session)
    expect(currentPlan(session, [a, {}])).toBe(a.plan)
    expect(currentPlan(session, [a, { plan: null }])).toBeNull()
    expect(currentPlan(null, [{ plan: steps('z:pending') }, {}])).toEqual(steps('z:pending'))
  })
})

describe('the plan from the session', () => {
  it('reads GET /v1/sessions/{id}: a plan, null, none at all (an older server), or empty', () => {
    const p = steps('read:done', 'fix:in_progress', 'test:skipped:there are none')
    expect(planOfSession({ plan: { steps: p } })).toEqual(p)
    expect(planOfSession({ plan: null })).toBeNull()
    expect(planOfSession({})).toBeNull()
    expect(planOfSession({ plan: { steps: [] } })).toBeNull()
    // A step the page cannot read is left out.
    expect(planOfSession({ plan: { steps: [{ step: 'a', status: 'done' }, { nope: 1 } as unknown as PlanStep] } })).toEqual(steps('a:done'))
  })

  it('counts finished steps: done and skipped', () => {
    expect(progress(steps('a:done', 'b:skipped:why', 'c:in_progress', 'd:pending'))).toEqual({ finished: 2, total: 4 })
  })
})

describe('the plan in words', () => {
  it('an update_plan call in a line', () => {
    const args = { steps: steps('a:done', 'b:skipped:no', 'c:in_progress', 'd:pending') }
    expect(planCallText('done', args)).toBe('Plan updated: 2/4')
    expect(planCallText('done', { steps: [] })).toBe('Plan cleared')
    expect(planCallText('pending', args)).toBe('Updating the plan…')
    expect(planCallText('running', args)).toBe('Updating the plan…')
    expect(planCallText('failed', args, 'more than one step is in_progress: keep one\nmore')).toBe(
      'The plan was not taken: more than one step is in_progress: keep one',
    )
    expect(planCallText('done', 'not an object')).toBe('Plan updated')
    expect(stepsOfArgs({ steps: 'no' })).toBeUndefined()
  })

  it('a reminder: how many steps were open', () => {
    expect(reminderText(2)).toBe('Hearth sent the model back: 2 steps open')
    expect(reminderText(1)).toBe('Hearth sent the model back: 1 step open')
    expect(reminderText(undefined)).toBe('Hearth sent the model back to its plan')
    expect(openInReminder('Your plan still has 3 open step(s): "a" (pending)…')).toBe(3)
    expect(openInReminder('something else')).toBeUndefined()
  })

  it('news for a screen reader', () => {
    expect(planAnnouncement(steps('a:done', 'b:in_progress', 'c:pending'))).toBe('Plan 1 of 3 finished. Now: b')
    expect(planAnnouncement(steps('a:done', 'b:skipped:x'))).toBe('Plan: all 2 steps finished.')
    expect(planAnnouncement(steps('a:done', 'b:pending'))).toBe('Plan 1 of 2 finished.')
  })
})

describe('reminders in the history', () => {
  let seq = 0
  const at = '2025-01-01T00:00:00Z'
  const msg = (m: Partial<StoredMessage> & Pick<StoredMessage, 'role'>): StoredMessage => ({ seq: ++seq, created_at: at, ...m })
  const planCall = (id: string, p: PlanStep[]) => msg({ role: 'assistant', tool_calls: [{ id, name: 'update_plan', args: { steps: p } }] })
  const planResult = (id: string, content: string) => msg({ role: 'tool', tool_call_id: id, tool_name: 'update_plan', content })
  const reminderContent = 'Your plan still has 1 open step(s): "c" (pending). Finish them, or mark them skipped with a reason (update_plan), then give your final answer.'

  /** A turn the model was sent back in (strict_plan), then a second prompt. */
  function session(): StoredMessage[] {
    seq = 0
    return [
      msg({ role: 'user', content: 'do a, b and c' }), // 1
      planCall('p1', steps('a:in_progress', 'b:pending', 'c:pending')), // 2
      planResult('p1', 'Plan saved: 0 of 3 steps finished. Now: a'), // 3
      planCall('p2', steps('a:done', 'b:done', 'c:pending')), // 4
      planResult('p2', 'Plan saved: 2 of 3 steps finished. Next: c'), // 5
      // A refused call does not change the plan.
      planCall('p3', steps('a:done', 'b:in_progress', 'c:in_progress')), // 6
      planResult('p3', 'error: more than one step is in_progress'), // 7
      msg({ role: 'assistant', content: 'All done.' }), // 8
      msg({ role: 'user', content: reminderContent, reminder: true }), // 9
      planCall('p4', steps('a:done', 'b:done', 'c:skipped:not needed')), // 10
      planResult('p4', 'Plan saved: 3 of 3 steps finished. Every step is finished: give your answer.'), // 11
      msg({ role: 'assistant', content: 'Now all done.' }), // 12
      msg({ role: 'user', content: 'thanks' }), // 13
      msg({ role: 'assistant', content: 'You are welcome.' }), // 14
    ]
  }
  const kinds = (es: Entry[]) => es.map((e) => e.kind)
  const blocks = (e: Entry) => (e.kind === 'assistant' ? e.blocks : [])

  it('a stored reminder is Hearth’s note inside the turn, not a user prompt', () => {
    const es = entries({ messages: session(), tool_runs: [] })
    expect(kinds(es)).toEqual(['user', 'assistant', 'user', 'assistant'])
    const users = es.filter((e) => e.kind === 'user')
    expect(users.map((e) => (e.kind === 'user' ? e.text : ''))).toEqual(['do a, b and c', 'thanks'])
    const turn = es[1]
    const bs = blocks(turn)
    const kindsIn = bs.map((b: Block) => (b.kind === 'tool' ? `tool ${b.state}` : b.kind))
    expect(kindsIn).toEqual(['tool done', 'tool done', 'tool failed', 'text', 'reminder', 'tool done', 'text'])
    // The open steps: those of the plan the messages hold at that point
    // (the refused call not counted).
    expect(bs[4]).toEqual({ kind: 'reminder', open: 1, text: reminderContent })
    // The turn's entry reaches past the reminder: a rewind "to here" keeps the whole turn.
    expect(turn.kind === 'assistant' && turn.last).toBe(12)
  })

  it('without a plan it knows, the count comes from the reminder’s words', () => {
    seq = 0
    const ms = [msg({ role: 'user', content: 'go' }), msg({ role: 'assistant', content: 'ok' }), msg({ role: 'user', content: reminderContent, reminder: true })]
    const bs = blocks(entries({ messages: ms, tool_runs: [] })[1])
    expect(bs[bs.length - 1]).toEqual({ kind: 'reminder', open: 1, text: reminderContent })
  })

  it('the last user message, and the turns run live, are the user’s, never a reminder', () => {
    const ms = session().slice(0, 11) // a turn still running: its reminder is the last "user" message
    expect(lastUserSeq({ messages: ms })).toBe(1)
    // Shown up to the running turn's prompt: the reminder comes with its events.
    expect(kinds(entries({ messages: ms, tool_runs: [] }, lastUserSeq({ messages: ms })))).toEqual([])
    expect(turnSeqs({ messages: session() }, ['do a, b and c', 'thanks'])).toEqual([
      { user: 1, last: 12 },
      { user: 13, last: 14 },
    ])
  })
})
