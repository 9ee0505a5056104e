// useTurns runs the turns of the open session: it sends them, reads their
// event streams, applies the events frame by frame (Pacer), and answers
// approvals and stop.

import { useCallback, useEffect, useRef, useState } from 'react'
import { flushSync } from 'react-dom'
import { APIError, unauthorized, type Client } from './api'
import { Pacer } from './pacer'
import { applyEvent, decide, newTurn, undecide, type Turn } from './turn'
import type { Decision, HearthEvent } from './types'

/** What the page can do with the open session's turns. */
export interface Turns {
  /** This visit's turns of the open session, the last perhaps running. */
  turns: Turn[]
  running: boolean
  /** The stream dropped and is being resumed. */
  reconnecting: boolean
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

/** What useTurns tells the page. */
export interface TurnEvents {
  /** A turn's stream ended (or was left): the session list may have changed. */
  onFinished(sessionId: string): void
  /**
   * The turn did not begin, so the message was not saved: the session was
   * running another turn (another tab, `hearth run`: err.code is
   * session_busy), the message was too large, Hearth did not answer… The
   * page gives the message back to the user, with the error.
   */
  onNotSent(sessionId: string, message: string, err: APIError): void
  /** The turn's events are gone (a long sleep, a restarted server): reload the session. */
  onGone(sessionId: string): void
  /** The token was refused. */
  onUnauthorized(): void
}

/** useTurns is the hook. */
export function useTurns(client: Client | undefined, events: TurnEvents): Turns {
  const [turns, setTurns] = useState<Turn[]>([])
  const [problem, setProblem] = useState<string>()
  const [reconnecting, setReconnecting] = useState(false)
  const reader = useRef<{ ctl: AbortController; events: number } | undefined>(undefined)
  const on = useRef(events)
  on.current = events

  const update = useCallback((f: (t: Turn) => Turn) => {
    setTurns((ts) => (ts.length === 0 ? ts : [...ts.slice(0, -1), f(ts[ts.length - 1])]))
  }, [])

  // Each frame's events are committed in that frame, so that every state
  // the pacer keeps apart is painted apart.
  const [pacer] = useState(() => new Pacer((evs) => flushSync(() => update((t) => evs.reduce(applyEvent, t)))))
  useEffect(() => {
    // Shown again: paint what came meanwhile. Hidden: a frame asked for
    // will not come, so hand over what waits now (later events go by
    // timer, all at once).
    const changed = () => pacer.flush()
    document.addEventListener('visibilitychange', changed)
    return () => document.removeEventListener('visibilitychange', changed)
  }, [pacer])

  const read = useCallback(
    async (sessionId: string, message: string, start: (onEvent: (ev: HearthEvent) => void, onReconnect: () => void, signal: AbortSignal) => Promise<void>) => {
      reader.current?.ctl.abort()
      const r = { ctl: new AbortController(), events: 0 }
      reader.current = r
      setReconnecting(false)
      const onEvent = (ev: HearthEvent) => {
        if (r.events++ === 0 || reconnectingNow) setReconnecting((reconnectingNow = false))
        pacer.push(ev)
      }
      let reconnectingNow = false
      const onReconnect = () => setReconnecting((reconnectingNow = true))
      try {
        await start(onEvent, onReconnect, r.ctl.signal)
      } catch (err) {
        if (r.ctl.signal.aborted) return
        const e = err instanceof APIError ? err : new APIError(0, 'error', String(err))
        if (r.events === 0 && message !== '') {
          pacer.clear()
          setTurns((ts) => ts.slice(0, -1))
          if (unauthorized(e)) on.current.onUnauthorized()
          on.current.onNotSent(sessionId, message, e)
          return
        }
        if ((e.code === 'events_gone' || e.code === 'no_turn') && (r.events > 0 || message === '')) {
          on.current.onGone(sessionId)
          return
        }
        if (unauthorized(e)) on.current.onUnauthorized()
        // Shown as the turn's error once the events before it are shown.
        pacer.push({ type: 'error', code: e.code, message: e.message, hint: e.hint })
        pacer.push({ type: 'done', reason: 'error', text: '' })
      } finally {
        if (reader.current === r) reader.current = undefined
        setReconnecting(false)
        on.current.onFinished(sessionId)
      }
    },
    [pacer],
  )

  const send = useCallback(
    async (sessionId: string, message: string, model?: string) => {
      if (!client) return
      setProblem(undefined)
      pacer.clear()
      setTurns((ts) => [...ts, newTurn(message, sessionId)])
      await read(sessionId, message, (onEvent, onReconnect, signal) =>
        client.runTurn(sessionId, { message, ...(model ? { model } : {}) }, { onEvent, onReconnect }, signal),
      )
    },
    [client, read, pacer],
  )

  const follow = useCallback(
    (sessionId: string, message: string) => {
      if (!client) return
      pacer.clear()
      setTurns([newTurn(message, sessionId)])
      void read(sessionId, '', (onEvent, onReconnect, signal) => client.followTurn(sessionId, { onEvent, onReconnect }, signal))
    },
    [client, read, pacer],
  )

  const current = turns[turns.length - 1]
  const running = current?.status === 'running'

  const stop = useCallback(async () => {
    if (!client || !current?.sessionId || current.status !== 'running') return
    const r = reader.current
    if (r && r.events === 0) {
      // The turn has not begun: the server may still be finishing the
      // last one (titling a new session). Dropping the request drops the
      // turn; the cancel below stops it if it began meanwhile.
      r.ctl.abort()
      pacer.push({ type: 'done', reason: 'cancelled', text: '' })
    }
    try {
      await client.cancel(current.sessionId)
    } catch (err) {
      setProblem(`Could not stop the turn: ${(err as Error).message}`)
    }
  }, [client, current?.sessionId, current?.status, pacer])

  const answer = useCallback(
    async (callId: string, decision: Decision) => {
      if (!client || !current?.sessionId) return
      setProblem(undefined)
      update((t) => decide(t, callId, decision))
      try {
        await client.approve(callId, current.sessionId, decision)
      } catch (err) {
        // Answered elsewhere, or no longer waiting: the stream says what
        // became of the call.
        if (err instanceof APIError && (err.code === 'no_approval' || err.code === 'already_answered')) return
        update((t) => undecide(t, callId))
        setProblem(`Could not send the answer: ${(err as Error).message}`)
      }
    },
    [client, current?.sessionId, update],
  )

  const reset = useCallback(() => {
    reader.current?.ctl.abort()
    reader.current = undefined
    pacer.clear()
    setTurns([])
    setProblem(undefined)
    setReconnecting(false)
  }, [pacer])

  useEffect(() => () => reader.current?.ctl.abort(), [])

  return { turns, running, reconnecting, send, follow, stop, answer, reset, problem }
}
