import { act, cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import { afterEach, describe, expect, it, vi } from 'vitest'
import type { TrustLevel, Workspace } from '../types'
import { TrustDialog } from './Trust'
import { WorkspaceSwitcher } from './WorkspaceSwitcher'

afterEach(cleanup)

const ws = (extra: Partial<Workspace> = {}): Workspace => ({
  path: '/home/me/site',
  name: 'site',
  trust: 'untrusted',
  trust_chosen: false,
  created_at: '',
  last_used: '',
  sessions: 0,
  ...extra,
})

/** description is the text of what aria-describedby names. */
const description = (el: HTMLElement) =>
  (el.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .map((id) => document.getElementById(id)?.textContent ?? '')
    .join(' ')

function deferred() {
  let resolve!: () => void
  let reject!: (e: Error) => void
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)))
  return { promise, resolve, reject }
}

describe('TrustDialog', () => {
  it('asks about the folder by name and path, with the three levels explained, the current one checked and focused', () => {
    render(<TrustDialog workspace={ws()} onSave={vi.fn()} onClose={vi.fn()} />)
    const dialog = screen.getByRole('dialog', { name: 'Do you trust this folder?' })
    expect(dialog.textContent).toContain('/home/me/site')
    expect(dialog.textContent).toContain('site')
    const radios = within(dialog).getAllByRole('radio')
    expect(radios.map((r) => (r as HTMLInputElement).value)).toEqual(['trusted', 'read-only', 'untrusted'])
    const untrusted = within(dialog).getByRole('radio', { name: 'Untrusted' })
    expect((untrusted as HTMLInputElement).checked).toBe(true)
    expect(document.activeElement).toBe(untrusted)
    // Each explained, as the screen reader hears it too.
    expect(within(dialog).getByRole('radio', { name: 'Read-only' }).getAttribute('aria-describedby')).toBeTruthy()
    expect(description(within(dialog).getByRole('radio', { name: 'Trusted' }))).toMatch(/\.hearth\/config\.toml/)
    expect(within(dialog).getByRole('button', { name: 'Decide later' })).toBeTruthy()
  })

  it('a chosen trust is changed, with Cancel instead of Decide later', () => {
    render(<TrustDialog workspace={ws({ trust: 'read-only', trust_chosen: true })} onSave={vi.fn()} onClose={vi.fn()} />)
    expect((screen.getByRole('radio', { name: 'Read-only' }) as HTMLInputElement).checked).toBe(true)
    expect(screen.getByRole('button', { name: 'Cancel' })).toBeTruthy()
    expect(screen.queryByRole('button', { name: 'Decide later' })).toBeNull()
  })

  it.each<[string, (d: HTMLElement) => void]>([
    ['Decide later', (d) => fireEvent.click(within(d).getByRole('button', { name: 'Decide later' }))],
    ['Escape', (d) => fireEvent.keyDown(d, { key: 'Escape' })],
  ])('%s closes it without saving', (_, act) => {
    const onSave = vi.fn()
    const onClose = vi.fn()
    render(<TrustDialog workspace={ws()} onSave={onSave} onClose={onClose} />)
    act(screen.getByRole('dialog'))
    expect(onClose).toHaveBeenCalledOnce()
    expect(onSave).not.toHaveBeenCalled()
  })

  it('saves the level chosen; a failure is shown in the dialog and the choice kept, to save again', async () => {
    const calls: TrustLevel[] = []
    let d = deferred()
    const onSave = vi.fn((level: TrustLevel) => (calls.push(level), d.promise))
    const onClose = vi.fn()
    render(<TrustDialog workspace={ws()} onSave={onSave} onClose={onClose} />)
    fireEvent.click(screen.getByRole('radio', { name: 'Read-only' }))
    fireEvent.click(screen.getByRole('button', { name: 'Save' }))
    expect(screen.getByRole('button', { name: 'Saving…' })).toBeTruthy()
    // Saving: another click, or closing, does nothing.
    fireEvent.click(screen.getByRole('button', { name: 'Saving…' }))
    fireEvent.click(screen.getByRole('button', { name: 'Decide later' }))
    expect(calls).toEqual(['read-only'])
    expect(onClose).not.toHaveBeenCalled()

    await act(async () => d.reject(new Error('the session store failed: disk full')))
    expect(screen.getByRole('alert').textContent).toBe('Not saved: the session store failed: disk full')
    expect((screen.getByRole('radio', { name: 'Read-only' }) as HTMLInputElement).checked).toBe(true)

    d = deferred()
    fireEvent.click(screen.getByRole('button', { name: 'Save' }))
    expect(screen.queryByRole('alert')).toBeNull()
    await act(async () => d.resolve())
    expect(calls).toEqual(['read-only', 'read-only'])
  })
})

describe('WorkspaceSwitcher', () => {
  const options = [ws({ path: '/srv/site', name: 'site' }), ws({ path: '/work/api', name: 'api', trust: 'read-only', trust_chosen: true })]

  it('is a labelled list of the workspaces, the current one chosen, with its folder and trust', () => {
    render(<WorkspaceSwitcher options={options} current="/work/api" def="/srv/site" onSwitch={vi.fn()} onTrust={vi.fn()} />)
    const select = screen.getByRole('combobox', { name: 'Workspace' }) as HTMLSelectElement
    expect(select.value).toBe('/work/api')
    expect([...select.options].map((o) => [o.value, o.textContent])).toEqual([
      ['/srv/site', 'site (the server’s own)'],
      ['/work/api', 'api'],
    ])
    expect(description(select)).toBe('/work/api')
    expect(screen.getByRole('button', { name: 'Trust: Read-only. Change it' })).toBeTruthy()
  })

  it('switches on a choice, and says when the trust was never chosen', () => {
    const onSwitch = vi.fn()
    const onTrust = vi.fn()
    render(<WorkspaceSwitcher options={options} current="/srv/site" def="/srv/site" onSwitch={onSwitch} onTrust={onTrust} />)
    fireEvent.change(screen.getByRole('combobox', { name: 'Workspace' }), { target: { value: '/work/api' } })
    expect(onSwitch).toHaveBeenCalledWith('/work/api')
    fireEvent.click(screen.getByRole('button', { name: 'Trust: Untrusted, not chosen yet. Change it' }))
    expect(onTrust).toHaveBeenCalledOnce()
  })
})
