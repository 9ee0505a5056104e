import { useCallback, useEffect, useReducer, useState } from 'react'
import type { Client } from '../api'
import type { Workspace } from '../types'
import { addBody, addFormReducer, emptyForm, trustLabel, trustText, upsertWorkspace } from '../workspaces'
import { TrustChoice } from './Trust'

/** What the workspaces view asks of the page. */
export interface WorkspacesViewProps {
  client: Client
  /** The workspace whose sessions the list shows (undefined: all). */
  selected?: string
  onSelect(path: string | undefined): void
  onClose(): void
  /**
   * On a server of many workspaces: the current one, and how to switch to
   * another (its sessions listed, new chats made in it).
   */
  current?: string
  onSwitch?(path: string): void
  /** A workspace was added or changed here. */
  onChanged?(ws: Workspace): void
  /** Changes when the workspaces changed elsewhere (a trust chosen): the list is read again. */
  version?: number
}

/**
 * WorkspacesView lists the workspaces the server knows (name, path, trust,
 * sessions, last use), switches to one (on a server of many; else chooses
 * the one whose sessions the sidebar shows), and adds a folder by its path.
 */
export function WorkspacesView({ client, selected, onSelect, onClose, current, onSwitch, onChanged, version }: WorkspacesViewProps) {
  const [list, setList] = useState<Workspace[]>()
  const [error, setError] = useState<string>()
  const [form, dispatch] = useReducer(addFormReducer, emptyForm)
  const load = useCallback(
    (signal?: AbortSignal) =>
      client
        .workspaces(signal)
        .then((r) => (setList(r.workspaces ?? []), setError(undefined)))
        .catch((e: Error) => e.name !== 'AbortError' && setError(e.message)),
    [client],
  )
  useEffect(() => {
    const ac = new AbortController()
    void load(ac.signal)
    return () => ac.abort()
  }, [load, version])

  const addedTrust = list?.find((w) => w.path === form.added && w.trust_chosen !== false)?.trust

  const submit = async (e: React.FormEvent) => {
    e.preventDefault()
    const next = addFormReducer(form, { type: 'submit' })
    dispatch({ type: 'submit' })
    if (next.status !== 'saving') return
    try {
      const ws = await client.addWorkspace(addBody(form))
      dispatch({ type: 'added', workspace: ws })
      setList((l) => upsertWorkspace(l ?? [], ws))
      onChanged?.(ws)
    } catch (err) {
      dispatch({ type: 'failed', message: (err as Error).message })
    }
  }

  return (
    <section className="usage workspaces" data-testid="workspaces" aria-labelledby="workspaces-title">
      <header className="usage-head">
        <h2 id="workspaces-title">Workspaces</h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      <p className="muted small">
        The folders Hearth has worked in.{' '}
        {onSwitch
          ? 'Each session works in its own workspace’s folder, confined to it, as far as the folder’s trust allows.'
          : 'Each folder’s trust says how far its own config applies and what the agent may change there.'}
      </p>
      {error && <p role="alert">{error}</p>}
      {!list && !error && <p className="muted">Loading…</p>}
      {list && (
        <table className="usage-table" aria-label="Known workspaces">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Path</th>
              <th scope="col">Trust</th>
              <th scope="col" className="num">
                Sessions
              </th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span className="sr-only">Show</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.length === 0 && (
              <tr>
                <td colSpan={6} className="muted">
                  No workspaces yet.
                </td>
              </tr>
            )}
            {list.map((w) => (
              <tr key={w.path} data-path={w.path} aria-current={selected === w.path ? 'true' : undefined}>
                <td>{w.name || 'unknown'}</td>
                <td>
                  <code>{w.path || '(unknown)'}</code>
                </td>
                <td title={trustText[w.trust]} data-trust={w.trust}>
                  {w.trust}
                  {w.trust_chosen === false && <span className="muted small"> (not chosen yet)</span>}
                </td>
                <td className="num">{w.sessions}</td>
                <td>{w.last_used ? new Date(w.last_used).toLocaleString() : ''}</td>
                <td>
                  {onSwitch && w.path !== '' ? (
                    <button type="button" className="link" aria-pressed={current === w.path} onClick={() => onSwitch(w.path)}>
                      {current === w.path ? 'Current workspace' : 'Switch to it'}
                    </button>
                  ) : (
                    <button type="button" className="link" aria-pressed={selected === w.path} onClick={() => onSelect(w.path)}>
                      {selected === w.path ? 'Showing its sessions' : 'Show its sessions'}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected !== undefined && (
        <p>
          <button type="button" onClick={() => onSelect(undefined)}>
            Show every workspace’s sessions
          </button>
        </p>
      )}
      <form className="add-workspace" aria-label="Add workspace" onSubmit={(e) => void submit(e)}>
        <h3>Add workspace</h3>
        <label>
          Path{' '}
          <input
            name="path"
            required
            placeholder="/home/me/project"
            value={form.path}
            onChange={(e) => dispatch({ type: 'edit', field: 'path', value: e.target.value })}
          />
        </label>{' '}
        <label>
          Name{' '}
          <input name="name" placeholder="(the folder’s name)" value={form.name} onChange={(e) => dispatch({ type: 'edit', field: 'name', value: e.target.value })} />
        </label>{' '}
        <TrustChoice
          name="trust"
          legend={
            <>
              Trust <span className="muted small">(leave it unchosen to be asked when you switch to it; until then it is untrusted)</span>
            </>
          }
          value={form.trust}
          onChange={(level) => dispatch({ type: 'edit', field: 'trust', value: level })}
        />
        <button type="submit" className="primary" disabled={form.status === 'saving'}>
          Add workspace
        </button>
        {form.status === 'error' && form.error && (
          <p role="alert" className="turn-error" data-testid="add-workspace-error">
            {form.error}
          </p>
        )}
        {form.status === 'added' && form.added && (
          <p role="status" className="muted" data-testid="workspace-added">
            Added {form.added}
            {addedTrust ? `, ${trustLabel(addedTrust).toLowerCase()}` : ''}.{' '}
            {onSwitch && (
              <button type="button" className="link" onClick={() => onSwitch(form.added!)}>
                Switch to it
              </button>
            )}
          </p>
        )}
      </form>
    </section>
  )
}
