// The workspaces: the list, the switcher (which workspace the page works
// in), when to ask whether a folder is trusted, and the "Add workspace"
// form's state: pure logic, tested without a page.

import type { TrustLevel, Workspace } from './types'

/** upsertWorkspace puts ws in the list (replacing the one of its path), most recently used first. */
export function upsertWorkspace(list: Workspace[], ws: Workspace): Workspace[] {
  const out = list.filter((w) => w.path !== ws.path)
  out.push(ws)
  return out.sort((a, b) => (a.last_used < b.last_used ? 1 : a.last_used > b.last_used ? -1 : a.path.localeCompare(b.path)))
}

/** workspaceLabel is what a selector shows for a workspace. */
export function workspaceLabel(w: Pick<Workspace, 'name' | 'path'>): string {
  if (w.path === '') return w.name || 'unknown'
  return w.name && w.name !== baseName(w.path) ? `${w.name} (${w.path})` : w.path
}

function baseName(p: string): string {
  const parts = p.split(/[\\/]/).filter(Boolean)
  return parts[parts.length - 1] ?? p
}

/** A trust level, named and explained: what the server enforces in a workspace of that trust. */
export interface TrustInfo {
  value: TrustLevel
  label: string
  text: string
}

/** The trust levels, from the freest to the default. */
export const trustLevels: readonly TrustInfo[] = [
  {
    value: 'trusted',
    label: 'Trusted',
    text: 'The project’s own config (.hearth/config.toml) applies as your own would: its profiles, providers, and MCP servers, which run as you, outside the sandbox. The agent’s own commands stay confined. If the file changes, it is read as untrusted until you trust the folder again.',
  },
  {
    value: 'read-only',
    label: 'Read-only',
    text: 'The agent may read and search but never change anything here, whatever the approval mode; commands run in a read-only sandbox.',
  },
  {
    value: 'untrusted',
    label: 'Untrusted',
    text: 'The default. The project’s config may only tighten your settings (no MCP servers or providers from it), and approval modes above “default” are not available.',
  },
]

/** What each trust level means (the texts of trustLevels). */
export const trustText: Record<string, string> = Object.fromEntries(trustLevels.map((t) => [t.value, t.text]))

/** trustLabel names a trust level ("Read-only"); an unknown one as it is. */
export function trustLabel(level: string): string {
  return trustLevels.find((t) => t.value === level)?.label ?? level
}

/**
 * switcherOptions are the workspaces a switcher offers: the listed ones
 * that have a folder (not the unknown workspace of the sessions recorded
 * without one), and the server's own even before it is listed (until its
 * first session), untrusted and never chosen — unless the server runs it
 * with a trust of its own (defTrust: hearth serve --trust), which it then
 * shows, and which needs no question. The server's own comes first, the
 * others by name.
 */
export function switcherOptions(list: readonly Workspace[], def: string | undefined, defTrust?: { trust: TrustLevel }): Workspace[] {
  let out = list.filter((w) => w.path !== '')
  if (def && !out.some((w) => w.path === def)) {
    out.push({ path: def, name: baseName(def), trust: 'untrusted', trust_chosen: false, created_at: '', last_used: '', sessions: 0 })
  }
  if (def && defTrust) {
    out = out.map((w) => (w.path === def ? { ...w, trust: defTrust.trust, trust_chosen: true } : w))
  }
  const rank = (w: Workspace) => (w.path === def ? 0 : 1)
  return out.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name) || a.path.localeCompare(b.path))
}

/**
 * currentWorkspace is the path of the workspace the page works in: the
 * saved choice while the switcher still offers it, else the server's own
 * (saved "" means the server's own).
 */
export function currentWorkspace(saved: string, options: readonly Pick<Workspace, 'path'>[], def: string): string {
  return saved && options.some((w) => w.path === saved) ? saved : def
}

/** savedWorkspace is what the settings keep for a choice: "" for the server's own, whichever folder it is. */
export function savedWorkspace(path: string, def: string): string {
  return path === def ? '' : path
}

/** optionLabel is a workspace's name in the switcher, with its folder when another one has the same name. */
export function optionLabel(w: Pick<Workspace, 'name' | 'path'>, options: readonly Pick<Workspace, 'name' | 'path'>[]): string {
  const name = w.name || baseName(w.path)
  const twins = options.filter((o) => (o.name || baseName(o.path)) === name).length
  return twins > 1 ? `${name} (${w.path})` : name
}

/**
 * askTrust says whether to ask the user how far they trust the workspace:
 * one with a folder whose trust was never chosen (an older server that does
 * not say is never asked), or a trusted one whose project config changed
 * since, not asked about yet in this page load.
 */
export function askTrust(w: Pick<Workspace, 'path' | 'trust_chosen' | 'config_changed'> | undefined, asked: ReadonlySet<string>): boolean {
  return !!w && w.path !== '' && (w.trust_chosen === false || w.config_changed === true) && !asked.has(w.path)
}

/**
 * sessionsFilter is the workspace whose sessions the sidebar lists
 * (undefined: every workspace's): a workspace chosen in the workspaces
 * view (filter) first; on a server of many workspaces the current one,
 * unless all are asked for; on a server of one, every one.
 */
export function sessionsFilter(s: { multiple: boolean; current?: string; all: boolean; filter?: string }): string | undefined {
  if (s.filter !== undefined) return s.filter
  if (!s.multiple || s.all) return undefined
  return s.current
}

/** The "Add workspace" form. */
export interface AddForm {
  path: string
  name: string
  trust: '' | 'untrusted' | 'read-only' | 'trusted'
  status: 'idle' | 'saving' | 'error' | 'added'
  error?: string
  /** The path of the workspace added last. */
  added?: string
}

export const emptyForm: AddForm = { path: '', name: '', trust: '', status: 'idle' }

export type AddAction =
  | { type: 'edit'; field: 'path' | 'name' | 'trust'; value: string }
  | { type: 'submit' }
  | { type: 'failed'; message: string }
  | { type: 'added'; workspace: Workspace }

/** addFormReducer moves the form from one state to the next. */
export function addFormReducer(s: AddForm, a: AddAction): AddForm {
  switch (a.type) {
    case 'edit':
      // Editing clears a past error (the user is fixing it).
      return { ...s, [a.field]: a.value, status: s.status === 'saving' ? 'saving' : 'idle', error: undefined }
    case 'submit':
      if (s.status === 'saving') return s
      if (!s.path.trim()) return { ...s, status: 'error', error: 'Give the folder’s full path, such as /home/me/project.' }
      return { ...s, status: 'saving', error: undefined }
    case 'failed':
      return { ...s, status: 'error', error: a.message }
    case 'added':
      return { ...emptyForm, status: 'added', added: a.workspace.path }
  }
}

/** addBody is the body of POST /v1/workspaces for the form (name and trust only when given). */
export function addBody(s: AddForm): { path: string; name?: string; trust?: string } {
  const body: { path: string; name?: string; trust?: string } = { path: s.path.trim() }
  if (s.name.trim()) body.name = s.name.trim()
  if (s.trust) body.trust = s.trust
  return body
}
