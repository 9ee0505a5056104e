package tui

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"
	"go.uber.org/goleak"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The HTTP client's idle connections to the fake server.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		// chroma's regexp engine keeps a coarse clock for match timeouts
		// while it is used; it stops by itself.
		goleak.IgnoreAnyFunction("github.com/dlclark/regexp2/v2.runClock"),
	)
}

// fixture is a model with a real agent, store and tools against the
// scripted fake server.
type fixture struct {
	t   testing.TB
	m   *Model
	srv *llmtest.Server
	bot *hearth.Agent
	ws  string
	// clock is the model's time; advance it with tick.
	clock time.Time
}

func newFixture(t testing.TB, w, h int) *fixture {
	t.Helper()
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	home, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	os.Mkdir(filepath.Join(ws, "docs"), 0o755)
	os.WriteFile(filepath.Join(ws, "docs", "notes.md"), []byte("# notes\n"), 0o644)
	a := newAgent(t, srv, home, ws)
	// The banner without the random parts (the port, the temp dir).
	m, err := New(Options{Agent: a, ProviderKind: "ollama", ProviderURL: "http://127.0.0.1:11434",
		NoColor: true, Theme: "dark", Width: w, Height: h, HistoryFile: filepath.Join(home, "history")})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, m: m, srv: srv, bot: a, ws: ws, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m.now = func() time.Time { return f.clock }
	m.stats.started = f.clock
	m.wsLabel = "~/project"
	m.tr.clear()
	m.banner()
	t.Cleanup(func() {
		m.Close()
		a.Close()
	})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return f
}

// newAgent is the runtime as `hearth` (the terminal UI's profile) builds it
// for a workspace, against the fake server, with a store in home.
func newAgent(t testing.TB, srv *llmtest.Server, home, ws string, mcp ...hearth.MCPServer) *hearth.Agent {
	t.Helper()
	st, err := session.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := hearth.New(hearth.Config{
		Provider: ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), Model: "m",
		Profile:   hearth.Profile{Name: "tui", Tools: []string{"*"}, System: hearth.DefaultSystemPrompt(ws)},
		Workspace: ws, Sandbox: hearth.Sandbox{Home: home, TempRoot: home}, Store: st, MCPServers: mcp,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) tick(d time.Duration) { f.clock = f.clock.Add(d) }

// send feeds messages to the model.
func (f *fixture) send(msgs ...tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, msg := range msgs {
		_, cmd := f.m.Update(msg)
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// events feeds agent events.
func (f *fixture) events(evs ...agent.Event) {
	for _, ev := range evs {
		f.send(eventMsg{ev})
	}
}

// typeText types s key by key.
func (f *fixture) typeText(s string) {
	for _, r := range s {
		if r == '\n' {
			f.send(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
			continue
		}
		f.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

func (f *fixture) press(keys ...string) tea.Cmd {
	var cmds []tea.Cmd
	for _, k := range keys {
		cmds = append(cmds, f.send(keyMsg(k)))
	}
	return tea.Batch(cmds...)
}

func keyMsg(k string) tea.KeyPressMsg {
	switch k {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "shift+tab":
		return tea.KeyPressMsg{Code: tea.KeyTab, Mod: tea.ModShift}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	case "ctrl+t":
		return tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl}
	case "ctrl+o":
		return tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// slash runs a / command as if typed, and what it starts.
func (f *fixture) slash(text string) {
	f.m.input.SetValue(text)
	f.m.comp = compState{}
	f.run(f.press("enter"))
}

// pump feeds what the worker goroutines send until done says so.
func (f *fixture) pump(done func() bool) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			f.t.Fatalf("timed out; the screen:\n%s", f.screen())
		}
		ch := make(chan tea.Msg, 1)
		go func() { ch <- f.m.bridge.wait()() }()
		select {
		case msg := <-ch:
			if msg != nil {
				f.send(msg)
			}
		case <-time.After(time.Until(deadline)):
			f.m.bridge.close()
			<-ch
			f.t.Fatalf("timed out waiting; the screen:\n%s", f.screen())
		}
	}
}

// run executes a command and feeds its message (one level of batches).
func (f *fixture) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			f.run(c)
		}
		return
	}
	if msg != nil {
		f.send(msg)
	}
}

var portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// screen is the view as text: no ANSI, no trailing spaces, the random
// parts (port, temp dirs) replaced.
func (f *fixture) screen() string {
	s := xansi.Strip(f.m.View().Content)
	s = portRE.ReplaceAllString(s, "127.0.0.1:PORT")
	s = strings.ReplaceAll(s, f.m.wsLabel, "~/project")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// golden compares the screen with testdata/NAME.golden.
func (f *fixture) golden(name string) {
	f.t.Helper()
	got := f.screen()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			f.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		f.t.Fatalf("%v (run go test ./tui -update to write it)", err)
	}
	if got != string(want) {
		f.t.Errorf("%s: the screen differs from the golden file (go test ./tui -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}
