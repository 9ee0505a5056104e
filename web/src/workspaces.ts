// The workspaces list and the "Add workspace" form's state: pure logic,
// tested without a page.

import type { Workspace } from './types'

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

/** What trust means, in a few words (recorded, not yet enforced). */
export const trustText: Record<string, string> = {
  untrusted: 'untrusted: its own config may only tighten',
  'read-only': 'read-only: reading only',
  trusted: 'trusted: its own config applies',
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
