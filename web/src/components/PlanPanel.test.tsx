import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { useState } from 'react'
import { afterEach, describe, expect, it } from 'vitest'
import type { Block } from '../turn'
import type { PlanStep } from '../types'
import { AssistantMessage } from './Messages'
import { PlanPanel } from './PlanPanel'

afterEach(cleanup)

const plan: PlanStep[] = [
  { step: 'Read the parser', status: 'done' },
  { step: 'Fix the off-by-one', status: 'in_progress' },
  { step: 'Write a test', status: 'pending' },
  { step: 'Run the benchmarks', status: 'skipped', reason: 'there are none' },
]

function Panel({ steps }: { steps: PlanStep[] }) {
  const [open, setOpen] = useState(true)
  return <PlanPanel steps={steps} open={open} onToggle={() => setOpen(!open)} />
}

describe('PlanPanel', () => {
  it('is a labelled list whose steps say their state in words, not colour alone', () => {
    render(<Panel steps={plan} />)
    const region = screen.getByRole('region', { name: /Plan/ })
    expect(within(region).getByTestId('plan-count').textContent).toBe('2/4')
    const list = within(region).getByRole('list', { name: 'Plan steps, 2 of 4 steps finished' })
    const items = within(list).getAllByRole('listitem')
    expect(items.map((li) => li.textContent)).toEqual([
      'Done: Read the parser',
      'In progress: Fix the off-by-one' + 'In progress',
      'Pending: Write a test',
      'Skipped: Run the benchmarks' + 'skipped: there are none',
    ])
    expect(items.map((li) => li.getAttribute('data-status'))).toEqual(['done', 'in_progress', 'pending', 'skipped'])
    // The step under way is the list's current one.
    expect(items.map((li) => li.getAttribute('aria-current'))).toEqual([null, 'step', null, null])
  })

  it('folds to its header, which then names the step under way', () => {
    render(<Panel steps={plan} />)
    const toggle = screen.getByRole('button', { name: /^Plan/ })
    expect(toggle.getAttribute('aria-expanded')).toBe('true')
    expect(toggle.textContent).toContain('2 of 4 steps finished')
    fireEvent.click(toggle)
    expect(toggle.getAttribute('aria-expanded')).toBe('false')
    expect(screen.queryByRole('list')).toBeNull()
    expect(toggle.textContent).toContain('Now: Fix the off-by-one')
    fireEvent.click(toggle)
    expect(screen.getAllByRole('listitem')).toHaveLength(4)
  })

  it('follows the plan as it changes', () => {
    const { rerender } = render(<Panel steps={[{ step: 'a', status: 'pending' }]} />)
    expect(screen.getByTestId('plan-step').getAttribute('data-status')).toBe('pending')
    rerender(<Panel steps={[{ step: 'a', status: 'in_progress' }]} />)
    expect(screen.getByTestId('plan-step').getAttribute('data-status')).toBe('in_progress')
    rerender(<Panel steps={[{ step: 'a', status: 'done' }]} />)
    expect(screen.getByTestId('plan-step').getAttribute('data-status')).toBe('done')
    expect(screen.getByTestId('plan-count').textContent).toBe('1/1')
  })
})

describe('the plan in the conversation', () => {
  it('an update_plan call is one quiet line; a reminder is Hearth’s note', () => {
    const blocks: Block[] = [
      { kind: 'tool', id: 'p1', name: 'update_plan', args: { steps: plan }, state: 'done', output: '', steps: [], result: 'Plan saved: 2 of 4 steps finished.' },
      { kind: 'text', text: 'Finished.' },
      { kind: 'reminder', open: 2, text: 'Your plan still has 2 open step(s): …' },
      { kind: 'tool', id: 'p2', name: 'update_plan', args: { steps: [] }, state: 'running', output: '', steps: [] },
    ]
    render(<AssistantMessage blocks={blocks} keepThinkingOpen={false} />)
    const cards = screen.getAllByTestId('tool-card')
    expect(cards.map((c) => c.textContent)).toEqual(['Plan updated: 2/4', 'Updating the plan…'])
    // No buttons, no details: nothing but the line.
    expect(within(cards[0]).queryByRole('button')).toBeNull()
    const note = screen.getByRole('note', { name: 'Note from Hearth' })
    expect(note.querySelector('summary')?.textContent).toContain('Hearth sent the model back: 2 steps open')
    expect(note.textContent).toContain('Hearth told the model: Your plan still has 2 open step(s)')
    // Not a user message.
    expect(document.querySelector('[data-role="user"]')).toBeNull()
  })
})
