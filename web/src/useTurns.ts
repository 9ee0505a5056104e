// useTurns runs the turns of the open session: it sends them, reads their
// event streams, applies the events frame by frame (takeFrame), and answers
// approvals and stop.

import { useCallback, useEffect, useRef, useState } from 'react'
import { APIError, type Client } from './api'
import { Pacer } from './pacer'
import { applyEvent, decide, newTurn, undecide, type Turn } from './turn'
import type { Decision, HearthEvent } from './types'

/** What the page can do with the open session's turns. */
export interface Turns {
  /** This visit's turns of the open session, the last perhaps running. */
  turns: Turn[]
  running: boolean
  /** send starts a turn in the session. */
  send(sessionId: string, message: string, model?: string): Promise<void>
  /** follow rebuilds a turn already running (after a reload). */
  follow(sessionId: string, message: string): void
  stop(): Promise<void>
  answer(callId: string, decision: Decision): Promise<void>
  /** reset forgets the turns (another session was opened). */
  reset(): void
  /** A problem with an approval or stop, for the page to show. */
  problem?: string
}

/** useTurns is the hook; onFinished is called when a turn's stream ends. */
export function useTurns(client: Client | undefined, onFinished: (sessionId: string) => void): Turns {
  const [turns, setTurns] = useState<Turn[]>([])
  const [problem, setProblem] = useState<string>()
  const reader = useRef<AbortController | undefined>(undefined)
  const finished = useRef(onFinished)
  finished.current = onFinished

  const update = useCallback((f: (t: Turn) => Turn) => {
    setTurns((ts) => (ts.length === 0 ? ts : [...ts.slice(0, -1), f(ts[ts.length - 1])]))
  }, [])

  const [pacer] = useState(() => new Pacer((events) => update((t) => events.reduce(applyEvent, t))))
  const push = useCallback((ev: HearthEvent) => pacer.push(ev), [pacer])

  const read = useCallback(
    async (sessionId: string, start: (h: { onEvent(ev: HearthEvent): void }, signal: AbortSignal) => Promise<void>) => {
      reader.current?.abort()
      const ctl = new AbortController()
      reader.current = ctl
      try {
        await start({ onEvent: push }, ctl.signal)
      } catch (err) {
        if (ctl.signal.aborted) return
        const e = err instanceof APIError ? err : new APIError(0, 'error', String(err))
        // Shown as the turn's error once the events before it are shown.
        push({ type: 'error', code: e.code, message: e.message, hint: e.hint })
        push({ type: 'done', reason: 'error', text: '' })
      } finally {
        if (reader.current === ctl) reader.current = undefined
      }
      if (!ctl.signal.aborted) finished.current(sessionId)
    },
    [push],
  )

  const send = useCallback(
    async (sessionId: string, message: string, model?: string) => {
      if (!client) return
      setProblem(undefined)
      pacer.clear()
      setTurns((ts) => [...ts, newTurn(message, sessionId)])
      await read(sessionId, (h, signal) => client.runTurn(sessionId, { message, ...(model ? { model } : {}) }, { onEvent: h.onEvent }, signal))
    },
    [client, read, pacer],
  )

  const follow = useCallback(
    (sessionId: string, message: string) => {
      if (!client) return
      pacer.clear()
      setTurns([newTurn(message, sessionId)])
      void read(sessionId, (h, signal) => client.followTurn(sessionId, { onEvent: h.onEvent }, signal))
    },
    [client, read, pacer],
  )

  const current = turns[turns.length - 1]
  const running = current?.status === 'running'

  const stop = useCallback(async () => {
    if (!client || !current?.sessionId) return
    try {
      await client.cancel(current.sessionId)
    } catch (err) {
      setProblem(`Could not stop the turn: ${(err as Error).message}`)
    }
  }, [client, current?.sessionId])

  const answer = useCallback(
    async (callId: string, decision: Decision) => {
      if (!client || !current?.sessionId) return
      setProblem(undefined)
      update((t) => decide(t, callId, decision))
      try {
        await client.approve(callId, current.sessionId, decision)
      } catch (err) {
        update((t) => undecide(t, callId))
        setProblem(`Could not send the answer: ${(err as Error).message}`)
      }
    },
    [client, current?.sessionId, update],
  )

  const reset = useCallback(() => {
    reader.current?.abort()
    reader.current = undefined
    pacer.clear()
    setTurns([])
    setProblem(undefined)
  }, [pacer])

  useEffect(() => () => reader.current?.abort(), [])

  return { turns, running, send, follow, stop, answer, reset, problem }
}
