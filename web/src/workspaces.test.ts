import { describe, expect, it } from 'vitest'
import type { Workspace } from './types'
import {
  addBody,
  addFormReducer,
  askTrust,
  currentWorkspace,
  emptyForm,
  optionLabel,
  savedWorkspace,
  sessionsFilter,
  switcherOptions,
  trustLabel,
  trustLevels,
  trustText,
  upsertWorkspace,
  workspaceLabel,
} from './workspaces'

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

describe('switcherOptions', () => {
  const cases: [string, Workspace[], string | undefined, [string, boolean | undefined][]][] = [
    ['nothing known, no default', [], undefined, []],
    ['nothing known: the default, untrusted and never chosen', [], '/srv/home-site', [['/srv/home-site', false]]],
    [
      'the default listed is not added twice, and comes first',
      [ws('/a/zeta', '2025-06-03T00:00:00Z', { trust_chosen: true }), ws('/srv/site', '2025-06-01T00:00:00Z', { trust_chosen: true })],
      '/srv/site',
      [
        ['/srv/site', true],
        ['/a/zeta', true],
      ],
    ],
    [
      'the unknown workspace is never offered; the others by name',
      [ws('', '2025-06-05T00:00:00Z'), ws('/b/beta', '2025-06-04T00:00:00Z'), ws('/a/alpha', '2025-06-01T00:00:00Z')],
      '/srv/site',
      [
        ['/srv/site', false],
        ['/a/alpha', undefined],
        ['/b/beta', undefined],
      ],
    ],
  ]
  it.each(cases)('%s', (_, list, def, want) => {
    const got = switcherOptions(list, def)
    expect(got.map((w) => [w.path, w.trust_chosen])).toEqual(want)
    expect(got.every((w) => w.trust)).toBe(true)
  })
  it('names the unlisted default by its folder and leaves the list alone', () => {
    const list = [ws('/a/alpha', '2025-06-01T00:00:00Z')]
    const got = switcherOptions(list, '/home/me/project')
    expect(got[0]).toMatchObject({ path: '/home/me/project', name: 'project', trust: 'untrusted', trust_chosen: false })
    expect(list).toHaveLength(1)
  })
  it("shows the trust the server runs its own workspace with (--trust), and asks nothing there", () => {
    const list = [ws('/srv/site', '2025-06-01T00:00:00Z', { trust_chosen: false }), ws('/a/alpha', '2025-06-01T00:00:00Z', { trust_chosen: false })]
    for (const l of [list, []]) {
      const got = switcherOptions(l, '/srv/site', { trust: 'trusted' })
      expect(got[0]).toMatchObject({ path: '/srv/site', trust: 'trusted', trust_chosen: true })
      expect(askTrust(got[0], new Set())).toBe(false)
    }
    // The others keep theirs.
    expect(switcherOptions(list, '/srv/site', { trust: 'trusted' })[1]).toMatchObject({ path: '/a/alpha', trust: 'untrusted', trust_chosen: false })
    expect(list[0].trust_chosen).toBe(false)
  })
})

describe('currentWorkspace', () => {
  const options = [{ path: '/srv/site' }, { path: '/a/alpha' }]
  it.each([
    ['nothing saved: the default', '', '/srv/site'],
    ['a known choice', '/a/alpha', '/a/alpha'],
    ['the default chosen by its path', '/srv/site', '/srv/site'],
    ['a choice no longer known (removed): the default', '/gone', '/srv/site'],
  ])('%s', (_, saved, want) => {
    expect(currentWorkspace(saved, options, '/srv/site')).toBe(want)
  })
  it('a saved "" follows the server’s own, whichever folder it is', () => {
    expect(currentWorkspace('', [{ path: '/other' }], '/other')).toBe('/other')
  })
})

describe('savedWorkspace', () => {
  it.each([
    ['/srv/site', '/srv/site', ''],
    ['/a/alpha', '/srv/site', '/a/alpha'],
  ])('%s with default %s → %j', (path, def, want) => {
    expect(savedWorkspace(path, def)).toBe(want)
  })
})

describe('optionLabel', () => {
  const options = [
    { path: '/work/api', name: 'api' },
    { path: '/old/api', name: 'api' },
    { path: '/srv/site', name: 'Site' },
    { path: '/x/unnamed', name: '' },
  ]
  it.each([
    [options[0], 'api (/work/api)'],
    [options[1], 'api (/old/api)'],
    [options[2], 'Site'],
    [options[3], 'unnamed'],
  ])('%o → %s', (w, want) => {
    expect(optionLabel(w, options)).toBe(want)
  })
})

describe('askTrust', () => {
  const none = new Set<string>()
  const cases: [string, Partial<Workspace> | undefined, ReadonlySet<string>, boolean][] = [
    ['no workspace yet', undefined, none, false],
    ['never chosen', { path: '/srv/site', trust_chosen: false }, none, true],
    ['never chosen, asked already this load', { path: '/srv/site', trust_chosen: false }, new Set(['/srv/site']), false],
    ['another one asked already', { path: '/srv/site', trust_chosen: false }, new Set(['/a/alpha']), true],
    ['chosen untrusted', { path: '/srv/site', trust: 'untrusted', trust_chosen: true }, none, false],
    ['chosen trusted', { path: '/srv/site', trust: 'trusted', trust_chosen: true }, none, false],
    ['an older server that does not say', { path: '/srv/site', trust: 'untrusted' }, none, false],
    ['the unknown workspace', { path: '', trust_chosen: false }, none, false],
  ]
  it.each(cases)('%s → %s', (_, w, asked, want) => {
    expect(askTrust(w as Workspace | undefined, asked)).toBe(want)
  })
})

describe('sessionsFilter', () => {
  const cases: [string, Parameters<typeof sessionsFilter>[0], string | undefined][] = [
    ['one workspace served: every session', { multiple: false, current: undefined, all: false }, undefined],
    ['one served, a workspace chosen in the view', { multiple: false, all: false, filter: '/a' }, '/a'],
    ['many: the current one', { multiple: true, current: '/srv/site', all: false }, '/srv/site'],
    ['many, all asked for', { multiple: true, current: '/srv/site', all: true }, undefined],
    ['many, the unknown workspace chosen in the view', { multiple: true, current: '/srv/site', all: true, filter: '' }, ''],
  ]
  it.each(cases)('%s', (_, s, want) => {
    expect(sessionsFilter(s)).toBe(want)
  })
})

describe('trust texts', () => {
  it('explains each level as the server enforces it, and none says it is not enforced', () => {
    expect(trustLevels.map((t) => t.value)).toEqual(['trusted', 'read-only', 'untrusted'])
    expect(trustText.trusted).toMatch(/\.hearth\/config\.toml/)
    expect(trustText.trusted).toMatch(/providers, and MCP servers/)
    expect(trustText.trusted).toMatch(/outside the sandbox/)
    expect(trustText['read-only']).toMatch(/never change anything/)
    expect(trustText['read-only']).toMatch(/read-only sandbox/)
    expect(trustText.untrusted).toMatch(/^The default/)
    expect(trustText.untrusted).toMatch(/only tighten/)
    expect(trustText.untrusted).toMatch(/above “default” are not available/)
    for (const t of trustLevels) expect(t.text).not.toMatch(/not (yet )?enforced|recorded/i)
  })
  it.each([
    ['trusted', 'Trusted'],
    ['read-only', 'Read-only'],
    ['untrusted', 'Untrusted'],
    ['paranoid', 'paranoid'],
  ])('trustLabel(%s) is %s', (level, want) => {
    expect(trustLabel(level)).toBe(want)
  })
})

describe('askTrust when the project config changed', () => {
  it.each([
    ['never chosen', { path: '/p', trust_chosen: false }, true],
    ['chosen', { path: '/p', trust_chosen: true }, false],
    ['chosen, its config changed since', { path: '/p', trust_chosen: true, config_changed: true }, true],
    ['the unknown workspace', { path: '', trust_chosen: false }, false],
  ] as const)('%s', (_, w, want) => {
    expect(askTrust(w, new Set())).toBe(want)
    expect(askTrust(w, new Set(['/p']))).toBe(false)
  })
})
