package tui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	hearthapp "github.com/hearth-agent/hearth/app"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/providers"
)

// TestMCPCommandShowsServerState: /mcp reports each configured server's
// live state, a failed one with its reason.
func TestMCPCommandShowsServerState(t *testing.T) {
	srv := llmtest.New(t)
	home, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n"), 0o644)
	a, err := hearthapp.New(context.Background(), hearthapp.Options{
		Paths: config.Paths{ConfigDir: home, DataDir: home}, Workspace: ws, Mode: "tui",
		Provider: providers.Config{Kind: "ollama", BaseURL: srv.URL, Model: "m"},
		Getenv:   func(string) string { return "" },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.MCP == nil {
		t.Fatal("the app did not start the configured MCP server")
	}
	m, err := New(Options{App: a, NoColor: true, Theme: "dark", Width: 120, Height: 40, HistoryFile: filepath.Join(home, "history")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := a.MCP.Status()
		if len(st) == 1 && st[0].State == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f := &fixture{t: t, m: m, srv: srv, app: a, ws: ws}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	f.slash("/mcp")
	view := xansi.Strip(m.View().Content)
	if !strings.Contains(view, "broken  failed") {
		t.Errorf("/mcp shows:\n%s", view)
	}
}
