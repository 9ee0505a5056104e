package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	xansi "github.com/charmbracelet/x/ansi"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestMCPCommandShowsServerState: /mcp reports each configured server's
// live state, a failed one with its reason.
func TestMCPCommandShowsServerState(t *testing.T) {
	srv := llmtest.New(t)
	home, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp_servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n"), 0o644)
	a := newAgent(t, srv, home, ws, hearth.MCPServer{Name: "broken", Command: "/nonexistent/mcp-server"})
	defer a.Close()
	if a.MCP() == nil {
		t.Fatal("the agent did not start the configured MCP server")
	}
	m, err := New(Options{Agent: a, NoColor: true, Theme: "dark", Width: 120, Height: 40, HistoryFile: filepath.Join(home, "history")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := a.MCP().Status()
		if len(st) == 1 && st[0].State == "failed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f := &fixture{t: t, m: m, srv: srv, bot: a, ws: ws}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	f.slash("/mcp")
	view := xansi.Strip(m.View().Content)
	if !strings.Contains(view, "broken  failed") {
		t.Errorf("/mcp shows:\n%s", view)
	}
}
