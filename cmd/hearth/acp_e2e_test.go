//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// acpE2EDir is the editor's side of the ACP test: a Node project with the
// official ACP TypeScript SDK (scripts/acp-e2e.sh installs it).
const acpE2EDir = "testdata/acp"

// TestACPEndToEnd drives hearth acp with an ACP client that is not
// Hearth's own: the official TypeScript SDK (@agentclientprotocol/sdk, in
// testdata/acp/e2e.mjs), against the scripted model. It prompts and checks
// the chunks stream in order; runs a turn that reads through the editor's
// file system (its unsaved buffer), writes through it (the permission
// allowed) and is refused another write (rejected), with the plan; cancels
// a turn mid-answer (stored as cancelled: the partial reply kept); and in a
// new connection loads the session, replayed, and continues it. Every
// message Hearth sends is validated against the SDK's JSON schema of
// protocol version 1.
//
// It needs node and testdata/acp/node_modules (scripts/acp-e2e.sh, or npm
// ci there); it skips without them, unless HEARTH_ACP_E2E=1 (CI), where
// their absence fails.
func TestACPEndToEnd(t *testing.T) {
	e := newE2E(t)
	node := acpPrereqs(t)
	ws, err := filepath.EvalSymlinks(e.ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("what the disk holds\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A realistic prompt count (a small one would be flagged as a cut
	// prompt).
	chat := func(parts ...llmtest.Part) llmtest.Scenario {
		return llmtest.OllamaStream("m", append(parts, llmtest.Usage(1600, 10))...)
	}
	plan := func(first, second string) string {
		return `{"steps":[{"step":"Read the notes","status":"` + first + `"},{"step":"Write them down","status":"` + second + `"}]}`
	}
	e.srv.Enqueue("/api/chat",
		// 1. hello
		chat(llmtest.Thinking("The user greets me."), llmtest.Text("Hello"), llmtest.Text(", "), llmtest.Text("world")),
		// 2. note it down: the plan and a read, the plan and a write
		// (allowed), another write (rejected), the answer
		chat(llmtest.CallID("call_plan1", "update_plan", plan("in_progress", "pending")), llmtest.CallID("call_read", "read_file", `{"file_path":"notes.txt"}`)),
		chat(llmtest.CallID("call_plan2", "update_plan", plan("done", "in_progress")), llmtest.CallID("call_a", "write_file", `{"file_path":"a.txt","content":"A\n"}`)),
		chat(llmtest.CallID("call_b", "write_file", `{"file_path":"b.txt","content":"B\n"}`)),
		chat(llmtest.Text("One written, one refused.")),
		// 3. tell me a story: cancelled while it streams
		chat(llmtest.Text("Once upon"), llmtest.Pause(time.Hour), llmtest.Text(" a time")),
		// 4. go on, in the loaded session
		chat(llmtest.Text("And they lived happily.")),
	)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "e2e.mjs")
	cmd.Dir = acpE2EDir
	cmd.Env = append(os.Environ(), "HEARTH_BIN="+e.bin, "HEARTH_ACP_WORKSPACE="+ws,
		"HEARTH_HOME="+e.home, "OLLAMA_HOST="+e.srv.URL, "NO_COLOR=1")
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("the ACP client failed: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var report struct {
		Session   string `json:"session"`
		Validated int    `json:"validated"`
		Schema    string `json:"schema"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &report); err != nil || report.Session == "" {
		t.Fatalf("no report from the client (%v):\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("%d messages from hearth acp validated against %s", report.Validated, report.Schema)

	// The cancelled turn is stored as Hearth stores one: the partial
	// reply kept, marked partial; the loaded session went on after it.
	msgs, err := e.store().Messages(context.Background(), report.Session)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	partial := false
	for _, m := range msgs {
		said = append(said, string(m.Role)+": "+m.Content)
		if m.Role == llm.RoleAssistant && m.Content == "Once upon" {
			partial = m.Partial
		}
	}
	if !partial {
		t.Errorf("the cancelled reply is not stored as partial:\n%s", strings.Join(said, "\n"))
	}
	if last := msgs[len(msgs)-1]; last.Content != "And they lived happily." {
		t.Errorf("the loaded session was not continued:\n%s", strings.Join(said, "\n"))
	}
	// The model saw the editor's unsaved buffer, and, in the loaded
	// session, the whole conversation.
	reqs := e.srv.RequestsTo("/api/chat")
	if len(reqs) != 7 {
		t.Fatalf("%d model requests, want 7", len(reqs))
	}
	if body := string(reqs[2].Body); !strings.Contains(body, "the unsaved buffer of notes.txt") || strings.Contains(body, "what the disk holds") {
		t.Errorf("read_file did not read the editor's buffer: %s", body)
	}
	if body := string(reqs[6].Body); !strings.Contains(body, "hello") || !strings.Contains(body, "Once upon") || !strings.Contains(body, "go on") {
		t.Errorf("the continued session's request lacks the conversation: %s", body)
	}
	if e.srv.Pending() != 0 {
		t.Errorf("%d scripted replies were not used", e.srv.Pending())
	}
}

// acpPrereqs returns node, or skips the test when it or the client's npm
// packages are missing (fails it when HEARTH_ACP_E2E=1).
func acpPrereqs(t *testing.T) string {
	t.Helper()
	var missing []string
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node on PATH")
	}
	if _, err := os.Stat(filepath.Join(acpE2EDir, "node_modules", "@agentclientprotocol", "sdk", "schema", "v1", "schema.json")); err != nil {
		missing = append(missing, "cmd/hearth/"+acpE2EDir+"/node_modules (run scripts/acp-e2e.sh)")
	}
	if len(missing) > 0 {
		msg := "the ACP end-to-end test needs " + strings.Join(missing, " and ")
		if os.Getenv("HEARTH_ACP_E2E") == "1" {
			t.Fatal(msg + " (HEARTH_ACP_E2E=1 requires them)")
		}
		t.Skip(msg + " (set HEARTH_ACP_E2E=1 to make this a failure)")
	}
	return node
}
