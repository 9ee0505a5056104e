// Undo, redo, rewind and fork in words: what the page says of a restore,
// made or previewed (POST …/undo, …/redo, …/rewind; docs/api.md).

import type { RestoreView } from './history'
import type { FileAction, RestoreResult } from './types'

/** What a restore does to a path, in a word or two. */
export function actionText(action?: FileAction): string {
  switch (action) {
    case 'create':
      return 'brought back'
    case 'delete':
      return 'removed'
    case 'modify':
      return 'changed back'
    case 'chmod':
      return 'mode restored'
    case 'retype':
      return 'type restored'
    default:
      return 'restored'
  }
}

/** What is being done, for a dialog or a button: the restore's verb. */
export type RestoreKind = 'undo' | 'redo' | 'rewind' | 'fork'

/** How much of a session a rewind takes back. */
export type RewindScope = 'both' | 'files' | 'conversation'

/**
 * restoreTitle says what a restore did, in a line; prompt is the text of
 * the turn it undid or redid, when the page knows it.
 */
export function restoreTitle(r: RestoreView, prompt?: string): string {
  const turn = prompt ? ` of “${truncate(prompt, 60)}”` : ' of a turn'
  switch (r.op) {
    case 'undo':
      return `Undid the file changes${turn}`
    case 'redo':
      return `Redid the file changes${turn}`
    default: {
      if (!r.through) return 'Brought the files back to an earlier checkpoint'
      const conv = r.conversation && r.conversation.removed > 0
      const files = r.files.length > 0
      return `Rewound ${conv && files ? 'the files and the conversation' : conv ? 'the conversation' : 'the files'} to here`
    }
  }
}

/** filesText lists the paths a restore changed, with what it did to each. */
export function filesText(files: RestoreView['files'], max = 5): string {
  if (files.length === 0) return 'No file changed.'
  const shown = files.slice(0, max).map((f) => (f.action ? `${f.path} (${actionText(f.action)})` : f.path))
  const more = files.length > max ? ` and ${files.length - max} more` : ''
  return `${files.length === 1 ? '1 file' : `${files.length} files`}: ${shown.join(', ')}${more}.`
}

/**
 * conversationText says what a preview of kind does to the conversation:
 * what it loses, or that it stays.
 */
export function conversationText(kind: RestoreKind, p?: Pick<RestoreResult, 'conversation'>): string {
  if (kind === 'undo' || kind === 'redo') return 'The conversation stays as it is: only files change.'
  if (kind === 'fork') return 'This session stays as it is: the new one holds its conversation up to here.'
  const c = p?.conversation
  if (!c) return 'The conversation stays as it is.'
  if (c.removed === 0) return 'The conversation already ends here: no message is removed.'
  return `The conversation loses the ${c.removed === 1 ? 'message' : `${c.removed} messages`} after this point. They are not lost: the whole conversation is kept in an archived session first.`
}

/** nothingChanges reports whether a preview would change nothing at all. */
export function nothingChanges(p: Pick<RestoreResult, 'files' | 'conversation' | 'failed'>): boolean {
  return p.files.length === 0 && !(p.conversation && p.conversation.removed > 0) && !p.failed?.length
}

/** The dialog's title for what is asked. */
export function dialogTitle(kind: RestoreKind, where?: 'before' | 'here'): string {
  switch (kind) {
    case 'undo':
      return 'Undo the last turn’s changes?'
    case 'redo':
      return 'Redo what the last undo took back?'
    case 'rewind':
      return where === 'before' ? 'Rewind to before this message?' : 'Rewind to here?'
    case 'fork':
      return 'Fork a new session from here'
  }
}

/** The confirm button's label when nothing conflicts. */
export function confirmLabel(kind: RestoreKind): string {
  return { undo: 'Undo', redo: 'Redo', rewind: 'Rewind', fork: 'Fork' }[kind]
}

function truncate(s: string, n: number): string {
  const line = s.replace(/\s+/g, ' ').trim()
  return line.length > n ? line.slice(0, n - 1) + '…' : line
}
