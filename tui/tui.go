// Package tui is Hearth's terminal UI: an interactive chat with the agent,
// built on Bubble Tea.
//
// A turn (hearth.Agent.NewTurn) runs on its own goroutine. Its events (the
// contract of docs/events.md: thinking, text, tool calls, approvals, results,
// usage, done) reach the program as messages through a queue that never
// blocks the turn and hands over everything queued at once, so a burst of
// small deltas costs one update and one frame. An approval waits in the
// runtime until the user answers in the UI (Turn.Approve); the approval mode
// is the session's, so switching it answers a waiting call the new mode
// decides on its own. Nothing in Update waits on I/O: the
// session store, the model server and the file system are reached from
// commands and worker goroutines.
//
// Answers are rendered as Markdown (parsed by goldmark, drawn by
// mdrender.go) with code highlighted by chroma, incrementally: a streamed answer is split into blocks at
// boundaries later text cannot change, completed blocks are rendered once,
// and only the open tail is rendered again on each update (see mdStream).
//
// Run is the entry point; New gives the Bubble Tea model for embedding in
// another program.
package tui

import (
	"context"
	"errors"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/hearth-agent/hearth"
	syntax "github.com/hearth-agent/hearth/tui/internal/highlight"
)

// Options configure the terminal UI.
type Options struct {
	// Agent is the runtime the UI drives (hearth.New): its turns, sessions
	// and store, its model server and workspace. Required.
	Agent *hearth.Agent
	// ProviderKind and ProviderURL describe the model server in the
	// banner ("ollama", "http://127.0.0.1:11434").
	ProviderKind, ProviderURL string
	// SessionID resumes a stored session ("" starts a new one with the
	// first message).
	SessionID string
	// Theme is "auto" (ask the terminal for its background), "dark" or
	// "light".
	Theme string
	// NoColor draws without colours (NO_COLOR is set).
	NoColor bool
	// Mouse turns on the mouse wheel for scrolling; the terminal's own text
	// selection then needs Shift (or Option) held.
	Mouse bool
	// HistoryFile keeps the prompts sent, for ↑ and ↓ ("" keeps none).
	HistoryFile string
	// Version is shown in the banner.
	Version string
	// Input and Output replace the terminal (nil: standard input and
	// output).
	Input  io.Reader
	Output io.Writer
	// Width and Height fix the window size instead of asking the terminal
	// (tests).
	Width, Height int
}

// Result is what a TUI session leaves behind.
type Result struct {
	// SessionID is the session the conversation was kept in ("" if no
	// message was sent).
	SessionID string
}

// Run runs the terminal UI until the user quits or ctx is cancelled. On
// the way out it stops running work and waits briefly for it to save what
// it has.
func Run(ctx context.Context, o Options) (Result, error) {
	m, err := New(o)
	if err != nil {
		return Result{}, err
	}
	// The lexers for code blocks load on first use (about 2 ms); load them
	// now, off the UI's goroutine, so that the first answer does not wait.
	go syntax.Warm()
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if o.Input != nil {
		opts = append(opts, tea.WithInput(o.Input))
	}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	if o.Width > 0 && o.Height > 0 {
		opts = append(opts, tea.WithWindowSize(o.Width, o.Height))
	}
	if o.NoColor {
		opts = append(opts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, opts...)
	_, err = p.Run()
	m.Close()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = ctx.Err()
	}
	return Result{SessionID: m.sessionID}, err
}

// Close stops the running work (a turn is cancelled: what came is saved)
// and waits up to a few seconds for it to end. Run calls it; a program
// that embeds the model calls it when the model is done.
func (m *Model) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	m.jobs.waitFor(5 * time.Second)
	m.bridge.close()
}

// SessionID returns the session the conversation is kept in ("" before
// the first message).
func (m *Model) SessionID() string { return m.sessionID }
