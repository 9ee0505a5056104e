import { describe, expect, it } from 'vitest'
import type { Workspace } from './types'
import { addBody, addFormReducer, emptyForm, upsertWorkspace, workspaceLabel } from './workspaces'

const ws = (path: string, last_used: string, extra: Partial<Workspace> = {}): Workspace => ({
  path,
  name: path.split('/').pop() ?? '',
  trust: 'untrusted',
  created_at: last_used,
  last_used,
  sessions: 0,
  ...extra,
})

describe('upsertWorkspace', () => {
  it('adds a new one in order of last use', () => {
    const list = [ws('/a', '2025-06-03T00:00:00Z'), ws('/b', '2025-06-01T00:00:00Z')]
    const got = upsertWorkspace(list, ws('/c', '2025-06-02T00:00:00Z'))
    expect(got.map((w) => w.path)).toEqual(['/a', '/c', '/b'])
    expect(list).toHaveLength(2)
  })
  it('replaces the one of the same path', () => {
    const list = [ws('/a', '2025-06-03T00:00:00Z'), ws('/b', '2025-06-01T00:00:00Z')]
    const got = upsertWorkspace(list, ws('/b', '2025-06-04T00:00:00Z', { trust: 'trusted', name: 'B' }))
    expect(got.map((w) => [w.path, w.name, w.trust])).toEqual([
      ['/b', 'B', 'trusted'],
      ['/a', 'a', 'untrusted'],
    ])
  })
})

describe('workspaceLabel', () => {
  it.each([
    [{ path: '/home/me/parser', name: 'parser' }, '/home/me/parser'],
    [{ path: '/home/me/parser', name: 'Parser' }, 'Parser (/home/me/parser)'],
    [{ path: '', name: 'unknown' }, 'unknown'],
    [{ path: '', name: '' }, 'unknown'],
  ])('%o → %s', (w, want) => {
    expect(workspaceLabel(w)).toBe(want)
  })
})

describe('addFormReducer', () => {
  it('refuses an empty path without a request', () => {
    const s = addFormReducer(emptyForm, { type: 'submit' })
    expect(s.status).toBe('error')
    expect(s.error).toMatch(/full path/)
  })
  it('goes idle → saving → added, and clears the form', () => {
    let s = addFormReducer(emptyForm, { type: 'edit', field: 'path', value: ' /srv/site ' })
    s = addFormReducer(s, { type: 'edit', field: 'trust', value: 'trusted' })
    s = addFormReducer(s, { type: 'submit' })
    expect(s.status).toBe('saving')
    expect(addBody(s)).toEqual({ path: '/srv/site', trust: 'trusted' })
    // A second submit while saving changes nothing.
    expect(addFormReducer(s, { type: 'submit' })).toBe(s)
    s = addFormReducer(s, { type: 'added', workspace: ws('/srv/site', '2025-06-01T00:00:00Z') })
    expect(s).toEqual({ ...emptyForm, status: 'added', added: '/srv/site' })
  })
  it('keeps the server’s message on failure, and clears it on the next edit', () => {
    let s = addFormReducer({ ...emptyForm, path: 'rel' }, { type: 'submit' })
    s = addFormReducer(s, { type: 'failed', message: '"rel" is not an absolute path' })
    expect(s).toMatchObject({ status: 'error', error: '"rel" is not an absolute path', path: 'rel' })
    s = addFormReducer(s, { type: 'edit', field: 'path', value: '/rel' })
    expect(s.status).toBe('idle')
    expect(s.error).toBeUndefined()
  })
  it('sends the name only when given', () => {
    expect(addBody({ ...emptyForm, path: '/p', name: '  ' })).toEqual({ path: '/p' })
    expect(addBody({ ...emptyForm, path: '/p', name: ' Mine ' })).toEqual({ path: '/p', name: 'Mine' })
  })
})
