import { useId } from 'react'
import { currentStep, progress, statusLabel } from '../plan'
import type { PlanStep } from '../types'
import { Icon } from './Icon'

/**
 * PlanPanel is the model's checklist of its task, kept in view above the
 * conversation: each step with its state, in a mark and in words (done:
 * ticked and muted; in progress: highlighted and labelled; pending: an
 * empty box; skipped: struck through, with its reason). Folded, it keeps
 * its header: the count, and the step under way.
 */
export function PlanPanel({ steps, open, onToggle }: { steps: PlanStep[]; open: boolean; onToggle(): void }) {
  const id = useId()
  const { finished, total } = progress(steps)
  const now = currentStep(steps)
  const summary = `${finished} of ${total} ${total === 1 ? 'step' : 'steps'} finished`
  return (
    <section className={`plan-panel${open ? ' open' : ''}`} aria-labelledby={`${id}-title`} data-testid="plan" data-finished={finished} data-total={total}>
      <div className="plan-box">
        <h2 className="plan-title" id={`${id}-title`}>
          <button type="button" className="plan-toggle" aria-expanded={open} aria-controls={`${id}-steps`} onClick={onToggle}>
            <Icon name={open ? 'down' : 'right'} size={14} />
            <span className="plan-name">Plan</span>
            <span className="plan-count" aria-hidden="true" data-testid="plan-count">
              {finished}/{total}
            </span>
            <span className="sr-only">: {summary}</span>
            {!open && now && (
              <span className="plan-now muted">
                · {now.status === 'in_progress' ? 'Now' : 'Next'}: {now.step}
              </span>
            )}
          </button>
        </h2>
        {open && (
          <ol className="plan-steps" id={`${id}-steps`} role="list" aria-label={`Plan steps, ${summary}`}>
            {steps.map((s, i) => (
              <li
                key={i}
                className={`plan-step status-${s.status}`}
                data-testid="plan-step"
                data-status={s.status}
                aria-current={s.status === 'in_progress' ? 'step' : undefined}
              >
                <span className="plan-mark" aria-hidden="true">
                  {s.status === 'done' ? <Icon name="check" size={13} /> : s.status === 'skipped' ? <Icon name="minus" size={13} /> : null}
                </span>
                <span className="sr-only">{statusLabel(s.status)}: </span>
                <span className="plan-text">{s.step}</span>
                {s.status === 'in_progress' && (
                  <span className="plan-badge" aria-hidden="true">
                    In progress
                  </span>
                )}
                {s.status === 'skipped' && (
                  <span className="plan-reason">
                    <span aria-hidden="true">skipped</span>
                    {s.reason ? `: ${s.reason}` : ''}
                  </span>
                )}
              </li>
            ))}
          </ol>
        )}
      </div>
    </section>
  )
}
