package tui

import (
	"bytes"
	"context"
	"errors"
	"image/color"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth/session"
)

// newTrustTest is the dialog for path in a window of w×h, without colour.
func newTrustTest(path string, w, h int) *trustModel {
	m := newTrustModel(path, TrustOptions{NoColor: true})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// trustScreen is the dialog as text: no ANSI, no trailing spaces.
func trustScreen(m *trustModel) string {
	lines := strings.Split(xansi.Strip(m.View().Content), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func TestTrustKeys(t *testing.T) {
	cases := []struct {
		name string
		keys []string
		want session.Trust // "" with cancel: cancelled; "" without: still open
		sel  int           // the highlight afterwards
		quit bool          // the last key ends the program
	}{
		{"enter takes the default", []string{"enter"}, session.TrustUntrusted, 2, true},
		{"up", []string{"up", "enter"}, session.TrustReadOnly, 1, true},
		{"up twice", []string{"up", "up", "enter"}, session.TrustTrusted, 0, true},
		{"k", []string{"k", "enter"}, session.TrustReadOnly, 1, true},
		{"shift+tab", []string{"shift+tab", "enter"}, session.TrustReadOnly, 1, true},
		{"down wraps to the first", []string{"down", "enter"}, session.TrustTrusted, 0, true},
		{"up wraps to the last", []string{"up", "up", "up", "enter"}, session.TrustUntrusted, 2, true},
		{"j", []string{"1", "j", "enter"}, session.TrustReadOnly, 1, true},
		{"tab", []string{"2", "tab", "enter"}, session.TrustUntrusted, 2, true},
		{"1", []string{"1", "enter"}, session.TrustTrusted, 0, true},
		{"2", []string{"2", "enter"}, session.TrustReadOnly, 1, true},
		{"3", []string{"1", "3", "enter"}, session.TrustUntrusted, 2, true},
		{"a number only moves", []string{"1"}, "", 0, false},
		{"other keys do nothing", []string{"x", "q", "space", "4"}, "", 2, false},
		{"esc", []string{"esc"}, "", 2, true},
		{"ctrl+c", []string{"1", "ctrl+c"}, "", 0, true},
		{"keys after the answer are ignored", []string{"enter", "up", "enter"}, session.TrustUntrusted, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTrustTest("/tmp/project", 80, 40)
			var cmd tea.Cmd
			for _, k := range c.keys {
				_, cmd = m.Update(keyMsg(k))
			}
			if m.chosen != c.want || m.sel != c.sel {
				t.Errorf("chosen %q, highlight %d; want %q, %d", m.chosen, m.sel, c.want, c.sel)
			}
			cancelled := c.want == "" && c.quit
			if m.cancelled != cancelled {
				t.Errorf("cancelled = %v, want %v", m.cancelled, cancelled)
			}
			quits := false
			if cmd != nil {
				_, quits = cmd().(tea.QuitMsg)
			}
			if quits != c.quit {
				t.Errorf("the last key quits: %v, want %v", quits, c.quit)
			}
		})
	}
}

func TestTrustView(t *testing.T) {
	m := newTrustTest("/srv/work/project", 80, 40)
	s := trustScreen(m)
	for _, want := range []string{
		"Do you trust the files in this folder?", "/srv/work/project",
		"1. Trusted", "2. Read-only", "› 3. Untrusted (default)",
		"which run as you, outside the", "read-only sandbox", "(auto_edit, yolo)",
		"enter chooses", "esc quits", "hearth workspaces trust PATH LEVEL",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in:\n%s", want, s)
		}
	}
	for i, l := range strings.Split(m.View().Content, "\n") {
		if w := xansi.StringWidth(l); w != 80 {
			t.Errorf("line %d is %d wide, not 80: %q", i, w, l)
		}
	}

	m.Update(keyMsg("1"))
	if s := trustScreen(m); !strings.Contains(s, "› 1. Trusted") || strings.Contains(s, "›  3.") || strings.Count(s, "›") != 1 {
		t.Errorf("the highlight did not move to Trusted:\n%s", s)
	}

	// A window too short for the spacing between the choices drops it.
	short := newTrustTest("/srv/work/project", 80, 20)
	if tall, got := len(strings.Split(trustScreen(m), "\n")), len(strings.Split(trustScreen(short), "\n")); got != tall-2 || got > 20 {
		t.Errorf("%d lines in a window of 20 (%d in a tall one):\n%s", got, tall, trustScreen(short))
	}

	// Home is shown as ~.
	t.Setenv("HOME", "/home/me")
	if s := trustScreen(newTrustTest("/home/me/src/app", 80, 40)); !strings.Contains(s, "~/src/app") {
		t.Errorf("the folder under home is not ~/src/app:\n%s", s)
	}
}

func TestTrustViewAfterwards(t *testing.T) {
	m := newTrustTest("/srv/project", 80, 40)
	m.Update(keyMsg("2"))
	m.Update(keyMsg("enter"))
	if s := trustScreen(m); s != "Trust level of /srv/project: read-only." {
		t.Errorf("after the answer: %q", s)
	}
	m = newTrustTest("/srv/project", 80, 40)
	m.Update(keyMsg("esc"))
	if s := m.View().Content; s != "" {
		t.Errorf("after esc: %q", s)
	}
}

func TestTrustViewStripsControls(t *testing.T) {
	// A folder name that retitles the window, clears the screen, forges a
	// line of the dialog and reverses what follows.
	path := "/tmp/evil\x1b]0;pwned\x07dir\x1b[2J\u009b/x\n› 1. Trusted\tok\u202e"
	m := newTrustTest(path, 80, 40)
	frame := sgr.ReplaceAllString(m.View().Content, "")
	for _, r := range frame {
		if r < 0x20 && r != '\n' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Fatalf("the dialog holds %U:\n%q", r, frame)
		}
	}
	s := trustScreen(m)
	if want := `/tmp/evildir/x\n› 1. Trusted\tok[U+202E]`; !strings.Contains(s, want) {
		t.Errorf("the folder is not shown as %s:\n%s", want, s)
	}
	if strings.Contains(s, "pwned") || strings.Contains(s, "\n│ › 1. Trusted") {
		t.Errorf("the folder's name reached the terminal, or made a line of its own:\n%s", s)
	}
}

func TestTrustViewNarrow(t *testing.T) {
	path := "/home/someone/src/github.com/hearth-agent/a-rather-long-folder-name/with spaces"
	var texts []string
	for _, c := range trustChoices {
		texts = append(texts, c.label, c.about)
	}
	texts = append(texts, "Do you trust the files in this folder?", "enter chooses esc quits", "You can change it later with hearth workspaces trust PATH LEVEL")
	for _, w := range []int{80, 60, 45, 32, 24} {
		m := newTrustTest(path, w, 100)
		content := m.View().Content
		for i, l := range strings.Split(content, "\n") {
			if lw := xansi.StringWidth(l); lw != w {
				t.Errorf("width %d: line %d is %d wide: %q", w, i, lw, xansi.Strip(l))
			}
		}
		// Every word that fits a line is on one line, whole.
		s := strings.ReplaceAll(xansi.Strip(content), "│", " ")
		words := map[string]bool{}
		for _, f := range strings.Fields(s) {
			words[f] = true
		}
		room := w - 4 - 5 // the box, the indent of the explanations
		for _, text := range texts {
			for _, word := range strings.Fields(text) {
				if xansi.StringWidth(word) <= room && !words[word] {
					t.Errorf("width %d: %q is cut:\n%s", w, word, trustScreen(m))
				}
			}
		}
		// The folder is all there, in order.
		if got := strings.Join(strings.Fields(s), ""); !strings.Contains(got, strings.ReplaceAll(path, " ", "")) {
			t.Errorf("width %d: the folder is not all shown:\n%s", w, trustScreen(m))
		}
	}
}

func TestWrapPath(t *testing.T) {
	cases := []struct {
		path  string
		width int
		want  []string
	}{
		{"/a/b", 10, []string{"/a/b"}},
		{"/home/me/src/project", 10, []string{"/home/me/", "src/", "project"}},
		{"/srv/a very long name/x", 8, []string{"/srv/", "a very l", "ong name", "/x"}},
		{"/ab cd/ef", 4, []string{"/", "ab c", "d/ef"}},
		{"~/", 1, []string{"~", "/"}},
	}
	for _, c := range cases {
		got := wrapPath(c.path, c.width)
		if strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
			t.Errorf("wrapPath(%q, %d) = %q, want %q", c.path, c.width, got, c.want)
		}
		if strings.Join(got, "") != c.path {
			t.Errorf("wrapPath(%q, %d) lost something: %q", c.path, c.width, got)
		}
	}
}

func TestWrapWords(t *testing.T) {
	cases := []struct {
		s     string
		width int
		want  []string
	}{
		{"one two three", 20, []string{"one two three"}},
		{"one two three", 7, []string{"one two", "three"}},
		{"a read-only sandbox", 9, []string{"a", "read-only", "sandbox"}},
		{"abcdefghij k", 4, []string{"abcd", "efgh", "ij k"}},
		{"", 5, []string{""}},
	}
	for _, c := range cases {
		if got := wrapWords(c.s, c.width); strings.Join(got, "\x00") != strings.Join(c.want, "\x00") {
			t.Errorf("wrapWords(%q, %d) = %q, want %q", c.s, c.width, got, c.want)
		}
	}
}

func TestTrustColour(t *testing.T) {
	colour := newTrustModel("/srv/p", TrustOptions{Theme: "dark"}).View().Content
	plain := newTrustModel("/srv/p", TrustOptions{Theme: "dark", NoColor: true}).View().Content
	if !strings.Contains(colour, "38;2;") {
		t.Errorf("no colour in the coloured dialog: %q", colour)
	}
	for _, c := range []string{"38;", "48;", "58;"} {
		if strings.Contains(plain, c) {
			t.Errorf("colour (%s) under NO_COLOR: %q", c, plain)
		}
	}
	if xansi.Strip(colour) != xansi.Strip(plain) {
		t.Errorf("the text differs with colour:\n%s\nwithout:\n%s", xansi.Strip(colour), xansi.Strip(plain))
	}

	// "auto" asks the terminal and follows its answer; "dark" does not ask.
	m := newTrustModel("/srv/p", TrustOptions{})
	if m.Init() == nil || !m.dark {
		t.Fatal("auto: no background query, or not dark until answered")
	}
	m.Update(tea.BackgroundColorMsg{Color: color.White})
	if m.dark || m.th.dark {
		t.Error("auto: a light background did not make the theme light")
	}
	if newTrustModel("/srv/p", TrustOptions{Theme: "dark"}).Init() != nil || newTrustModel("/srv/p", TrustOptions{NoColor: true}).Init() != nil {
		t.Error("a background query with a fixed theme or without colour")
	}
}

// TestAskTrust runs the program itself on keys read from memory.
func TestAskTrust(t *testing.T) {
	cases := []struct {
		name, keys string
		want       session.Trust
		err        error
	}{
		{"enter", "\r", session.TrustUntrusted, nil},
		{"up arrow", "\x1b[A\r", session.TrustReadOnly, nil},
		{"k k", "kk\r", session.TrustTrusted, nil},
		{"number", "1\r", session.TrustTrusted, nil},
		{"down arrow", "2\x1b[B\r", session.TrustUntrusted, nil},
		{"esc", "2\x1b", "", ErrTrustCancelled},
		{"ctrl+c", "\x03", "", ErrTrustCancelled},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			dir := t.TempDir()
			var out bytes.Buffer
			got, err := AskTrust(ctx, strings.NewReader(c.keys), &out, dir, TrustOptions{NoColor: true, Width: 80, Height: 30})
			if got != c.want || !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Fatalf("AskTrust = %q, %v; want %q, %v", got, err, c.want, c.err)
			}
			// The last frame says what was chosen, or nothing.
			s := xansi.Strip(out.String())
			if want := "Trust level of " + dir + ": " + string(c.want) + "."; c.err == nil && !strings.Contains(s, want) {
				t.Errorf("no %q in the output:\n%s", want, s)
			}
			if c.err != nil && strings.Contains(s, "Trust level of") {
				t.Errorf("a trust level in the output:\n%s", s)
			}
		})
	}

	t.Run("the dialog shows before the keys", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		in, keys := io.Pipe()
		defer keys.Close()
		out := &syncBuffer{}
		type result struct {
			level session.Trust
			err   error
		}
		done := make(chan result, 1)
		go func() {
			level, err := AskTrust(ctx, in, out, "/srv/project", TrustOptions{NoColor: true, Width: 80, Height: 30})
			done <- result{level, err}
		}()
		for !strings.Contains(xansi.Strip(out.String()), "hearth workspaces trust PATH LEVEL") {
			select {
			case r := <-done:
				t.Fatalf("AskTrust = %q, %v before any key", r.level, r.err)
			case <-ctx.Done():
				t.Fatalf("no dialog in the output: %q", out.String())
			case <-time.After(5 * time.Millisecond):
			}
		}
		s := xansi.Strip(out.String())
		for _, want := range []string{"Do you trust the files in this folder?", "/srv/project", "› 3. Untrusted (default)"} {
			if !strings.Contains(s, want) {
				t.Errorf("no %q in the output:\n%s", want, s)
			}
		}
		if _, err := io.WriteString(keys, "\x1b[A\r"); err != nil {
			t.Fatal(err)
		}
		keys.Close()
		select {
		case r := <-done:
			if r.level != session.TrustReadOnly || r.err != nil {
				t.Fatalf("AskTrust = %q, %v; want read-only", r.level, r.err)
			}
		case <-ctx.Done():
			t.Fatal("AskTrust did not return")
		}
	})

	t.Run("no answer before ctx ends", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		got, err := AskTrust(ctx, strings.NewReader("j"), &bytes.Buffer{}, t.TempDir(), TrustOptions{NoColor: true, Width: 80, Height: 30})
		if got != "" || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AskTrust = %q, %v; want the deadline", got, err)
		}
	})
	t.Run("ctx ended already", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		got, err := AskTrust(ctx, strings.NewReader(""), &bytes.Buffer{}, t.TempDir(), TrustOptions{NoColor: true, Width: 80, Height: 30})
		if got != "" || !errors.Is(err, context.Canceled) {
			t.Fatalf("AskTrust = %q, %v; want context.Canceled", got, err)
		}
	})
	t.Run("no folder", func(t *testing.T) {
		if _, err := AskTrust(t.Context(), strings.NewReader("\r"), &bytes.Buffer{}, "", TrustOptions{}); err == nil || errors.Is(err, ErrTrustCancelled) {
			t.Fatalf("AskTrust with no folder: %v", err)
		}
	})
}

// syncBuffer is an output that the program writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
