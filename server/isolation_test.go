package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestSessionsKeepTheirOwnState: two sessions served at once keep separate
// records of what the model read and separate approvals. Session A reads a
// file; session B overwrites it, allowed "always"; A's edit of the file it
// read before B's write is refused as stale (B's write must not count as
// A having seen the new content), and A is asked before its edit (B's
// "always" is B's).
func TestSessionsKeepTheirOwnState(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Profile.Tools = []string{"read_file", "write_file", "edit"} })
	file := filepath.Join(f.ws, "a.txt")
	if err := os.WriteFile(file, []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := f.newSession(), f.newSession()

	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("r1", "read_file", `{"file_path":"a.txt"}`)),
		llmtest.OllamaStream("m", llmtest.Text("read")))
	if frs := f.turn(a, map[string]any{"message": "read a.txt"}).rest(); frs[len(frs)-1].str("reason") != "stop" {
		t.Fatalf("A's read: %v", types(frs))
	}
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("w1", "write_file", `{"file_path":"a.txt","content":"alpha\nbeta\ngamma\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("wrote")))
	sb := f.turn(b, map[string]any{"message": "rewrite a.txt"})
	sb.until("approval_required")
	f.call("POST", "/v1/approvals/w1", map[string]any{"decision": "always", "session_id": b}, http.StatusOK, nil)
	sb.rest()
	if got, _ := os.ReadFile(file); string(got) != "alpha\nbeta\ngamma\n" {
		t.Fatalf("B's write: %q", got)
	}

	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("e1", "edit", `{"file_path":"a.txt","old_string":"beta","new_string":"BETA"}`)),
		llmtest.OllamaStream("m", llmtest.Text("edited")))
	sa := f.turn(a, map[string]any{"message": "capitalise beta"})
	frs := sa.until("approval_required")
	if len(frs) == 0 || frs[len(frs)-1].Type != "approval_required" {
		t.Fatalf("A was not asked before its edit (B's allow-always leaked): %v", types(frs))
	}
	f.call("POST", "/v1/approvals/e1", map[string]any{"decision": "allow", "session_id": a}, http.StatusOK, nil)
	var result frame
	for _, fr := range sa.rest() {
		if fr.Type == "tool_result" && fr.str("id") == "e1" {
			result = fr
		}
	}
	if !strings.Contains(result.str("error"), "changed since you last read it") {
		t.Errorf("A's stale edit was not refused: %s", result.Data)
	}
	if got, _ := os.ReadFile(file); string(got) != "alpha\nbeta\ngamma\n" {
		t.Errorf("A's stale edit changed the file: %q", got)
	}
}
