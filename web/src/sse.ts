// A reader for the Server-Sent Events that `hearth serve` answers a turn
// with (docs/api.md, "Turns and their event stream"). EventSource cannot POST
// nor send the bearer token, so the page reads the fetch body itself.

/** One event of the stream: its id (TURN.SEQ) and its data line. */
export interface SSEMessage {
  id: string
  data: string
}

/**
 * SSEParser turns chunks of an event stream into messages. It keeps what is
 * left of an unfinished event between chunks, so a chunk may end anywhere,
 * even inside a CRLF.
 */
export class SSEParser {
  private buf = ''
  private id = ''
  private data: string[] = []
  /** The id of the last event dispatched: what a reconnect sends back. */
  lastEventId = ''

  /** push feeds a chunk and returns the events it completed. */
  push(chunk: string): SSEMessage[] {
    this.buf += chunk
    const out: SSEMessage[] = []
    for (;;) {
      const nl = this.nextLineEnd()
      if (nl < 0) break
      const line = this.buf.slice(0, nl)
      // A CR followed by LF is one line end.
      let skip = 1
      if (this.buf[nl] === '\r' && this.buf[nl + 1] === '\n') skip = 2
      this.buf = this.buf.slice(nl + skip)
      const msg = this.line(line)
      if (msg) out.push(msg)
    }
    return out
  }

  /**
   * nextLineEnd finds the end of the first whole line, or -1. A CR at the
   * very end of the buffer waits for the next chunk: it may be half of CRLF.
   */
  private nextLineEnd(): number {
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i]
      if (c === '\n') return i
      if (c === '\r') return i + 1 < this.buf.length ? i : -1
    }
    return -1
  }

  private line(line: string): SSEMessage | undefined {
    if (line === '') {
      if (this.data.length === 0) return undefined
      const msg = { id: this.id, data: this.data.join('\n') }
      this.data = []
      if (msg.id) this.lastEventId = msg.id
      return msg
    }
    if (line.startsWith(':')) return undefined // a comment: keep-alive
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    switch (field) {
      case 'data':
        this.data.push(value)
        break
      case 'id':
        if (!value.includes('\0')) this.id = value
        break
      // retry and event: the server sends no event names and the page
      // decides its own reconnect delay.
    }
    return undefined
  }
}

/**
 * readSSE reads a response body as an event stream, calling onMessage for
 * each event, until the body ends or signal aborts. It resolves with the
 * id of the last event read.
 */
export async function readSSE(
  body: ReadableStream<Uint8Array>,
  onMessage: (m: SSEMessage) => void,
  parser = new SSEParser(),
): Promise<string> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) break
      // stream: true keeps a character split between chunks whole.
      for (const m of parser.push(decoder.decode(value, { stream: true }))) onMessage(m)
    }
  } finally {
    reader.releaseLock()
  }
  return parser.lastEventId
}
