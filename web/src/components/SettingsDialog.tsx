import type { Settings, Theme } from '../settings'
import type { Health } from '../types'
import { Dialog } from './Dialog'

/** SettingsDialog changes the page's settings and shows what the server runs. */
export function SettingsDialog({
  settings,
  onChange,
  onClose,
  health,
}: {
  settings: Settings
  onChange(p: Partial<Settings>): void
  onClose(): void
  health?: Health
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
