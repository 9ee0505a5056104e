// The model's plan (the update_plan tool; docs/events.md, The plan) as the
// page shows it: the checklist a session holds when it is opened, changed by
// the plan events of a turn, in words for the panel, the quiet line of the
// tool's calls and Hearth's reminders.

import type { HearthEvent, PlanStatus, PlanStep, SessionDetail } from './types'

/** The plan tool's name: its calls get a quiet line, not a tool card. */
export const planTool = 'update_plan'

/** The steps of a plan, or null when the model keeps none. */
export type PlanSteps = PlanStep[] | null

/** progress counts the steps finished (done or skipped) and all of them. */
export function progress(steps: PlanStep[]): { finished: number; total: number } {
  let finished = 0
  for (const s of steps) if (s.status === 'done' || s.status === 'skipped') finished++
  return { finished, total: steps.length }
}

/** openSteps counts the steps not finished: pending or in progress. */
export function openSteps(steps: PlanStep[]): number {
  return steps.length - progress(steps).finished
}

/** planOfSession is the plan a session read back holds (GET /v1/sessions/{id}). */
export function planOfSession(s: Pick<SessionDetail, 'plan'>): PlanSteps {
  const steps = s.plan?.steps
  return steps && steps.length > 0 ? steps.filter(isStep) : null
}

/**
 * planAfter is the plan after ev: a plan event's steps (none: the model
 * cleared it), else the plan as it was.
 */
export function planAfter(plan: PlanSteps, ev: HearthEvent): PlanSteps {
  if (ev.type !== 'plan') return plan
  const steps = (ev.steps ?? []).filter(isStep)
  return steps.length > 0 ? steps : null
}

/**
 * currentPlan is the plan to show: that of the latest turn of this visit
 * that changed it (plan not undefined), else the session's as loaded.
 */
export function currentPlan(session: PlanSteps, turns: readonly { plan?: PlanSteps }[]): PlanSteps {
  for (let i = turns.length - 1; i >= 0; i--) {
    const p = turns[i].plan
    if (p !== undefined) return p
  }
  return session
}

/** stepsOfArgs reads the steps out of an update_plan call's arguments. */
export function stepsOfArgs(args: unknown): PlanStep[] | undefined {
  if (!args || typeof args !== 'object') return undefined
  const steps = (args as { steps?: unknown }).steps
  if (!Array.isArray(steps)) return undefined
  return steps.filter(isStep)
}

/**
 * planCallText is an update_plan call in a line: "Plan updated: 2/4",
 * "Plan cleared", the refusal, or that it is being made.
 */
export function planCallText(state: 'pending' | 'approval' | 'running' | 'done' | 'failed', args: unknown, result?: string): string {
  if (state === 'failed') return `The plan was not taken: ${(result ?? '').split('\n')[0] || 'the call failed'}`
  if (state !== 'done') return 'Updating the plan…'
  const steps = stepsOfArgs(args)
  if (!steps) return 'Plan updated'
  if (steps.length === 0) return 'Plan cleared'
  const p = progress(steps)
  return `Plan updated: ${p.finished}/${p.total}`
}

/** reminderText is Hearth's note of a reminder: the model was sent back with open steps. */
export function reminderText(open: number | undefined): string {
  if (open === undefined) return 'Hearth sent the model back to its plan'
  return `Hearth sent the model back: ${open === 1 ? '1 step' : `${open} steps`} open`
}

/**
 * openInReminder reads how many steps a stored reminder said were open
 * ("Your plan still has 2 open step(s): …"), for a reminder whose plan
 * the page does not know.
 */
export function openInReminder(text: string): number | undefined {
  const m = /still has (\d+) open step/.exec(text)
  return m ? Number(m[1]) : undefined
}

const labels: Record<PlanStatus, string> = {
  pending: 'Pending',
  in_progress: 'In progress',
  done: 'Done',
  skipped: 'Skipped',
}

/** statusLabel is a step's state in words (never by colour alone). */
export function statusLabel(s: PlanStatus): string {
  return labels[s] ?? s
}

/** currentStep is the step in progress, else the first pending one. */
export function currentStep(steps: PlanStep[]): PlanStep | undefined {
  return steps.find((s) => s.status === 'in_progress') ?? steps.find((s) => s.status === 'pending')
}

/**
 * planAnnouncement is the plan's news for a screen reader while a turn
 * runs: the step under way, or that every step is finished.
 */
export function planAnnouncement(steps: PlanStep[]): string {
  const { finished, total } = progress(steps)
  const now = steps.find((s) => s.status === 'in_progress')
  if (now) return `Plan ${finished} of ${total} finished. Now: ${now.step}`
  return finished === total ? `Plan: all ${total} steps finished.` : `Plan ${finished} of ${total} finished.`
}

/**
 * PlanTracker follows the plan through a session's stored messages, as
 * the server computes it: a call of the plan tool counts once its result
 * says it was taken ("Plan saved: …", "Plan cleared.").
 */
export class PlanTracker {
  plan: PlanSteps = null
  private calls = new Map<string, unknown>()

  /** call notes an update_plan call's arguments. */
  call(id: string, args: unknown) {
    this.calls.set(id, args)
  }

  /** result applies the call's result, if the plan was taken. */
  result(id: string, content: string) {
    if (!this.calls.has(id)) return
    const args = this.calls.get(id)
    this.calls.delete(id)
    if (!content.startsWith('Plan saved:') && !content.startsWith('Plan cleared.')) return
    const steps = stepsOfArgs(args)
    if (steps) this.plan = steps.length > 0 ? steps : null
  }
}

function isStep(s: unknown): s is PlanStep {
  if (!s || typeof s !== 'object') return false
  const o = s as Record<string, unknown>
  return typeof o.step === 'string' && typeof o.status === 'string'
}
