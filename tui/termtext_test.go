package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// sgr matches the colour and style sequences Hearth itself draws with.
var sgr = regexp.MustCompile("\x1b\\[[0-9;:]*m")

// assertNoControls fails if the frame holds anything a terminal would act
// on beyond Hearth's own styling: an escape other than SGR, BEL, a C0
// control other than newline and tab, a C1 control, a bidi override.
func assertNoControls(t *testing.T, f *fixture, when string) {
	t.Helper()
	v := f.m.View()
	frame := sgr.ReplaceAllString(v.Content, "")
	for _, s := range []struct{ what, text string }{{"the frame", frame}, {"the window title", v.WindowTitle}} {
		for _, r := range s.text {
			if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
				t.Fatalf("%s: %s holds %U:\n%q", when, s.what, r, s.text)
			}
		}
	}
}

// hostileParts is an answer that cuts each of its sequences in two.
var hostileParts = []string{
	"Done.\x1b]52;c;", "cm0gLXJmIH4K\x07 The \x1b]0;", "pwned\x07build \x1b[2", "J\x1b[Hpasses\u009b2J.\u202e",
}

func TestHostileTextIsStripped(t *testing.T) {
	f := newFixture(t, 100, 60)
	f.busyTurn()
	f.events(agent.Event{Type: agent.EventSession, SessionID: "s-1"},
		agent.Event{Type: agent.EventThinkingStart},
		agent.Event{Type: agent.EventThinkingDelta, Text: "Let me \x1b]0;"},
		agent.Event{Type: agent.EventThinkingDelta, Text: "owned\x07look\x08\x08\x08\x08."})
	f.press("ctrl+t") // the reasoning in full
	assertNoControls(t, f, "thinking")
	if !strings.Contains(f.screen(), "Let me look.") {
		t.Errorf("reasoning:\n%s", f.screen())
	}

	// A command to approve that hides its second half after a carriage
	// return, and says it is something else with an override.
	cmd := "echo hello\rrm -rf ~ \x1b[8m#\u202e"
	args, _ := json.Marshal(map[string]string{"command": cmd})
	f.events(agent.Event{Type: agent.EventToolCall, ID: "c1", Name: "run_shell_command", Args: args},
		agent.Event{Type: agent.EventApprovalRequired, ID: "c1", Name: "run_shell_command", Reason: "run `" + cmd + "`"})
	assertNoControls(t, f, "approval")
	if s := f.screen(); !strings.Contains(s, "│ run `echo hello  ") || !strings.Contains(s, "│ rm -rf ~ #[U+202E]`  ") || !strings.Contains(s, "echo hello rm -rf ~ #[U+202E]") {
		t.Errorf("the approval does not show the whole command:\n%s", s)
	}
	f.press("y")

	f.events(agent.Event{Type: agent.EventToolOutput, ID: "c1", Name: "run_shell_command", Text: "hello \x1b]52;c;"},
		agent.Event{Type: agent.EventToolOutput, ID: "c1", Name: "run_shell_command", Text: "ZXZpbA==\x07world\n50%\r100%\n\x1b[2J\x1bPq#0~~\x1b\\done\n"})
	assertNoControls(t, f, "running command")
	if s := f.screen(); !strings.Contains(s, "hello world") || !strings.Contains(s, "100%") || strings.Contains(s, "50%") || !strings.Contains(s, "done") {
		t.Errorf("running command:\n%s", s)
	}
	f.events(agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "run_shell_command", OK: true, Output: "hello \x1b]52;c;ZXZpbA==\x07world\n"},
		agent.Event{Type: agent.EventToolCall, ID: "c2", Name: "edit", Args: json.RawMessage(`{"file_path":"a\u001b]0;x\u0007.go","old_string":"x\u001b[2J","new_string":"y\u202e"}`)},
		agent.Event{Type: agent.EventToolResult, ID: "c2", Name: "edit", OK: true, Output: "ok",
			Display: "--- a.go\n+++ a.go\n@@ -1 +1 @@\n-x\x1b[2J\n+y\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\\n"},
		agent.Event{Type: agent.EventToolCall, ID: "c3", Name: "read_file\x1b[2J", Args: json.RawMessage(`{"file_path":"b"}`)},
		agent.Event{Type: agent.EventToolResult, ID: "c3", Name: "read_file\x1b[2J", OK: false, Error: "no such file \x1b]0;pwned\x07b"},
		agent.Event{Type: agent.EventError, Code: "provider_server", Error: "server said \x1b]52;c;ZXZpbA==\x07no"})
	for _, p := range hostileParts {
		f.events(agent.Event{Type: agent.EventTextDelta, Text: p})
	}
	f.events(agent.Event{Type: agent.EventDone, DoneReason: agent.DoneStop, Text: strings.Join(hostileParts, "")})
	f.send(sessionTitleMsg{id: "s-1", title: "Build\x07\x1b]0;pwned\x1b\\ fixed"})
	f.m.endJob()
	f.press("ctrl+o") // tool output in full
	assertNoControls(t, f, "after the turn")
	s := f.screen()
	for _, want := range []string{"Done. The build passes2J.[U+202E]", "+ylink", "a.go", "read_file", "no such file b", "server said no", "Build fixed"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if v := f.m.View(); v.WindowTitle != "hearth · Build fixed" {
		t.Errorf("window title %q", v.WindowTitle)
	}

	// /copy copies what was shown.
	if got := clipboardOf(t, f.m.copyAnswer()); got != "Done. The build passes2J.[U+202E]" {
		t.Errorf("/copy: %q", got)
	}
}

// clipboardOf returns what a /copy command puts on the clipboard.
func clipboardOf(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	b, ok := cmd().(tea.BatchMsg)
	if !ok || len(b) == 0 {
		t.Fatal("not a batch")
	}
	v := reflect.ValueOf(b[0]())
	if v.Kind() != reflect.String {
		t.Fatalf("%T is not the clipboard", b[0]())
	}
	return v.String()
}

// TestResumedHostileSessionIsStripped: what the store kept is drawn
// stripped too, with the session's title.
func TestResumedHostileSessionIsStripped(t *testing.T) {
	f := newFixture(t, 100, 50)
	answer := strings.Join(hostileParts, "")
	f.send(sessionLoadedMsg{sess: &session.Session{ID: "s-2", Title: "Evil\x1b]0;x\x07 title", MessageCount: 4},
		msgs: []session.Message{
			{Seq: 1, Message: llm.Message{Role: llm.RoleUser, Content: "hi \x1b[2J"}},
			{Seq: 2, Message: llm.Message{Role: llm.RoleAssistant, Thinking: "th\x1b]0;x\x07ink", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path":"x\u001b[2J"}`)}}}},
			{Seq: 3, Message: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "read_file", Content: "file \x1b]52;c;AAAA\x07text"}},
			{Seq: 4, Message: llm.Message{Role: llm.RoleAssistant, Content: answer}},
			{Seq: 5, Summary: true, Message: llm.Message{Role: llm.RoleUser, Content: agent.SummaryPrefix + "sum\x1b[2Jmary"}},
		}})
	f.press("ctrl+t", "ctrl+o")
	assertNoControls(t, f, "resumed")
	s := f.screen()
	for _, want := range []string{"hi", "think", "file text", "Done. The build passes2J.[U+202E]", "summary", "Resumed session s-2 “Evil title”"} {
		if !strings.Contains(s, want) {
			t.Errorf("the screen lacks %q:\n%s", want, s)
		}
	}
	if f.m.View().WindowTitle != "hearth · Evil title" {
		t.Errorf("window title %q", f.m.View().WindowTitle)
	}
}

// TestHostileFileNamesInCompletion: a file the model (or a cloned
// repository) named with an escape is offered without it.
func TestHostileFileNamesInCompletion(t *testing.T) {
	f := newFixture(t, 100, 30)
	if err := os.WriteFile(filepath.Join(f.ws, "evil\x1b]0;pwned\x07.txt"), nil, 0o644); err != nil {
		t.Skip("the file system refuses the name:", err)
	}
	f.run(f.m.refreshFiles())
	f.typeText("@evil")
	assertNoControls(t, f, "completion")
	if !strings.Contains(f.screen(), "evil.txt") {
		t.Errorf("no completion:\n%s", f.screen())
	}
}

func TestAnswerStreamStripsAcrossDeltas(t *testing.T) {
	in := strings.Join(hostileParts, "")
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var a answerItem
			a.add(in[:i])
			a.add(in[i:j])
			a.add(in[j:])
			a.finish()
			if got := a.md.Text(); got != "Done. The build passes2J.[U+202E]" {
				t.Fatalf("cut at %d, %d: %q", i, j, got)
			}
		}
	}
}
