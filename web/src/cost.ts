// Costs as the API gives them: integers in micro-units (millionths) of the
// user's currency, null when no call was priced, with a count of the calls
// that had no price (docs/api.md, Usage and cost). An unknown cost is shown
// as unknown, never as 0.

/** formatMicro writes micro-units as a decimal with at least 2 decimals (1500000 → "1.50", 1750001 → "1.750001"). */
export function formatMicro(micro: number): string {
  const neg = micro < 0
  const n = Math.abs(Math.trunc(micro))
  const whole = Math.floor(n / 1_000_000)
  let frac = String(n % 1_000_000).padStart(6, '0')
  while (frac.length > 2 && frac.endsWith('0')) frac = frac.slice(0, -1)
  return `${neg ? '-' : ''}${whole.toLocaleString('en-US')}.${frac}`
}

/** The cost fields of a session, a day, a model or a total. */
export interface Costed {
  cost?: number | null
  unpriced?: number
  /** The calls counted, when known (totals have it, sessions do not). */
  calls?: number
}

/**
 * formatCost writes a cost for people: the amount when every call was
 * priced; "≥ amount (N calls unpriced)" when some were not; "unknown" when
 * calls were made and none was priced; "—" when no call was made.
 */
export function formatCost(c: Costed): string {
  const unpriced = c.unpriced ?? 0
  const cost = c.cost ?? null
  if (cost === null) {
    if (unpriced > 0) return 'unknown'
    return c.calls ? 'unknown' : '—'
  }
  if (unpriced > 0) return `≥ ${formatMicro(cost)} (${unpriced} ${unpriced === 1 ? 'call' : 'calls'} unpriced)`
  return formatMicro(cost)
}

/** hasCalls reports whether there is anything to say about a cost (a call was made). */
export function hasCalls(c: Costed): boolean {
  return (c.calls ?? 0) > 0 || (c.unpriced ?? 0) > 0 || (c.cost ?? null) !== null
}
