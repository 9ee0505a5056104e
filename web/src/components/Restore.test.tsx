import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { APIError, type Client } from '../api'
import type { ForkResult, RestoreResult } from '../types'
import { MessageActions, RestoreDialog, RestoreNote, type RestoreAction } from './Restore'

afterEach(cleanup)

const result = (r: Partial<RestoreResult> = {}): RestoreResult => ({ type: 'restore', op: 'undo', files: [], conflicts: [], dry_run: false, ...r })

/** fakeClient answers each restore call with answer (a value, or an error to throw), and records the calls. */
function fakeClient(answer: (method: string, body: Record<string, unknown>) => unknown) {
  const calls: [string, Record<string, unknown>][] = []
  const call = (method: string) =>
    vi.fn(async (_id: string, body: Record<string, unknown> = {}) => {
      calls.push([method, body])
      const a = answer(method, body)
      if (a instanceof Error) throw a
      return a
    })
  const client = { undo: call('undo'), redo: call('redo'), rewind: call('rewind'), fork: call('fork') } as unknown as Client
  return { client, calls }
}

function open(action: RestoreAction, answer: (method: string, body: Record<string, unknown>) => unknown) {
  const { client, calls } = fakeClient(answer)
  const onDone = vi.fn()
  const onClose = vi.fn()
  render(<RestoreDialog client={client} sessionId="s-1" action={action} onDone={onDone} onClose={onClose} />)
  return { calls, onDone, onClose, dialog: () => screen.getByRole('dialog') }
}

const button = (name: string) => within(screen.getByRole('dialog')).getByRole('button', { name })
const preview = () => screen.findByTestId('restore-preview')

describe('RestoreDialog', () => {
  it('previews an undo (a dry run), shows each file with what is done to it, and makes it when confirmed', async () => {
    const files: RestoreResult['files'] = [
      { path: 'two.txt', action: 'delete' },
      { path: 'a.txt', action: 'modify' },
    ]
    const { calls, onDone, dialog } = open({ kind: 'undo' }, (_, b) => result({ files, dry_run: !!b.dry_run, checkpoint: b.dry_run ? undefined : 7 }))
    expect(dialog().getAttribute('aria-label')).toBe('Undo the last turn’s changes?')
    await preview()
    expect(calls).toEqual([['undo', { dry_run: true }]])
    const rows = screen.getAllByTestId('restore-file')
    expect(rows.map((r) => [r.dataset.path, r.dataset.action, r.textContent])).toEqual([
      ['two.txt', 'delete', 'removed two.txt'],
      ['a.txt', 'modify', 'changed back a.txt'],
    ])
    expect(screen.getByTestId('restore-conversation').textContent).toContain('conversation stays')
    expect(screen.queryByTestId('restore-conflicts')).toBeNull()
    await act(async () => fireEvent.click(button('Undo')))
    expect(calls[1]).toEqual(['undo', {}])
    expect(onDone).toHaveBeenCalledWith({ kind: 'restore', result: expect.objectContaining({ checkpoint: 7, dry_run: false }) })
  })

  it('highlights files the user changed, explains, and asks: keep them, or overwrite them', async () => {
    for (const [choice, body] of [
      ['Keep my changes', { keep: ['a.txt'] }],
      ['Overwrite my changes', { overwrite: true }],
    ] as const) {
      const { calls, onDone } = open({ kind: 'redo' }, () => result({ op: 'redo', files: [{ path: 'a.txt', action: 'modify' }, { path: 'b.txt', action: 'create' }], conflicts: ['a.txt'] }))
      await preview()
      const [a, b] = screen.getAllByTestId('restore-file')
      expect(a.dataset.conflict).toBe('true')
      expect(a.textContent).toContain('changed since the agent')
      expect(b.dataset.conflict).toBeUndefined()
      expect(screen.getByTestId('restore-conflicts').textContent).toContain('nothing is lost')
      expect(within(screen.getByRole('dialog')).queryByRole('button', { name: 'Redo' })).toBeNull()
      await act(async () => fireEvent.click(button(choice)))
      expect(calls[1]).toEqual(['redo', body])
      expect(onDone).toHaveBeenCalledTimes(1)
      cleanup()
    }
  })

  it('files changed between the preview and the confirm: asks again about them, and does nothing meanwhile', async () => {
    const conflict = new APIError(409, 'restore_conflict', 'would overwrite', undefined, ['late.txt'])
    const { calls, onDone } = open({ kind: 'undo' }, (_, b) => (b.dry_run ? result({ files: [{ path: 'late.txt', action: 'modify' }] }) : conflict))
    await preview()
    await act(async () => fireEvent.click(button('Undo')))
    expect(onDone).not.toHaveBeenCalled()
    expect(screen.getByTestId('restore-conflicts').textContent).toContain('changed since this preview')
    expect(screen.getByTestId('restore-file').dataset.conflict).toBe('true')
    await act(async () => fireEvent.click(button('Keep my changes')))
    expect(calls[2]).toEqual(['undo', { keep: ['late.txt'] }])
  })

  it.each([
    ['nothing_to_undo', 'Nothing to undo'],
    ['checkpoints_off', 'Conversation only'],
    ['session_busy', 'A turn is running'],
  ])('a preview refused with %s says so, and nothing can be confirmed', async (code, says) => {
    open({ kind: 'undo' }, () => new APIError(409, code, 'server words'))
    const alert = await screen.findByTestId('restore-problem')
    expect(alert.textContent).toContain(says)
    expect((button('Undo') as HTMLButtonElement).disabled).toBe(true)
  })

  it('a rewind that changes nothing cannot be confirmed', async () => {
    open({ kind: 'rewind', through: 2, where: 'here' }, () => result({ op: 'rewind', conversation: { through: 2, removed: 0 } }))
    await preview()
    expect(screen.getByText('Nothing would change.')).toBeTruthy()
    expect((button('Rewind') as HTMLButtonElement).disabled).toBe(true)
  })

  it('an undo whose files are already back is still made, so that the next goes to the turn before', async () => {
    const { calls, onDone } = open({ kind: 'undo' }, () => result({ turn: 5 }))
    await preview()
    expect(screen.getByTestId('restore-preview').textContent).toContain('Undo it all the same to go on to the turn before')
    await act(async () => fireEvent.click(button('Undo')))
    expect(calls[1]).toEqual(['undo', {}])
    expect(onDone).toHaveBeenCalledTimes(1)
  })

  it('rewind to before the first prompt goes to the start of the session', async () => {
    const { calls } = open({ kind: 'rewind', through: 0, where: 'before', prompt: 'first' }, () =>
      result({ op: 'rewind', files: [{ path: 'one.txt', action: 'delete' }], conversation: { through: 0, removed: 4 } }),
    )
    await preview()
    await act(async () => fireEvent.click(button('Rewind')))
    expect(calls).toEqual([
      ['rewind', { start: true, dry_run: true }],
      ['rewind', { start: true }],
    ])
  })

  it('rewind: what the conversation loses, and the choice of files, conversation or both asks again', async () => {
    const { calls, onDone } = open({ kind: 'rewind', through: 4, where: 'before', prompt: 'write two' }, (_, b) =>
      result({ op: 'rewind', through: 4, files: b.conversation_only ? [] : [{ path: 'two.txt', action: 'delete' }], conversation: b.files_only ? undefined : { through: 4, removed: 4 } }),
    )
    expect(screen.getByRole('dialog').getAttribute('aria-label')).toBe('Rewind to before this message?')
    await preview()
    expect(screen.getByTestId('restore-conversation').textContent).toContain('loses the 4 messages after this point')
    fireEvent.click(screen.getByLabelText('Files only'))
    await waitFor(() => expect(calls).toHaveLength(2))
    await preview()
    expect(screen.getByTestId('restore-conversation').textContent).toBe('The conversation stays as it is.')
    fireEvent.click(screen.getByLabelText('Conversation only'))
    await waitFor(() => expect(calls).toHaveLength(3))
    await preview()
    expect(screen.queryAllByTestId('restore-file')).toHaveLength(0)
    expect(calls).toEqual([
      ['rewind', { through: 4, dry_run: true }],
      ['rewind', { through: 4, files_only: true, dry_run: true }],
      ['rewind', { through: 4, conversation_only: true, dry_run: true }],
    ])
    await act(async () => fireEvent.click(button('Rewind')))
    expect(calls[3]).toEqual(['rewind', { through: 4, conversation_only: true }])
    expect(onDone).toHaveBeenCalledTimes(1)
  })

  it('fork: no preview without the files; with them, the files it would bring back; the title goes with it', async () => {
    const fork: ForkResult = { id: 's-2', title: 'Other', created_at: '', updated_at: '', message_count: 4, input_tokens: 0, output_tokens: 0, fork_of: 's-1' }
    const { calls, onDone } = open({ kind: 'fork', through: 4 }, (m) => (m === 'fork' ? fork : result({ op: 'rewind', files: [{ path: 'two.txt', action: 'delete' }] })))
    expect(calls).toEqual([])
    fireEvent.change(screen.getByLabelText('Title of the new session'), { target: { value: ' Other ' } })
    fireEvent.click(screen.getByLabelText('Also bring the files back to how they were here'))
    await preview()
    expect(calls).toEqual([['rewind', { through: 4, files_only: true, dry_run: true }]])
    expect(screen.getByTestId('restore-file').dataset.path).toBe('two.txt')
    await act(async () => fireEvent.click(button('Fork')))
    expect(calls[1]).toEqual(['fork', { through: 4, files: true, title: 'Other' }])
    expect(onDone).toHaveBeenCalledWith({ kind: 'fork', result: fork })
  })

  it('Cancel and Escape close it', async () => {
    const { onClose } = open({ kind: 'undo' }, () => result({ files: [{ path: 'a', action: 'modify' }] }))
    await preview()
    fireEvent.click(button('Cancel'))
    fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' })
    expect(onClose).toHaveBeenCalledTimes(2)
  })
})

describe('RestoreNote', () => {
  it('says what an undo did, to which turn', () => {
    render(<RestoreNote restore={{ op: 'undo', checkpoint: 9, turn: 5, files: [{ path: 'two.txt', action: 'delete' }] }} prompt="write two" />)
    const note = screen.getByTestId('restore')
    expect(note.dataset.op).toBe('undo')
    expect(note.textContent).toContain('Undid the file changes of “write two”.')
    expect(note.textContent).toContain('1 file: two.txt (removed).')
    expect(note.textContent).toContain('checkpoint #9')
  })

  it('a rewind of the conversation links its archived copy', () => {
    const onOpen = vi.fn()
    render(<RestoreNote restore={{ op: 'rewind', through: 4, files: [], conversation: { through: 4, removed: 3, archived: 's-old' } }} onOpen={onOpen} />)
    const note = screen.getByTestId('restore')
    expect(note.textContent).toContain('Rewound the conversation to here.')
    expect(note.textContent).toContain('3 messages were taken out')
    fireEvent.click(within(note).getByRole('button', { name: 'archived session' }))
    expect(onOpen).toHaveBeenCalledWith('s-old')
  })
})

describe('MessageActions', () => {
  it('offers only what applies, as labelled buttons', () => {
    const onRewind = vi.fn()
    const { container } = render(<MessageActions />)
    expect(container.innerHTML).toBe('')
    render(<MessageActions rewindLabel="Rewind to before this" onRewind={onRewind} />)
    fireEvent.click(screen.getByRole('button', { name: 'Rewind to before this' }))
    expect(onRewind).toHaveBeenCalled()
    expect(screen.queryByRole('button', { name: 'Fork from here' })).toBeNull()
    cleanup()
    render(<MessageActions rewindLabel="Rewind to here" onRewind={onRewind} onFork={() => {}} disabled />)
    expect((screen.getByRole('button', { name: 'Fork from here' }) as HTMLButtonElement).disabled).toBe(true)
  })
})
