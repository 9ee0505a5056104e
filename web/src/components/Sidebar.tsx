import { useEffect, useRef, useState, type ReactNode } from 'react'
import type { Session } from '../types'
import { Dialog } from './Dialog'
import { Icon } from './Icon'

/** What the sidebar asks of the page. */
export interface SidebarProps {
  /** On a phone, whether the sidebar (a drawer there) is open; undefined on a wide screen. */
  drawer?: boolean
  sessions: Session[]
  activeId?: string
  query: string
  onQuery(q: string): void
  onNew(): void
  onOpen(id: string): void
  onRename(id: string, title: string): Promise<void>
  onDelete(id: string): Promise<void>
  /** The list holds the archived sessions instead of the others. */
  archived?: boolean
  onArchived?(archived: boolean): void
  /** Brings an archived session back to the list. */
  onUnarchive?(id: string): void
  error?: string
  /** The workspace whose sessions are listed (undefined: every one's), and how to list them all again. */
  workspace?: string
  onAllWorkspaces?(): void
  /** Above "New chat": the workspace switcher, on a server of many workspaces. */
  top?: ReactNode
  /**
   * On a server of many workspaces: whether every workspace's sessions
   * are listed rather than the current one's, and the toggle.
   */
  allWorkspaces?: boolean
  onAllWorkspacesToggle?(all: boolean): void
  /** The name of a session's workspace, shown by each session when every workspace's are listed. */
  workspaceName?(path: string): string
}

/** Sidebar lists the sessions: new, switch, rename, delete, search, and the archived ones. */
export function Sidebar(p: SidebarProps) {
  const [renaming, setRenaming] = useState<string>()
  const [deleting, setDeleting] = useState<Session>()
  const [busy, setBusy] = useState(false)
  const nav = useRef<HTMLElement>(null)
  // An opened drawer takes the focus, on "New chat".
  useEffect(() => {
    if (p.drawer) (nav.current?.querySelector<HTMLElement>('.new-chat') ?? nav.current?.querySelector<HTMLElement>('button'))?.focus()
  }, [p.drawer])
  // After a rename or a delete, the focus goes back to the list, not to
  // the page's start.
  const focusItem = (id?: string) =>
    requestAnimationFrame(() =>
      (
        (id && nav.current?.querySelector<HTMLElement>(`[data-session-id="${CSS.escape(id)}"] .session-open`)) ||
        nav.current?.querySelector<HTMLElement>('.session-open, .new-chat')
      )?.focus(),
    )
  return (
    <nav className="sidebar" aria-label="Sessions" id="sessions" ref={nav} inert={p.drawer === false ? true : undefined}>
      <div className="sidebar-top">
        {p.top}
        <button type="button" className="primary new-chat" onClick={p.onNew}>
          <Icon name="plus" /> New chat
        </button>
        <input
          type="search"
          className="search"
          aria-label="Search sessions"
          placeholder="Search sessions"
          value={p.query}
          onChange={(e) => p.onQuery(e.target.value)}
        />
        <div className="sidebar-toggles">
          {p.onArchived && (
            <button
              type="button"
              className={`archived-toggle${p.archived ? ' on' : ''}`}
              aria-pressed={!!p.archived}
              title={p.archived ? 'Back to the sessions' : 'Show the archived sessions'}
              onClick={() => p.onArchived?.(!p.archived)}
            >
              <Icon name="archive" size={14} /> Archived
            </button>
          )}
          {p.onAllWorkspacesToggle && (
            <button
              type="button"
              className={`archived-toggle${p.allWorkspaces ? ' on' : ''}`}
              aria-pressed={!!p.allWorkspaces}
              title={p.allWorkspaces ? 'List the current workspace’s sessions only' : 'List the sessions of every workspace'}
              onClick={() => p.onAllWorkspacesToggle?.(!p.allWorkspaces)}
            >
              <Icon name="folder" size={14} /> All workspaces
            </button>
          )}
        </div>
      </div>
      {p.workspace !== undefined && (
        <p className="sidebar-filter small" data-testid="workspace-filter">
          In <code>{p.workspace || 'the unknown workspace'}</code>{' '}
          <button type="button" className="link" onClick={p.onAllWorkspaces}>
            all workspaces
          </button>
        </p>
      )}
      {p.error && (
        <p className="sidebar-error" role="alert">
          {p.error}
        </p>
      )}
      <ul className="session-list">
        {p.sessions.length === 0 && (
          <li className="empty">{p.query ? 'No session matches.' : p.archived ? 'No archived sessions.' : 'No sessions yet.'}</li>
        )}
        {p.sessions.map((s) => (
          <li key={s.id} data-testid="session-item" data-session-id={s.id} className={s.id === p.activeId ? 'active' : ''}>
            {renaming === s.id ? (
              <RenameInput
                title={s.title}
                onDone={async (title) => {
                  setRenaming(undefined)
                  focusItem(s.id)
                  if (title !== undefined && title.trim() && title.trim() !== s.title) await p.onRename(s.id, title.trim())
                }}
              />
            ) : (
              <button
                type="button"
                className="session-open"
                aria-current={s.id === p.activeId ? 'page' : undefined}
                onClick={() => p.onOpen(s.id)}
                title={s.title || 'Untitled'}
              >
                <span className="session-title">{s.title || 'Untitled'}</span>
                <span className="session-meta">
                  {p.allWorkspaces && p.workspaceName && (
                    <span className="session-ws" data-testid="session-workspace">
                      {p.workspaceName(s.workspace ?? '')}
                    </span>
                  )}
                  {s.running_turn ? <span className="running-dot" role="img" aria-label="a turn is running" /> : null}
                  {relativeTime(s.updated_at)}
                </span>
              </button>
            )}
            <span className="session-actions">
              {p.archived && p.onUnarchive && (
                <button type="button" className="icon" aria-label="Unarchive session" title="Unarchive: back to the list" onClick={() => p.onUnarchive?.(s.id)}>
                  <Icon name="undo" size={14} />
                </button>
              )}
              <button type="button" className="icon" aria-label="Rename session" title="Rename" onClick={() => setRenaming(s.id)}>
                <Icon name="pencil" size={14} />
              </button>
              <button type="button" className="icon" aria-label="Delete session" title="Delete" onClick={() => setDeleting(s)}>
                <Icon name="trash" size={14} />
              </button>
            </span>
          </li>
        ))}
      </ul>
      {deleting && (
        <Dialog title="Delete this session?" onClose={() => setDeleting(undefined)}>
          <p>
            “{deleting.title || 'Untitled'}” and its {deleting.message_count} messages will be deleted from this machine. This cannot be undone.
          </p>
          <div className="dialog-actions">
            <button type="button" onClick={() => setDeleting(undefined)}>
              Cancel
            </button>
            <button
              type="button"
              className="danger"
              disabled={busy}
              onClick={async () => {
                setBusy(true)
                try {
                  await p.onDelete(deleting.id)
                } finally {
                  setBusy(false)
                  setDeleting(undefined)
                  focusItem()
                }
              }}
            >
              Delete
            </button>
          </div>
        </Dialog>
      )}
    </nav>
  )
}

function RenameInput({ title, onDone }: { title: string; onDone(title?: string): void }) {
  const [value, setValue] = useState(title)
  const ref = useRef<HTMLInputElement>(null)
  const done = useRef(false)
  useEffect(() => {
    ref.current?.focus()
    ref.current?.select()
  }, [])
  const finish = (v?: string) => {
    if (done.current) return
    done.current = true
    onDone(v)
  }
  return (
    <input
      ref={ref}
      className="rename"
      aria-label="Session title"
      value={value}
      maxLength={200}
      onChange={(e) => setValue(e.target.value)}
      onKeyDown={(e) => {
        if (e.key === 'Enter') finish(value)
        if (e.key === 'Escape') {
          e.stopPropagation()
          finish(undefined)
        }
      }}
      onBlur={() => finish(value)}
    />
  )
}

/** relativeTime says how long ago a time was, briefly. */
export function relativeTime(iso: string, now = Date.now()): string {
  const t = Date.parse(iso)
  if (Number.isNaN(t)) return ''
  const s = Math.max(0, Math.round((now - t) / 1000))
  if (s < 60) return 'now'
  if (s < 3600) return `${Math.floor(s / 60)} min`
  if (s < 86400) return `${Math.floor(s / 3600)} h`
  if (s < 7 * 86400) return `${Math.floor(s / 86400)} d`
  return new Date(t).toLocaleDateString()
}
