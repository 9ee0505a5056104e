import { useEffect, useState } from 'react'
import type { Client } from '../api'
import { formatCost, hasCalls } from '../cost'
import type { Usage } from '../types'

/** UsageView shows the tokens spent, and their cost, per day, per model and per session. */
export function UsageView({ client, onClose, onOpen }: { client: Client; onClose(): void; onOpen(id: string): void }) {
  const [days, setDays] = useState(30)
  const [usage, setUsage] = useState<Usage>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    let live = true
    client
      .usage(days, 'model')
      .then((u) => live && (setUsage(u), setError(undefined)))
      .catch((e: Error) => live && setError(e.message))
    return () => {
      live = false
    }
  }, [client, days])
  const max = Math.max(1, ...(usage?.days ?? []).map((d) => d.input_tokens + d.output_tokens))
  return (
    <section className="usage" data-testid="usage" aria-labelledby="usage-title">
      <header className="usage-head">
        <h2 id="usage-title">Usage</h2>
        <label>
          Period{' '}
          <select value={days} onChange={(e) => setDays(Number(e.target.value))} aria-label="Period">
            <option value={7}>7 days</option>
            <option value={30}>30 days</option>
            <option value={90}>90 days</option>
          </select>
        </label>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </header>
      {error && <p role="alert">{error}</p>}
      {!usage && !error && <p className="muted">Loading…</p>}
      {usage && (
        <>
          <p className="usage-total">
            <strong>{fmt(usage.total.input_tokens + usage.total.output_tokens)}</strong> tokens since {usage.since}:{' '}
            {fmt(usage.total.input_tokens)} in, {fmt(usage.total.output_tokens)} out
            {' · '}cost <strong data-testid="usage-total-cost">{formatCost(usage.total)}</strong>
          </p>
          <figure className="chart" aria-label="Tokens per day">
            <div className="bars">
              {usage.days.map((d) => {
                const total = d.input_tokens + d.output_tokens
                return (
                  <div key={d.day} className="bar" title={`${d.day}: ${fmt(d.input_tokens)} in, ${fmt(d.output_tokens)} out`}>
                    <div className="bar-in" style={{ height: `${(d.input_tokens / max) * 100}%` }} />
                    <div className="bar-out" style={{ height: `${(d.output_tokens / max) * 100}%` }} />
                    <span className="sr-only">
                      {d.day}: {total} tokens
                    </span>
                  </div>
                )
              })}
            </div>
            <figcaption>
              <span className="key in" /> input <span className="key out" /> output · {usage.days[0]?.day} to {usage.days[usage.days.length - 1]?.day}
            </figcaption>
          </figure>
          <table className="usage-table" aria-label="Cost per model" data-testid="usage-models">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Calls
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {(usage.groups ?? []).length === 0 && (
                <tr>
                  <td colSpan={4} className="muted">
                    No model calls in this period.
                  </td>
                </tr>
              )}
              {(usage.groups ?? []).map((g) => (
                <tr key={g.key}>
                  <td>{g.key || 'unknown'}</td>
                  <td className="num">{fmt(g.calls ?? 0)}</td>
                  <td className="num">{fmt(g.input_tokens + g.output_tokens)}</td>
                  <td className="num">{formatCost(g)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <table className="usage-table" aria-label="Cost per day" data-testid="usage-days">
            <thead>
              <tr>
                <th scope="col">Day</th>
                <th scope="col" className="num">
                  Calls
                </th>
                <th scope="col" className="num">
                  Tokens
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {usage.days.filter(hasCalls).length === 0 && (
                <tr>
                  <td colSpan={4} className="muted">
                    No model calls in this period.
                  </td>
                </tr>
              )}
              {usage.days
                .filter(hasCalls)
                .reverse()
                .map((d) => (
                  <tr key={d.day}>
                    <td>{d.day}</td>
                    <td className="num">{fmt(d.calls ?? 0)}</td>
                    <td className="num">{fmt(d.input_tokens + d.output_tokens)}</td>
                    <td className="num">{formatCost(d)}</td>
                  </tr>
                ))}
            </tbody>
          </table>
          <table className="usage-table" aria-label="Usage per session">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Model</th>
                <th scope="col" className="num">
                  Input
                </th>
                <th scope="col" className="num">
                  Output
                </th>
                <th scope="col" className="num">
                  Cost
                </th>
              </tr>
            </thead>
            <tbody>
              {usage.sessions.length === 0 && (
                <tr>
                  <td colSpan={5} className="muted">
                    No tokens spent in this period.
                  </td>
                </tr>
              )}
              {usage.sessions.map((s) => (
                <tr key={s.id}>
                  <td>
                    <button type="button" className="link" onClick={() => onOpen(s.id)}>
                      {s.title || 'Untitled'}
                    </button>
                  </td>
                  <td>{s.model}</td>
                  <td className="num">{fmt(s.input_tokens)}</td>
                  <td className="num">{fmt(s.output_tokens)}</td>
                  <td className="num">{formatCost(s)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  )
}

function fmt(n: number): string {
  return n.toLocaleString('en-US')
}
