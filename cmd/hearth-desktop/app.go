package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	wr "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/wailsapp/wails/v2/pkg/options"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/server"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/notify"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/prefs"
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

	mu     sync.Mutex
	prefs  prefs.Prefs
	ws     *workspace // the open workspace (nil before the first opens)
	failed error      // why the last workspace could not open

	forceQuit atomic.Bool // quit without asking (a signal)
	asking    atomic.Bool // the quit question is on screen
	quitOnce  sync.Once
	quitDone  chan struct{} // closed when the runtime is shut down
}

// workspace is the runtime serving one folder: Hearth's agent and the API
// server the window talks to.
type workspace struct {
	dir    string
	agent  *hearth.Agent
	loaded *loader.Loaded
	server *server.Server
}

// close stops the workspace's running turns (they save what they have),
// then closes the agent and the store.
func (w *workspace) close() error {
	w.server.Close()
	return errors.Join(w.agent.Close(), w.loaded.Close())
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
	a.notes = notify.New("Hearth", appID)
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
	if dir == "" {
		dir = "."
	}
	cwd, _ := os.Getwd()
	abs, err := absDir(dir, cwd)
	if err == nil {
		err = a.open(ctx, abs)
	}
	if err != nil {
		a.log.Error("could not open the workspace", "error", err)
	}
}

// open starts the runtime for dir and makes it the window's. The workspace
// open before is closed; it must have no turn running.
func (a *app) open(ctx context.Context, dir string) error {
	o := a.loaderOptions()
	o.Workspace = dir
	if key := a.keyFor(o); key != "" {
		o.Provider.APIKey = key
	}
	bot, l, err := loader.Start(ctx, o)
	if err != nil {
		a.fail(fmt.Errorf("opening %s: %w", dir, err))
		return err
	}
	api, err := server.New(bot, server.Options{
		Token: a.token,
		// The web view's own scheme: wails://wails on Linux and macOS,
		// http://wails.localhost on Windows.
		AllowedHosts:   []string{"wails", "wails.localhost"},
		AllowedOrigins: []string{"wails://wails", "http://wails.localhost"},
		ProviderURL:    l.ProviderConfig.BaseURL,
		Version:        buildinfo.Version,
		Log:            a.log,
	})
	if err != nil {
		bot.Close()
		l.Close()
		a.fail(fmt.Errorf("opening %s: %w", dir, err))
		return err
	}
	w := &workspace{dir: bot.Workspace(), agent: bot, loaded: l, server: api}
	a.mu.Lock()
	old := a.ws
	a.ws, a.failed = w, nil
	a.prefs.Workspace = w.dir
	p := a.prefs
	a.mu.Unlock()
	a.handler.Set(api, "")
	if old != nil {
		if err := old.close(); err != nil {
			a.log.Warn("closing the workspace before", "workspace", old.dir, "error", err)
		}
	}
	if err := prefs.Save(a.prefsAt, p); err != nil {
		a.log.Warn(err.Error())
	}
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
	}
}

// fail shows in the window why there is no workspace open.
func (a *app) fail(err error) {
	a.mu.Lock()
	a.failed = err
	open := a.ws != nil
	a.mu.Unlock()
	if !open {
		a.handler.Set(nil, "Hearth could not start: "+err.Error()+". Fix it and start Hearth again, or open another folder (File > Open Folder…, Ctrl+O).")
	}
}

// keyFor is the API key kept in the keychain for the provider o will use
// when nothing else gives one: a configured provider's key is found by the
// loader itself (the entry of its name); an unnamed one gets the entry of
// its dialect's name ("openai"), unless the environment holds a key.
func (a *app) keyFor(o loader.Options) string {
	if o.Provider.APIKey != "" || a.getenv("HEARTH_API_KEY") != "" || a.getenv("OPENAI_API_KEY") != "" {
		return ""
	}
	name, configured := a.providerName(o)
	if configured || name == "" {
		return ""
	}
	key, err := a.secrets().Get(name)
	if err != nil {
		return ""
	}
	return key
}

// providerName names the keychain entry of the provider o uses, and says
// whether it is a configured one.
func (a *app) providerName(o loader.Options) (string, bool) {
	cfg, err := config.Load(o.Paths, "")
	if err != nil {
		cfg = &config.Config{}
	}
	name := o.Provider.Kind
	if name == "" {
		name = a.getenv("HEARTH_PROVIDER")
	}
	if name == "" {
		name = cfg.DefaultProvider
	}
	if _, ok := cfg.Providers[name]; ok {
		return name, true
	}
	if name == "" {
		name = "ollama"
		if a.getenv("OPENAI_BASE_URL") != "" && a.getenv("OLLAMA_HOST") == "" {
			name = "openai"
		}
	}
	return name, false
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

// domReady puts the page at its remembered zoom and the window where it
// was, and starts the test probe when asked for.
func (a *app) domReady(ctx context.Context) {
	a.mu.Lock()
	p := a.prefs
	a.mu.Unlock()
	if p.Placed && !p.Maximised {
		wr.WindowSetPosition(ctx, p.X, p.Y)
	}
	a.applyZoom(ctx, p.Zoom)
	if a.probeAt != "" {
		a.startProbe(ctx)
	}
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
		what := "a reply"
		if n > 1 {
			what = fmt.Sprintf("%d replies", n)
		}
		a.asking.Store(true)
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
	a.mu.Lock()
	a.prefs.Maximised = max
	if !max {
		a.prefs.Width, a.prefs.Height = wr.WindowGetSize(ctx)
		a.prefs.X, a.prefs.Y = wr.WindowGetPosition(ctx)
		a.prefs.Placed = true
	}
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
	a.ws = nil
	a.mu.Unlock()
	a.handler.Set(nil, "Hearth has quit.")
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
func (a *app) secondInstance(data options.SecondInstanceData) {
	ctx := a.wctx()
	if ctx == nil {
		return
	}
	wr.WindowUnminimise(ctx)
	wr.WindowShow(ctx)
	f, err := parseFlags(data.Args, discard{})
	if err != nil || f.workspace == "" {
		return
	}
	dir, err := absDir(f.workspace, data.WorkingDirectory)
	if err != nil {
		a.log.Warn("a second launch asked for a folder that cannot be opened", "error", err)
		return
	}
	if _, err := a.switchTo(ctx, dir); err != nil {
		wr.MessageDialog(ctx, wr.MessageDialogOptions{Type: wr.WarningDialog, Title: "Hearth", Message: err.Error()})
	}
}

// switchTo opens dir in place of the open workspace, unless a turn is
// running there.
func (a *app) switchTo(ctx context.Context, dir string) (*WorkspaceInfo, error) {
	if w := a.current(); w != nil && w.dir == dir {
		info := a.info()
		return &info, nil
	}
	if n := a.running(); n > 0 {
		return nil, errors.New("a turn is running in this workspace: wait for it, or stop it, before opening another folder")
	}
	if err := a.open(ctx, dir); err != nil {
		return nil, err
	}
	// The page starts again, on the new workspace's sessions.
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
	if err := prefs.Save(a.prefsAt, p); err != nil {
		a.log.Warn(err.Error())
	}
}

// applyZoom sets the page's zoom (through the CSSOM, which the page's
// content security policy allows).
func (a *app) applyZoom(ctx context.Context, z float64) {
	wr.WindowExecJS(ctx, fmt.Sprintf("document.documentElement.style.zoom = %q", fmt.Sprintf("%.3f", z)))
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
