import type { Health, ModelInfo, Workspace } from '../types'
import { trustBadge, trustText, type WorkspaceInfo } from '../desktop'
import { trustLabel, trustText as levelText } from '../workspaces'
import { Icon } from './Icon'

/** Header holds the model picker, the provider's status and the page's menus. */
export function Header({
  models,
  model,
  onModel,
  health,
  onUsage,
  onWorkspaces,
  onSettings,
  onSessions,
  drawerOpen,
  title,
  workspace,
  onChooseWorkspace,
  served,
}: {
  models: ModelInfo[]
  model: string
  onModel(m: string): void
  health?: Health
  onUsage(): void
  /** Opens the workspaces view (absent: no such button). */
  onWorkspaces?(): void
  onSettings(): void
  onSessions(): void
  drawerOpen: boolean
  title: string
  /** The desktop app's workspace, and how to choose another (absent in a browser). */
  workspace?: WorkspaceInfo
  onChooseWorkspace?: () => void
  /** On a server of many workspaces, the one the page works in (the sidebar switches it). */
  served?: Workspace
}) {
  const reachable = health?.provider.reachable
  const names = models.map((m) => m.name)
  if (model && !names.includes(model)) names.unshift(model)
  return (
    <header className="topbar">
      <button type="button" className="icon menu" aria-label="Show sessions" aria-expanded={drawerOpen} aria-controls="sessions" onClick={onSessions}>
        <Icon name="menu" size={20} />
      </button>
      <h1 className="title" title={title}>
        {title}
      </h1>
      <div className="topbar-tools">
        {onChooseWorkspace && (
          <button
            type="button"
            className={`workspace ${workspace && (workspace.commands === 'allowed' || workspace.edits === 'allowed') ? 'free' : ''}`}
            data-testid="workspace"
            aria-label={workspace ? `Workspace ${workspace.name}: ${trustText(workspace)}. Choose another folder` : 'Choose a workspace folder'}
            title={workspace ? `${workspace.path}\n${trustText(workspace)}\nClick to open another folder (Ctrl+O)` : 'Open a folder (Ctrl+O)'}
            onClick={onChooseWorkspace}
          >
            <Icon name="folder" />
            <span className="workspace-name">{workspace?.name ?? 'Open folder…'}</span>
            {workspace && <span className="workspace-trust">{trustBadge(workspace)}</span>}
          </button>
        )}
        {served && (
          <span
            className={`workspace served${served.trust === 'trusted' ? ' free' : ''}`}
            data-testid="current-workspace"
            title={`${served.path}\n${trustLabel(served.trust)}${served.trust_chosen === false ? ' (not chosen yet)' : ''}: ${levelText[served.trust] ?? ''}`}
          >
            <Icon name="folder" />
            <span className="sr-only">Workspace </span>
            <span className="workspace-name">{served.name}</span>
            <span className="sr-only">, trust: </span>
            <span className="workspace-trust">{trustLabel(served.trust)}</span>
          </span>
        )}
        <span
          className={`status ${health === undefined ? 'unknown' : reachable ? (health.model?.available === false ? 'warn' : 'ok') : 'bad'}`}
          data-testid="provider-status"
          data-reachable={health === undefined ? undefined : String(!!reachable)}
          title={health ? statusText(health) : 'Checking the model server…'}
        >
          <span className="dot" aria-hidden="true" />
          <span className="status-text">{health ? `${health.provider.kind}${reachable ? '' : ': unreachable'}` : '…'}</span>
        </span>
        <select aria-label="Model" value={model} onChange={(e) => onModel(e.target.value)} disabled={names.length === 0}>
          {names.length === 0 && <option value="">no models</option>}
          {names.map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
        {onWorkspaces && (
          <button type="button" onClick={onWorkspaces}>
            Workspaces
          </button>
        )}
        <button type="button" onClick={onUsage}>
          Usage
        </button>
        <button type="button" onClick={onSettings}>
          Settings
        </button>
      </div>
    </header>
  )
}

/** statusText says in a line how the model server is. */
export function statusText(h: Health): string {
  if (!h.provider.reachable) return `${h.provider.kind} at ${h.provider.base_url ?? '?'} is unreachable`
  const model = h.model ? (h.model.available ? `, ${h.model.name} is ready` : `, ${h.model.name} is missing`) : ''
  return `${h.provider.kind} ${h.provider.version ?? ''} at ${h.provider.base_url ?? '?'} answers in ${h.provider.latency_ms} ms${model}`
}

/** ProviderProblem is the banner that says what is wrong with the model server and the fix. */
export function ProviderProblem({ health, onRetry }: { health?: Health; onRetry(): void }) {
  if (!health) return null
  let text: string | undefined
  let fix: string | undefined
  if (!health.provider.reachable) {
    text = health.provider.error?.message ?? `The model server at ${health.provider.base_url} does not answer.`
    fix = health.provider.error?.hint
  } else if (health.model && !health.model.available) {
    text = health.model.error?.message ?? `The model ${health.model.name} is not on the server.`
    fix = health.model.error?.hint
  }
  if (!text) return null
  return (
    <div className="banner" role="alert" data-testid="provider-problem">
      <p>
        <strong>{text}</strong>
      </p>
      {fix && <p className="fix">{fix}</p>}
      <button type="button" onClick={onRetry}>
        Check again
      </button>
    </div>
  )
}
