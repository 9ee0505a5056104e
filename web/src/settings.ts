// The page's own settings, kept in localStorage: the theme, whether the
// thinking panel stays open once the answer starts, the model, and the
// workspace chosen in the switcher.

import { useCallback, useEffect, useState } from 'react'

/** Theme is the user's choice; "system" follows the OS. */
export type Theme = 'system' | 'light' | 'dark'

/** Settings are what the settings dialog changes. */
export interface Settings {
  theme: Theme
  keepThinkingOpen: boolean
  /** The model turns are sent with; "" means the server's default. */
  model: string
  /**
   * The workspace chosen in the switcher, by its path; "" means the
   * server's own (its default), whichever folder that is.
   */
  workspace: string
}

const key = 'hearth.settings'
const defaults: Settings = { theme: 'system', keepThinkingOpen: false, model: '', workspace: '' }

/** loadSettings reads the saved settings, falling back to the defaults. */
export function loadSettings(storage: Storage | undefined = globalThis.localStorage): Settings {
  try {
    const saved = JSON.parse(storage?.getItem(key) ?? '{}') as Partial<Settings>
    const theme: Theme = saved.theme === 'light' || saved.theme === 'dark' ? saved.theme : 'system'
    return {
      theme,
      keepThinkingOpen: saved.keepThinkingOpen === true,
      model: typeof saved.model === 'string' ? saved.model : '',
      workspace: typeof saved.workspace === 'string' ? saved.workspace : '',
    }
  } catch {
    return { ...defaults }
  }
}

/** useSettings is the settings with a setter that saves them. */
export function useSettings(): [Settings, (patch: Partial<Settings>) => void] {
  const [settings, setSettings] = useState(loadSettings)
  const update = useCallback((patch: Partial<Settings>) => {
    setSettings((s) => {
      const next = { ...s, ...patch }
      try {
        localStorage.setItem(key, JSON.stringify(next))
      } catch {
        // private mode or full: the setting lasts for this page only
      }
      return next
    })
  }, [])
  return [settings, update]
}

/** useTheme puts the resolved theme on <html data-theme>. */
export function useTheme(theme: Theme): void {
  useEffect(() => {
    const media = window.matchMedia?.('(prefers-color-scheme: dark)')
    const apply = () => {
      const dark = theme === 'dark' || (theme === 'system' && media?.matches)
      document.documentElement.dataset.theme = dark ? 'dark' : 'light'
    }
    apply()
    if (theme !== 'system' || !media) return
    media.addEventListener('change', apply)
    return () => media.removeEventListener('change', apply)
  }, [theme])
}
