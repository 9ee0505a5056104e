// The desktop app's side of the page. In Hearth's desktop app (a Wails
// window, cmd/hearth-desktop) the page gets its API token from a <meta>
// element and can ask the app for what a browser tab cannot do: the system's
// folder dialog, notifications, the keychain. In a browser none of this
// exists and every function here says so (undefined, or does nothing).

/** WorkspaceInfo is the open workspace, as the desktop app describes it. */
export interface WorkspaceInfo {
  path: string
  name: string
  /** Whether the agent may run commands there: each asks first, runs freely, or never. */
  commands: 'ask' | 'allowed' | 'never'
  edits: 'ask' | 'allowed' | 'never'
  mode: string
  /** The operating system confines commands to the folder. */
  confined: boolean
  sandbox: string
  /** How far the folder is trusted: trusted, read-only or untrusted (absent from an older app). */
  trust?: string
  problem?: string
}

/** KeyInfo says which API key the settings set and whether one is stored. */
export interface KeyInfo {
  provider: string
  stored: boolean
  from_env?: string
}

/** Bridge is what the desktop app offers the page (window.go.main.Desktop). */
export interface Bridge {
  Workspace(): Promise<WorkspaceInfo>
  ChooseWorkspace(): Promise<WorkspaceInfo | null>
  Notify(title: string, body: string): Promise<void>
  APIKey(): Promise<KeyInfo>
  SetAPIKey(key: string): Promise<string>
  Version(): Promise<string>
}

interface WailsWindow {
  go?: { main?: { Desktop?: Bridge } }
  runtime?: { EventsOn(name: string, cb: (...data: unknown[]) => void): () => void }
}

/** desktop is the app's bridge, or undefined in a browser. */
export function desktop(): Bridge | undefined {
  return (window as unknown as WailsWindow).go?.main?.Desktop
}

/** onDesktop calls cb at each of the app's events of that name; it returns the unsubscribe. */
export function onDesktop(name: DesktopEvent, cb: () => void): () => void {
  const rt = (window as unknown as WailsWindow).runtime
  if (!rt?.EventsOn) return () => {}
  return rt.EventsOn(name, cb)
}

/** The events the desktop app sends: its menu's commands. */
export type DesktopEvent = 'hearth:new-session' | 'hearth:settings'

/** metaToken is the token the desktop app puts in the page, if any. */
export function metaToken(doc: Document = document): string | undefined {
  return doc.querySelector<HTMLMetaElement>('meta[name="hearth-token"]')?.content || undefined
}

/** trustText says in a few words what the agent may do in the workspace. */
export function trustText(w: WorkspaceInfo): string {
  const commands = { ask: 'commands ask first', allowed: 'commands run without asking', never: 'no commands' }[w.commands]
  const edits = { ask: 'edits ask first', allowed: 'edits without asking', never: 'read only' }[w.edits]
  const confined = w.commands === 'never' ? '' : w.confined ? ', confined to this folder' : ', NOT confined by the system'
  const trust = w.trust ? `; the folder is ${w.trust}` : ''
  return `${edits}, ${commands}${confined}${trust}`
}

/**
 * trustBadge says it in a word or two for the header: the freest of what
 * edits and commands may do.
 */
export function trustBadge(w: WorkspaceInfo): string {
  if (w.commands === 'allowed') return 'runs freely'
  if (w.edits === 'allowed') return w.commands === 'never' ? 'edits freely, no commands' : 'edits freely'
  if (w.commands === 'never' && w.edits === 'never') return 'read only'
  return 'asks first'
}

/**
 * openLinksOutside makes links that would open a new window (the answers'
 * links) open in the system's browser: the desktop window has no tabs.
 * It returns the undo. In a browser it does nothing.
 */
export function openLinksOutside(doc: Document = document): () => void {
  const rt = (window as unknown as { runtime?: { BrowserOpenURL?(url: string): void } }).runtime
  if (!rt?.BrowserOpenURL) return () => {}
  const onClick = (e: MouseEvent) => {
    const a = (e.target as Element | null)?.closest?.('a[href]') as HTMLAnchorElement | null
    if (!a || a.target !== '_blank') return
    e.preventDefault()
    if (/^https?:$/.test(new URL(a.href, location.href).protocol)) rt.BrowserOpenURL?.(a.href)
  }
  doc.addEventListener('click', onClick, true)
  return () => doc.removeEventListener('click', onClick, true)
}
