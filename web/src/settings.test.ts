import { act, renderHook } from '@testing-library/react'
import { afterEach, describe, expect, it } from 'vitest'
import { loadSettings, useSettings, type Settings } from './settings'

const defaults: Settings = { theme: 'system', keepThinkingOpen: false, model: '', workspace: '' }

function storage(value: string | null | (() => never)): Storage {
  return {
    getItem: (k: string) => {
      expect(k).toBe('hearth.settings')
      return typeof value === 'function' ? value() : value
    },
    setItem() {},
    removeItem() {},
    clear() {},
    key: () => null,
    length: 0,
  }
}

afterEach(() => localStorage.clear())

describe('loadSettings', () => {
  const cases: [string, string | null | (() => never), Settings][] = [
    ['nothing saved', null, defaults],
    ['not JSON', '{theme: dark', defaults],
    ['JSON null', 'null', defaults],
    ['a number', '42', defaults],
    ['a string', '"dark"', defaults],
    ['an array', '["dark"]', defaults],
    ['an empty object', '{}', defaults],
    ['all good', '{"theme":"dark","keepThinkingOpen":true,"model":"qwen3:4b","workspace":"/home/me/site"}', { theme: 'dark', keepThinkingOpen: true, model: 'qwen3:4b', workspace: '/home/me/site' }],
    ['a workspace of the wrong type', '{"workspace":["/home/me/site"]}', defaults],
    ['light', '{"theme":"light"}', { ...defaults, theme: 'light' }],
    ['an unknown theme', '{"theme":"solarized"}', defaults],
    ['a theme of the wrong type', '{"theme":1}', defaults],
    ['keepThinkingOpen as a string', '{"keepThinkingOpen":"true"}', defaults],
    ['keepThinkingOpen as 1', '{"keepThinkingOpen":1}', defaults],
    ['a model of the wrong type', '{"model":{"name":"x"}}', defaults],
    ['extra fields', '{"theme":"dark","token":"secret","__proto__":{"keepThinkingOpen":true}}', { ...defaults, theme: 'dark' }],
    ['storage that throws (private mode)', () => { throw new DOMException('denied', 'SecurityError') }, defaults],
  ]
  it.each(cases)('%s', (_, value, want) => {
    const got = loadSettings(storage(value))
    expect(got).toEqual(want)
    expect(Object.keys(got).sort()).toEqual(['keepThinkingOpen', 'model', 'theme', 'workspace'])
  })

  it('gives a fresh object each time', () => {
    const a = loadSettings(storage(null))
    a.keepThinkingOpen = true
    expect(loadSettings(storage(null)).keepThinkingOpen).toBe(false)
    const b = loadSettings(storage('bad'))
    b.theme = 'dark'
    expect(loadSettings(storage('bad')).theme).toBe('system')
  })

  it('reads localStorage by default', () => {
    localStorage.setItem('hearth.settings', '{"keepThinkingOpen":true}')
    expect(loadSettings().keepThinkingOpen).toBe(true)
  })
})

describe('useSettings', () => {
  it('saves a change so that the next page load reads it', () => {
    const { result } = renderHook(() => useSettings())
    expect(result.current[0]).toEqual(defaults)
    act(() => result.current[1]({ keepThinkingOpen: true }))
    expect(result.current[0]).toEqual({ ...defaults, keepThinkingOpen: true })
    act(() => result.current[1]({ theme: 'dark' }))
    expect(loadSettings()).toEqual({ ...defaults, keepThinkingOpen: true, theme: 'dark' })
    act(() => result.current[1]({ workspace: '/home/me/site' }))
    expect(loadSettings()).toEqual({ ...defaults, keepThinkingOpen: true, theme: 'dark', workspace: '/home/me/site' })
  })
})
