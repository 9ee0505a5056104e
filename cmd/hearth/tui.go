package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tui"
)

// tuiFlags are the options of the terminal UI.
type tuiFlags struct {
	theme string
	mouse bool
}

// addTUIFlags adds the terminal UI's flags to the root command.
func (a *app) addTUIFlags(root *cobra.Command) {
	fl := root.Flags()
	fl.StringVar(&a.tui.theme, "theme", "auto", "terminal UI colours: auto (ask the terminal), dark or light")
	fl.BoolVar(&a.tui.mouse, "mouse", false, "terminal UI: scroll with the mouse wheel (select text with Shift held)")
}

// wantsTUI says whether the root command opens the terminal UI: no prompt,
// and both standard input and output are terminals.
func (a *app) wantsTUI() bool {
	in := a.isTTYIn
	if in == nil {
		in = isTerminalReader
	}
	return a.prompt == "" && in(a.io.in) && a.isTTY(a.io.out)
}

// isTerminalReader reports whether r is a terminal.
func isTerminalReader(r io.Reader) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// runTUI opens the terminal UI.
func (a *app) runTUI(ctx context.Context) error {
	longRunning(a.getenv)
	f := a.rootRun
	if err := f.parse(); err != nil {
		return err
	}
	switch a.tui.theme {
	case "auto", "dark", "light":
	default:
		return usageError{fmt.Errorf("--theme %q: use auto, dark or light", a.tui.theme)}
	}
	if f.approvalMode != "" {
		if _, err := agent.ParseMode(f.approvalMode); err != nil {
			return usageError{err}
		}
	}
	o, err := a.appOptions("tui")
	if err != nil {
		return err
	}
	// Warnings would be drawn over the screen: the UI reports problems
	// itself, and --verbose is for headless runs.
	o.Log = nil
	o.ApprovalMode, o.MaxTurns = f.approvalMode, f.maxTurns
	noColor := a.getenv("NO_COLOR") != "" || a.getenv("TERM") == "dumb"
	// A folder the user never trusted nor distrusted: ask once, before
	// its config is read, and remember the answer.
	o.AskTrust = func(ctx context.Context, root string) (session.Trust, error) {
		t, err := tui.AskTrust(ctx, nil, nil, root, tui.TrustOptions{Theme: a.tui.theme, NoColor: noColor})
		if errors.Is(err, tui.ErrTrustCancelled) {
			return "", fmt.Errorf("no trust level chosen for %s, so Hearth did not start: run hearth again and choose one, or pass --trust", termtext.String(root))
		}
		return t, err
	}
	bot, l, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer l.Close()
	defer bot.Close()
	// The UI learns the model's context window itself, without making
	// the user wait for the server before the screen opens.
	res, err := tui.Run(ctx, tui.Options{
		Agent:        bot,
		ProviderKind: l.ProviderConfig.Kind,
		ProviderURL:  l.ProviderConfig.BaseURL,
		SessionID:    f.session,
		Theme:        a.tui.theme,
		NoColor:      noColor,
		Mouse:        a.tui.mouse,
		HistoryFile:  filepath.Join(o.Paths.DataDir, "tui_history"),
		Version:      buildinfo.Version,
	})
	if res.SessionID != "" {
		fmt.Fprintf(a.io.out, "Session %s is saved: continue it with hearth --session %s\n", res.SessionID, res.SessionID)
	}
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("terminal UI: %w", err)
	}
	return err
}
