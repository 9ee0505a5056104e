import { useCallback, useEffect, useMemo, useRef, useState, useSyncExternalStore, type ReactNode } from 'react'
import { APIError, Client, unauthorized } from './api'
import { AssistantMessage, UserMessage } from './components/Messages'
import { Composer } from './components/Composer'
import { Header, ProviderProblem } from './components/Header'
import { Icon } from './components/Icon'
import { PlanPanel } from './components/PlanPanel'
import { MessageActions, RestoreDialog, RestoreNote, type RestoreAction, type RestoreDone } from './components/Restore'
import { SettingsDialog } from './components/SettingsDialog'
import { Sidebar } from './components/Sidebar'
import { TrustDialog } from './components/Trust'
import { UsageView } from './components/UsageView'
import { WorkspaceSwitcher } from './components/WorkspaceSwitcher'
import { WorkspacesView } from './components/WorkspacesView'
import { formatCost, hasCalls } from './cost'
import { entries, entrySeq, lastUserSeq, turnSeqs, withCheckpoints, type Entry, type TurnSeqs } from './history'
import { currentPlan, planAnnouncement, planOfSession, type PlanSteps } from './plan'
import { useSettings, useTheme } from './settings'
import type { Checkpoint, Health, ModelInfo, RestoreInfo, Session, TrustLevel, Workspace, WorkspaceList } from './types'
import { useTurns } from './useTurns'
import { desktop, metaToken, onDesktop, openLinksOutside, type WorkspaceInfo } from './desktop'
import { askTrust, currentWorkspace, savedWorkspace, sessionsFilter, switcherOptions, upsertWorkspace } from './workspaces'

/**
 * takeToken reads the token the desktop app put in the page, else the one in
 * the address (then removes it), else the one in this tab's storage.
 */
export function takeToken(): string | undefined {
  const fromApp = metaToken()
  if (fromApp) return fromApp
  const url = new URL(window.location.href)
  const fromURL = url.searchParams.get('token')
  if (fromURL) {
    sessionStorage.setItem('hearth.token', fromURL)
    url.searchParams.delete('token')
    history.replaceState(history.state, '', url.pathname + url.search + url.hash)
    return fromURL
  }
  return sessionStorage.getItem('hearth.token') ?? undefined
}

/** sessionFromPath reads the open session's id from /s/{id}. */
export function sessionFromPath(path: string): string | undefined {
  const m = /^\/s\/([^/]+)\/?$/.exec(path)
  return m ? decodeURIComponent(m[1]) : undefined
}

const healthEvery = 30_000

/** App is the whole page. */
export function App() {
  const [token] = useState(takeToken)
  const client = useMemo(() => (token ? new Client({ token }) : undefined), [token])
  const [settings, setSettings] = useSettings()
  useTheme(settings.theme)

  const [authError, setAuthError] = useState(!token)
  const [sessions, setSessions] = useState<Session[]>([])
  const [listError, setListError] = useState<string>()
  const [query, setQuery] = useState('')
  const [activeId, setActiveId] = useState(() => sessionFromPath(location.pathname))
  const [history, setHistory] = useState<Entry[]>([])
  // The open session as loaded (its title and archived mark when the list
  // does not hold it), its checkpoints, this visit's restores of it, and
  // the seqs of the turns it ran live (known once each has ended).
  const [loaded, setLoaded] = useState<Session>()
  const [checkpoints, setCheckpoints] = useState<Checkpoint[]>([])
  const [restores, setRestores] = useState<RestoreInfo[]>([])
  const [liveSeqs, setLiveSeqs] = useState<(TurnSeqs | undefined)[]>([])
  const [restoreAction, setRestoreAction] = useState<RestoreAction>()
  // The model's plan as the open session holds it (loaded, or read again
  // after a turn); the turns of this visit change it live. The panel may
  // be folded.
  const [sessionPlan, setSessionPlan] = useState<PlanSteps>(null)
  const [planOpen, setPlanOpen] = useState(true)
  // The sidebar lists the archived sessions instead of the others.
  const [showArchived, setShowArchived] = useState(false)
  const [loadError, setLoadError] = useState<string>()
  const [loading, setLoading] = useState(false)
  const [health, setHealth] = useState<Health>()
  // Hearth itself does not answer (hearth serve stopped).
  const [offline, setOffline] = useState(false)
  // Bumped to load the open session again.
  const [reload, setReload] = useState(0)
  // A message given back to the composer (it could not be sent).
  const [draft, setDraft] = useState<{ text: string; n: number }>()
  const [models, setModels] = useState<ModelInfo[]>([])
  const [defaultModel, setDefaultModel] = useState('')
  const [view, setView] = useState<'chat' | 'usage' | 'workspaces'>('chat')
  // The workspace the workspaces view chose to list the sessions of
  // (undefined: none chose; see sessionsFilter).
  const [wsFilter, setWsFilter] = useState<string>()
  // On a server of many workspaces: every workspace's sessions are listed,
  // not only the current one's.
  const [allSessions, setAllSessions] = useState(false)
  const [showSettings, setShowSettings] = useState(false)
  const [drawer, setDrawer] = useState(false)
  const narrow = useMedia('(max-width: 719px)')
  const [sendError, setSendError] = useState<string>()

  // In the desktop app: the open workspace, and its menu's commands.
  const [workspace, setWorkspace] = useState<WorkspaceInfo>()
  const [workspaceError, setWorkspaceError] = useState<string>()
  useEffect(() => {
    void desktop()
      ?.Workspace()
      .then(setWorkspace)
      .catch(() => {})
  }, [])
  const chooseWorkspace = useCallback(async () => {
    setWorkspaceError(undefined)
    try {
      // The app reloads the page when the folder changes.
      await desktop()?.ChooseWorkspace()
    } catch (err) {
      setWorkspaceError(String((err as Error)?.message ?? err))
    }
  }, [])

  const fail = useCallback((err: unknown) => {
    if (unauthorized(err)) setAuthError(true)
  }, [])

  // The workspaces the server knows, its own, and whether it serves the
  // others (then the sidebar switches between them; the desktop app opens
  // one folder at a time with its own chooser). The session list waits for
  // them (wsReady), to list the current workspace's sessions only.
  const [wsList, setWsList] = useState<WorkspaceList>()
  const [wsReady, setWsReady] = useState(false)
  // Bumped when the page changed a workspace: the workspaces view reads them again.
  const [wsVersion, setWsVersion] = useState(0)
  const loadWorkspaces = useCallback(
    async (signal?: AbortSignal) => {
      if (!client) return
      try {
        setWsList(await client.workspaces(signal))
      } catch (err) {
        if (signal?.aborted) return
        fail(err) // an older server without workspaces: every session is listed
      }
      setWsReady(true)
    },
    [client, fail],
  )
  useEffect(() => {
    const ac = new AbortController()
    void loadWorkspaces(ac.signal)
    return () => ac.abort()
  }, [loadWorkspaces])
  const multiple = !!wsList?.multiple && !desktop()
  const wsDefault = wsList?.default ?? ''
  const wsOptions = useMemo(() => (multiple ? switcherOptions(wsList?.workspaces ?? [], wsDefault, wsList?.default_trust) : []), [multiple, wsList, wsDefault])
  const currentPath = multiple ? currentWorkspace(settings.workspace, wsOptions, wsDefault) : undefined
  const currentWs = wsOptions.find((w) => w.path === currentPath)
  // The folder whose trust the page asks about: the current workspace, or
  // in the desktop app the folder it has open.
  const deskPath = desktop() ? workspace?.path : undefined
  const askWs = useMemo(
    () => (multiple ? currentWs : deskPath && wsList ? switcherOptions(wsList.workspaces ?? [], deskPath)[0] : undefined),
    [multiple, currentWs, deskPath, wsList],
  )
  const listWorkspace = sessionsFilter({ multiple, current: currentPath, all: allSessions, filter: wsFilter })

  // The session list, searched as the user types. Only the latest
  // request's answer is shown: answers may come back out of order.
  const listSeq = useRef(0)
  const refreshList = useCallback(
    async (q = query) => {
      if (!client || !wsReady) return
      const seq = ++listSeq.current
      try {
        const r = await client.sessions(q.trim(), undefined, showArchived, listWorkspace)
        if (seq !== listSeq.current) return
        setSessions(r.sessions ?? [])
        setListError(undefined)
      } catch (err) {
        if (seq !== listSeq.current) return
        fail(err)
        setListError((err as Error).message)
      }
    },
    [client, query, fail, showArchived, listWorkspace, wsReady],
  )
  useEffect(() => {
    const t = setTimeout(() => void refreshList(query), query ? 200 : 0)
    return () => clearTimeout(t)
  }, [query, refreshList])

  // A session is titled from its first prompt at once; the model is asked
  // for a better title in the background after its first turn here (once
  // a page load), and the list shows it when it comes.
  const titled = useRef(new Set<string>())
  const modelRef = useRef('')
  const titleLater = useCallback(
    (id: string) => {
      if (!client || titled.current.has(id)) return
      titled.current.add(id)
      client
        .titleSession(id, modelRef.current || undefined)
        .then((s) => setSessions((list) => list.map((x) => (x.id === id ? { ...x, title: s.title } : x))))
        .catch(() => {}) // the title from the prompt stands
    },
    [client],
  )

  // After a turn of the open session: its checkpoints, and the seqs of
  // the turns run live (for their rewind and fork).
  const activeRef = useRef<string>(undefined)
  const liveMessages = useRef<string[]>([])
  const refreshCheckpoints = useCallback(
    (id: string) => {
      if (!client) return
      void Promise.all([client.session(id), client.checkpoints(id)])
        .then(([s, c]) => {
          if (activeRef.current !== id) return
          setLiveSeqs(turnSeqs(s, liveMessages.current))
          setSessionPlan(planOfSession(s))
          setCheckpoints(c.checkpoints ?? [])
        })
        .catch(() => {}) // the markers wait for the next load
    },
    [client],
  )

  activeRef.current = activeId
  const turns = useTurns(client, {
    onFinished: (id) => {
      void refreshList()
      titleLater(id)
      refreshCheckpoints(id)
    },
    onNotSent: (_id, message, err) => {
      // The message is given back; for a session busy elsewhere, the turn
      // holding it is shown.
      setDraft((d) => ({ text: message, n: (d?.n ?? 0) + 1 }))
      if (err.code === 'session_busy') {
        setSendError('This session is busy with a turn started elsewhere (another tab, or hearth run): your message is back in the box. Send it again once that turn has ended; a turn this server runs is shown below, with Stop.')
        setReload((n) => n + 1)
      } else {
        setSendError(`Not sent (your message is back in the box): ${err.message}`)
      }
    },
    onGone: () => setReload((n) => n + 1),
    onUnauthorized: () => setAuthError(true),
  })

  liveMessages.current = turns.turns.map((t) => t.message)

  // The models; asked again when the model server comes back.
  const loadModels = useCallback(async () => {
    if (!client) return
    try {
      const r = await client.models()
      setModels(r.models ?? [])
      setDefaultModel(r.default ?? '')
    } catch (err) {
      fail(err)
    }
  }, [client, fail])

  // The model server's health, now and every 30 s.
  const reachable = useRef<boolean>(undefined)
  const checkHealth = useCallback(async () => {
    if (!client) return
    try {
      const h = await client.health()
      setHealth(h)
      setOffline(false)
      if (h.provider.reachable && reachable.current !== true) void loadModels()
      reachable.current = h.provider.reachable
    } catch (err) {
      fail(err)
      if (err instanceof APIError && err.status === 0) {
        setOffline(true)
        reachable.current = undefined
      }
    }
  }, [client, fail, loadModels])
  useEffect(() => {
    void checkHealth()
    const t = setInterval(() => void checkHealth(), healthEvery)
    // Back online, or back to this window: no need to wait for the timer.
    const now = () => void checkHealth()
    window.addEventListener('online', now)
    window.addEventListener('focus', now)
    return () => {
      clearInterval(t)
      window.removeEventListener('online', now)
      window.removeEventListener('focus', now)
    }
  }, [checkHealth])
  useEffect(() => {
    void loadModels()
  }, [loadModels])

  // The server's default, or, while it cannot list its models, the model
  // its health names.
  const model = pickModel(settings.model, defaultModel || health?.model?.name || '', models)
  modelRef.current = model

  // Opening a session: its stored messages, and the turn it is running.
  const { reset: resetTurns, follow } = turns
  // A session the page has just made has nothing to load, and its first
  // turn is already under way.
  const skipLoad = useRef<string>(undefined)
  useEffect(() => {
    setCheckpoints([])
    setLiveSeqs([])
    setSessionPlan(null)
    if (activeId && skipLoad.current === activeId) {
      skipLoad.current = undefined
      setHistory([])
      setLoadError(undefined)
      return
    }
    resetTurns()
    setHistory([])
    setLoadError(undefined)
    setLoading(false) // a load this effect's last run aborted
    if (reload === 0) setSendError(undefined)
    if (!client || !activeId) return
    const ctl = new AbortController()
    setLoading(true)
    client
      .session(activeId, ctl.signal)
      .then((s) => {
        const { messages: _m, tool_runs: _r, plan: _p, ...info } = s
        setLoaded(info)
        setSessionPlan(planOfSession(s))
        client
          .checkpoints(s.id, ctl.signal)
          .then((c) => setCheckpoints(c.checkpoints ?? []))
          .catch(() => {}) // no markers: the session still shows
        if (s.running_turn) {
          const seq = lastUserSeq(s)
          setHistory(entries(s, seq))
          const msg = s.messages.find((m) => m.seq === seq)?.content ?? ''
          follow(s.id, msg)
        } else {
          setHistory(entries(s))
        }
      })
      .catch((err) => {
        if (ctl.signal.aborted) return
        fail(err)
        setLoadError(err instanceof APIError && err.code === 'not_found' ? 'This session does not exist any more.' : (err as Error).message)
      })
      .finally(() => !ctl.signal.aborted && setLoading(false))
    return () => ctl.abort()
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, activeId, reload, resetTurns, follow, fail])

  // The address follows the open session; back and forward move between them.
  const navigate = useCallback((id: string | undefined, replace = false) => {
    const path = id ? `/s/${encodeURIComponent(id)}` : '/'
    if (location.pathname !== path) {
      if (replace) history_.replaceState(null, '', path)
      else history_.pushState(null, '', path)
    }
    setActiveId(id)
    setReload(0)
    setSendError(undefined)
    setDraft(undefined)
    setRestores([])
    setView('chat')
    setDrawer(false)
  }, [])
  // Escape closes the sessions drawer on a phone.
  useEffect(() => {
    if (!drawer) return
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return
      setDrawer(false)
      document.querySelector<HTMLElement>('.menu')?.focus() // the focus was in the drawer
    }
    window.addEventListener('keydown', onKey)
    return () => window.removeEventListener('keydown', onKey)
  }, [drawer])
  useEffect(() => {
    const onPop = () => {
      setActiveId(sessionFromPath(location.pathname))
      setReload(0)
      setSendError(undefined)
      setDraft(undefined)
      setRestores([])
      setView('chat')
    }
    window.addEventListener('popstate', onPop)
    return () => window.removeEventListener('popstate', onPop)
  }, [])

  // In the desktop app, links open in the system's browser.
  useEffect(() => openLinksOutside(), [])

  // The desktop app's menu: File > New Session (Ctrl+N), Settings (Ctrl+,).
  useEffect(() => {
    const offNew = onDesktop('hearth:new-session', () => {
      navigate(undefined)
      document.querySelector<HTMLElement>('textarea')?.focus()
    })
    const offSettings = onDesktop('hearth:settings', () => setShowSettings(true))
    return () => {
      offNew()
      offSettings()
    }
  }, [navigate])

  // An approval waiting while the desktop app's window is not in front: a
  // notification, once per call.
  const notified = useRef(new Set<string>())
  const lastTurn = turns.turns[turns.turns.length - 1]
  useEffect(() => {
    const app = desktop()
    if (!app || !lastTurn) return
    for (const b of lastTurn.blocks) {
      if (b.kind !== 'tool' || b.state !== 'approval' || notified.current.has(b.id)) continue
      notified.current.add(b.id)
      if (document.hasFocus()) continue
      void app.Notify('Hearth is waiting for your approval', `${b.name}: ${b.reason ?? 'allow this call?'}`).catch(() => {})
    }
  }, [lastTurn])

  // The workspace of the open session, when known.
  const openWorkspace = (() => {
    if (!activeId) return undefined
    const s = sessions.find((x) => x.id === activeId) ?? (loaded?.id === activeId ? loaded : undefined)
    return s ? (s.workspace ?? '') : undefined
  })()

  // Switching to another workspace lists its sessions and makes new chats
  // there; the open session stays open only if it is one of them. The
  // choice is kept for the next load ("" for the server's own).
  const switchWorkspace = (path: string) => {
    setSettings({ workspace: savedWorkspace(path, wsDefault) })
    if (path !== currentPath) setSessions([])
    setWsFilter(undefined)
    setAllSessions(false)
    if (activeId && openWorkspace !== path) navigate(undefined)
    else setView('chat')
  }
  // An open session of another known workspace (opened by its address, or
  // from every workspace's list) makes that workspace the current one: the
  // page shows where the open chat runs, and a new chat goes there too.
  useEffect(() => {
    if (!multiple || !loaded || loaded.id !== activeId) return
    const ws = loaded.workspace ?? ''
    if (ws !== currentPath && wsOptions.some((w) => w.path === ws)) setSettings({ workspace: savedWorkspace(ws, wsDefault) })
  }, [multiple, loaded, activeId, currentPath, wsOptions, wsDefault, setSettings])

  // Whether the user trusts the current workspace's folder: asked once a
  // page load when it was never chosen (after the switcher has rested on
  // it a moment, so that stepping through the list with the keyboard does
  // not ask about each), or when its trust badge is pressed.
  const asked = useRef(new Set<string>())
  const [trustFor, setTrustFor] = useState<Workspace>()
  useEffect(() => {
    if (trustFor || !askTrust(askWs, asked.current)) return
    const t = setTimeout(() => {
      asked.current.add(askWs!.path)
      setTrustFor(askWs)
    }, 300)
    return () => clearTimeout(t)
  }, [askWs, trustFor])
  const saveTrust = async (path: string, trust: TrustLevel) => {
    if (!client) return
    try {
      // A known workspace is changed (a removed one stays removed: 404);
      // the server's own, not listed before its first session, is added.
      const known = wsList?.workspaces?.some((w) => w.path === path)
      const ws = known ? await client.patchWorkspace(path, { trust }) : await client.addWorkspace({ path, trust })
      setWsList((l) => (l ? { ...l, workspaces: upsertWorkspace(l.workspaces ?? [], ws) } : l))
    } catch (err) {
      fail(err)
      throw err // shown in the dialog
    }
    setTrustFor(undefined)
    setWsVersion((n) => n + 1)
    void loadWorkspaces()
    // The desktop app says what the folder now allows.
    void desktop()
      ?.Workspace()
      .then(setWorkspace)
      .catch(() => {})
  }

  // A new session is made when its first message is sent.
  const creating = useRef(false)
  const send = async (text: string) => {
    if (!client || creating.current) return
    setSendError(undefined)
    let id = activeId
    if (!id) {
      creating.current = true
      try {
        // In the current workspace (on a server of many).
        const s = await client.createSession(undefined, currentPath)
        id = s.id
        setSessions((list) => [s, ...list])
        if (multiple) void loadWorkspaces() // its count, and the server's own listed from its first session
        // Not navigate(): the session is new and empty, nothing to load.
        history_.pushState(null, '', `/s/${encodeURIComponent(id)}`)
        skipLoad.current = id
        setActiveId(id)
        setReload(0)
      } catch (err) {
        fail(err)
        setSendError((err as Error).message)
        return
      } finally {
        creating.current = false
      }
    }
    await turns.send(id, text, model || undefined)
  }

  const rename = async (id: string, title: string) => {
    if (!client) return
    try {
      const s = await client.renameSession(id, title)
      setSessions((list) => list.map((x) => (x.id === id ? { ...x, ...s } : x)))
    } catch (err) {
      fail(err)
      setListError(`Could not rename: ${(err as Error).message}`)
    }
  }
  const remove = async (id: string) => {
    if (!client) return
    try {
      await client.deleteSession(id)
      setSessions((list) => list.filter((x) => x.id !== id))
      if (id === activeId) navigate(undefined)
    } catch (err) {
      fail(err)
      setListError(`Could not delete: ${(err as Error).message}`)
    }
  }

  const archive = async (id: string, archived: boolean) => {
    if (!client) return
    setSendError(undefined)
    try {
      const s = await client.setArchived(id, archived)
      if (id === activeId) setLoaded(s)
      setSessions((list) => list.filter((x) => x.id !== id))
      void refreshList()
    } catch (err) {
      fail(err)
      setSendError(`Could not ${archived ? 'archive' : 'unarchive'} the session: ${(err as Error).message}`)
    }
  }

  // A restore made: shown, and the session loaded again (its conversation
  // may be shorter); a prompt taken back goes back in the message box. A
  // fork made: opened.
  const restored = (d: RestoreDone) => {
    const action = restoreAction
    setRestoreAction(undefined)
    if (d.kind === 'fork') {
      setSessions((list) => [d.result, ...list.filter((x) => x.id !== d.result.id)])
      navigate(d.result.id)
      return
    }
    const { type: _t, conflicts: _c, dry_run: _d, ...info } = d.result
    setRestores((rs) => [...rs, info])
    if (action?.kind === 'rewind' && action.prompt && d.result.conversation && d.result.conversation.removed > 0) {
      setDraft((old) => ({ text: action.prompt!, n: (old?.n ?? 0) + 1 }))
    }
    setReload((n) => n + 1)
    void refreshList()
  }

  // Keep the newest output in view unless the user scrolled up to read.
  const scroller = useRef<HTMLDivElement>(null)
  const pinned = useRef(true)
  useEffect(() => {
    const el = scroller.current
    if (el && pinned.current) el.scrollTop = el.scrollHeight
  })

  if (authError) {
    return (
      <main className="auth">
        <div role="alert" className="auth-box">
          <h1>Hearth needs its key</h1>
          <p>
            This page needs the address <code>hearth serve</code> printed when it started, the one that ends in <code>/?token=…</code>. Open
            that address again (run <code>hearth serve</code> if it has stopped).
          </p>
          <p className="muted small">The token may also have changed since this page was opened: a new one is printed at every start when HEARTH_API_TOKEN is not set.</p>
        </div>
      </main>
    )
  }

  const active = sessions.find((s) => s.id === activeId) ?? (loaded?.id === activeId ? loaded : undefined)
  const archived = loaded?.id === activeId && !!loaded?.archived
  // Undo, rewind and fork wait for the running turn.
  const canRestore = !!client && !!activeId && !turns.running && !loading && !loadError
  const shown = withCheckpoints(history, checkpoints, restores)
  // The prompts by seq, to name the turn a restore undid.
  const prompts = new Map<number, string>()
  for (const e of history) if (e.kind === 'user' && e.seq !== undefined) prompts.set(e.seq, e.text)
  turns.turns.forEach((t, i) => liveSeqs[i] && prompts.set(liveSeqs[i]!.user, t.message))
  const hasCheckpoints = checkpoints.length > 0 || turns.turns.some((t) => t.blocks.some((b) => b.kind === 'tool' && b.checkpoint !== undefined))
  const rewind = (through: number, where: 'before' | 'here', prompt?: string) => () => setRestoreAction({ kind: 'rewind', through, where, prompt })
  const fork = (through: number) => () => setRestoreAction({ kind: 'fork', through })
  // The seq of the message before the one drawn next ("Rewind to before
  // this"): 0 before the first (the start of the session); none after a
  // summary.
  let prev: number | undefined = 0
  const title = view === 'usage' ? 'Usage' : view === 'workspaces' ? 'Workspaces' : active?.title || (activeId ? 'Untitled' : 'New chat')
  const current = turns.turns[turns.turns.length - 1]
  const plan = activeId || turns.turns.length > 0 ? currentPlan(sessionPlan, turns.turns) : null

  return (
    <div className={`app${drawer ? ' drawer-open' : ''}`}>
      <a href="#message" className="skip-link" onClick={(e) => (e.preventDefault(), document.querySelector<HTMLElement>('textarea')?.focus())}>
        Skip to the message box
      </a>
      <Sidebar
        drawer={narrow ? drawer : undefined}
        sessions={sessions}
        activeId={activeId}
        query={query}
        onQuery={setQuery}
        onNew={() => navigate(undefined)}
        onOpen={(id) => navigate(id)}
        onRename={rename}
        onDelete={remove}
        archived={showArchived}
        onArchived={(v) => {
          setSessions([])
          setShowArchived(v)
        }}
        onUnarchive={(id) => void archive(id, false)}
        error={listError}
        workspace={wsFilter}
        onAllWorkspaces={() => {
          setSessions([])
          setWsFilter(undefined)
          setAllSessions(true)
        }}
        top={
          multiple && currentPath !== undefined ? (
            <WorkspaceSwitcher options={wsOptions} current={currentPath} def={wsDefault} onSwitch={switchWorkspace} onTrust={() => setTrustFor(currentWs)} />
          ) : undefined
        }
        allWorkspaces={multiple ? allSessions && wsFilter === undefined : undefined}
        onAllWorkspacesToggle={
          multiple
            ? (all) => {
                setSessions([])
                setWsFilter(undefined)
                setAllSessions(all)
              }
            : undefined
        }
        workspaceName={(path) => wsOptions.find((w) => w.path === path)?.name ?? (path ? path.split('/').pop() || path : 'unknown')}
      />
      {drawer && <div className="scrim" onClick={() => setDrawer(false)} aria-hidden="true" />}
      <Announcer turn={current} />
      <main className="main" inert={narrow && drawer ? true : undefined}>
        <Header
          models={models}
          model={model}
          onModel={(m) => setSettings({ model: m })}
          health={health}
          onUsage={() => setView(view === 'usage' ? 'chat' : 'usage')}
          onWorkspaces={() => setView(view === 'workspaces' ? 'chat' : 'workspaces')}
          onSettings={() => setShowSettings(true)}
          onSessions={() => setDrawer(!drawer)}
          drawerOpen={drawer}
          title={title}
          workspace={workspace}
          onChooseWorkspace={desktop() ? () => void chooseWorkspace() : undefined}
          served={currentWs}
        />
        {workspaceError && (
          <p role="alert" className="turn-error">
            {workspaceError}
          </p>
        )}
        {offline ? (
          <div className="banner" role="alert">
            <p>
              {desktop() ? (
                <>
                  <strong>Hearth does not answer.</strong> The workspace is being opened again, or could not be: this window reconnects by itself.
                </>
              ) : (
                <>
                  <strong>Hearth does not answer.</strong> Is <code>hearth serve</code> still running? Start it again; this page reconnects by itself.
                </>
              )}
            </p>
          </div>
        ) : (
          <ProviderProblem health={health} onRetry={() => void checkHealth()} />
        )}
        {view === 'usage' && client ? (
          <UsageView client={client} onClose={() => setView('chat')} onOpen={(id) => navigate(id)} />
        ) : view === 'workspaces' && client ? (
          <WorkspacesView
            client={client}
            selected={wsFilter}
            onSelect={(path) => {
              setSessions([])
              setWsFilter(path)
              setAllSessions(path === undefined)
            }}
            onClose={() => setView('chat')}
            current={multiple ? currentPath : undefined}
            onSwitch={multiple ? switchWorkspace : undefined}
            onChanged={() => void loadWorkspaces()}
            version={wsVersion}
          />
        ) : (
          <>
            <div
              className="conversation"
              ref={scroller}
              onScroll={(e) => {
                const el = e.currentTarget
                pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80
              }}
            >
              {plan && <PlanPanel steps={plan} open={planOpen} onToggle={() => setPlanOpen((o) => !o)} />}
              <div className="conversation-inner">
                {!activeId && turns.turns.length === 0 && <Welcome health={health} model={model} />}
                {loading && history.length === 0 && <p className="muted center">Loading…</p>}
                {loadError && (
                  <p role="alert" className="turn-error">
                    {loadError}
                  </p>
                )}
                {active && activeId && hasCalls(active) && (
                  <p className="session-cost muted small" data-testid="session-cost">
                    Cost of this session: {formatCost(active)}
                  </p>
                )}
                {archived && activeId && (
                  <div className="archived-note" role="note" data-testid="archived-note">
                    <span>This session is archived: it is not listed with the others. Nothing in it was deleted.</span>
                    <button type="button" onClick={() => void archive(activeId, false)}>
                      Unarchive
                    </button>
                  </div>
                )}
                {shown.map((e) => {
                  const before = prev
                  const seq = entrySeq(e)
                  if (e.kind === 'summary') prev = undefined
                  else if (seq !== undefined) prev = seq
                  switch (e.kind) {
                    case 'user':
                      return (
                        <UserMessage
                          key={e.key}
                          text={e.text}
                          actions={
                            <MessageActions
                              disabled={!canRestore}
                              rewindLabel="Rewind to before this"
                              onRewind={before !== undefined ? rewind(before, 'before', e.text) : undefined}
                            />
                          }
                        />
                      )
                    case 'assistant':
                      return (
                        <AssistantMessage
                          key={e.key}
                          blocks={e.blocks}
                          partial={e.partial}
                          error={e.error}
                          keepThinkingOpen={settings.keepThinkingOpen}
                          actions={
                            e.last !== undefined && (
                              <MessageActions disabled={!canRestore} rewindLabel="Rewind to here" onRewind={rewind(e.last, 'here')} onFork={fork(e.last)} />
                            )
                          }
                        />
                      )
                    case 'restore':
                      return (
                        <RestoreNote
                          key={e.key}
                          restore={e.restore}
                          prompt={e.restore.turn !== undefined ? prompts.get(e.restore.turn) : undefined}
                          onOpen={(id) => navigate(id)}
                        />
                      )
                    default:
                      return (
                        <p key={e.key} className="note muted">
                          Earlier messages summarised.
                        </p>
                      )
                  }
                })}
                {turns.turns.map((t, i) => {
                  const seqs = liveSeqs[i]
                  const before = i === 0 ? prev : liveSeqs[i - 1]?.last
                  const done = t.status !== 'running' && seqs !== undefined
                  return (
                    <TurnView
                      key={i}
                      turn={t}
                      keepThinkingOpen={settings.keepThinkingOpen}
                      onAnswer={turns.answer}
                      userActions={
                        done && before !== undefined && (
                          <MessageActions disabled={!canRestore} rewindLabel="Rewind to before this" onRewind={rewind(before, 'before', t.message)} />
                        )
                      }
                      answerActions={
                        done && <MessageActions disabled={!canRestore} rewindLabel="Rewind to here" onRewind={rewind(seqs.last, 'here')} onFork={fork(seqs.last)} />
                      }
                    />
                  )
                })}
                {turns.reconnecting && (
                  <p className="turn-note" role="status">
                    Connection lost: reconnecting to the turn…
                  </p>
                )}
                {(sendError || turns.problem) && (
                  <p role="alert" className="turn-error">
                    {sendError || turns.problem}
                  </p>
                )}
                {canRestore && (hasCheckpoints || !archived) && (
                  <div className="session-tools" role="group" aria-label="This session">
                    {hasCheckpoints && (
                      <>
                        <button type="button" onClick={() => setRestoreAction({ kind: 'undo' })} title="Take back the file changes of the last turn (with a preview first)">
                          <Icon name="undo" size={14} /> Undo last turn
                        </button>
                        <button type="button" onClick={() => setRestoreAction({ kind: 'redo' })} title="Bring back what the last undo took back (with a preview first)">
                          <Icon name="redo" size={14} /> Redo
                        </button>
                      </>
                    )}
                    {!archived && (
                      <button type="button" className="push" onClick={() => void archive(activeId!, true)} title="Hide this session from the list, without deleting anything">
                        <Icon name="archive" size={14} /> Archive
                      </button>
                    )}
                  </div>
                )}
              </div>
            </div>
            <Composer
              running={turns.running}
              onSend={(t) => void send(t)}
              onStop={() => void turns.stop()}
              focusKey={activeId ?? 'new'}
              disabled={!!loadError || loading}
              draft={draft}
              onDraftTaken={() => setDraft(undefined)}
            />
            {current?.status === 'running' && current.usage.input + current.usage.output > 0 && (
              <p className="turn-usage muted small" aria-live="off">
                {current.usage.input.toLocaleString()} in · {current.usage.output.toLocaleString()} out
              </p>
            )}
          </>
        )}
      </main>
      {restoreAction && client && activeId && (
        <RestoreDialog client={client} sessionId={activeId} action={restoreAction} onDone={restored} onClose={() => setRestoreAction(undefined)} />
      )}
      {trustFor && (
        <TrustDialog key={trustFor.path} workspace={trustFor} onSave={(level) => saveTrust(trustFor.path, level)} onClose={() => setTrustFor(undefined)} />
      )}
      {showSettings && (
        <SettingsDialog settings={settings} onChange={setSettings} onClose={() => setShowSettings(false)} health={health} app={desktop()} workspace={workspace} />
      )}
    </div>
  )
}

/** useMedia reports whether a media query matches, and follows its changes. */
function useMedia(query: string): boolean {
  return useSyncExternalStore(
    (changed) => {
      const m = window.matchMedia?.(query)
      m?.addEventListener('change', changed)
      return () => m?.removeEventListener('change', changed)
    },
    () => window.matchMedia?.(query).matches ?? false,
  )
}

/**
 * Announcer tells screen readers what changed in the turn: an approval to
 * give, the step of the plan under way, the answer ready, the turn stopped
 * or failed. (The streaming text itself is not read out token by token.)
 */
function Announcer({ turn }: { turn?: import('./turn').Turn }) {
  let text = ''
  if (turn) {
    const waiting = turn.blocks.filter((b) => b.kind === 'tool' && b.state === 'approval') as import('./turn').ToolCard[]
    if (waiting.length > 0) text = `${waiting[0].name} is waiting for your approval: ${waiting[0].reason ?? ''}`
    else if (turn.status === 'stop') text = 'The answer is ready.'
    else if (turn.status === 'cancelled') text = 'The turn was cancelled.'
    else if (turn.status === 'max_turns') text = 'The turn stopped at the most model calls it may make.'
    else if (turn.status === 'error') text = `The turn failed: ${turn.error?.message ?? ''}`
    else if (turn.plan) text = planAnnouncement(turn.plan)
  }
  return (
    <div className="sr-only" aria-live="polite" role="status">
      {text}
    </div>
  )
}

/**
 * pickModel is the model turns go to: the user's choice while the server
 * still has it, else the server's default, written as the server lists it
 * (Ollama lists "qwen3:4b" for a default configured as "qwen3:4b", and
 * "llama3:latest" for "llama3").
 */
export function pickModel(chosen: string, fallback: string, models: ModelInfo[]): string {
  const names = models.map((m) => m.name)
  const listed = (name: string) => (names.includes(name) ? name : !name.includes(':') && names.includes(`${name}:latest`) ? `${name}:latest` : undefined)
  if (chosen && (names.length === 0 || listed(chosen))) return listed(chosen) ?? chosen
  return listed(fallback) ?? fallback
}

// The global history, named apart from the page's conversation history.
const history_ = window.history

function TurnView({
  turn,
  keepThinkingOpen,
  onAnswer,
  userActions,
  answerActions,
}: {
  turn: import('./turn').Turn
  keepThinkingOpen: boolean
  onAnswer: (id: string, d: import('./types').Decision) => void
  userActions?: ReactNode
  answerActions?: ReactNode
}) {
  return (
    <>
      <UserMessage text={turn.message} actions={userActions} />
      <AssistantMessage blocks={turn.blocks} status={turn.status} error={turn.error} keepThinkingOpen={keepThinkingOpen} onAnswer={onAnswer} actions={answerActions} />
    </>
  )
}

function Welcome({ health, model }: { health?: Health; model: string }) {
  return (
    <div className="welcome">
      <h2>What shall we work on?</h2>
      <p className="muted">
        {model ? (
          <>
            Answers come from <strong>{model}</strong>
            {health ? ` on ${health.provider.kind}` : ''}, on this machine.
          </>
        ) : (
          'Choose a model to start.'
        )}
        {health && health.tools.length > 0 && <> The agent can use: {health.tools.join(', ')}.</>}
      </p>
    </div>
  )
}
