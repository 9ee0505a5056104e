import { describe, expect, it } from 'vitest'
import { SSEParser, readSSE } from './sse'

const stream = 'retry: 1000\n\nid: t-1.1\ndata: {"type":"session"}\n\n: keep-alive\n\nid: t-1.2\ndata: {"type":"text_delta","text":"a"}\n\n'

describe('SSEParser', () => {
  it('reads ids and data, skipping comments and retry', () => {
    const p = new SSEParser()
    const got = p.push(stream)
    expect(got).toEqual([
      { id: 't-1.1', data: '{"type":"session"}' },
      { id: 't-1.2', data: '{"type":"text_delta","text":"a"}' },
    ])
    expect(p.lastEventId).toBe('t-1.2')
  })

  it('gives the same events whatever the chunking', () => {
    const whole = new SSEParser().push(stream)
    for (let cut = 0; cut <= stream.length; cut++) {
      const p = new SSEParser()
      const got = [...p.push(stream.slice(0, cut)), ...p.push(stream.slice(cut))]
      expect(got, `cut at ${cut}`).toEqual(whole)
    }
  })

  it('treats CRLF and CR as line ends, even split between chunks', () => {
    const crlf = stream.replaceAll('\n', '\r\n')
    const cr = stream.replaceAll('\n', '\r')
    const whole = new SSEParser().push(stream)
    for (const text of [crlf, cr]) {
      for (let cut = 0; cut <= text.length; cut++) {
        const p = new SSEParser()
        const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.push('\n')]
        expect(got, `cut at ${cut} of ${JSON.stringify(text.slice(0, 20))}`).toEqual(whole)
      }
    }
  })

  it('joins multi-line data and keeps the id across events', () => {
    const p = new SSEParser()
    expect(p.push('id: x.1\ndata: a\ndata: b\n\ndata:c\n\n')).toEqual([
      { id: 'x.1', data: 'a\nb' },
      { id: 'x.1', data: 'c' },
    ])
  })

  it('dispatches nothing for an event with no data, and holds an unfinished one', () => {
    const p = new SSEParser()
    expect(p.push('id: 9\n\n')).toEqual([])
    expect(p.push('data: half')).toEqual([])
    expect(p.push('\n')).toEqual([])
    expect(p.push('\n')).toEqual([{ id: '9', data: 'half' }])
  })
})

describe('readSSE', () => {
  it('decodes UTF-8 split across chunks', async () => {
    const bytes = new TextEncoder().encode('id: a.1\ndata: {"text":"héllo ✓"}\n\n')
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (const b of bytes) c.enqueue(new Uint8Array([b]))
        c.close()
      },
    })
    const got: string[] = []
    const last = await readSSE(body, (m) => got.push(m.data))
    expect(got).toEqual(['{"text":"héllo ✓"}'])
    expect(last).toBe('a.1')
  })
})
