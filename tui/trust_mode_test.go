package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

// TestModesInAnUntrustedWorkspace: in an untrusted workspace shift+tab
// cycles default → plan → default (auto_edit skipped), and /mode yolo or
// /mode auto_edit is refused with a notice saying how to trust the folder,
// the mode unchanged and the next message still sent.
func TestModesInAnUntrustedWorkspace(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	home, ws := t.TempDir(), t.TempDir()
	st, err := session.Open(context.Background(), filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a, err := hearth.New(hearth.Config{
		Provider: ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), Model: "m",
		Profile:   hearth.Profile{Name: "tui", Tools: []string{"*"}},
		Workspace: ws, Sandbox: hearth.Sandbox{Home: home, TempRoot: home}, Store: st, Trust: hearth.TrustUntrusted,
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Agent: a, ProviderKind: "ollama", ProviderURL: "http://127.0.0.1:11434",
		NoColor: true, Theme: "dark", Width: 100, Height: 30, HistoryFile: filepath.Join(home, "history")})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, m: m, srv: srv, bot: a, ws: ws, clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	m.now = func() time.Time { return f.clock }
	t.Cleanup(func() {
		m.Close()
		a.Close()
	})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})

	for _, want := range []agent.Mode{agent.ModePlan, agent.ModeDefault, agent.ModePlan} {
		f.press("shift+tab")
		if f.m.mode != want {
			t.Fatalf("shift+tab: mode %s, want %s", f.m.mode, want)
		}
	}
	f.press("shift+tab") // back to default
	for _, mode := range []string{"yolo", "auto_edit"} {
		f.typeText("/mode " + mode)
		f.press("enter")
		if f.m.mode != agent.ModeDefault {
			t.Fatalf("/mode %s: mode %s", mode, f.m.mode)
		}
		if sc := f.screen(); !strings.Contains(sc, "untrusted workspace") || !strings.Contains(sc, "trust") {
			t.Errorf("/mode %s: no notice saying why:\n%s", mode, sc)
		}
	}
	srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("still here")))
	f.typeText("hello")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	if !strings.Contains(f.screen(), "still here") {
		t.Errorf("the message after a refused switch was not sent:\n%s", f.screen())
	}
}
