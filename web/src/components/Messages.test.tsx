import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { entries, type Entry } from '../history'
import { applyEvent, newTurn, type Block, type ToolCard, type ToolState } from '../turn'
import type { HearthEvent } from '../types'
import { AssistantMessage, Thinking, ToolCardView, UserMessage } from './Messages'

afterEach(cleanup)

const details = () => screen.getByTestId('thinking') as HTMLDetailsElement
/** folded: what the summary says of a folded panel (its size), so the component's own idea of open. */
const saysFolded = () => /characters/.test(details().querySelector('summary')!.textContent ?? '')

/** userToggle is the user clicking the summary: the element opens or closes, then toggle fires. */
function userToggle(el: HTMLDetailsElement) {
  act(() => {
    el.open = !el.open
    fireEvent(el, new Event('toggle'))
  })
}

describe('Thinking', () => {
  it('is open while live and folds when the answer starts', () => {
    const { rerender } = render(<Thinking text="let me see" live keepOpen={false} />)
    expect(details().open).toBe(true)
    expect(details().textContent).toContain('let me see')
    rerender(<Thinking text="let me see, more" live keepOpen={false} />)
    expect(details().open).toBe(true)
    rerender(<Thinking text="let me see, more" live={false} keepOpen={false} />)
    expect(details().open).toBe(false)
  })

  it('stays open with the keep-open setting', () => {
    const { rerender } = render(<Thinking text="t" live keepOpen />)
    rerender(<Thinking text="t" live={false} keepOpen />)
    expect(details().open).toBe(true)
  })

  it('a stored (never live) thinking is folded, or open with the setting', () => {
    render(<Thinking text="old" live={false} keepOpen={false} />)
    expect(details().open).toBe(false)
    cleanup()
    render(<Thinking text="old" live={false} keepOpen />)
    expect(details().open).toBe(true)
  })

  it('the user closing it while live wins: it stays closed', () => {
    const { rerender } = render(<Thinking text="t" live keepOpen />)
    userToggle(details())
    expect(details().open).toBe(false)
    rerender(<Thinking text="t more" live keepOpen />)
    expect(details().open).toBe(false)
    rerender(<Thinking text="t more" live={false} keepOpen />)
    expect(details().open).toBe(false)
    expect(saysFolded()).toBe(true)
    // the setting changing back and forth does not reopen it either
    rerender(<Thinking text="t more" live={false} keepOpen={false} />)
    rerender(<Thinking text="t more" live={false} keepOpen />)
    expect(details().open).toBe(false)
  })

  it('the user opening it after it folded wins: it stays open', () => {
    const { rerender } = render(<Thinking text="t" live keepOpen={false} />)
    rerender(<Thinking text="t" live={false} keepOpen={false} />)
    expect(details().open).toBe(false)
    expect(saysFolded()).toBe(true)
    userToggle(details())
    expect(details().open).toBe(true)
    expect(saysFolded()).toBe(false)
    rerender(<Thinking text="t" live={false} keepOpen={false} />)
    expect(details().open).toBe(true)
    rerender(<Thinking text="t" live={false} keepOpen />)
    rerender(<Thinking text="t" live={false} keepOpen={false} />)
    expect(details().open).toBe(true)
  })

  it('says whether it is still thinking', () => {
    const { rerender } = render(<Thinking text="abc" live keepOpen={false} />)
    expect(details().querySelector('summary')!.textContent).toMatch(/Thinking/)
    rerender(<Thinking text="abc" live={false} keepOpen={false} />)
    expect(details().querySelector('summary')!.textContent).not.toMatch(/Thinking…/)
  })
})

const card = (state: ToolState, extra: Partial<ToolCard> = {}): ToolCard => ({
  kind: 'tool', id: 'call_7', name: 'write_file', args: { file_path: 'notes.txt', content: 'x' }, state, output: '', steps: [], ...extra,
})

describe('ToolCardView', () => {
  const states: ToolState[] = ['pending', 'approval', 'running', 'done', 'failed']

  it('shows the checkpoint taken before the call, compactly, and what it could not keep', () => {
    render(<ToolCardView card={card('done', { checkpoint: 12 })} />)
    const mark = screen.getByTestId('tool-checkpoint')
    expect(mark.textContent).toBe('Files saved before this call: checkpoint #12')
    expect(mark.getAttribute('title')).toContain('undo or rewind can bring them back')
    cleanup()
    render(<ToolCardView card={card('done', { checkpoint: 3, tooLarge: ['big.bin'] })} />)
    expect(screen.getByTestId('tool-checkpoint').getAttribute('title')).toContain('big.bin')
    cleanup()
    render(<ToolCardView card={card('done')} />)
    expect(screen.queryByTestId('tool-checkpoint')).toBeNull()
  })

  it.each(states)('%s: data-state, and approval buttons only while waiting', (state) => {
    render(<ToolCardView card={card(state, { reason: 'Write 1 line to notes.txt' })} onAnswer={() => {}} />)
    const el = screen.getByTestId('tool-card')
    expect(el.getAttribute('data-state')).toBe(state)
    expect(el.getAttribute('data-tool')).toBe('write_file')
    expect(el.textContent).toContain('write_file')
    const buttons = ['Allow', 'Always allow', 'Deny'].map((name) => within(el).queryByRole('button', { name }))
    if (state === 'approval') {
      for (const b of buttons) expect(b).not.toBeNull()
      expect(el.textContent).toContain('Write 1 line to notes.txt')
    } else {
      for (const b of buttons) expect(b).toBeNull()
    }
  })

  it.each([
    ['Allow', 'allow'],
    ['Always allow', 'always'],
    ['Deny', 'deny'],
  ] as const)('%s answers %s for its call', (name, decision) => {
    const onAnswer = vi.fn()
    render(<ToolCardView card={card('approval')} onAnswer={onAnswer} />)
    fireEvent.click(screen.getByRole('button', { name }))
    expect(onAnswer).toHaveBeenCalledTimes(1)
    expect(onAnswer).toHaveBeenCalledWith('call_7', decision)
  })

  it('shows the arguments it asks about', () => {
    render(<ToolCardView card={card('approval')} onAnswer={() => {}} />)
    expect(screen.getByTestId('tool-card').textContent).toContain('notes.txt')
  })

  it('a failed card says why; a denied one says Denied', () => {
    render(<ToolCardView card={card('failed', { result: 'permission denied\nmore' })} />)
    expect(screen.getByTestId('tool-card').textContent).toContain('permission denied')
    cleanup()
    render(<ToolCardView card={card('failed', { decision: 'deny', result: 'denied' })} />)
    expect(screen.getByTestId('tool-card').textContent).toContain('Denied')
  })

  it('shows a diff when the result has one', () => {
    render(<ToolCardView card={card('done', { display: '--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new', result: 'ok' })} />)
    const el = screen.getByTestId('tool-card')
    expect(el.querySelector('.add')?.textContent).toContain('+new')
    expect(el.querySelector('.del')?.textContent).toContain('-old')
  })

  it('shows the output a running tool streams, as text', () => {
    render(<ToolCardView card={card('running', { output: '<b>compiling</b>\n' })} />)
    const el = screen.getByTestId('tool-card')
    expect(el.textContent).toContain('<b>compiling</b>')
    expect(el.querySelector('b')).toBeNull()
  })

  it("shows a sub-agent's steps", () => {
    render(<ToolCardView card={card('running', { name: 'codebase_investigator', steps: [{ id: 'a', name: 'grep_search', state: 'done' }, { id: 'b', name: 'read_file', state: 'running' }] })} />)
    const el = screen.getByTestId('tool-card')
    expect(el.textContent).toContain('grep_search')
    expect(el.textContent).toContain('read_file')
  })

  it('updates when the card changes state', () => {
    const { rerender } = render(<ToolCardView card={card('pending')} />)
    for (const s of ['approval', 'running', 'done'] as ToolState[]) {
      rerender(<ToolCardView card={card(s)} />)
      expect(screen.getByTestId('tool-card').getAttribute('data-state')).toBe(s)
    }
  })
})

describe('AssistantMessage', () => {
  const blocks: Block[] = [
    { kind: 'thinking', text: 'hmm', live: false },
    { kind: 'text', text: 'Here is **the answer**.' },
    card('approval'),
    { kind: 'compressed', text: 'sum' },
  ]

  it('shows its blocks in order', () => {
    render(<AssistantMessage blocks={blocks} status="running" keepThinkingOpen={false} onAnswer={() => {}} />)
    const msg = screen.getByTestId('message')
    expect(msg.getAttribute('data-role')).toBe('assistant')
    const order = [...msg.querySelectorAll('[data-testid]')].map((e) => e.getAttribute('data-testid'))
    expect(order).toEqual(['thinking', 'answer', 'tool-card'])
    expect(screen.getByTestId('answer').querySelector('strong')?.textContent).toBe('the answer')
    expect(msg.textContent).toMatch(/summari[sz]ed/)
  })

  it('passes the approval answer up', () => {
    const onAnswer = vi.fn()
    render(<AssistantMessage blocks={blocks} status="running" keepThinkingOpen={false} onAnswer={onAnswer} />)
    fireEvent.click(screen.getByRole('button', { name: 'Deny' }))
    expect(onAnswer).toHaveBeenCalledWith('call_7', 'deny')
  })

  it('passes the keep-open setting to its thinking', () => {
    render(<AssistantMessage blocks={[{ kind: 'thinking', text: 'hmm', live: false }]} status="stop" keepThinkingOpen />)
    expect(details().open).toBe(true)
  })

  it('says the turn was cancelled, and keeps the reply so far', () => {
    render(<AssistantMessage blocks={[{ kind: 'text', text: 'Half an' }]} status="cancelled" keepThinkingOpen={false} />)
    expect(screen.getByTestId('turn-note').textContent).toMatch(/Cancelled/)
    expect(screen.getByTestId('answer').textContent).toContain('Half an')
  })

  it.each(['stop', 'running'] as const)('has no turn note when status is %s', (status) => {
    render(<AssistantMessage blocks={[{ kind: 'text', text: 'x' }]} status={status} keepThinkingOpen={false} />)
    expect(screen.queryByTestId('turn-note')).toBeNull()
  })

  it('a stored partial reply says it was cut short', () => {
    render(<AssistantMessage blocks={[{ kind: 'text', text: 'x' }]} partial keepThinkingOpen={false} />)
    expect(screen.getByTestId('turn-note')).not.toBeNull()
  })

  it('shows an error as an alert, with its message', () => {
    render(<AssistantMessage blocks={[]} status="error" error={{ code: 'provider_unreachable', message: 'Start Ollama with `ollama serve`.' }} keepThinkingOpen={false} />)
    const alert = screen.getByRole('alert')
    expect(alert.textContent).toContain('Start Ollama with `ollama serve`.')
    expect(screen.queryByTestId('turn-note')).toBeNull()
  })

  it('a turn rebuilt from its failure record looks as the failed turn did live', () => {
    const live = (
      [
        { type: 'text_delta', text: 'Half an' },
        { type: 'error', code: 'provider_unreachable', message: 'ollama chat: cannot reach http://127.0.0.1:11434', retryable: true },
        { type: 'done', reason: 'error', text: '' },
      ] as HearthEvent[]
    ).reduce(applyEvent, newTurn('q'))
    render(<AssistantMessage blocks={live.blocks} status={live.status} error={live.error} keepThinkingOpen={false} />)
    const liveHTML = screen.getByTestId('message').outerHTML
    cleanup()
    const stored = entries({
      messages: [
        { role: 'user', content: 'q', seq: 1, created_at: '' },
        { role: 'assistant', content: 'Half an', partial: true, seq: 2, created_at: '' },
        { role: 'assistant', content: 'Provider request failed: ollama chat: cannot reach http://127.0.0.1:11434', failure: true, seq: 3, created_at: '' },
      ],
      tool_runs: [],
    })[1] as Extract<Entry, { kind: 'assistant' }>
    render(<AssistantMessage blocks={stored.blocks} partial={stored.partial} error={stored.error} keepThinkingOpen={false} />)
    expect(screen.getByTestId('message').outerHTML).toBe(liveHTML)
    const alert = screen.getByRole('alert')
    expect(alert.className).toBe('turn-error')
    expect(alert.textContent).toBe('The model server failed. ollama chat: cannot reach http://127.0.0.1:11434')
    expect(screen.getByTestId('answer').textContent).not.toContain('failed')
    expect(screen.queryByTestId('turn-note')).toBeNull()
  })

  it('a failure record with no reply is the error alone', () => {
    const [, a] = entries({
      messages: [
        { role: 'user', content: 'q', seq: 1, created_at: '' },
        { role: 'assistant', content: 'Provider request failed: ollama chat: cannot reach', failure: true, seq: 2, created_at: '' },
      ],
      tool_runs: [],
    }) as Extract<Entry, { kind: 'assistant' }>[]
    render(<AssistantMessage blocks={a.blocks} partial={a.partial} error={a.error} keepThinkingOpen={false} />)
    expect(screen.getByRole('alert').textContent).toBe('The model server failed. ollama chat: cannot reach')
    expect(screen.queryByTestId('answer')).toBeNull()
    expect(screen.queryByTestId('turn-note')).toBeNull()
  })

  it('has no alert without an error', () => {
    render(<AssistantMessage blocks={[{ kind: 'text', text: 'ok' }]} status="stop" keepThinkingOpen={false} />)
    expect(screen.queryByRole('alert')).toBeNull()
  })

  it('shows that it waits for the model before the first event', () => {
    render(<AssistantMessage blocks={[]} status="running" keepThinkingOpen={false} />)
    expect(screen.getByTestId('message').textContent).toMatch(/Waiting/)
    expect(screen.getByTestId('message').getAttribute('aria-busy')).toBe('true')
  })

  it('renders an answer with HTML in it safely', () => {
    render(<AssistantMessage blocks={[{ kind: 'text', text: '<img src=x onerror="window.__pwned=1">hi' }]} status="stop" keepThinkingOpen={false} />)
    expect(screen.getByTestId('answer').querySelector('[onerror]')).toBeNull()
  })
})

describe('UserMessage', () => {
  it('shows the text as text', () => {
    render(<UserMessage text={'<b>bold?</b>'} />)
    const msg = screen.getByTestId('message')
    expect(msg.getAttribute('data-role')).toBe('user')
    expect(msg.textContent).toBe('<b>bold?</b>')
    expect(msg.querySelector('b')).toBeNull()
  })
})
