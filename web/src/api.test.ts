// @vitest-environment node
// (fetch, streams and DOMException as a browser has them; no DOM needed)
import { describe, expect, it } from 'vitest'
import { APIError, Client, unauthorized } from './api'
import type { HearthEvent } from './types'

const TOKEN = 'tok-3kR0'

interface Call {
  url: string
  method: string
  headers: Headers
  body?: string
}

type Handler = (c: Call, n: number) => Response | Promise<Response>

/** fakeFetch records every call and answers with handler. */
function fakeFetch(handler: Handler) {
  const calls: Call[] = []
  const fetchFn = (async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const c: Call = { url: String(input), method: init.method ?? 'GET', headers: new Headers(init.headers), body: init.body as string | undefined }
    calls.push(c)
    if (init.signal?.aborted) throw new DOMException('aborted', 'AbortError')
    return handler(c, calls.length - 1)
  }) as typeof globalThis.fetch
  return { fetch: fetchFn, calls }
}

const client = (handler: Handler) => {
  const f = fakeFetch(handler)
  return { c: new Client({ token: TOKEN, fetch: f.fetch, retryDelay: 1 }), calls: f.calls }
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
const apiErr = (status: number, code: string, message = 'msg', hint?: string) => json(status, { error: { code, message, ...(hint ? { hint } : {}) } })

/** A body that sends bytes, then ends (end) or fails like a dropped connection (error). */
function body(bytes: Uint8Array, how: 'end' | 'error' = 'end', chunk = 0): ReadableStream<Uint8Array> {
  let pos = 0
  return new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (pos < bytes.length) {
        const n = chunk > 0 ? chunk : bytes.length
        ctl.enqueue(bytes.slice(pos, pos + n))
        pos += n
        return
      }
      if (how === 'end') ctl.close()
      else ctl.error(new TypeError('network error'))
    },
  })
}
const sse = (bytes: Uint8Array, how: 'end' | 'error' = 'end', chunk = 0) =>
  new Response(body(bytes, how, chunk), { status: 200, headers: { 'Content-Type': 'text/event-stream', 'Hearth-Turn-Id': 't-1', 'Hearth-Session-Id': 's-1' } })

const enc = new TextEncoder()

// A turn's events as the server sends them (docs/api.md), with text that is
// not ASCII so that a cut can fall inside a character.
const TURN: HearthEvent[] = [
  { type: 'session', session_id: 's-1', provider: 'ollama', model: 'qwen3:4b' },
  { type: 'thinking_start' },
  { type: 'thinking_delta', text: 'Je réfléchis… ✓' },
  { type: 'thinking_end' },
  { type: 'tool_call', id: 'call_1', name: 'read_file', args: { file_path: 'a.txt' } },
  { type: 'tool_result', id: 'call_1', name: 'read_file', ok: true, output: 'héllo\n' },
  { type: 'text_delta', text: 'Il dit « héllo ». 🔥' },
  { type: 'usage', input_tokens: 10, output_tokens: 2 },
  { type: 'done', reason: 'stop', text: 'Il dit « héllo ». 🔥' },
]
const ids = TURN.map((_, i) => `t-1.${i + 1}`)
const frame = (i: number, crlf = false) => {
  const s = `id: ${ids[i]}\ndata: ${JSON.stringify(TURN[i])}\n\n`
  return crlf ? s.replaceAll('\n', '\r\n') : s
}
/** The stream from after lastId (the whole turn without one), as the server resumes it. */
function streamAfter(lastId: string | null, crlf = false): string {
  const from = lastId ? ids.indexOf(lastId) + 1 : 0
  if (lastId && from === 0) throw new Error(`unknown Last-Event-ID ${lastId}`)
  let s = from === 0 ? 'retry: 1000\n\n' : ''
  for (let i = from; i < TURN.length; i++) s += (i === 3 ? ': keep-alive\n\n' : '') + frame(i, crlf)
  return s
}

/**
 * A server that runs the turn and cuts the connection where cuts says:
 * the n-th connection (POST, then each GET …/events) sends cuts[n] bytes of
 * its stream, then drops (how). Connections past the cuts send it all.
 */
function flakyServer(cuts: number[] | ((n: number, stream: string) => number | undefined), how: 'end' | 'error', crlf = false, chunk = 0) {
  return client((c, n) => {
    expect(c.headers.get('Authorization')).toBe(`Bearer ${TOKEN}`)
    let stream: string
    if (n === 0) {
      expect(c.method).toBe('POST')
      expect(c.url).toBe('/v1/sessions/s-1/turns')
      stream = streamAfter(null, crlf)
    } else {
      expect(c.method).toBe('GET')
      expect(c.url).toBe('/v1/sessions/s-1/events')
      stream = streamAfter(c.headers.get('Last-Event-ID'), crlf)
    }
    const bytes = enc.encode(stream)
    const want = typeof cuts === 'function' ? cuts(n, stream) : cuts[n]
    const cut = want === undefined ? bytes.length : Math.min(want, bytes.length)
    return sse(bytes.slice(0, cut), want === undefined ? 'end' : how, chunk)
  })
}

async function collect(c: Client) {
  const got: { ev: HearthEvent; id: string }[] = []
  const reconnects: number[] = []
  await c.runTurn('s-1', { message: 'hi' }, { onEvent: (ev, id) => got.push({ ev, id }), onReconnect: (n) => reconnects.push(n) })
  return { got, reconnects }
}

describe('Client.runTurn: reading the stream', () => {
  it('delivers every event once, in order, with its id, and stops at done', async () => {
    const { c, calls } = flakyServer([], 'end')
    const { got, reconnects } = await collect(c)
    expect(got.map((g) => g.ev)).toEqual(TURN)
    expect(got.map((g) => g.id)).toEqual(ids)
    expect(reconnects).toEqual([])
    expect(calls).toHaveLength(1)
    expect(JSON.parse(calls[0].body!)).toEqual({ message: 'hi' })
    expect(calls[0].headers.get('Content-Type')).toBe('application/json')
  })

  it('sends context and model in the body, and encodes the session id in the path', async () => {
    const { c, calls } = client(() => sse(enc.encode(`id: x.1\ndata: {"type":"done","reason":"stop","text":""}\n\n`)))
    await c.runTurn('s/1 ?', { message: 'm', context: { file: 'a.go', line: 40 }, model: 'big' }, { onEvent: () => {} })
    expect(calls[0].url).toBe('/v1/sessions/s%2F1%20%3F/turns')
    expect(JSON.parse(calls[0].body!)).toEqual({ message: 'm', context: { file: 'a.go', line: 40 }, model: 'big' })
  })

  it('skips data that is not JSON and events after done', async () => {
    const { c, calls } = client(() =>
      sse(enc.encode('id: t.1\ndata: not json\n\nid: t.2\ndata: {"type":"text_delta","text":"a"}\n\nid: t.3\ndata: {"type":"done","reason":"stop","text":"a"}\n\nid: t.4\ndata: {"type":"text_delta","text":"late"}\n\n')),
    )
    const got: string[] = []
    await c.runTurn('s', { message: 'm' }, { onEvent: (ev) => got.push(ev.type) })
    expect(got).toEqual(['text_delta', 'done'])
    expect(calls).toHaveLength(1)
  })

  it('a refused turn (409 session_busy) rejects with the APIError and delivers nothing', async () => {
    const { c } = client(() => apiErr(409, 'session_busy', 'session s is running turn t'))
    const got: HearthEvent[] = []
    const err = await c.runTurn('s', { message: 'm' }, { onEvent: (ev) => got.push(ev) }).catch((e) => e)
    expect(err).toBeInstanceOf(APIError)
    expect(err).toMatchObject({ status: 409, code: 'session_busy', message: 'session s is running turn t' })
    expect(got).toEqual([])
  })
})

describe('Client.runTurn: a dropped connection', () => {
  // Every split point of the turn's stream (in bytes, so inside CRLFs and
  // inside UTF-8 characters too), with the body failing or just ending.
  // The reconnect must carry the id of the last event whose blank line
  // arrived before the cut (none before the first one).
  for (const how of ['error', 'end'] as const) {
    for (const crlf of [false, true]) {
      it(`loses and repeats nothing wherever the first connection drops (${how}${crlf ? ', CRLF' : ''})`, async () => {
        const whole = enc.encode(streamAfter(null, crlf))
        const total = whole.length
        const step = crlf ? 11 : how === 'end' ? 4 : 1
        for (let cut = 0; cut < total; cut += step) {
          const { c, calls } = flakyServer([cut], how, crlf)
          const { got, reconnects } = await collect(c)
          expect(got.map((g) => g.id), `cut at ${cut}`).toEqual(ids)
          expect(got.map((g) => g.ev), `cut at ${cut}`).toEqual(TURN)
          expect(reconnects, `cut at ${cut}`).toEqual([1])
          expect(calls, `cut at ${cut}`).toHaveLength(2)
          const before = new TextDecoder().decode(whole.slice(0, cut))
          const want = ids.filter((_, i) => before.includes(frame(i, crlf))).pop() ?? null
          expect(calls[1].headers.get('Last-Event-ID'), `cut at ${cut}: …${JSON.stringify(before.slice(-20))}`).toBe(want)
        }
      })
    }
  }

  it('does not reconnect once done arrived, even if the body then fails', async () => {
    const { c, calls } = flakyServer([enc.encode(streamAfter(null)).length], 'error')
    const { got, reconnects } = await collect(c)
    expect(got).toHaveLength(TURN.length)
    expect(reconnects).toEqual([])
    expect(calls).toHaveLength(1)
  })

  it('survives many drops in a row, as long as each connection brings something', async () => {
    // every connection drops after one event and a piece of the next:
    // far more drops in a row than any sensible retry limit
    const oneEvent = (n: number, stream: string) => enc.encode(stream.slice(0, stream.indexOf('\n\n', stream.indexOf('data:')) + 2)).length + (n % 4) * 5
    for (const how of ['error', 'end'] as const) {
      const { c, calls } = flakyServer(oneEvent, how, false, 3)
      const { got } = await collect(c)
      expect(got.map((g) => g.id)).toEqual(ids)
      expect(calls.length).toBeGreaterThan(6)
    }
  })

  it('random cuts over several connections: the same events, once each', async () => {
    let seed = 7
    const r = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff)
    for (let k = 0; k < 30; k++) {
      const cuts = Array.from({ length: 1 + Math.floor(r() * 4) }, () => Math.floor(r() * 250))
      const { c } = flakyServer(cuts, r() < 0.5 ? 'error' : 'end', false, 1 + Math.floor(r() * 9))
      const { got } = await collect(c)
      expect(got.map((g) => g.id), `cuts ${cuts}`).toEqual(ids)
    }
  })

  it('retries while the server cannot be reached, then goes on', async () => {
    const full = enc.encode(streamAfter(null))
    const { c, calls } = client((call, n) => {
      if (n === 0) return sse(full.slice(0, 200), 'error')
      if (n < 3) throw new TypeError('Failed to fetch')
      return sse(enc.encode(streamAfter(call.headers.get('Last-Event-ID'))))
    })
    const { got, reconnects } = await collect(c)
    expect(got.map((g) => g.id)).toEqual(ids)
    expect(reconnects).toEqual([1, 2, 3])
    expect(calls).toHaveLength(4)
    expect(calls[1].headers.get('Last-Event-ID')).toBe(calls[3].headers.get('Last-Event-ID'))
  })

  it('gives up with an APIError when the server stays gone', async () => {
    const { c, calls } = client((_, n) => {
      if (n === 0) return sse(enc.encode(frame(0)), 'error')
      throw new TypeError('Failed to fetch')
    })
    const r = await collect(c).catch((e) => e)
    expect(r).toBeInstanceOf(APIError)
    expect(calls.length).toBeGreaterThan(1)
    expect(calls.length).toBeLessThan(20)
  })

  it('410 events_gone on a reconnect surfaces as the APIError', async () => {
    const { c, calls } = client((_, n) => (n === 0 ? sse(enc.encode(frame(0) + frame(1)), 'error') : apiErr(410, 'events_gone', 'the turn’s events are gone: read the session')))
    const got: string[] = []
    const err = await c.runTurn('s-1', { message: 'm' }, { onEvent: (_, id) => got.push(id) }).catch((e) => e)
    expect(err).toBeInstanceOf(APIError)
    expect(err).toMatchObject({ status: 410, code: 'events_gone' })
    expect(got).toEqual(['t-1.1', 't-1.2'])
    expect(calls[1].headers.get('Last-Event-ID')).toBe('t-1.2')
    expect(calls[1].headers.get('Authorization')).toBe(`Bearer ${TOKEN}`)
  })

  it('an abort while waiting to reconnect stops it at once', async () => {
    const ctl = new AbortController()
    const f = fakeFetch(() => sse(enc.encode(frame(0)), 'end'))
    const c = new Client({ token: TOKEN, fetch: f.fetch, retryDelay: 5000 })
    const start = Date.now()
    const err = await c
      .runTurn('s-1', { message: 'm' }, { onEvent: () => {}, onReconnect: () => void setTimeout(() => ctl.abort(), 5) }, ctl.signal)
      .catch((e) => e)
    expect(err).toMatchObject({ name: 'AbortError' })
    expect(Date.now() - start).toBeLessThan(2000)
    expect(f.calls).toHaveLength(1)
  })

  it('an abort from onReconnect itself makes no further request that could deliver events', async () => {
    const ctl = new AbortController()
    const got: string[] = []
    const { c } = client((call, n) => sse(enc.encode(n === 0 ? frame(0) : streamAfter(call.headers.get('Last-Event-ID'))), 'end'))
    const err = await c.runTurn('s-1', { message: 'm' }, { onEvent: (_, id) => got.push(id), onReconnect: () => ctl.abort() }, ctl.signal).catch((e) => e)
    expect(err).toMatchObject({ name: 'AbortError' })
    expect(got).toEqual(['t-1.1'])
  })
})

describe('Client.followTurn', () => {
  it('follows from the first event without an id, and resumes with one', async () => {
    const full = enc.encode(streamAfter(null))
    const { c, calls } = client((call, n) => sse(n === 0 ? full.slice(0, 150) : enc.encode(streamAfter(call.headers.get('Last-Event-ID'))), n === 0 ? 'error' : 'end'))
    const got: string[] = []
    await c.followTurn('s-1', { onEvent: (_, id) => got.push(id) })
    expect(got).toEqual(ids)
    expect(calls.map((x) => [x.method, x.url])).toEqual([
      ['GET', '/v1/sessions/s-1/events'],
      ['GET', '/v1/sessions/s-1/events'],
    ])
    expect(calls[0].headers.get('Last-Event-ID')).toBeNull()
    expect(calls[1].headers.get('Last-Event-ID')).toMatch(/^t-1\.\d+$/)
  })
})

describe('Client: calls and errors', () => {
  const everyCall: [string, (c: Client) => Promise<unknown>, string, string][] = [
    ['sessions', (c) => c.sessions('q x'), 'GET', '/v1/sessions?'],
    ['createSession', (c) => c.createSession('t'), 'POST', '/v1/sessions'],
    ['session', (c) => c.session('s-1'), 'GET', '/v1/sessions/s-1'],
    ['renameSession', (c) => c.renameSession('s-1', 'new'), 'PATCH', '/v1/sessions/s-1'],
    ['deleteSession', (c) => c.deleteSession('s-1'), 'DELETE', '/v1/sessions/s-1'],
    ['titleSession', (c) => c.titleSession('s-1', 'qwen3:4b'), 'POST', '/v1/sessions/s-1/title'],
    ['models', (c) => c.models(), 'GET', '/v1/models'],
    ['health', (c) => c.health(), 'GET', '/v1/health'],
    ['usage', (c) => c.usage(7), 'GET', '/v1/usage?days=7'],
    ['cancel', (c) => c.cancel('s-1'), 'POST', '/v1/sessions/s-1/cancel'],
    ['approve', (c) => c.approve('call_1', 's-1', 'allow'), 'POST', '/v1/approvals/call_1'],
    ['setArchived', (c) => c.setArchived('s-1', true), 'PATCH', '/v1/sessions/s-1'],
    ['undo', (c) => c.undo('s-1', { dry_run: true }), 'POST', '/v1/sessions/s-1/undo'],
    ['redo', (c) => c.redo('s-1'), 'POST', '/v1/sessions/s-1/redo'],
    ['rewind', (c) => c.rewind('s-1', { through: 4 }), 'POST', '/v1/sessions/s-1/rewind'],
    ['fork', (c) => c.fork('s-1', { through: 4, files: true }), 'POST', '/v1/sessions/s-1/fork'],
    ['checkpoints', (c) => c.checkpoints('s-1'), 'GET', '/v1/sessions/s-1/checkpoints'],
  ]

  it.each(everyCall)('%s sends the bearer token', async (_, f, method, path) => {
    const { c, calls } = client(() => json(200, {}))
    await f(c)
    expect(calls).toHaveLength(1)
    expect(calls[0].method).toBe(method)
    expect(calls[0].url.startsWith(path)).toBe(true)
    expect(calls[0].headers.get('Authorization')).toBe(`Bearer ${TOKEN}`)
    expect(calls[0].url).not.toContain(TOKEN) // never in the address
  })

  it.each(everyCall.filter(([n]) => n !== 'cancel'))('%s turns a JSON error into an APIError', async (_, f) => {
    const { c } = client(() => apiErr(502, 'provider_unreachable', 'Ollama does not answer', 'start Ollama with `ollama serve`'))
    const err = await f(c).catch((e) => e)
    expect(err).toBeInstanceOf(APIError)
    expect(err).toBeInstanceOf(Error)
    expect(err).toMatchObject({ status: 502, code: 'provider_unreachable', message: 'Ollama does not answer', hint: 'start Ollama with `ollama serve`' })
  })

  it('uses the base address', async () => {
    const f = fakeFetch(() => json(200, { models: [], default: '' }))
    await new Client({ token: 't', base: 'http://127.0.0.1:8437', fetch: f.fetch }).models()
    expect(f.calls[0].url).toBe('http://127.0.0.1:8437/v1/models')
  })

  it('sessions sends q and a limit', async () => {
    const { c, calls } = client(() => json(200, { sessions: [] }))
    await c.sessions('fix bug&x')
    const u = new URL(calls[0].url, 'http://h')
    expect(u.searchParams.get('q')).toBe('fix bug&x')
    await c.sessions()
    expect(new URL(calls[1].url, 'http://h').searchParams.has('q')).toBe(false)
  })

  it('sessions asks for the archived ones only when told', async () => {
    const { c, calls } = client(() => json(200, { sessions: [] }))
    await c.sessions('', undefined, true)
    await c.sessions('x')
    expect(new URL(calls[0].url, 'http://h').searchParams.get('archived')).toBe('true')
    expect(new URL(calls[1].url, 'http://h').searchParams.has('archived')).toBe(false)
  })

  it('undo, redo, rewind, fork and archive send their bodies', async () => {
    const { c, calls } = client(() => json(200, { type: 'restore', op: 'undo', files: [], conflicts: [], dry_run: true }))
    await c.undo('s/1', { dry_run: true })
    await c.redo('s-1', { keep: ['a.txt'] })
    await c.rewind('s-1', { through: 4, conversation_only: true, overwrite: true })
    await c.fork('s-1', { through: 4, title: 'Other' })
    await c.setArchived('s-1', false)
    await c.undo('s-1')
    expect(calls.map((x) => [x.method, x.url, x.body && JSON.parse(x.body)])).toEqual([
      ['POST', '/v1/sessions/s%2F1/undo', { dry_run: true }],
      ['POST', '/v1/sessions/s-1/redo', { keep: ['a.txt'] }],
      ['POST', '/v1/sessions/s-1/rewind', { through: 4, conversation_only: true, overwrite: true }],
      ['POST', '/v1/sessions/s-1/fork', { through: 4, title: 'Other' }],
      ['PATCH', '/v1/sessions/s-1', { archived: false }],
      ['POST', '/v1/sessions/s-1/undo', {}],
    ])
    expect(calls[0].headers.get('Content-Type')).toBe('application/json')
  })

  it.each<[string, Parameters<Client['createSession']>, Record<string, string>]>([
    ['nothing', [], {}],
    ['a title', ['Fix it'], { title: 'Fix it' }],
    ['a workspace', [undefined, '/home/me/site'], { workspace: '/home/me/site' }],
    ['both', ['Fix it', '/home/me/site'], { title: 'Fix it', workspace: '/home/me/site' }],
  ])('createSession with %s sends it', async (_, args, want) => {
    const { c, calls } = client(() => json(201, { id: 's-1' }))
    await c.createSession(...args)
    expect(calls.map((x) => [x.method, x.url, JSON.parse(x.body!)])).toEqual([['POST', '/v1/sessions', want]])
  })

  it('sessions names the workspace, "" too', async () => {
    const { c, calls } = client(() => json(200, { sessions: [] }))
    await c.sessions('', undefined, false, '/home/me/site')
    await c.sessions('', undefined, false, '')
    await c.sessions()
    expect(calls.map((x) => new URL(x.url, 'http://h').searchParams.get('workspace'))).toEqual(['/home/me/site', '', null])
  })

  it('workspace calls send their bodies and name the workspace in the query', async () => {
    const { c, calls } = client(() => json(200, { path: '/p' }))
    await c.addWorkspace({ path: '/home/me/a b', trust: 'read-only' })
    await c.patchWorkspace('/home/me/a b', { trust: 'trusted' })
    expect(calls.map((x) => [x.method, x.url, x.body && JSON.parse(x.body)])).toEqual([
      ['POST', '/v1/workspaces', { path: '/home/me/a b', trust: 'read-only' }],
      ['PATCH', '/v1/workspaces?path=%2Fhome%2Fme%2Fa+b', { trust: 'trusted' }],
    ])
  })

  it('a restore_conflict carries the paths it names', async () => {
    const { c } = client(() => json(409, { error: { code: 'restore_conflict', message: 'would overwrite', paths: ['a.txt', 'b/c.txt'] } }))
    const err = await c.undo('s-1').catch((e) => e)
    expect(err).toMatchObject({ status: 409, code: 'restore_conflict', paths: ['a.txt', 'b/c.txt'] })
  })

  it('an error that is not JSON still is an APIError with the status', async () => {
    const { c } = client(() => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }))
    const err = await c.health().catch((e) => e)
    expect(err).toBeInstanceOf(APIError)
    expect(err.status).toBe(502)
    expect(err.code).toBeTruthy()
  })

  it('a server that cannot be reached is an APIError with status 0', async () => {
    const { c } = client(() => {
      throw new TypeError('Failed to fetch')
    })
    const err = await c.sessions().catch((e) => e)
    expect(err).toBeInstanceOf(APIError)
    expect(err.status).toBe(0)
    expect(unauthorized(err)).toBe(false)
  })

  it('approve posts the decision, the session and the message', async () => {
    const { c, calls } = client(() => json(200, {}))
    await c.approve('call/1', 's-1', 'deny', 'not in production')
    await c.approve('call_2', 's-1', 'always')
    expect(calls[0].url).toBe('/v1/approvals/call%2F1')
    expect(JSON.parse(calls[0].body!)).toEqual({ decision: 'deny', session_id: 's-1', message: 'not in production' })
    expect(JSON.parse(calls[1].body!)).toEqual({ decision: 'always', session_id: 's-1' })
    expect(calls[0].headers.get('Content-Type')).toBe('application/json')
  })

  it('approve rejects with 404 no_approval', async () => {
    const { c } = client(() => apiErr(404, 'no_approval'))
    await expect(c.approve('c', 's', 'allow')).rejects.toMatchObject({ status: 404, code: 'no_approval' })
  })

  const cancelCases: [string, () => Response, 'ok' | number][] = [
    ['200 finished', () => json(200, { turn_id: 't', finished: true, reason: 'cancelled' }), 'ok'],
    ['202 still stopping', () => json(202, { turn_id: 't', finished: false }), 'ok'],
    ['409 not_running: it ended meanwhile', () => apiErr(409, 'not_running'), 'ok'],
    ['409 session_busy', () => apiErr(409, 'session_busy'), 409],
    ['404 not_found', () => apiErr(404, 'not_found'), 404],
    ['401 invalid_token', () => apiErr(401, 'invalid_token'), 401],
  ]
  it.each(cancelCases)('cancel: %s', async (_, res, want) => {
    const { c } = client(res)
    const r = await c.cancel('s-1').then(
      () => 'ok' as const,
      (e) => e,
    )
    if (want === 'ok') expect(r).toBe('ok')
    else expect(r).toMatchObject({ status: want })
  })
})

describe('unauthorized', () => {
  const cases: [string, unknown, boolean][] = [
    ['401 unauthorized', new APIError(401, 'unauthorized', 'm'), true],
    ['401 invalid_token', new APIError(401, 'invalid_token', 'm'), true],
    ['401 with another code', new APIError(401, 'http_401', 'm'), true],
    ['403 bad_origin', new APIError(403, 'bad_origin', 'm'), false],
    ['409 session_busy', new APIError(409, 'session_busy', 'm'), false],
    ['offline', new APIError(0, 'offline', 'm'), false],
    ['a plain Error', new Error('401'), false],
    ['undefined', undefined, false],
  ]
  it.each(cases)('%s', (_, err, want) => expect(unauthorized(err)).toBe(want))

  it('is true for what a 401 answer becomes', async () => {
    for (const code of ['unauthorized', 'invalid_token']) {
      const { c } = client(() => apiErr(401, code))
      expect(unauthorized(await c.sessions().catch((e) => e))).toBe(true)
    }
  })
})
