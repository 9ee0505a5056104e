import { memo, useEffect, useRef, useState, type ReactNode } from 'react'
import { Markdown } from '../markdown'
import { planCallText, planTool, reminderText, stepsOfArgs } from '../plan'
import type { Block, ToolCard, TurnStatus } from '../turn'
import type { Decision } from '../types'
import { Icon } from './Icon'

/** Thinking is the model's reasoning: open while it streams, then folded. */
export function Thinking({ text, live, keepOpen }: { text: string; live: boolean; keepOpen: boolean }) {
  // The user's own toggle wins over the automatic one.
  const [userOpen, setUserOpen] = useState<boolean>()
  const open = userOpen ?? (live || keepOpen)
  const body = useRef<HTMLDivElement>(null)
  useEffect(() => {
    if (live && open && body.current) body.current.scrollTop = body.current.scrollHeight
  }, [text, live, open])
  return (
    <details
      className={`thinking${live ? ' live' : ''}`}
      data-testid="thinking"
      open={open}
      onToggle={(e) => {
        const now = (e.currentTarget as HTMLDetailsElement).open
        if (now !== open) setUserOpen(now)
      }}
    >
      <summary>
        {live ? <span className="spinner" aria-hidden="true" /> : null}
        {live ? 'Thinking…' : 'Thought'}
        {!live && !open ? <span className="muted"> · {text.length.toLocaleString()} characters</span> : null}
      </summary>
      <div className="thinking-body" ref={body}>
        {text}
      </div>
    </details>
  )
}

const stateLabel: Record<ToolCard['state'], string> = {
  pending: 'Requested',
  approval: 'Waiting for your approval',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
}

/** ToolCardView is one tool call, with its live state and the approval buttons. */
export const ToolCardView = memo(function ToolCardView({
  card,
  onAnswer,
}: {
  card: ToolCard
  onAnswer?: (id: string, d: Decision) => void
}) {
  const [expanded, setExpanded] = useState(false)
  const self = useRef<HTMLElement>(null)
  // The buttons go once answered: the focus stays on the card, not lost.
  const answer = (d: Decision) => {
    onAnswer?.(card.id, d)
    self.current?.focus()
  }
  const args = formatArgs(card.args)
  const summary = argSummary(card.args)
  const active = card.state === 'pending' || card.state === 'running'
  const failedLabel = card.decision === 'deny' ? 'Denied' : stateLabel.failed
  return (
    <section ref={self} tabIndex={-1} className={`tool-card state-${card.state}`} data-testid="tool-card" data-tool={card.name} data-state={card.state} aria-label={`Tool ${card.name}`}>
      <header>
        <span className="tool-icon" aria-hidden="true">
          {active ? <span className="spinner" /> : card.state === 'done' ? <Icon name="check" /> : card.state === 'failed' ? <Icon name="cross" /> : <Icon name="alert" />}
        </span>
        <span className="tool-name">{card.name}</span>
        {summary && <code className="tool-summary">{summary}</code>}
        {card.checkpoint !== undefined && (
          <span
            className="tool-checkpoint"
            data-testid="tool-checkpoint"
            title={`The files were saved before this call ran (checkpoint #${card.checkpoint}): undo or rewind can bring them back.${
              card.tooLarge ? ` Not kept, over the size cap: ${card.tooLarge.join(', ')}.` : ''
            }`}
          >
            <span className="sr-only">Files saved before this call: </span>checkpoint #{card.checkpoint}
            {card.tooLarge ? ' ⚠' : ''}
          </span>
        )}
        <span className="tool-state" role="status">
          {card.state === 'failed' ? failedLabel : stateLabel[card.state]}
        </span>
        <button type="button" className="icon" aria-expanded={expanded} aria-label={expanded ? 'Hide details' : 'Show details'} onClick={() => setExpanded(!expanded)}>
          <Icon name={expanded ? 'down' : 'right'} size={14} />
        </button>
      </header>
      {card.state === 'approval' && (
        <div className="approval">
          {card.reason && <p className="reason">{card.reason}</p>}
          <pre className="args">{args}</pre>
          <div className="approval-buttons">
            <button type="button" className="primary" onClick={() => answer('allow')}>
              Allow
            </button>
            <button type="button" onClick={() => answer('always')} title={`Allow ${card.name} for the rest of this session`}>
              Always allow
            </button>
            <button type="button" className="danger" onClick={() => answer('deny')}>
              Deny
            </button>
          </div>
        </div>
      )}
      {card.steps.length > 0 && (
        <ul className="steps">
          {card.steps.map((s, i) => (
            <li key={i} className={`step state-${s.state}`}>
              {s.state === 'running' ? '→' : s.state === 'done' ? '✓' : '✗'} {s.name}
            </li>
          ))}
        </ul>
      )}
      {card.output && card.steps.length === 0 && (card.state === 'running' || expanded) && <pre className="tool-output">{tail(card.output)}</pre>}
      {card.display && (card.state === 'done' || card.state === 'failed') && <Diff text={card.display} />}
      {expanded && (
        <div className="tool-details">
          {card.state !== 'approval' && <pre className="args">{args}</pre>}
          {card.result !== undefined && <pre className={`tool-result${card.state === 'failed' ? ' error' : ''}`}>{card.result}</pre>}
        </div>
      )}
      {!expanded && card.state === 'failed' && card.result && <p className="tool-error">{firstLine(card.result)}</p>}
    </section>
  )
})

/**
 * PlanCall is a call of the plan tool: one quiet line ("Plan updated:
 * 2/4"), since the plan panel shows the plan itself.
 */
export function PlanCall({ card }: { card: ToolCard }) {
  const text = planCallText(card.state, card.args, card.result)
  const steps = stepsOfArgs(card.args)
  const running = card.state === 'pending' || card.state === 'running'
  return (
    <p
      className={`plan-call state-${card.state}`}
      data-testid="tool-card"
      data-tool={card.name}
      data-state={card.state}
      title={steps && card.state === 'done' ? steps.map((s, i) => `${i + 1}. [${s.status.replace('_', ' ')}] ${s.step}`).join('\n') : undefined}
    >
      <span className="plan-call-icon" aria-hidden="true">
        {running ? <span className="spinner" /> : <Icon name={card.state === 'failed' ? 'cross' : 'list'} size={14} />}
      </span>
      {text}
    </p>
  )
}

/**
 * HearthNote is what Hearth itself told the model within the turn: the
 * model answered with steps of its plan open, and was sent back to them.
 * Hearth's words, not a prompt of the user's; the words are behind a
 * disclosure.
 */
export function HearthNote({ open, text }: { open?: number; text: string }) {
  return (
    <div className="hearth-note" data-testid="plan-reminder" role="note" aria-label="Note from Hearth">
      <details>
        <summary>
          <Icon name="back" size={14} /> {reminderText(open)}
        </summary>
        <p className="hearth-note-text">
          <span className="muted">Hearth told the model: </span>
          {text}
        </p>
      </details>
    </div>
  )
}

function Diff({ text }: { text: string }) {
  return (
    <pre className="diff">
      {text.split('\n').map((line, i) => (
        <span key={i} className={line.startsWith('+') && !line.startsWith('+++') ? 'add' : line.startsWith('-') && !line.startsWith('---') ? 'del' : line.startsWith('@@') ? 'hunk' : ''}>
          {line}
          {'\n'}
        </span>
      ))}
    </pre>
  )
}

/** AssistantMessage is one assistant turn: its blocks in order. */
export function AssistantMessage({
  blocks,
  status,
  error,
  partial,
  keepThinkingOpen,
  onAnswer,
  actions,
}: {
  blocks: Block[]
  status?: TurnStatus
  error?: { code: string; message: string }
  partial?: boolean
  keepThinkingOpen: boolean
  onAnswer?: (id: string, d: Decision) => void
  /** What the message offers (rewind, fork), under it. */
  actions?: ReactNode
}) {
  const running = status === 'running'
  const waiting = running && blocks.length === 0
  return (
    <article className="message assistant" data-testid="message" data-role="assistant" aria-busy={running || undefined}>
      {waiting && (
        <p className="waiting muted">
          <span className="spinner" aria-hidden="true" /> Waiting for the model…
        </p>
      )}
      {blocks.map((b, i, all) => {
        switch (b.kind) {
          case 'thinking':
            return <Thinking key={i} text={b.text} live={b.live} keepOpen={keepThinkingOpen} />
          case 'text':
            return (
              <div key={i} className="answer" data-testid="answer">
                <Markdown text={b.text} live={running && i === all.length - 1} />
              </div>
            )
          case 'tool':
            return b.name === planTool && b.state !== 'approval' ? <PlanCall key={i} card={b} /> : <ToolCardView key={i} card={b} onAnswer={onAnswer} />
          case 'reminder':
            return <HearthNote key={i} open={b.open} text={b.text} />
          case 'compressed':
            return (
              <p key={i} className="note muted">
                Older messages were summarised to fit the model’s context window.
              </p>
            )
        }
      })}
      {status === 'cancelled' && (
        <p className="turn-note" data-testid="turn-note">
          Cancelled: the reply so far is kept.
        </p>
      )}
      {status === 'max_turns' && (
        <p className="turn-note" data-testid="turn-note">
          Stopped after the most model calls a turn may make (max turns). Send “continue” to go on.
        </p>
      )}
      {partial && !status && !error && (
        <p className="turn-note" data-testid="turn-note">
          {blocks.length === 0
            ? 'No reply was saved: the turn failed or was stopped before the model answered.'
            : 'Cut short: this reply was cancelled or interrupted.'}
        </p>
      )}
      {error && (
        <div className="turn-error" role="alert">
          <strong>{errorTitle(error.code)}</strong> {error.message}
        </div>
      )}
      {actions}
    </article>
  )
}

/** UserMessage is what the user sent. */
export function UserMessage({ text, actions }: { text: string; actions?: ReactNode }) {
  return (
    <article className="message user" data-testid="message" data-role="user">
      <div className="bubble">{text}</div>
      {actions}
    </article>
  )
}

function errorTitle(code: string): string {
  if (code.startsWith('provider_')) return 'The model server failed.'
  if (code === 'session_busy') return 'This session is busy.'
  if (code === 'tool_loop') return 'The model kept repeating itself.'
  if (code === 'unreadable_tool_calls') return 'The model kept writing tool calls that could not be read.'
  return 'The turn failed.'
}

function formatArgs(args: unknown): string {
  try {
    return JSON.stringify(args, null, 2) ?? ''
  } catch {
    return String(args)
  }
}

// The argument worth a glance: a path, a command, a pattern.
function argSummary(args: unknown): string {
  if (!args || typeof args !== 'object') return ''
  const a = args as Record<string, unknown>
  for (const k of ['file_path', 'path', 'command', 'pattern', 'dir_path', 'query', 'task', 'url']) {
    if (typeof a[k] === 'string') return truncate(a[k] as string, 80)
  }
  return ''
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n - 1) + '…' : s
}

function firstLine(s: string): string {
  return truncate(s.split('\n')[0], 200)
}

function tail(s: string): string {
  const lines = s.split('\n')
  return lines.length > 40 ? '…\n' + lines.slice(-40).join('\n') : s
}
