// The client of Hearth's HTTP API: every /v1 call with the bearer token,
// JSON errors turned into APIError, and turns read as event streams that
// survive a dropped connection (docs/api.md).

import { readSSE, SSEParser } from './sse'
import type {
  Checkpoint,
  Decision,
  ForkRequest,
  ForkResult,
  HearthEvent,
  Health,
  ModelInfo,
  RestoreOptions,
  RestoreResult,
  RewindRequest,
  Session,
  SessionDetail,
  Usage,
  Workspace,
  WorkspaceList,
} from './types'

/** APIError is a failed API call: the server's code and message. */
export class APIError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly hint?: string,
    /** With restore_conflict: the files the restore would overwrite. */
    readonly paths?: string[],
  ) {
    super(message)
    this.name = 'APIError'
  }
}

/** How the page reaches the API; tests pass their own fetch. */
export interface ClientOptions {
  token: string
  base?: string
  fetch?: typeof fetch
  /** Delay before reconnecting a dropped stream, ms (default 1000). */
  retryDelay?: number
}

/** What a turn's stream reports to its consumer. */
export interface TurnHandlers {
  /** Called with each event, in order, exactly once per event id. */
  onEvent(ev: HearthEvent, id: string): void
  /** Called when the connection dropped and a reconnect is under way. */
  onReconnect?(attempt: number): void
}

/** The turn's request body. */
export interface TurnRequest {
  message: string
  context?: unknown
  model?: string
}

/** Client calls the API. It holds no state but its options. */
export class Client {
  private readonly base: string
  private readonly fetchFn: typeof fetch
  private readonly retryDelay: number

  constructor(private readonly opts: ClientOptions) {
    this.base = opts.base ?? ''
    this.fetchFn = opts.fetch ?? globalThis.fetch.bind(globalThis)
    this.retryDelay = opts.retryDelay ?? 1000
  }

  private async request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    headers.set('Authorization', `Bearer ${this.opts.token}`)
    if (init.body !== undefined) headers.set('Content-Type', 'application/json')
    let res: Response
    try {
      res = await this.fetchFn(this.base + path, { ...init, headers })
    } catch (err) {
      if (isAbort(err)) throw err
      throw new APIError(
        0,
        'offline',
        'Hearth does not answer: is `hearth serve` still running? Start it again and reload this page.',
      )
    }
    if (!res.ok) throw await errorOf(res)
    return res
  }

  private async json<T>(path: string, init?: RequestInit): Promise<T> {
    const res = await this.request(path, init)
    return (await res.json()) as T
  }

  /**
   * Lists sessions, most recent first; q searches titles and messages;
   * archived lists the archived ones instead of the others.
   */
  sessions(q = '', signal?: AbortSignal, archived = false, workspace?: string): Promise<{ sessions: Session[] }> {
    const params = new URLSearchParams({ limit: '200' })
    if (q) params.set('q', q)
    if (archived) params.set('archived', 'true')
    if (workspace !== undefined) params.set('workspace', workspace)
    return this.json(`/v1/sessions?${params}`, { signal })
  }

  /** Makes a session, in workspace (a known one's path; absent: the server's own). */
  createSession(title?: string, workspace?: string): Promise<Session> {
    const body: { title?: string; workspace?: string } = {}
    if (title) body.title = title
    if (workspace !== undefined) body.workspace = workspace
    return this.json('/v1/sessions', { method: 'POST', body: JSON.stringify(body) })
  }

  session(id: string, signal?: AbortSignal): Promise<SessionDetail> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}`, { signal })
  }

  renameSession(id: string, title: string): Promise<Session> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      body: JSON.stringify({ title }),
    })
  }

  /** Archives a session (hidden from the list, nothing deleted), or brings it back. */
  setArchived(id: string, archived: boolean): Promise<Session> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      body: JSON.stringify({ archived }),
    })
  }

  /**
   * Undoes the file changes of the session's last turn (dry_run: a
   * preview). A file changed after the agent did fails it with an
   * APIError of code restore_conflict, whose paths name them.
   */
  undo(id: string, opts: RestoreOptions = {}): Promise<RestoreResult> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/undo`, { method: 'POST', body: JSON.stringify(opts) })
  }

  /** Redoes what the last undo took back; as undo. */
  redo(id: string, opts: RestoreOptions = {}): Promise<RestoreResult> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/redo`, { method: 'POST', body: JSON.stringify(opts) })
  }

  /** Rewinds the files, the conversation or both to a message (or the files to a checkpoint); as undo. */
  rewind(id: string, req: RewindRequest): Promise<RestoreResult> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/rewind`, { method: 'POST', body: JSON.stringify(req) })
  }

  /** Starts a new session from a message of this one (and, with files, its files then). */
  fork(id: string, req: ForkRequest): Promise<ForkResult> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/fork`, { method: 'POST', body: JSON.stringify(req) })
  }

  /** The session's checkpoints, in order. */
  checkpoints(id: string, signal?: AbortSignal): Promise<{ checkpoints: Checkpoint[] }> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/checkpoints`, { signal })
  }

  /**
   * Asks the model for a better title for a session that still has its
   * first prompt's (POST /v1/sessions/{id}/title); a titled session is
   * answered as it is. No turn waits on this: call it in the background.
   */
  titleSession(id: string, model?: string): Promise<Session> {
    return this.json(`/v1/sessions/${encodeURIComponent(id)}/title`, {
      method: 'POST',
      body: JSON.stringify(model ? { model } : {}),
    })
  }

  async deleteSession(id: string): Promise<void> {
    await this.request(`/v1/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' })
  }

  /** The models of the workspace's model server (absent: the server's own workspace's). */
  models(workspace?: string): Promise<{ models: ModelInfo[]; default: string }> {
    return this.json(workspace ? `/v1/models?${new URLSearchParams({ workspace })}` : '/v1/models')
  }

  /** The health of the workspace's agent (absent: the server's own workspace's). */
  health(signal?: AbortSignal, workspace?: string): Promise<Health> {
    return this.json(workspace ? `/v1/health?${new URLSearchParams({ workspace })}` : '/v1/health', { signal })
  }

  /** Usage of the last days; by adds groups (per model, day, session or workspace). */
  usage(days = 30, by?: 'day' | 'model' | 'session' | 'workspace'): Promise<Usage> {
    const params = new URLSearchParams({ days: String(days) })
    if (by) params.set('by', by)
    return this.json(`/v1/usage?${params}`)
  }

  /** The workspaces the store knows, most recently used first; the server's own; whether it serves the others. */
  workspaces(signal?: AbortSignal): Promise<WorkspaceList> {
    return this.json('/v1/workspaces', { signal })
  }

  /** Adds a folder (an absolute path to an existing directory) as a workspace; errors come as APIError. */
  addWorkspace(body: { path: string; name?: string; trust?: string }): Promise<Workspace> {
    return this.json('/v1/workspaces', { method: 'POST', body: JSON.stringify(body) })
  }

  /** Renames a workspace or sets its trust. */
  patchWorkspace(path: string, body: { name?: string; trust?: string }): Promise<Workspace> {
    return this.json(`/v1/workspaces?${new URLSearchParams({ path })}`, { method: 'PATCH', body: JSON.stringify(body) })
  }

  /** Forgets a workspace (its sessions are kept). */
  async removeWorkspace(path: string): Promise<void> {
    await this.request(`/v1/workspaces?${new URLSearchParams({ path })}`, { method: 'DELETE' })
  }

  async cancel(sessionId: string): Promise<void> {
    try {
      await this.request(`/v1/sessions/${encodeURIComponent(sessionId)}/cancel`, { method: 'POST' })
    } catch (err) {
      // Nothing running any more: the turn ended on its own meanwhile.
      if (err instanceof APIError && err.code === 'not_running') return
      throw err
    }
  }

  async approve(callId: string, sessionId: string, decision: Decision, message?: string): Promise<void> {
    await this.request(`/v1/approvals/${encodeURIComponent(callId)}`, {
      method: 'POST',
      body: JSON.stringify({ decision, session_id: sessionId, ...(message ? { message } : {}) }),
    })
  }

  /**
   * runTurn starts a turn and reads its events until `done`. If the
   * connection drops first, it follows the turn again with the id of the
   * last event read (GET …/events with Last-Event-ID), so no event is lost
   * or seen twice. It resolves when the stream has ended.
   */
  async runTurn(sessionId: string, req: TurnRequest, h: TurnHandlers, signal?: AbortSignal): Promise<void> {
    const res = await this.request(`/v1/sessions/${encodeURIComponent(sessionId)}/turns`, {
      method: 'POST',
      body: JSON.stringify(req),
      signal,
    })
    await this.follow(sessionId, res, '', h, signal)
  }

  /**
   * followTurn follows the running (or last) turn of a session from its
   * first event: what a reloaded page does to rebuild a turn in progress.
   */
  async followTurn(sessionId: string, h: TurnHandlers, signal?: AbortSignal): Promise<void> {
    const res = await this.events(sessionId, '', signal)
    await this.follow(sessionId, res, '', h, signal)
  }

  private events(sessionId: string, lastId: string, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = {}
    if (lastId) headers['Last-Event-ID'] = lastId
    return this.request(`/v1/sessions/${encodeURIComponent(sessionId)}/events`, { headers, signal })
  }

  private async follow(
    sessionId: string,
    first: Response,
    lastId: string,
    h: TurnHandlers,
    signal?: AbortSignal,
  ): Promise<void> {
    let res: Response | undefined = first
    let done = false
    for (let attempt = 0; ; attempt++) {
      if (res) {
        const parser = new SSEParser()
        parser.lastEventId = lastId
        try {
          await readSSE(
            res.body!,
            (m) => {
              if (done) return
              let ev: HearthEvent
              try {
                ev = JSON.parse(m.data) as HearthEvent
              } catch {
                return // not an event of the contract: skip it
              }
              lastId = m.id || lastId
              if (ev.type === 'done') done = true
              h.onEvent(ev, m.id)
              attempt = 0
            },
            parser,
          )
        } catch (err) {
          if (isAbort(err) || signal?.aborted) throw err
          // The connection dropped mid-stream: reconnect below.
        }
      }
      if (done) return
      if (signal?.aborted) throw new DOMException('aborted', 'AbortError')
      if (attempt >= 5) {
        throw new APIError(0, 'stream_lost', 'Lost the connection to Hearth while the turn ran. Reload the page to see how it ended.')
      }
      h.onReconnect?.(attempt + 1)
      await sleep(this.retryDelay * Math.min(attempt + 1, 5), signal)
      try {
        res = await this.events(sessionId, lastId, signal)
      } catch (err) {
        if (err instanceof APIError && err.status !== 0) throw err // 410 events_gone and the like
        if (isAbort(err)) throw err
        res = undefined // still offline: try again
      }
    }
  }
}

async function errorOf(res: Response): Promise<APIError> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string; hint?: string; paths?: string[] } }
    if (body.error?.code) {
      return new APIError(res.status, body.error.code, body.error.message ?? res.statusText, body.error.hint, body.error.paths)
    }
  } catch {
    // not JSON: fall through
  }
  return new APIError(res.status, `http_${res.status}`, `Hearth answered ${res.status} ${res.statusText}`)
}

function isAbort(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'AbortError'
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new DOMException('aborted', 'AbortError'))
    const t = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t)
        reject(new DOMException('aborted', 'AbortError'))
      },
      { once: true },
    )
  })
}

/** unauthorized reports whether err means the page's token is not accepted. */
export function unauthorized(err: unknown): boolean {
  return err instanceof APIError && (err.status === 401 || err.code === 'unauthorized' || err.code === 'invalid_token')
}
