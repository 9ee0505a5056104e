import { useId } from 'react'
import type { Workspace } from '../types'
import { optionLabel, trustLabel, trustText } from '../workspaces'

/**
 * WorkspaceSwitcher chooses the workspace the page works in, on a server
 * that serves many: its sessions are listed, and a new chat is made in it.
 * It shows the workspace's folder and trust, which opens the trust
 * question to change it.
 */
export function WorkspaceSwitcher({
  options,
  current,
  def,
  onSwitch,
  onTrust,
}: {
  /** The workspaces offered (switcherOptions). */
  options: Workspace[]
  /** The current one's path. */
  current: string
  /** The server's own workspace. */
  def: string
  onSwitch(path: string): void
  /** Asks how far the current workspace is trusted. */
  onTrust(): void
}) {
  const id = useId()
  const w = options.find((o) => o.path === current)
  const chosen = w?.trust_chosen !== false
  return (
    <div className="ws-switcher" data-testid="workspace-switcher">
      <div className="ws-switcher-head">
        <label htmlFor={`${id}-select`} className="small muted">
          Workspace
        </label>
        {w && (
          <button
            type="button"
            className={`trust-badge trust-${w.trust}${chosen ? '' : ' unchosen'}`}
            data-testid="workspace-trust"
            data-trust={w.trust}
            data-chosen={String(chosen)}
            aria-label={`Trust: ${trustLabel(w.trust)}${chosen ? '' : ', not chosen yet'}. Change it`}
            title={`${trustLabel(w.trust)}${chosen ? '' : ' (not chosen yet)'}: ${trustText[w.trust] ?? ''}\nClick to change it.`}
            onClick={onTrust}
          >
            {trustLabel(w.trust)}
            {!chosen && '?'}
          </button>
        )}
      </div>
      <select id={`${id}-select`} value={current} onChange={(e) => onSwitch(e.target.value)} aria-describedby={`${id}-path`}>
        {options.map((o) => (
          <option key={o.path} value={o.path}>
            {optionLabel(o, options)}
            {o.path === def ? ' (the server’s own)' : ''}
          </option>
        ))}
      </select>
      <code id={`${id}-path`} className="ws-path small" title={current}>
        {current}
      </code>
    </div>
  )
}
