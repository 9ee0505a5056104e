package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	wr "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/server"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/notify"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/prefs"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/single"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/webview"
)

// Events the app sends the page (runtime.EventsOn in the web UI's
// desktop.ts).
const (
	eventNewSession = "hearth:new-session"
	eventSettings   = "hearth:settings"
)

// app is the desktop application: the window's life, and the runtime of
// the open workspace.
type app struct {
	log     *slog.Logger
	flags   flags
	paths   config.Paths
	getenv  func(string) string
	prefsAt string
	token   string
	probeAt string
	handler *webview.Handler
	api     *Desktop
	notes   *notify.Notifier

	ctxMu sync.Mutex
	ctx   context.Context // Wails' context, given at startup

	openMu sync.Mutex // one workspace opens at a time

	mu      sync.Mutex
	prefs   prefs.Prefs
	ws      *workspace // the open workspace (nil before the first opens)
	failed  error      // why the last workspace could not open
	closing bool       // quitting: no workspace opens any more

	loadOnce sync.Once // what the first page load does

	forceQuit   atomic.Bool // quit without asking (a signal)
	chooseFirst atomic.Bool // no folder yet: the dialog comes with the window
	saveMu      sync.Mutex  // one prefs file write at a time
	asking      atomic.Bool // the quit question is on screen
	quitOnce    sync.Once
	quitDone    chan struct{} // closed when the runtime is shut down
}

// workspace is the runtime serving one folder: Hearth's agent and the API
// server the window talks to.
type workspace struct {
	dir string
	// keyName is the keychain entry of its provider's API key.
	keyName string
	agent   *hearth.Agent
	loaded  *loader.Loaded
	server  *server.Server
	// agents run the sessions, each in its own workspace's agent (this
	// one's among them), as the workspace's trust now stands: the trust
	// the window's question sets applies to the next turn.
	agents *loader.Agents
}

// close stops the workspace's running turns (they save what they have),
// then closes the agent and the store.
func (w *workspace) close() error {
	w.server.Close()
	return errors.Join(w.agents.Close(), w.agent.Close(), w.loaded.Close())
}

func (a *app) wctx() context.Context {
	a.ctxMu.Lock()
	defer a.ctxMu.Unlock()
	return a.ctx
}

// startup opens the workspace while the window appears.
func (a *app) startup(ctx context.Context) {
	a.ctxMu.Lock()
	a.ctx = ctx
	a.ctxMu.Unlock()
	a.catchSignals()
	dir := a.flags.workspace
	if dir == "" {
		dir = a.prefs.Workspace
		if dir != "" {
			if _, err := os.Stat(dir); err != nil {
				a.log.Warn("the workspace open last time is gone: opening the current folder", "workspace", dir, "error", err)
				dir = ""
			}
		}
	}
	cwd, _ := os.Getwd()
	if dir == "" {
		// Started from the applications menu, in the home folder (which
		// is no workspace): the folder dialog comes when the window does.
		if home := a.paths.Home; home != "" && sameDir(cwd, home) {
			a.handler.Set(nil, "Choose the folder to work in: File > Open Folder… (Ctrl+O).")
			a.chooseFirst.Store(true)
			return
		}
		dir = "."
	}
	abs, err := absDir(dir, cwd)
	if err == nil {
		err = a.open(ctx, abs)
	} else {
		a.fail(err)
	}
	if err != nil {
		a.log.Error("could not open the workspace", "error", err)
	}
}

// sameDir reports whether a and b are the same directory.
func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// errBusy refuses to open another folder while a turn runs.
var errBusy = errors.New("a turn is running in this workspace: wait for it, or stop it, before opening another folder")

// open starts the runtime for dir and makes it the window's, in place of
// the workspace open before (closed; a turn running there refuses the
// change). One open runs at a time; none after the app began to quit.
func (a *app) open(ctx context.Context, dir string) error {
	a.openMu.Lock()
	defer a.openMu.Unlock()
	if a.running() > 0 {
		return errBusy
	}
	o := a.loaderOptions()
	o.Workspace = dir
	bot, l, err := loader.Start(ctx, o)
	if err != nil {
		a.fail(fmt.Errorf("opening %s: %w", dir, err))
		return err
	}
	agents := loader.NewAgents(ctx, o, bot, l)
	api, err := server.New(bot, server.Options{
		Workspaces: agents,
		Currency:   strings.TrimSpace(l.File.Pricing.Currency),
		Token:      a.token,
		// The web view's own scheme: wails://wails on Linux and macOS,
		// http://wails.localhost on Windows.
		AllowedHosts:   []string{"wails", "wails.localhost"},
		AllowedOrigins: []string{"wails://wails", "http://wails.localhost"},
		ProviderURL:    l.ProviderConfig.BaseURL,
		Version:        buildinfo.Version,
		Log:            a.log,
	})
	if err != nil {
		agents.Close()
		bot.Close()
		l.Close()
		a.fail(fmt.Errorf("opening %s: %w", dir, err))
		return err
	}
	w := &workspace{dir: bot.Workspace(), keyName: l.KeyName(), agent: bot, loaded: l, server: api, agents: agents}
	a.mu.Lock()
	old := a.ws
	// A turn may have started while this one loaded, or the app began to
	// quit: then this one goes, not the other.
	if a.closing || (old != nil && old.server.Running() > 0) {
		closing := a.closing
		a.mu.Unlock()
		w.close()
		if closing {
			return errors.New("quitting: no folder opens now")
		}
		return errBusy
	}
	a.ws, a.failed = w, nil
	a.prefs.Workspace = w.dir
	a.handler.Set(api, "")
	a.mu.Unlock()
	if old != nil {
		if err := old.close(); err != nil {
			a.log.Warn("closing the workspace before", "workspace", old.dir, "error", err)
		}
	}
	a.savePrefs()
	return nil
}

// loaderOptions are what every workspace is opened with.
func (a *app) loaderOptions() loader.Options {
	return loader.Options{
		Paths:    a.paths,
		Mode:     "desktop",
		Profile:  a.flags.profile,
		Provider: a.flags.provider,
		Getenv:   a.getenv,
		Log:      a.log,
		Warn:     func(s string) { a.log.Warn(s) },
		// Keys set in the settings are kept under the dialect's name
		// when the provider is not a configured one.
		DialectKeys: true,
	}
}

// fail shows in the window why there is no workspace open.
func (a *app) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failed = err
	if a.ws == nil && !a.closing {
		a.handler.Set(nil, "Hearth could not start: "+err.Error()+". Fix it and start Hearth again, or open another folder (File > Open Folder…, Ctrl+O).")
	}
}

// keyName is the keychain entry of the open workspace's provider (a
// configured provider's name, else its dialect's).
func (a *app) keyName() string {
	if w := a.current(); w != nil {
		return w.keyName
	}
	if k := a.flags.provider.Kind; k != "" {
		return k
	}
	return "ollama"
}

// reopen opens w's folder again (a changed key), if it is still the one
// open.
func (a *app) reopen(ctx context.Context, w *workspace) error {
	if a.current() != w {
		return nil
	}
	return a.open(ctx, w.dir)
}

// secrets is where API keys are kept: the system keychain, else a file only
// the user can read.
func (a *app) secrets() *config.Secrets {
	s := config.NewSecrets(a.paths, a.log)
	if a.getenv("HEARTH_NO_KEYRING") != "" {
		s.Keyring = config.NoKeyring{}
	}
	return s
}

// current is the open workspace (nil when none could open).
func (a *app) current() *workspace {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.ws
}

// running is how many turns are running.
func (a *app) running() int {
	if w := a.current(); w != nil {
		return w.server.Running()
	}
	return 0
}

// domReady puts the page at its remembered zoom; at the first load, the
// window where it was, the test probe when asked for, and the folder
// dialog when there is no folder yet. (Every page load comes here: the
// page reloads after a folder change.)
func (a *app) domReady(ctx context.Context) {
	a.mu.Lock()
	p := a.prefs
	a.mu.Unlock()
	a.applyZoom(ctx, p.Zoom)
	a.loadOnce.Do(func() {
		if p.Placed && !p.Maximised {
			wr.WindowSetPosition(ctx, p.X, p.Y)
		}
		if a.probeAt != "" {
			a.startProbe(ctx)
		}
		if a.chooseFirst.Load() {
			go func() {
				if _, err := a.chooseWorkspace(); err != nil {
					a.warn(err.Error())
				}
			}()
		}
	})
}

// beforeClose asks, when a turn is running, whether to quit; it records the
// window's size and position when the window goes.
func (a *app) beforeClose(ctx context.Context) (prevent bool) {
	if a.forceQuit.Load() {
		if !a.asking.Load() { // the window cannot answer while a question is on screen
			a.rememberWindow(ctx)
		}
		return false
	}
	if n := a.running(); n > 0 {
		if !a.asking.CompareAndSwap(false, true) {
			return true // the question is on screen already
		}
		what := "a reply"
		if n > 1 {
			what = fmt.Sprintf("%d replies", n)
		}
		answer, err := wr.MessageDialog(ctx, wr.MessageDialogOptions{
			Type:          wr.QuestionDialog,
			Title:         "Quit Hearth?",
			Message:       "Hearth is still writing " + what + ". Quit now? The turn is stopped, and what it has said and done so far is kept in the session.",
			Buttons:       []string{"Yes", "No"},
			DefaultButton: "No",
			CancelButton:  "No",
		})
		a.asking.Store(false)
		if err != nil || !strings.EqualFold(answer, "Yes") {
			return true
		}
	}
	a.rememberWindow(ctx)
	return false
}

// rememberWindow saves the window's size and position.
func (a *app) rememberWindow(ctx context.Context) {
	max := wr.WindowIsMaximised(ctx)
	var w, h, x, y int
	if !max {
		w, h = wr.WindowGetSize(ctx)
		x, y = wr.WindowGetPosition(ctx)
	}
	a.mu.Lock()
	a.prefs.Maximised = max
	if !max {
		a.prefs.Width, a.prefs.Height, a.prefs.X, a.prefs.Y, a.prefs.Placed = w, h, x, y, true
	}
	a.mu.Unlock()
	a.savePrefs()
}

// savePrefs writes the prefs: one save at a time, each taking them as they
// are when it runs, so the file ends with the newest.
func (a *app) savePrefs() {
	a.saveMu.Lock()
	defer a.saveMu.Unlock()
	a.mu.Lock()
	p := a.prefs
	a.mu.Unlock()
	if err := prefs.Save(a.prefsAt, p); err != nil {
		a.log.Warn(err.Error())
	}
}

// shutdown stops the running turns, waits for them to save what they have,
// and closes the store: nothing said is lost.
func (a *app) shutdown(ctx context.Context) {
	a.closeWorkspace()
	if a.notes != nil {
		a.notes.Close()
	}
	a.quitOnce.Do(func() { close(a.quitDone) })
}

// closeWorkspace stops the running turns (they store what they said),
// waits for them, and closes the store. Later calls do nothing.
func (a *app) closeWorkspace() {
	a.mu.Lock()
	w := a.ws
	a.ws, a.closing = nil, true
	a.handler.Set(nil, "Hearth has quit.")
	a.mu.Unlock()
	if w != nil {
		if err := w.close(); err != nil {
			a.log.Warn("closing the workspace", "error", err)
		}
	}
}

// quit asks Wails to quit (which asks beforeClose first).
func (a *app) quit() {
	ctx := a.wctx()
	if ctx == nil {
		os.Exit(1) // a signal before the window exists: nothing to keep
	}
	wr.Quit(ctx)
}

// secondInstance brings the window to the front when the app is launched
// again, and opens the folder that launch was given, if any.
func (a *app) secondInstance(l single.Launch) {
	ctx := a.wctx()
	if ctx == nil {
		return
	}
	wr.WindowUnminimise(ctx)
	wr.WindowShow(ctx)
	f, err := parseFlags(l.Args, io.Discard)
	if err != nil || f.workspace == "" {
		return
	}
	dir, err := absDir(f.workspace, l.Dir)
	if err != nil {
		a.log.Warn("a second launch asked for a folder that cannot be opened", "error", err)
		return
	}
	if _, err := a.switchTo(ctx, dir); err != nil {
		a.warn(err.Error())
	}
}

// switchTo opens dir in place of the open workspace, unless a turn is
// running there.
func (a *app) switchTo(ctx context.Context, dir string) (*WorkspaceInfo, error) {
	if w := a.current(); w != nil && w.dir == dir {
		info := a.info()
		return &info, nil
	}
	if err := a.open(ctx, dir); err != nil {
		return nil, err
	}
	// The page starts again, in the new workspace.
	wr.WindowReloadApp(ctx)
	info := a.info()
	return &info, nil
}

// zoom steps the page's zoom: +1 in, -1 out, 0 back to 100 %.
func (a *app) zoom(step int) {
	ctx := a.wctx()
	if ctx == nil {
		return
	}
	a.mu.Lock()
	z := a.prefs.Zoom
	switch {
	case step > 0:
		z *= 1.1
	case step < 0:
		z /= 1.1
	default:
		z = 1
	}
	a.prefs.Zoom = z
	a.prefs = a.prefs.Clean()
	p := a.prefs
	a.mu.Unlock()
	a.applyZoom(ctx, p.Zoom)
	a.savePrefs()
}

// applyZoom sets the page's zoom (through the CSSOM, which the page's
// content security policy allows).
func (a *app) applyZoom(ctx context.Context, z float64) {
	wr.WindowExecJS(ctx, fmt.Sprintf("document.documentElement.style.zoom = %q", fmt.Sprintf("%.3f", z)))
}
