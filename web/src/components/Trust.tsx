import { useId, useState } from 'react'
import type { TrustLevel, Workspace } from '../types'
import { trustLabel, trustLevels } from '../workspaces'
import { Dialog } from './Dialog'

/**
 * TrustChoice is the choice of a trust level: a radio for each, with what
 * it means. value "" checks none (the form's "not chosen").
 */
export function TrustChoice({
  name,
  legend,
  value,
  onChange,
  disabled,
  autoFocus,
}: {
  name: string
  legend: React.ReactNode
  value: TrustLevel | ''
  onChange(level: TrustLevel): void
  disabled?: boolean
  /** Marks the checked radio for the dialog's first focus. */
  autoFocus?: boolean
}) {
  const id = useId()
  return (
    <fieldset className="trust-choice" disabled={disabled}>
      <legend>{legend}</legend>
      {trustLevels.map((t) => (
        <div key={t.value} className={`trust-option trust-${t.value}`}>
          <input
            type="radio"
            id={`${id}-${t.value}`}
            name={name}
            value={t.value}
            checked={value === t.value}
            onChange={() => onChange(t.value)}
            aria-describedby={`${id}-${t.value}-text`}
            data-autofocus={autoFocus && value === t.value ? '' : undefined}
          />
          <label htmlFor={`${id}-${t.value}`}>{t.label}</label>
          <p id={`${id}-${t.value}-text`} className="muted small">
            {t.text}
          </p>
        </div>
      ))}
    </fieldset>
  )
}

/**
 * TrustDialog asks how far the user trusts a workspace's folder: once a
 * page load for one whose trust was never chosen ("Decide later" leaves it
 * untrusted, and it is asked again next time), or on demand to change it.
 * onSave saves the choice; an error it throws is shown here, the choice
 * kept, so that it can be saved again.
 */
export function TrustDialog({ workspace, onSave, onClose }: { workspace: Workspace; onSave(level: TrustLevel): Promise<void>; onClose(): void }) {
  const [choice, setChoice] = useState<TrustLevel>(workspace.trust)
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<string>()
  const chosen = workspace.trust_chosen !== false
  const save = async (e: React.FormEvent) => {
    e.preventDefault()
    if (saving) return
    setSaving(true)
    setError(undefined)
    try {
      await onSave(choice)
    } catch (err) {
      setError(`Not saved: ${(err as Error).message}`)
      setSaving(false)
    }
  }
  const close = () => !saving && onClose()
  return (
    <Dialog title="Do you trust this folder?" onClose={close}>
      <form className="trust-dialog" data-testid="trust-dialog" onSubmit={(e) => void save(e)}>
        <p>
          Hearth works in <strong>{workspace.name}</strong>: <code className="trust-path">{workspace.path}</code>
        </p>
        <p className="muted small">
          {workspace.config_changed
            ? 'You trusted it, but its .hearth/config.toml appeared or changed since: until you trust it again, that file is read as an untrusted folder’s.'
            : chosen
            ? `It is ${trustLabel(workspace.trust).toLowerCase()} now.`
            : 'You have not said yet: until you do, it is untrusted, and this is asked again each time the page loads.'}{' '}
          Trust only a folder whose files you know: a trusted folder’s own config can start programs (MCP servers) and send your work to other providers.
        </p>
        <TrustChoice name="trust-level" legend="Trust this folder as" value={choice} onChange={(l) => !saving && setChoice(l)} autoFocus />
        {error && (
          <p role="alert" className="turn-error" data-testid="trust-error">
            {error}
          </p>
        )}
        <div className="dialog-actions">
          {/* Not disabled while saving, which would drop the focus: a click then does nothing. */}
          <button type="button" onClick={close} aria-disabled={saving || undefined}>
            {chosen ? 'Cancel' : 'Decide later'}
          </button>
          <button type="submit" className="primary" aria-disabled={saving || undefined}>
            {saving ? 'Saving…' : 'Save'}
          </button>
        </div>
      </form>
    </Dialog>
  )
}
