package loader

import (
	"context"
	"strings"
	"testing"
)

// FirstPrompt is what the run's agent would send: the profile's tools, the
// sub-agents, the project notes; MCP servers named, not started.
func TestFirstPrompt(t *testing.T) {
	user := `
[profiles.headless]
tools = ["*", "!run_shell_command"]
[subagents.reviewer]
description = "Reviews a change"
prompt = "You review changes."
[mcp_servers.files]
command = "/nonexistent/mcp-server"
`
	o, _ := setup(t, user, "", map[string]string{"AGENTS.md": "Use tabs.", "HEARTH.md": "Run make test."})
	p, err := FirstPrompt(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sp := range p.Tools {
		if sp.Name == "" || len(sp.Parameters) == 0 {
			t.Errorf("incomplete spec %+v", sp)
		}
		names = append(names, sp.Name)
	}
	n := "," + strings.Join(names, ",") + ","
	if strings.Contains(n, ",run_shell_command,") || !strings.Contains(n, ",read_file,") ||
		!strings.Contains(n, ",codebase_investigator,") || !strings.Contains(n, ",reviewer,") {
		t.Errorf("tools: %s", n)
	}
	if p.Profile != "headless" || !strings.HasPrefix(p.System, "You are Hearth") {
		t.Errorf("profile %q, system %.80q", p.Profile, p.System)
	}
	if len(p.Notes) != 2 || p.Notes[0].Name != "HEARTH.md" || p.Notes[0].Text != "Run make test." ||
		p.Notes[1].Name != "AGENTS.md" || p.Notes[1].Text != "Use tabs." {
		t.Errorf("notes: %+v", p.Notes)
	}
	if len(p.MCPServers) != 1 || p.MCPServers[0] != "files" {
		t.Errorf("MCP servers: %v", p.MCPServers)
	}
}

func TestNotesIn(t *testing.T) {
	if n := notesIn("You are Hearth."); n != nil {
		t.Errorf("no notes: %+v", n)
	}
	n := notesIn("sys\n\nProject notes from AGENTS.md:\na\nb")
	if len(n) != 1 || n[0].Name != "AGENTS.md" || n[0].Text != "a\nb" {
		t.Errorf("%+v", n)
	}
}
