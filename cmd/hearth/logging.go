package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/hearth-agent/hearth/internal/termtext"
)

// errLines writes Hearth's standard error: whole lines (its messages, log
// records) and streamed text (the --verbose view's reasoning, a command's
// output as it comes). A line never starts in the middle of another: one
// written while a stream is mid-line ends that line first. It is safe for
// concurrent use.
type errLines struct {
	mu      sync.Mutex
	w       io.Writer
	midLine bool
}

// Line writes s as one or more whole lines (a newline is added).
func (e *errLines) Line(s string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endLocked()
	io.WriteString(e.w, s+"\n")
}

// Write writes whole lines (a log record): a stream mid-line is ended first.
func (e *errLines) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endLocked()
	n, err := e.w.Write(p)
	e.midLine = len(p) > 0 && p[len(p)-1] != '\n'
	return n, err
}

// Partial writes part of a line; text holds no newline.
func (e *errLines) Partial(text string) {
	if text == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	io.WriteString(e.w, text)
	e.midLine = true
}

// AtLineStart reports whether the next text starts a line.
func (e *errLines) AtLineStart() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.midLine
}

// EndLine ends the current line, if one is open.
func (e *errLines) EndLine() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.endLocked()
}

func (e *errLines) endLocked() {
	if e.midLine {
		io.WriteString(e.w, "\n")
		e.midLine = false
	}
}

// logSettings is what HEARTH_LOG and HEARTH_LOG_FORMAT ask of the
// structured log.
type logSettings struct {
	// set: HEARTH_LOG was given, so records are written as slog lines.
	// Unset, warnings and errors are written as sentences for a person.
	set   bool
	level slog.Level
	json  bool
}

// parseLogSettings reads HEARTH_LOG (debug, info, warn or error; default
// warn) and HEARTH_LOG_FORMAT (text or json; default text).
func parseLogSettings(getenv func(string) string) (logSettings, error) {
	s := logSettings{level: slog.LevelWarn}
	if v := strings.TrimSpace(getenv("HEARTH_LOG")); v != "" {
		s.set = true
		switch strings.ToLower(v) {
		case "debug":
			s.level = slog.LevelDebug
		case "info":
			s.level = slog.LevelInfo
		case "warn", "warning":
			s.level = slog.LevelWarn
		case "error":
			s.level = slog.LevelError
		default:
			return s, usageError{fmt.Errorf("HEARTH_LOG=%q: want debug, info, warn or error", v)}
		}
	}
	switch v := strings.ToLower(strings.TrimSpace(getenv("HEARTH_LOG_FORMAT"))); v {
	case "", "text":
	case "json":
		s.json = true
	default:
		return s, usageError{fmt.Errorf("HEARTH_LOG_FORMAT=%q: want text or json", getenv("HEARTH_LOG_FORMAT"))}
	}
	return s, nil
}

// handler returns the slog handler the settings describe, writing to w.
func (s logSettings) handler(w io.Writer) slog.Handler {
	if !s.set {
		return &sentenceHandler{w: w, mu: &sync.Mutex{}}
	}
	o := &slog.HandlerOptions{Level: s.level}
	if s.json {
		return slog.NewJSONHandler(w, o)
	}
	return slog.NewTextHandler(w, o)
}

// sentenceHandler writes warnings and errors for a person, one line each:
// "hearth: warning: mcp server did not start (server: files; error: …)".
// The attributes may quote a server or a tool, so the line is stripped of
// control sequences. A stack trace is left to HEARTH_LOG=debug.
type sentenceHandler struct {
	w     io.Writer
	mu    *sync.Mutex
	attrs []string // "key: value", with their groups' prefix
	group string
}

// Enabled implements slog.Handler: warnings and errors.
func (h *sentenceHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

// Handle implements slog.Handler.
func (h *sentenceHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString("hearth: warning: ")
	if r.Level >= slog.LevelError {
		b.Reset()
		b.WriteString("hearth: error: ")
	}
	b.WriteString(r.Message)
	attrs := append([]string(nil), h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		attrs = appendAttr(attrs, h.group, a)
		return true
	})
	if len(attrs) > 0 {
		b.WriteString(" (" + strings.Join(attrs, "; ") + ")")
	}
	line := strings.Join(strings.Fields(termtext.String(b.String())), " ")
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line+"\n")
	return err
}

// WithAttrs implements slog.Handler.
func (h *sentenceHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]string(nil), h.attrs...)
	for _, a := range as {
		c.attrs = appendAttr(c.attrs, h.group, a)
	}
	return &c
}

// WithGroup implements slog.Handler.
func (h *sentenceHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = h.group + name + "."
	return &c
}

func appendAttr(out []string, group string, a slog.Attr) []string {
	v := a.Value.Resolve()
	if a.Key == "stack" {
		return out
	}
	if v.Kind() == slog.KindGroup {
		g := group
		if a.Key != "" {
			g += a.Key + "."
		}
		for _, sub := range v.Group() {
			out = appendAttr(out, g, sub)
		}
		return out
	}
	if a.Key == "" {
		return out
	}
	return append(out, group+a.Key+": "+v.String())
}
