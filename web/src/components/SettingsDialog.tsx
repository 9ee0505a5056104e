import { useEffect, useState } from 'react'
import type { Settings, Theme } from '../settings'
import type { Health } from '../types'
import { trustText, type Bridge, type KeyInfo, type WorkspaceInfo } from '../desktop'
import { Dialog } from './Dialog'

/** SettingsDialog changes the page's settings and shows what the server runs. */
export function SettingsDialog({
  settings,
  onChange,
  onClose,
  health,
  app,
  workspace,
}: {
  settings: Settings
  onChange(p: Partial<Settings>): void
  onClose(): void
  health?: Health
  /** The desktop app (absent in a browser): it adds the workspace and the API key. */
  app?: Bridge
  workspace?: WorkspaceInfo
}) {
  return (
    <Dialog title="Settings" onClose={onClose}>
      <div className="field">
        <label htmlFor="theme">Theme</label>
        <select id="theme" aria-label="Theme" value={settings.theme} onChange={(e) => onChange({ theme: e.target.value as Theme })}>
          <option value="system">system</option>
          <option value="light">light</option>
          <option value="dark">dark</option>
        </select>
      </div>
      <div className="field check">
        <input
          id="keep-thinking"
          type="checkbox"
          checked={settings.keepThinkingOpen}
          onChange={(e) => onChange({ keepThinkingOpen: e.target.checked })}
        />
        <label htmlFor="keep-thinking">Keep thinking open</label>
        <p className="muted small">Leave the model’s reasoning unfolded once the answer starts.</p>
      </div>
      {app && <DesktopSettings app={app} workspace={workspace} />}
      {health && (
        <dl className="server-info">
          <dt>Tools</dt>
          <dd>{health.tools.length ? health.tools.join(', ') : 'none'}</dd>
          <dt>Approvals</dt>
          <dd>{health.approval_mode}</dd>
          {health.mcp && health.mcp.length > 0 && (
            <>
              <dt>MCP servers</dt>
              <dd>{health.mcp.map((m) => `${m.name} (${m.state}${m.error ? `: ${m.error}` : ''})`).join(', ')}</dd>
            </>
          )}
          {health.version && (
            <>
              <dt>Hearth</dt>
              <dd>{health.version}</dd>
            </>
          )}
        </dl>
      )}
      <div className="dialog-actions">
        <button type="button" className="primary" onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  )
}

/** DesktopSettings are the desktop app's: the workspace and its trust, and the API key kept in the system keychain. */
function DesktopSettings({ app, workspace }: { app: Bridge; workspace?: WorkspaceInfo }) {
  const [key, setKey] = useState('')
  const [info, setInfo] = useState<KeyInfo>()
  const [status, setStatus] = useState<string>()
  useEffect(() => {
    void app
      .APIKey()
      .then(setInfo)
      .catch(() => {})
  }, [app])
  const save = async () => {
    setStatus('Saving…')
    try {
      const where = await app.SetAPIKey(key)
      setKey('')
      setStatus(key ? `Stored in ${where}.` : 'Removed.')
      setInfo(await app.APIKey())
    } catch (err) {
      setStatus(`Not stored: ${String((err as Error)?.message ?? err)}`)
    }
  }
  return (
    <>
      {workspace && (
        <dl className="server-info">
          <dt>Workspace</dt>
          <dd data-testid="workspace-path">{workspace.path}</dd>
          <dt>Trust</dt>
          <dd>{trustText(workspace)}</dd>
        </dl>
      )}
      {info && (
        <form
          className="field"
          onSubmit={(e) => {
            e.preventDefault()
            void save()
          }}
        >
          <label htmlFor="api-key">API key for {info.provider}</label>
          <input id="api-key" type="password" autoComplete="off" value={key} placeholder={info.stored ? 'stored (type to replace)' : 'none stored'} onChange={(e) => setKey(e.target.value)} />
          <p className="muted small">
            Kept in the system keychain, never in the page.
            {info.from_env && ` ${info.from_env} is set in the environment: it wins over the keychain.`}
          </p>
          <button type="submit" disabled={!key && !info.stored}>
            {key || !info.stored ? 'Store key' : 'Remove key'}
          </button>
          {status && (
            <p role="status" className="small">
              {status}
            </p>
          )}
        </form>
      )}
    </>
  )
}
