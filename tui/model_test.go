package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// busyTurn puts the model in a running turn without a goroutine, so that
// events can be fed by hand.
func (f *fixture) busyTurn() *bool {
	cancelled := false
	f.m.beginJob(jobTurn, func() { cancelled = true }, "Thinking…")
	f.m.cur = turnState{}
	return &cancelled
}

func lastItem[T item](t *testing.T, m *Model) T {
	t.Helper()
	for i := len(m.tr.entries) - 1; i >= 0; i-- {
		if it, ok := m.tr.entries[i].it.(T); ok {
			return it
		}
	}
	var zero T
	t.Fatalf("no %T in the transcript", zero)
	return zero
}

func TestEventTransitions(t *testing.T) {
	diff := "--- a.go\n+++ a.go\n@@ -1,2 +1,2 @@\n package a\n-var x = 1\n+var x = 2\n"
	cases := []struct {
		name   string
		events []agent.Event
		check  func(t *testing.T, f *fixture)
	}{
		{"session sets the id", []agent.Event{{Type: agent.EventSession, SessionID: "s-1", Provider: "ollama", Model: "m"}},
			func(t *testing.T, f *fixture) {
				if f.m.sessionID != "s-1" {
					t.Errorf("session %q", f.m.sessionID)
				}
			}},
		{"thinking is live until it ends", []agent.Event{{Type: agent.EventThinkingStart}, {Type: agent.EventThinkingDelta, Text: "hmm"}},
			func(t *testing.T, f *fixture) {
				th := lastItem[*thinkingItem](t, f.m)
				if th.done || th.text.String() != "hmm" || !strings.Contains(f.screen(), "Thinking…") {
					t.Errorf("thinking: done=%v %q\n%s", th.done, th.text.String(), f.screen())
				}
			}},
		{"thinking collapses when it ends", []agent.Event{{Type: agent.EventThinkingStart}, {Type: agent.EventThinkingDelta, Text: "hmm"}, {Type: agent.EventThinkingEnd}},
			func(t *testing.T, f *fixture) {
				if th := lastItem[*thinkingItem](t, f.m); !th.done || !strings.Contains(f.screen(), "Thought for") || strings.Contains(f.screen(), "hmm") {
					t.Errorf("not collapsed:\n%s", f.screen())
				}
			}},
		{"answer text ends the thinking", []agent.Event{{Type: agent.EventThinkingDelta, Text: "hmm"}, {Type: agent.EventTextDelta, Text: "Hel"}, {Type: agent.EventTextDelta, Text: "lo **you**"}},
			func(t *testing.T, f *fixture) {
				if th := lastItem[*thinkingItem](t, f.m); !th.done {
					t.Error("thinking still live")
				}
				if a := lastItem[*answerItem](t, f.m); a.md.Text() != "Hello **you**" || !strings.Contains(f.screen(), "Hello you") {
					t.Errorf("answer %q\n%s", a.md.Text(), f.screen())
				}
			}},
		{"a tool call runs", []agent.Event{{Type: agent.EventToolCall, ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path":"a.txt"}`)}},
			func(t *testing.T, f *fixture) {
				if it := lastItem[*toolItem](t, f.m); it.state != toolRunning || !strings.Contains(f.screen(), "read_file a.txt") {
					t.Errorf("state %d\n%s", it.state, f.screen())
				}
			}},
		{"calls run one after the other", []agent.Event{
			{Type: agent.EventToolCall, ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path":"a"}`)},
			{Type: agent.EventToolCall, ID: "c2", Name: "read_file", Args: json.RawMessage(`{"file_path":"b"}`)}},
			func(t *testing.T, f *fixture) {
				a, b := f.m.tools["c1"].it.(*toolItem), f.m.tools["c2"].it.(*toolItem)
				if a.state != toolRunning || b.state != toolQueued {
					t.Errorf("states %d %d", a.state, b.state)
				}
				f.events(agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "read_file", OK: true, Output: "x"})
				if a.state != toolDone || b.state != toolRunning {
					t.Errorf("after the first result: %d %d", a.state, b.state)
				}
			}},
		{"approval required waits", []agent.Event{
			{Type: agent.EventToolCall, ID: "c1", Name: "run_shell_command", Args: json.RawMessage(`{"command":"go test"}`)},
			{Type: agent.EventApprovalRequired, ID: "c1", Name: "run_shell_command", Reason: "run `go test`"}},
			func(t *testing.T, f *fixture) {
				if it := lastItem[*toolItem](t, f.m); it.state != toolAwaiting || !strings.Contains(f.screen(), "needs your approval") {
					t.Errorf("state %d\n%s", it.state, f.screen())
				}
			}},
		{"tool output streams", []agent.Event{
			{Type: agent.EventToolCall, ID: "c1", Name: "run_shell_command", Args: json.RawMessage(`{"command":"make"}`)},
			{Type: agent.EventToolOutput, ID: "c1", Name: "run_shell_command", Text: "step 1\n"},
			{Type: agent.EventToolOutput, ID: "c1", Name: "run_shell_command", Text: "step 2\n"}},
			func(t *testing.T, f *fixture) {
				it := lastItem[*toolItem](t, f.m)
				if it.state != toolRunning || !strings.Contains(f.screen(), "step 2") {
					t.Errorf("state %d\n%s", it.state, f.screen())
				}
			}},
		{"an edit shows its diff", []agent.Event{
			{Type: agent.EventToolCall, ID: "c1", Name: "edit", Args: json.RawMessage(`{"file_path":"a.go"}`)},
			{Type: agent.EventToolResult, ID: "c1", Name: "edit", OK: true, Output: "edited", Display: diff}},
			func(t *testing.T, f *fixture) {
				s := f.screen()
				if it := lastItem[*toolItem](t, f.m); it.state != toolDone || !strings.Contains(s, "+var x = 2") || !strings.Contains(s, "-var x = 1") {
					t.Errorf("state %d\n%s", it.state, s)
				}
			}},
		{"a failed call says why", []agent.Event{
			{Type: agent.EventToolCall, ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path":"/etc/passwd"}`)},
			{Type: agent.EventToolResult, ID: "c1", Name: "read_file", OK: false, Error: "refused to read /etc/passwd: it is outside the workspace"}},
			func(t *testing.T, f *fixture) {
				if it := lastItem[*toolItem](t, f.m); it.state != toolFailed || !strings.Contains(f.screen(), "outside the workspace") {
					t.Errorf("state %d\n%s", it.state, f.screen())
				}
			}},
		{"usage fills the context meter", []agent.Event{{Type: agent.EventUsage, InputTokens: 16000, OutputTokens: 384}},
			func(t *testing.T, f *fixture) {
				f.m.ctxLen = 32768
				f.send(tickMsg{})
				if !strings.Contains(f.screen(), "ctx 50%") {
					t.Errorf("no meter:\n%s", f.screen())
				}
			}},
		{"compressed is noted", []agent.Event{{Type: agent.EventCompressed, Text: "summary"}},
			func(t *testing.T, f *fixture) {
				if !strings.Contains(f.screen(), "summarised") {
					t.Errorf("%s", f.screen())
				}
			}},
		{"an unreachable server shows the fix", []agent.Event{{Type: agent.EventError, Code: "provider_unreachable", Error: "ollama chat: connection refused; is Ollama running? start it with `ollama serve`"}},
			func(t *testing.T, f *fixture) {
				last := f.screen()[strings.LastIndex(f.screen(), "\n")+1:]
				if f.m.unreachable == "" || !strings.Contains(last, "unreachable") || !strings.Contains(last, "ollama serve") {
					t.Errorf("status: %q", last)
				}
			}},
		{"other errors are notices", []agent.Event{{Type: agent.EventError, Code: "provider_model_not_found", Error: "model x not found; pull it"}},
			func(t *testing.T, f *fixture) {
				if !strings.Contains(f.screen(), "model x not found") || f.m.unreachable != "" {
					t.Errorf("%s", f.screen())
				}
			}},
		{"cancelled keeps what came", []agent.Event{{Type: agent.EventTextDelta, Text: "partial ans"}, {Type: agent.EventDone, DoneReason: agent.DoneCancelled, Text: "partial ans"}},
			func(t *testing.T, f *fixture) {
				s := f.screen()
				if !strings.Contains(s, "partial ans") || !strings.Contains(s, "Stopped. What came so far is kept") {
					t.Errorf("%s", s)
				}
			}},
		{"max turns says how to go on", []agent.Event{{Type: agent.EventDone, DoneReason: agent.DoneMaxTurns}},
			func(t *testing.T, f *fixture) {
				if !strings.Contains(f.screen(), "turn limit") {
					t.Errorf("%s", f.screen())
				}
			}},
		{"done keeps the answer for /copy", []agent.Event{{Type: agent.EventTextDelta, Text: "42"}, {Type: agent.EventDone, DoneReason: agent.DoneStop, Text: "42"}},
			func(t *testing.T, f *fixture) {
				if f.m.lastAnswer != "42" {
					t.Errorf("last answer %q", f.m.lastAnswer)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 100, 40)
			f.busyTurn()
			f.events(tc.events...)
			tc.check(t, f)
		})
	}
}

// TestApprovalAnswers runs real turns: each answer given with the keys
// reaches the runtime, which runs or refuses the call accordingly and, for
// "allow always", does not ask again in the session.
func TestApprovalAnswers(t *testing.T) {
	cases := []struct {
		name   string
		keys   []string
		text   string
		result string // what the model is told of the first call
		always bool
	}{
		{"allow once", []string{"y"}, "", "ran-first", false},
		{"allow always", []string{"a"}, "", "ran-first", true},
		{"deny", []string{"n"}, "", "the user denied this call", false},
		{"arrows and enter", []string{"down", "down", "enter"}, "", "the user denied this call", false},
		{"deny with a message", []string{"d"}, "use go vet instead", "the user denied this call: use go vet instead", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 80, 30)
			f.srv.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.CallID("c1", "run_shell_command", `{"command":"echo ran-first"}`)),
				llmtest.OllamaStream("m", llmtest.CallID("c2", "run_shell_command", `{"command":"echo ran-second"}`)),
				llmtest.OllamaStream("m", llmtest.Text("done")))
			f.typeText("go")
			f.press("enter")
			f.pump(func() bool { return f.m.approval != nil })
			if !strings.Contains(f.screen(), "Allow run_shell_command?") {
				t.Fatalf("no prompt:\n%s", f.screen())
			}
			f.press(tc.keys...)
			if tc.text != "" {
				f.typeText(tc.text)
				f.press("enter")
			}
			if f.m.approval != nil {
				t.Fatal("the prompt is still up")
			}
			f.pump(func() bool { return f.m.approval != nil || f.m.job == jobNone })
			switch {
			case tc.always && f.m.approval != nil:
				t.Fatal("asked again after allow always")
			case !tc.always && f.m.approval == nil:
				t.Fatal("not asked for the second call")
			case !tc.always:
				f.press("n")
			}
			f.pump(func() bool { return f.m.job == jobNone })
			reqs := f.srv.RequestsTo("/api/chat")
			if len(reqs) < 2 || !strings.Contains(string(reqs[1].Body), tc.result) {
				t.Errorf("the model was not told %q", tc.result)
			}
		})
	}
}

// TestModeSwitchAnswersAWaitingCall: switching the mode while a call waits
// lets the runtime answer it by the new mode; plan mode refuses what is not
// read-only without asking.
func TestModeSwitchAnswersAWaitingCall(t *testing.T) {
	f := newFixture(t, 80, 30)
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("c1", "write_file", `{"file_path":"new.txt","content":"x"}`)),
		llmtest.OllamaStream("m", llmtest.Text("written")))
	f.typeText("write it")
	f.press("enter")
	f.pump(func() bool { return f.m.approval != nil })
	f.press("shift+tab") // default → auto_edit: edits run
	if f.m.mode != agent.ModeAutoEdit {
		t.Fatalf("mode %s", f.m.mode)
	}
	f.pump(func() bool { return f.m.job == jobNone })
	if b, err := os.ReadFile(filepath.Join(f.ws, "new.txt")); err != nil || string(b) != "x" {
		t.Fatalf("the waiting edit did not run: %q %v\n%s", b, err, f.screen())
	}
	f.press("shift+tab") // auto_edit → plan
	if f.m.mode != agent.ModePlan {
		t.Fatalf("mode %s", f.m.mode)
	}
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("c2", "run_shell_command", `{"command":"echo no"}`)),
		llmtest.OllamaStream("m", llmtest.Text("ok")))
	f.typeText("run it")
	f.press("enter")
	f.pump(func() bool { return f.m.approval != nil || f.m.job == jobNone })
	if f.m.approval != nil {
		t.Fatal("plan mode asked")
	}
	reqs := f.srv.RequestsTo("/api/chat")
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "plan mode allows read-only tools only") {
		t.Errorf("plan mode did not refuse the command: %s", last)
	}
	f.press("shift+tab")
	if f.m.mode != agent.ModeDefault {
		t.Errorf("cycle ended at %s", f.m.mode)
	}
}

func TestCancelAndQuitKeys(t *testing.T) {
	f := newFixture(t, 80, 24)
	cancelled := f.busyTurn()
	f.press("esc")
	if !*cancelled || !f.m.cancelling || !strings.Contains(f.screen(), "Stopping…") {
		t.Fatalf("esc did not cancel:\n%s", f.screen())
	}
	f.m.endJob()
	cancelled = f.busyTurn()
	f.press("ctrl+c")
	if !*cancelled {
		t.Fatal("ctrl+c did not cancel")
	}
	f.m.endJob()

	// Idle: the first ctrl+c clears the input, the second quits.
	f.typeText("draft")
	if cmd := f.press("ctrl+c"); isQuit(cmd) || f.m.input.Value() != "" {
		t.Fatalf("first ctrl+c: %q", f.m.input.Value())
	}
	if !strings.Contains(f.screen(), "Press Ctrl-C again to quit") {
		t.Errorf("no hint:\n%s", f.screen())
	}
	f.tick(time.Second)
	if cmd := f.press("ctrl+c"); !isQuit(cmd) {
		t.Error("the second ctrl+c did not quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			if isQuit(c) {
				return true
			}
		}
		return false
	}
	_, ok := msg.(tea.QuitMsg)
	return ok
}

func TestInputEditing(t *testing.T) {
	f := newFixture(t, 80, 24)
	// Multi-line: ctrl+j inserts a newline, and so does a trailing \.
	f.typeText("one\ntwo")
	f.typeText("\\")
	f.press("enter")
	f.typeText("three")
	if got := f.m.input.Value(); got != "one\ntwo\nthree" {
		t.Errorf("multi-line: %q", got)
	}
	f.m.input.Reset()

	// A large paste becomes a placeholder, expanded when sent.
	big := strings.Repeat("line\n", 40)
	f.send(tea.PasteMsg{Content: big})
	v := f.m.input.Value()
	if !strings.Contains(v, "[Pasted text #1 +41 lines]") || f.m.expandPastes(v) != big {
		t.Errorf("paste: %q", v)
	}
	f.m.input.Reset()

	// History: up recalls, down returns to the draft.
	f.m.history = []string{"first", "second"}
	f.m.histIdx = 2
	f.typeText("draft")
	f.press("up")
	if f.m.input.Value() != "second" {
		t.Errorf("up: %q", f.m.input.Value())
	}
	f.press("up", "down", "down")
	if f.m.input.Value() != "draft" {
		t.Errorf("back down: %q", f.m.input.Value())
	}
}

func TestCompletion(t *testing.T) {
	cases := []struct {
		name, typed string
		want        string // first offered label
		after       string // the input after tab
	}{
		{"command", "/se", "/session", "/session "},
		{"subcommand", "/session sw", "switch", "/session switch "},
		{"mode", "/mode au", "auto_edit", "/mode auto_edit"},
		{"file", "see @ma", "main.go", "see @main.go "},
		{"directory", "@do", "docs/", "@docs/"},
		{"in a directory", "@docs/", "docs/notes.md", "@docs/notes.md "},
		{"by base name", "@notes", "docs/notes.md", "@docs/notes.md "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 80, 24)
			f.run(filesCmd(f.bot.Workspace()))
			f.typeText(tc.typed)
			if len(f.m.comp.items) == 0 || f.m.comp.items[0].label != tc.want {
				t.Fatalf("offered %+v", f.m.comp.items)
			}
			f.press("tab")
			if got := f.m.input.Value(); got != tc.after {
				t.Errorf("after tab: %q, want %q", got, tc.after)
			}
		})
	}
}

func TestSlashCommands(t *testing.T) {
	cases := []struct {
		cmd  string
		want string
	}{
		{"/help", "Commands and keys"},
		{"/tools", "run_shell_command"},
		{"/mcp", "MCP is not configured yet"},
		{"/stats", "This session so far"},
		{"/mode plan", "plan"},
		{"/copy", "Nothing to copy yet"},
		{"/compress", "Nothing to compress yet"},
		{"/session rename x", "Nothing to rename yet"},
		{"/nope", "Unknown command /nope"},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			f := newFixture(t, 100, 50)
			f.slash(tc.cmd)
			if !strings.Contains(f.screen(), tc.want) {
				t.Errorf("no %q:\n%s", tc.want, f.screen())
			}
		})
	}
}

// TestTurnThroughTheAgent drives a real turn: the agent on its goroutine,
// the fake server, the store, an approval through the channel, and the
// paste and @file attached to the prompt.
func TestTurnThroughTheAgent(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Thinking("Let me look."), llmtest.Call("run_shell_command", `{"command":"echo hi"}`)),
		llmtest.OllamaStream("m", llmtest.Text("It printed **hi**."), llmtest.Usage(1500, 5)),
		llmtest.OllamaWhole("m", llmtest.Text("Echo test")))
	f.typeText("run it, see @main.go ")
	f.send(tea.PasteMsg{Content: strings.Repeat("pasted\n", 20)})
	f.m.comp = compState{}
	f.press("enter")
	f.pump(func() bool { return f.m.approval != nil })
	f.press("y")
	f.pump(func() bool { return f.m.job == jobNone })
	s := f.screen()
	for _, want := range []string{"Thought for", "✓ run_shell_command echo hi", "hi", "It printed hi."} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q on the screen:\n%s", want, s)
		}
	}
	// Titled from the prompt at once; the model's title comes in the
	// background, after the turn.
	if f.m.sessionID == "" || !strings.HasPrefix(f.m.sessionTitle, "run it, see @main.go") || !f.m.titled[f.m.sessionID] {
		t.Errorf("session %q %q, title asked %v", f.m.sessionID, f.m.sessionTitle, f.m.titled)
	}
	if n := len(f.srv.RequestsTo("/api/chat")); n != 2 {
		t.Errorf("%d model requests before the title was asked", n)
	}
	f.send(askTitle(f.bot, f.m.sessionID, ""))
	if f.m.sessionTitle != "Echo test" {
		t.Errorf("title %q", f.m.sessionTitle)
	}
	body := string(f.srv.RequestsTo("/api/chat")[0].Body)
	if !strings.Contains(body, "pasted\\npasted") || !strings.Contains(body, "func main()") {
		t.Errorf("the paste or the file did not reach the model:\n%s", body)
	}
}

func TestShellCommand(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.typeText("!echo from-the-user")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	if !strings.Contains(f.screen(), "you ran echo from-the-user") || len(f.m.shellNotes) != 1 {
		t.Fatalf("%s\nnotes %q", f.screen(), f.m.shellNotes)
	}
	// The hard refusals hold for the user's own commands too.
	f.typeText("!rm -rf /")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	if it := lastItem[*toolItem](t, f.m); it.state != toolFailed {
		t.Errorf("rm -rf / was not refused:\n%s", f.screen())
	}
}

func TestSessionsSwitchAndResume(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("First answer.")))
	f.typeText("hello")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	id := f.m.sessionID
	f.slash(("/session new"))
	if f.m.sessionID != "" {
		t.Fatal("/session new kept the id")
	}
	f.slash(("/session list"))
	if !strings.Contains(f.screen(), id) || !strings.Contains(f.screen(), "  hello") {
		t.Errorf("list:\n%s", f.screen())
	}
	f.slash(("/clear"))
	f.slash(("/session switch " + id))
	s := f.screen()
	if f.m.sessionID != id || !strings.Contains(s, "› hello") || !strings.Contains(s, "First answer.") {
		t.Errorf("switch:\n%s", s)
	}
	f.slash(("/session rename My chat"))
	if f.m.sessionTitle != "My chat" {
		t.Errorf("rename: %q", f.m.sessionTitle)
	}
}

// TestResumedFailure: a turn that failed leaves a record of why
// (session.FailureMessage); resumed, the session shows it as the failure
// it was, an error line, not as the model's answer.
func TestResumedFailure(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Half an "), llmtest.StreamError("model runner crashed")))
	f.typeText("hello")
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
	id := f.m.sessionID
	msgs, err := f.bot.Store().Messages(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	record := ""
	for _, m := range msgs {
		if m.Failure {
			record = m.Content
		}
	}
	if !strings.HasPrefix(record, "Provider request failed: ") || !strings.Contains(record, "model runner crashed") {
		t.Fatalf("the session's failure record is %q; its messages: %+v", record, msgs)
	}

	f.slash("/session new")
	f.slash("/session switch " + id)
	if f.m.sessionID != id {
		t.Fatalf("not resumed:\n%s", f.screen())
	}
	var failure *textItem
	for _, e := range f.m.tr.entries {
		switch it := e.it.(type) {
		case *textItem:
			if it.title == record {
				failure = it
			}
		case *answerItem:
			if strings.Contains(it.md.Text(), "Provider request failed") {
				t.Errorf("the failure is shown as an answer: %q", it.md.Text())
			}
		}
	}
	if failure == nil || failure.kind != noticeError {
		t.Fatalf("the failure is not an error notice (%+v):\n%s", failure, f.screen())
	}
	s := f.screen()
	if !strings.Contains(s, "✗ Provider request failed: ") || !strings.Contains(s, "Half an") {
		t.Errorf("resumed:\n%s", s)
	}
	if strings.Contains(f.m.lastAnswer, "failed") {
		t.Errorf("/copy would copy the failure as the answer: %q", f.m.lastAnswer)
	}
	// In colour, the line is drawn in the error style.
	f.m.opts.NoColor, f.m.opts.Theme = false, "dark"
	f.m.setTheme()
	lines := failure.render(&renderCtx{th: f.m.th, width: 100})
	if want := f.m.th.failText.Render("✗ "); len(lines) == 0 || !strings.HasPrefix(lines[0], want) || want == "✗ " {
		t.Errorf("not in the error style: %q", lines)
	}
}

func TestModelCommand(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.srv.AddModel(llmtest.Model{Name: "other", Capabilities: []string{"completion"}, ContextLength: 8192})
	f.slash(("/model"))
	if !strings.Contains(f.screen(), "other") {
		t.Fatalf("%s", f.screen())
	}
	f.slash(("/model other"))
	if f.m.model != "other" || f.m.ctxLen != 8192 {
		t.Errorf("model %q ctx %d", f.m.model, f.m.ctxLen)
	}
	f.slash(("/model missing"))
	if !strings.Contains(f.screen(), `no model "missing"`) {
		t.Errorf("%s", f.screen())
	}
}

func TestResizeReflows(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.busyTurn()
	long := strings.Repeat("word ", 60)
	f.events(agent.Event{Type: agent.EventTextDelta, Text: long}, agent.Event{Type: agent.EventDone, DoneReason: agent.DoneStop})
	wide := lastItem[*answerItem](t, f.m)
	n100 := len(f.m.tr.entries[len(f.m.tr.entries)-1].lines)
	f.send(tea.WindowSizeMsg{Width: 50, Height: 30})
	n50 := 0
	for _, e := range f.m.tr.entries {
		if e.it == item(wide) {
			n50 = len(e.lines)
		}
	}
	if n50 <= n100 {
		t.Errorf("narrower window, %d lines (was %d)", n50, n100)
	}
	for _, l := range strings.Split(f.screen(), "\n") {
		if w := len([]rune(l)); w > 50 {
			t.Errorf("line wider than the window (%d): %q", w, l)
		}
	}
}

func TestBridgeNeverBlocks(t *testing.T) {
	b := newBridge()
	for i := 0; i < 10000; i++ {
		b.send(eventMsg{agent.Event{Type: agent.EventTextDelta, Text: "x"}})
	}
	msg := b.wait()()
	if n := len(msg.(batchMsg)); n != 10000 {
		t.Errorf("batch of %d", n)
	}
	b.close()
	if b.wait()() != nil {
		t.Error("wait after close")
	}
	b.send(eventMsg{}) // dropped, no panic
}

func TestCompressCommand(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Text(strings.Repeat("A long first answer. ", 200))),
		llmtest.OllamaStream("m", llmtest.Text("Second answer.")),
		llmtest.OllamaWhole("m", llmtest.Text("- the user asked twice")))
	for _, p := range []string{"first", "second"} {
		f.typeText(p)
		f.press("enter")
		f.pump(func() bool { return f.m.job == jobNone })
	}
	f.slash("/compress")
	f.pump(func() bool { return f.m.job == jobNone })
	if s := f.screen(); !strings.Contains(s, "Compressed the session") {
		t.Fatalf("%s", s)
	}
	msgs, err := f.bot.Store().Messages(context.Background(), f.m.sessionID)
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, m := range msgs {
		if m.Summary {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("%d summaries stored", summaries)
	}
}

func TestAttachOutsideTheWorkspace(t *testing.T) {
	f := newFixture(t, 100, 30)
	got, notes := attachFiles(f.bot.Files(), "look at @/etc/passwd and @main.go, please")
	if !strings.Contains(got, "func main()") || strings.Contains(got, "root:") {
		t.Errorf("prompt:\n%s", got)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "outside the workspace") {
		t.Errorf("notes %q", notes)
	}
}

// Under NO_COLOR nothing is coloured; with colours, light and dark
// backgrounds get different styles.
func TestColours(t *testing.T) {
	play := func(f *fixture) string {
		f.busyTurn()
		f.events(agent.Event{Type: agent.EventThinkingDelta, Text: "x"},
			agent.Event{Type: agent.EventTextDelta, Text: "# Title\n\n**bold** `code`\n\n```go\nfunc f() {}\n```\n"},
			agent.Event{Type: agent.EventToolCall, ID: "c1", Name: "edit", Args: json.RawMessage(`{"file_path":"a"}`)},
			agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "edit", OK: true, Display: "-a\n+b\n"})
		return f.m.View().Content
	}
	f := newFixture(t, 80, 40)
	if s := play(f); strings.Contains(s, "[38;") || strings.Contains(s, "[48;") || strings.Contains(s, "[3") && strings.Contains(s, "[31m") {
		t.Errorf("NO_COLOR view has colours: %q", s)
	}
	f = newFixture(t, 80, 40)
	f.m.opts.NoColor, f.m.opts.Theme = false, "auto"
	f.m.setTheme()
	dark := play(f)
	f.send(tea.BackgroundColorMsg{Color: colorWhite{}})
	light := f.m.View().Content
	if !strings.Contains(dark, "[38;") || dark == light || f.m.dark {
		t.Errorf("the background was not followed (dark=%v)", f.m.dark)
	}
}

type colorWhite struct{}

func (colorWhite) RGBA() (r, g, b, a uint32) { return 0xffff, 0xffff, 0xffff, 0xffff }
