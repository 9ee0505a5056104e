package builtin

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// TestDefaultPromptBudget keeps the default system prompt and the
// definitions of the default tools under 8 KB together, measured as they go
// on the wire. Local models often run with a few thousand tokens of context;
// what Hearth sends before the user's first word must leave room for work.
func TestDefaultPromptBudget(t *testing.T) {
	set := newSet(t)
	type fn struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	var wire []map[string]any
	names := map[string]bool{}
	for _, tl := range set.Tools {
		s := tl.Spec()
		names[s.Name] = true
		wire = append(wire, map[string]any{"type": "function", "function": fn{s.Name, s.Description, s.Parameters}})
	}
	for _, want := range []string{"read_file", "read_many_files", "write_file", "list_directory", "glob", "grep_search", "edit", "run_shell_command"} {
		if !names[want] {
			t.Errorf("default tool %s missing", want)
		}
	}
	tools, _ := json.Marshal(wire)
	prompt := agent.DefaultSystemPrompt("/home/user/projects/an-example-project", time.Now())
	total := len(prompt) + len(tools)
	t.Logf("system prompt %d bytes + tool definitions %d bytes = %d bytes", len(prompt), len(tools), total)
	if total > 8192 {
		t.Errorf("%d bytes before the user's first word; the budget is 8192", total)
	}
}

// A registry resolves a schema on a tool's first call: every built-in
// tool's must resolve, so that none fails its first call.
func TestBuiltinSchemasResolve(t *testing.T) {
	set := newSet(t)
	for _, tl := range set.Tools {
		if err := tool.CheckSchema(tl.Spec().Parameters); err != nil {
			t.Errorf("%s: %v", tl.Spec().Name, err)
		}
	}
}

// newSet is the built-in tools of a new workspace, closed when t ends.
func newSet(t *testing.T) *Set {
	t.Helper()
	ws, err := sandbox.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	set, err := New(Options{Workspace: ws, Shell: shellForTest(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { set.Close() })
	return set
}
