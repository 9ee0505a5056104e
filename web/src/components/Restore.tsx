import { useEffect, useRef, useState } from 'react'
import { APIError, type Client } from '../api'
import type { RestoreView } from '../history'
import {
  actionText,
  confirmLabel,
  conversationText,
  dialogTitle,
  filesText,
  nothingChanges,
  restoreTitle,
  type RestoreKind,
  type RewindScope,
} from '../restore'
import type { ForkResult, RestoreOptions, RestoreResult } from '../types'
import { Dialog } from './Dialog'
import { Icon } from './Icon'

/** What the user asked to take back, or to fork. */
export type RestoreAction =
  | { kind: 'undo' }
  | { kind: 'redo' }
  /**
   * through: the message to rewind to (0: the start of the session);
   * prompt: the one taken back ("before"), for the message box.
   */
  | { kind: 'rewind'; through: number; where: 'before' | 'here'; prompt?: string }
  | { kind: 'fork'; through: number }

/** What a confirmed action did. */
export type RestoreDone = { kind: 'restore'; result: RestoreResult } | { kind: 'fork'; result: ForkResult }

/**
 * RestoreDialog previews an undo, a redo, a rewind or a fork (a dry run
 * on the server), shows what it changes, and makes it once confirmed. Files
 * changed after the agent changed them are highlighted, and confirming
 * then means choosing: overwrite them (they are kept in a checkpoint) or
 * keep them.
 */
export function RestoreDialog({
  client,
  sessionId,
  action,
  onDone,
  onClose,
}: {
  client: Client
  sessionId: string
  action: RestoreAction
  onDone(d: RestoreDone): void
  onClose(): void
}) {
  const kind: RestoreKind = action.kind
  const [scope, setScope] = useState<RewindScope>('both')
  const [forkFiles, setForkFiles] = useState(false)
  const [forkTitle, setForkTitle] = useState('')
  const [preview, setPreview] = useState<RestoreResult>()
  const [problem, setProblem] = useState<APIError>()
  const [loading, setLoading] = useState(true)
  const [applying, setApplying] = useState(false)
  const [applyError, setApplyError] = useState<string>()
  // Set when the files changed between the preview and the confirm.
  const [changedSince, setChangedSince] = useState(false)
  const asked = useRef(0)

  const request = (opts: RestoreOptions) => {
    switch (action.kind) {
      case 'undo':
        return client.undo(sessionId, opts)
      case 'redo':
        return client.redo(sessionId, opts)
      case 'rewind':
        return client.rewind(sessionId, {
          ...(action.through > 0 ? { through: action.through } : { start: true }),
          ...(scope === 'files' ? { files_only: true } : scope === 'conversation' ? { conversation_only: true } : {}),
          ...opts,
        })
      case 'fork':
        // The files a fork would bring back: a rewind of the files, previewed.
        return client.rewind(sessionId, { through: action.through, files_only: true, ...opts })
    }
  }

  // The preview, asked again when the choice changes.
  useEffect(() => {
    const n = ++asked.current
    setPreview(undefined)
    setProblem(undefined)
    setApplyError(undefined)
    setChangedSince(false)
    if (action.kind === 'fork' && !forkFiles) {
      setLoading(false)
      return
    }
    setLoading(true)
    request({ dry_run: true })
      .then((p) => n === asked.current && setPreview(p))
      .catch((err) => n === asked.current && setProblem(err instanceof APIError ? err : new APIError(0, 'error', String(err))))
      .finally(() => n === asked.current && setLoading(false))
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [scope, forkFiles])

  const apply = async (opts: RestoreOptions) => {
    setApplying(true)
    setApplyError(undefined)
    try {
      if (action.kind === 'fork') {
        const result = await client.fork(sessionId, {
          through: action.through,
          ...(forkFiles ? { files: true } : {}),
          ...(forkTitle.trim() ? { title: forkTitle.trim() } : {}),
          ...opts,
        })
        onDone({ kind: 'fork', result })
      } else {
        onDone({ kind: 'restore', result: await request(opts) })
      }
    } catch (err) {
      if (err instanceof APIError && err.code === 'restore_conflict' && preview) {
        // Someone changed files since the preview: ask again, about them.
        setPreview({ ...preview, conflicts: err.paths ?? [] })
        setChangedSince(true)
      } else {
        setApplyError((err as Error).message)
      }
    } finally {
      setApplying(false)
    }
  }

  const conflicts = preview?.conflicts ?? []
  const blocked = loading || applying || (!!problem && !(kind === 'fork' && !forkFiles))
  // (An undo or a redo that changes no file is still made: the next one
  // goes to the turn before.)
  const nothing = !!preview && kind === 'rewind' && nothingChanges(preview)
  const conflicted = new Set(conflicts)

  return (
    <Dialog title={dialogTitle(kind, action.kind === 'rewind' ? action.where : undefined)} onClose={onClose} wide>
      <div className="restore-dialog" data-testid="restore-dialog" data-kind={kind}>
        {action.kind === 'rewind' && (
          <fieldset className="scope">
            <legend>Take back</legend>
            {(
              [
                ['both', 'Files and conversation'],
                ['files', 'Files only'],
                ['conversation', 'Conversation only'],
              ] as const
            ).map(([v, label]) => (
              <label key={v}>
                <input type="radio" name="rewind-scope" value={v} checked={scope === v} onChange={() => setScope(v)} /> {label}
              </label>
            ))}
          </fieldset>
        )}
        {action.kind === 'fork' && (
          <>
            <label className="field">
              <span>Title of the new session</span>
              <input value={forkTitle} maxLength={200} placeholder="(this session’s, marked as a fork)" onChange={(e) => setForkTitle(e.target.value)} />
            </label>
            <label className="field check">
              <input type="checkbox" checked={forkFiles} onChange={(e) => setForkFiles(e.target.checked)} />
              <span>Also bring the files back to how they were here</span>
            </label>
          </>
        )}
        {loading && (
          <p className="muted" role="status">
            <span className="spinner" aria-hidden="true" /> Working out what would change…
          </p>
        )}
        {problem && (
          <p className="turn-error" role="alert" data-testid="restore-problem">
            {problemText(problem)}
          </p>
        )}
        {preview && (
          <section className="restore-preview" aria-label="What would change" data-testid="restore-preview">
            {(preview.files.length > 0 || kind !== 'rewind' || scope !== 'conversation') && (
              <>
                <h3>Files</h3>
                {preview.files.length === 0 ? (
                  <p className="muted">No file would change.</p>
                ) : (
                  <ul className="restore-files">
                    {preview.files.map((f) => (
                      <li
                        key={f.path}
                        data-testid="restore-file"
                        data-path={f.path}
                        data-action={f.action}
                        data-conflict={conflicted.has(f.path) || undefined}
                        className={conflicted.has(f.path) ? 'conflict' : undefined}
                      >
                        <span className={`file-action action-${f.action}`}>{actionText(f.action)}</span> <code>{f.path}</code>
                        {conflicted.has(f.path) && <strong className="conflict-mark"> changed since the agent’s edit</strong>}
                      </li>
                    ))}
                  </ul>
                )}
                {conflicts.length > 0 && (
                  <p className="conflict-note" role="note" data-testid="restore-conflicts">
                    {changedSince ? 'Files changed since this preview was made. ' : ''}
                    {conflicts.length === 1 ? 'One of these files was' : `${conflicts.length} of these files were`} changed after the agent changed{' '}
                    {conflicts.length === 1 ? 'it' : 'them'} (by you, an editor or another program). Restoring {conflicts.length === 1 ? 'it' : 'them'} would
                    overwrite that work: choose whether to overwrite {conflicts.length === 1 ? 'it' : 'them'} (what is there now is kept in a checkpoint, so
                    nothing is lost) or to keep your version.
                  </p>
                )}
                {preview.failed && preview.failed.length > 0 && (
                  <div className="restore-failed">
                    <p>These cannot be restored:</p>
                    <ul>
                      {preview.failed.map((f) => (
                        <li key={f.path}>
                          <code>{f.path}</code>: {f.reason}
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
              </>
            )}
            <h3>Conversation</h3>
            <p data-testid="restore-conversation">{conversationText(kind, preview)}</p>
            {nothing && <p className="muted">Nothing would change.</p>}
            {!!preview && (kind === 'undo' || kind === 'redo') && preview.files.length === 0 && !preview.failed?.length && (
              <p className="muted">
                The files are already as the {kind} would make them. {kind === 'undo' ? 'Undo' : 'Redo'} it all the same to go on to the turn{' '}
                {kind === 'undo' ? 'before' : 'after'}.
              </p>
            )}
          </section>
        )}
        {kind === 'fork' && !forkFiles && !problem && <p>{conversationText('fork')} The files stay as they are.</p>}
        {applyError && (
          <p className="turn-error" role="alert">
            {applyError}
          </p>
        )}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>
            Cancel
          </button>
          {conflicts.length > 0 ? (
            <>
              <button type="button" disabled={blocked} onClick={() => void apply({ keep: conflicts })}>
                Keep my changes
              </button>
              <button type="button" className="danger" disabled={blocked} onClick={() => void apply({ overwrite: true })}>
                Overwrite my changes
              </button>
            </>
          ) : (
            <button type="button" className="primary" disabled={blocked || nothing} onClick={() => void apply({})}>
              {confirmLabel(kind)}
            </button>
          )}
        </div>
      </div>
    </Dialog>
  )
}

/** problemText says why a preview could not be made, and what to do. */
export function problemText(err: APIError): string {
  switch (err.code) {
    case 'nothing_to_undo':
      return 'Nothing to undo: no turn of this session changed files that is not undone already.'
    case 'nothing_to_redo':
      return 'Nothing to redo: there is no undo to take back since the last turn that changed files.'
    case 'checkpoints_off':
      return 'Hearth keeps no checkpoints here (no workspace, or turned off), so files cannot be restored. The conversation can still be rewound: choose “Conversation only”.'
    case 'session_busy':
      return 'A turn is running in this session: wait for it to end, or stop it, then try again.'
    default:
      return err.message
  }
}

/** RestoreNote is a restore in the conversation: what was brought back. */
export function RestoreNote({ restore, prompt, onOpen }: { restore: RestoreView; prompt?: string; onOpen?: (id: string) => void }) {
  const c = restore.conversation
  return (
    <div className="restore-note" data-testid="restore" data-op={restore.op} role="note" aria-label={restoreTitle(restore, prompt)}>
      <span className="restore-icon" aria-hidden="true">
        <Icon name={restore.op === 'redo' ? 'redo' : 'undo'} size={14} />
      </span>
      <div>
        <strong>{restoreTitle(restore, prompt)}.</strong>{' '}
        {(restore.files.length > 0 || !c) && <span data-testid="restore-files">{filesText(restore.files)}</span>}
        {restore.kept && restore.kept.length > 0 && <span> Left as you changed them: {restore.kept.join(', ')}.</span>}
        {restore.failed && restore.failed.length > 0 && (
          <span className="bad"> Could not restore: {restore.failed.map((f) => `${f.path} (${f.reason})`).join('; ')}.</span>
        )}
        {c && c.removed > 0 && (
          <span>
            {' '}
            {c.removed === 1 ? 'One message was' : `${c.removed} messages were`} taken out of the conversation
            {c.archived ? (
              <>
                {'; they are kept in an '}
                {onOpen ? (
                  <button type="button" className="link" onClick={() => onOpen(c.archived!)}>
                    archived session
                  </button>
                ) : (
                  'archived session'
                )}
              </>
            ) : null}
            .
          </span>
        )}
        {restore.checkpoint ? <span className="muted"> What was there before is kept in checkpoint #{restore.checkpoint}.</span> : null}
      </div>
    </div>
  )
}

/** What a message offers: rewind and fork, each only where it applies. */
export interface MessageActionsProps {
  /** "Rewind to before this" (a user message) or "Rewind to here" (an answer). */
  onRewind?: () => void
  rewindLabel?: string
  onFork?: () => void
  disabled?: boolean
}

/** MessageActions are the buttons under a message. */
export function MessageActions({ onRewind, rewindLabel, onFork, disabled }: MessageActionsProps) {
  if (!onRewind && !onFork) return null
  return (
    <div className="message-actions" data-testid="message-actions">
      {onRewind && (
        <button type="button" className="icon text" disabled={disabled} onClick={onRewind} title="Bring the files and the conversation back to this point (with a preview first)">
          <Icon name="undo" size={14} /> {rewindLabel}
        </button>
      )}
      {onFork && (
        <button type="button" className="icon text" disabled={disabled} onClick={onFork} title="Start a new session with the conversation up to here">
          <Icon name="fork" size={14} /> Fork from here
        </button>
      )}
    </div>
  )
}
