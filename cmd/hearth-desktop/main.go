// Command hearth-desktop is Hearth as a desktop application: a window where
// you chat with a model on your own machine, watch its reasoning, approve
// its commands and keep your sessions, with no terminal and no browser tab.
//
// It is a Wails application (github.com/wailsapp/wails/v2): the window is
// the system's web view (WebKitGTK on Linux, WebKit on macOS, WebView2 on
// Windows) showing the same web UI as hearth serve, and the same runtime
// runs in this process. The page reaches the API through the web view's own
// URL scheme, served in-process (see internal/webview): no port is opened.
//
// Build it with cgo and the web view's development files (on Debian,
// scripts/desktop.sh installs them):
//
//	cd cmd/hearth-desktop && go build -tags desktop,production,webkit2_41 .
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"time"

	"github.com/wailsapp/wails/v2"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/sandbox"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/notify"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/prefs"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/single"
	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/webview"
)

// appID names the application to the desktop: the single-instance lock,
// the .desktop file (packaging/dev.hearth.Hearth.desktop) and the icon.
const appID = "dev.hearth.Hearth"

const usage = `hearth-desktop: Hearth in a window of its own.

Usage:
  hearth-desktop [flags] [FOLDER]

FOLDER is the workspace: the project the agent reads, edits and runs
commands in (default: the one open last time, else the current directory).
Choose another from the window (File > Open Folder…, Ctrl+O). A second
launch brings the running window to the front (and opens FOLDER there).

The model server, the model and the rest come from Hearth's configuration
and environment, as for hearth (see hearth --help): OLLAMA_HOST,
OPENAI_BASE_URL and OPENAI_API_KEY, HEARTH_MODEL, ~/.config/hearth/config.toml.
API keys set in the window go to the system keychain.

Flags:
`

// flags are the command line's settings.
type flags struct {
	workspace string
	provider  providers.Config
	profile   string
	version   bool
}

// parseFlags reads the command line; with -h or --help it writes the help
// to help and returns flag.ErrHelp.
func parseFlags(args []string, help io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("hearth-desktop", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are the caller's to print
	fs.Usage = func() {}
	fs.StringVar(&f.workspace, "workspace", "", "the project `folder` (same as FOLDER)")
	fs.StringVar(&f.provider.Model, "model", "", "the `model` turns use (default: HEARTH_MODEL, then the config's)")
	fs.StringVar(&f.provider.Kind, "provider", "", "the model server: ollama, openai, or a `name` from the config's [providers]")
	fs.StringVar(&f.provider.BaseURL, "base-url", "", "the model server's `URL` (default: OLLAMA_HOST or OPENAI_BASE_URL)")
	fs.StringVar(&f.profile, "profile", "", "a `profile` from the config (default: the config's default_profile, else desktop)")
	fs.BoolVar(&f.version, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(help, usage)
			fs.SetOutput(help)
			fs.PrintDefaults()
		}
		return f, err
	}
	switch rest := fs.Args(); {
	case len(rest) > 1:
		return f, fmt.Errorf("one folder at most, not %d (%s)", len(rest), strings.Join(rest, " "))
	case len(rest) == 1 && f.workspace != "" && rest[0] != f.workspace:
		return f, errors.New("the folder is given twice (--workspace and FOLDER): give it once")
	case len(rest) == 1:
		f.workspace = rest[0]
	}
	return f, nil
}

func main() {
	// The sandbox starts confined commands through this binary: that
	// process must do nothing else.
	sandbox.MaybeRunLauncher()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "hearth-desktop: %v (see hearth-desktop --help)\n", err)
		return 2
	}
	if f.version {
		fmt.Fprintf(stdout, "hearth-desktop %s\n", buildinfo.Version)
		return 0
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv("HEARTH_LOG"))}))
	paths, err := config.DefaultPaths(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hearth-desktop: %v\n", err)
		return 2
	}
	dir, err := prefs.Dir(os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "hearth-desktop: %v\n", err)
		return 2
	}
	a := &app{
		log:   log,
		flags: f,
		paths: paths,
		// The loader takes the API keys out of the process environment;
		// envscrub still finds them (the settings say one is set).
		getenv:   envscrub.Getenv,
		prefsAt:  prefs.File(dir),
		token:    newToken(),
		probeAt:  os.Getenv("HEARTH_DESKTOP_PROBE"),
		quitDone: make(chan struct{}),
	}
	a.prefs, err = prefs.Load(a.prefsAt)
	if err != nil {
		log.Warn(err.Error())
	}
	a.handler = webview.New(a.token)
	a.api = &Desktop{a: a}
	a.notes = notify.New("Hearth", appID)
	defer a.notes.Close()

	// One window per login session: a later launch hands its folder to
	// the first and ends here, before it opens anything.
	cwd, _ := os.Getwd()
	inst, first, err := single.Claim(context.Background(), appID, single.Launch{Args: args, Dir: cwd}, a.secondInstance)
	switch {
	case !first && err != nil:
		fmt.Fprintf(stderr, "hearth-desktop: %v\n", err)
		return 1
	case !first:
		return 0
	case err != nil:
		log.Debug("one instance is not enforced", "error", err)
	}
	defer inst.Close()

	icon, _ := packaging.ReadFile("packaging/hearth.png")
	opts := &options.App{
		Title:            "Hearth",
		Width:            a.prefs.Width,
		Height:           a.prefs.Height,
		MinWidth:         prefs.MinWidth,
		MinHeight:        prefs.MinHeight,
		WindowStartState: startState(a.prefs),
		AssetServer:      &assetserver.Options{Handler: a.handler},
		Menu:             a.menu(),
		OnStartup:        a.startup,
		OnDomReady:       a.domReady,
		OnBeforeClose:    a.beforeClose,
		OnShutdown:       a.shutdown,
		Bind:             []any{a.api},
		Linux:            &linux.Options{Icon: icon, ProgramName: "hearth-desktop", WebviewGpuPolicy: linux.WebviewGpuPolicyOnDemand},
	}
	if goruntime.GOOS == "darwin" || goruntime.GOOS == "windows" {
		// No session bus there: Wails' own lock (a mutex on Windows, a
		// distributed notification on macOS).
		opts.SingleInstanceLock = &options.SingleInstanceLock{UniqueId: appID, OnSecondInstanceLaunch: func(d options.SecondInstanceData) {
			a.secondInstance(single.Launch{Args: d.Args, Dir: d.WorkingDirectory})
		}}
	}
	err = wails.Run(opts)
	if err != nil {
		fmt.Fprintf(stderr, "hearth-desktop: %v\n", err)
		return 1
	}
	return 0
}

// startState opens the window maximised when it was.
func startState(p prefs.Prefs) options.WindowStartState {
	if p.Maximised {
		return options.Maximised
	}
	return options.Normal
}

// newToken makes the API token of this launch: 32 random bytes, in memory
// only.
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// logLevel reads HEARTH_LOG (debug, info, warn, error; default warn).
func logLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "info":
		return slog.LevelInfo
	case "error":
		return slog.LevelError
	}
	return slog.LevelWarn
}

// absDir resolves a workspace folder given on the command line or by a
// second launch (relative to cwd), and checks it is a directory.
func absDir(dir, cwd string) (string, error) {
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("opening the workspace: %w", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("opening the workspace: %s is not a folder", dir)
	}
	return filepath.Clean(dir), nil
}

// catchSignals makes SIGINT, SIGTERM and SIGHUP (the terminal closed, the
// session ending) quit without asking: a running turn is stopped and what
// it said kept. Wails handles SIGINT and SIGTERM too (it quits, which would
// ask while a turn runs, racing this): its handler is removed first. Called
// at startup, after Wails has installed its own.
func (a *app) catchSignals() {
	signal.Reset(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	go a.onSignal(sig)
}

// onSignal quits at the first signal, without asking. The turns are
// stopped and the store closed here first, so that nothing depends on the
// window going (a question on screen would hold it); Wails is then asked
// to quit. The whole gets 10 s; a second signal ends the process at once.
func (a *app) onSignal(sig <-chan os.Signal) {
	<-sig
	a.forceQuit.Store(true)
	time.AfterFunc(10*time.Second, func() {
		a.log.Warn("Hearth did not end within 10 s of the signal: exiting")
		os.Exit(1)
	})
	go func() {
		<-sig
		os.Exit(1)
	}()
	a.closeWorkspace()
	a.quit()
}

// ctxOrBackground is the app's context once Wails has given it.
func (a *app) ctxOrBackground() context.Context {
	if c := a.wctx(); c != nil {
		return c
	}
	return context.Background()
}
