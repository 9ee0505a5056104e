import { afterEach, describe, expect, it } from 'vitest'
import { takeToken } from './App'
import { desktop, metaToken, onDesktop, openLinksOutside, trustBadge, trustText, type WorkspaceInfo } from './desktop'

afterEach(() => {
  document.head.innerHTML = ''
  sessionStorage.clear()
  delete (window as unknown as { go?: unknown }).go
  delete (window as unknown as { runtime?: unknown }).runtime
  history.replaceState(null, '', '/')
})

describe('the token', () => {
  it('comes from the desktop app’s <meta> first', () => {
    document.head.innerHTML = '<meta name="hearth-token" content="from-app">'
    history.replaceState(null, '', '/?token=from-url')
    expect(metaToken()).toBe('from-app')
    expect(takeToken()).toBe('from-app')
  })
  it('else from the address, then this tab’s storage', () => {
    history.replaceState(null, '', '/?token=from-url')
    expect(takeToken()).toBe('from-url')
    expect(location.search).toBe('')
    expect(takeToken()).toBe('from-url')
  })
  it('an empty <meta> is no token', () => {
    document.head.innerHTML = '<meta name="hearth-token" content="">'
    expect(metaToken()).toBeUndefined()
  })
})

describe('in a browser', () => {
  it('there is no desktop app, and its events never come', () => {
    expect(desktop()).toBeUndefined()
    const off = onDesktop('hearth:new-session', () => {
      throw new Error('called')
    })
    off()
  })
})

describe('in the desktop app', () => {
  it('the bridge and the events are Wails’', () => {
    const bridge = { Workspace: async () => ({}) }
    const seen: string[] = []
    ;(window as unknown as { go: unknown }).go = { main: { Desktop: bridge } }
    ;(window as unknown as { runtime: unknown }).runtime = {
      EventsOn: (name: string, cb: () => void) => {
        seen.push(name)
        cb()
        return () => seen.push('off ' + name)
      },
    }
    expect(desktop()).toBe(bridge)
    let called = 0
    const off = onDesktop('hearth:settings', () => called++)
    off()
    expect(called).toBe(1)
    expect(seen).toEqual(['hearth:settings', 'off hearth:settings'])
  })
})

describe('trustText', () => {
  const base: WorkspaceInfo = { path: '/p', name: 'p', commands: 'ask', edits: 'ask', mode: 'default', confined: true, sandbox: '' }
  it.each([
    [base, 'edits ask first, commands ask first, confined to this folder'],
    [{ ...base, confined: false }, 'edits ask first, commands ask first, NOT confined by the system'],
    [{ ...base, commands: 'allowed', edits: 'allowed', mode: 'yolo' }, 'edits without asking, commands run without asking, confined to this folder'],
    [{ ...base, commands: 'never', edits: 'never', mode: 'plan' }, 'read only, no commands'],
    [{ ...base, edits: 'never', trust: 'read-only' }, 'read only, commands ask first, confined to this folder; the folder is read-only'],
  ] as [WorkspaceInfo, string][])('%o', (w, want) => {
    expect(trustText(w)).toBe(want)
  })
})

describe('trustBadge', () => {
  const base: WorkspaceInfo = { path: '/p', name: 'p', commands: 'ask', edits: 'ask', mode: 'default', confined: true, sandbox: '' }
  it.each([
    [base, 'asks first'],
    [{ ...base, commands: 'allowed', edits: 'allowed' }, 'runs freely'],
    [{ ...base, edits: 'allowed' }, 'edits freely'],
    [{ ...base, commands: 'never', edits: 'allowed' }, 'edits freely, no commands'],
    [{ ...base, commands: 'never', edits: 'never' }, 'read only'],
    [{ ...base, commands: 'never' }, 'asks first'],
  ] as [WorkspaceInfo, string][])('%o', (w, want) => {
    expect(trustBadge(w)).toBe(want)
  })
})

describe('openLinksOutside', () => {
  it('does nothing in a browser', () => {
    const off = openLinksOutside()
    off()
  })
  it('opens new-window links in the system browser, http(s) only', () => {
    const opened: string[] = []
    ;(window as unknown as { runtime: unknown }).runtime = { BrowserOpenURL: (u: string) => opened.push(u) }
    const off = openLinksOutside()
    document.body.innerHTML =
      '<a id="a" href="https://example.com/x" target="_blank"><span id="s">x</span></a><a id="b" href="javascript:alert(1)" target="_blank">y</a><a id="c" href="/s/1">z</a>'
    const click = (id: string) => {
      const ev = new MouseEvent('click', { bubbles: true, cancelable: true })
      document.getElementById(id)!.dispatchEvent(ev)
      return ev.defaultPrevented
    }
    expect(click('s')).toBe(true)
    expect(click('b')).toBe(true)
    expect(click('c')).toBe(false)
    expect(opened).toEqual(['https://example.com/x'])
    off()
    document.body.innerHTML = ''
  })
})
