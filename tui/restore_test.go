package tui

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

const mainGo = "package main\n\nfunc main() {}\n"

// turn sends prompt in yolo mode (nothing asks) and waits for the turn
// to end.
func (f *fixture) turn(prompt string) {
	f.t.Helper()
	f.m.mode = agent.ModeYolo
	f.typeText(prompt)
	f.m.comp = compState{}
	f.press("enter")
	f.pump(func() bool { return f.m.job == jobNone })
}

// editTurn scripts a turn that edits main.go and writes new.txt.
func (f *fixture) editTurn(prompt string) {
	f.t.Helper()
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"main.go","old_string":"func main() {}","new_string":"func main() { println(1) }"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"new.txt","content":"new\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done one.")))
	f.turn(prompt)
}

// restoreCmd runs /undo, /redo or /rewind up to its panel (the preview,
// or the list of messages).
func (f *fixture) restoreCmd(cmd string) {
	f.t.Helper()
	f.slash(cmd)
	f.pump(func() bool { return f.m.job == jobNone })
}

// answer presses keys in the panel and waits for the work they start.
func (f *fixture) answer(keys ...string) {
	f.t.Helper()
	f.run(f.press(keys...))
	f.pump(func() bool { return f.m.job == jobNone })
}

func (f *fixture) read(name string) string {
	data, err := os.ReadFile(filepath.Join(f.ws, name))
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

func (f *fixture) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(f.ws, name))
	return err == nil
}

func wantScreen(t *testing.T, f *fixture, wants ...string) {
	t.Helper()
	s := f.screen()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("no %q on the screen:\n%s", w, s)
		}
	}
}

// TestUndoRedo: a turn that edits a file and writes another; /undo shows
// what it will do, takes both back once confirmed; /redo brings them
// back; the cards show the checkpoints, live and resumed.
func TestUndoRedo(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.editTurn("change main")
	if !strings.Contains(f.read("main.go"), "println(1)") || f.read("new.txt") != "new\n" {
		t.Fatalf("the turn did not change the files: %q %q", f.read("main.go"), f.read("new.txt"))
	}
	wantScreen(t, f, "◦ checkpoint 1", "◦ checkpoint 2")

	f.restoreCmd("/undo")
	if f.m.restore == nil || f.m.restore.stage != stagePreview {
		t.Fatalf("no preview:\n%s", f.screen())
	}
	wantScreen(t, f, "Undo turn 1 “change main”?", "modify  main.go", "delete  new.txt", "y/enter undo · n/esc cancel")
	if !strings.Contains(f.read("main.go"), "println(1)") || !f.exists("new.txt") {
		t.Fatal("the preview changed files")
	}
	f.answer("y")
	if f.m.restore != nil || f.read("main.go") != mainGo || f.exists("new.txt") {
		t.Fatalf("undo: main.go %q, new.txt there: %v\n%s", f.read("main.go"), f.exists("new.txt"), f.screen())
	}
	wantScreen(t, f, "Undid turn 1 “change main”: 2 files restored.", "kept in checkpoint")

	f.restoreCmd("/redo")
	wantScreen(t, f, "Redo turn 1 “change main”?", "create  new.txt", "modify  main.go")
	f.answer("enter")
	if !strings.Contains(f.read("main.go"), "println(1)") || f.read("new.txt") != "new\n" {
		t.Fatalf("redo: %q %q\n%s", f.read("main.go"), f.read("new.txt"), f.screen())
	}
	wantScreen(t, f, "Redid turn 1 “change main”: 2 files restored.")

	// A second redo has nothing to do: said, not crashed.
	f.restoreCmd("/redo")
	wantScreen(t, f, "Nothing to redo")
	if f.m.restore != nil {
		t.Error("a panel stayed up")
	}

	// Resumed, the cards still show their checkpoints.
	id := f.m.sessionID
	f.slash("/session switch " + id)
	wantScreen(t, f, "◦ checkpoint 1", "◦ checkpoint 2")
}

// TestUndoConflicts: a file the user changed after the agent is never
// overwritten without asking; each answer does what it says.
func TestUndoConflicts(t *testing.T) {
	const mine = "package main // mine\n"
	cases := []struct {
		name      string
		keys      []string
		wantMain  string
		wantNew   bool
		wantPanel bool
		wantText  string
	}{
		{"enter keeps my changes", []string{"enter"}, mine, false, false, "kept as you changed them: main.go"},
		{"k keeps my changes", []string{"k"}, mine, false, false, "kept as you changed them: main.go"},
		{"o overwrites", []string{"o"}, mainGo, false, false, "Undid turn 1"},
		{"up then enter overwrites", []string{"up", "enter"}, mainGo, false, false, "Undid turn 1"},
		{"esc cancels", []string{"esc"}, mine, true, false, "Cancelled: nothing was undone."},
		{"3 cancels", []string{"3"}, mine, true, false, "Cancelled: nothing was undone."},
		{"y does not decide", []string{"y"}, mine, true, true, "Keep my changes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 100, 40)
			f.editTurn("change main")
			os.WriteFile(filepath.Join(f.ws, "main.go"), []byte(mine), 0o644)
			f.restoreCmd("/undo")
			wantScreen(t, f, "! modify  main.go  (changed after the agent changed it)", "delete  new.txt",
				"1 file was changed after the agent changed it", "1. Overwrite my changes", "› 2. Keep my changes", "3. Cancel")
			f.answer(tc.keys...)
			if got := f.read("main.go"); got != tc.wantMain {
				t.Errorf("main.go: %q, want %q", got, tc.wantMain)
			}
			if f.exists("new.txt") != tc.wantNew {
				t.Errorf("new.txt there: %v", !tc.wantNew)
			}
			if (f.m.restore != nil) != tc.wantPanel {
				t.Errorf("panel up: %v", f.m.restore != nil)
			}
			wantScreen(t, f, tc.wantText)
		})
	}
}

// TestUndoFilesChangedSincePreview: the user changes a file between the
// preview and the answer: nothing is overwritten, the preview comes again.
func TestUndoFilesChangedSincePreview(t *testing.T) {
	f := newFixture(t, 100, 40)
	f.editTurn("change main")
	f.restoreCmd("/undo")
	os.WriteFile(filepath.Join(f.ws, "main.go"), []byte("mine\n"), 0o644)
	f.answer("y")
	if f.read("main.go") != "mine\n" || !f.exists("new.txt") {
		t.Fatalf("files changed: %q", f.read("main.go"))
	}
	if f.m.restore == nil || f.m.restore.stage != stagePreview {
		t.Fatalf("no new preview:\n%s", f.screen())
	}
	wantScreen(t, f, "Files changed since the preview", "! modify  main.go")
}

// TestRewind: to before the second prompt (files and conversation), and
// to before the first (the start of the session: no message left, an
// archived copy keeps them); each time the prompt goes back into the input.
func TestRewind(t *testing.T) {
	two := func(f *fixture) {
		f.editTurn("first prompt")
		f.srv.Enqueue("/api/chat",
			llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
			llmtest.OllamaStream("m", llmtest.Text("Done two.")))
		f.turn("second prompt\nwith a second line")
	}
	t.Run("to before the second prompt", func(t *testing.T) {
		f := newFixture(t, 100, 40)
		two(f)
		id := f.m.sessionID
		f.slash("/rewind")
		wantScreen(t, f, "Rewind to before which message?", "› 2. second prompt", "  1. first prompt", "newest first")
		f.press("enter")
		wantScreen(t, f, "Rewind to before message 2 “second prompt”: what?", "› 1. Files and conversation", "2. Files only", "3. Conversation only")
		f.answer("enter")
		wantScreen(t, f, "Rewind to before message 2 “second prompt” (files and conversation)?", "delete  two.txt",
			"Conversation: the 4 messages after it removed")
		f.answer("y")
		if !f.exists("new.txt") || f.exists("two.txt") {
			t.Errorf("files: new.txt %v, two.txt %v", f.exists("new.txt"), f.exists("two.txt"))
		}
		if got := f.m.input.Value(); got != "second prompt\nwith a second line" {
			t.Errorf("input %q", got)
		}
		if f.m.sessionID != id {
			t.Errorf("session %q, want %q", f.m.sessionID, id)
		}
		msgs, _ := f.bot.Store().Messages(context.Background(), id)
		if n := len(msgs); n != 6 {
			t.Errorf("%d messages stored after the rewind", n)
		}
		wantScreen(t, f, "› first prompt", "Done one.", "Rewound to before message 2 “second prompt”: 1 file restored, 4 messages removed.",
			"kept in the archived session", "Your message is back in the input box")
		if s := f.screen(); strings.Contains(s, "Done two.") {
			t.Errorf("the rewound conversation still shows:\n%s", s)
		}
	})
	t.Run("to before the first prompt", func(t *testing.T) {
		f := newFixture(t, 100, 40)
		two(f)
		id := f.m.sessionID
		f.slash("/rewind")
		f.press("down", "enter")
		f.answer("enter")
		wantScreen(t, f, "Rewind to before message 1 “first prompt” (files and conversation)?", "modify  main.go", "delete  new.txt",
			"delete  two.txt", "the 10 messages after it removed")
		f.answer("y")
		if f.read("main.go") != mainGo || f.exists("new.txt") || f.exists("two.txt") {
			t.Errorf("files: main.go %q, new.txt %v, two.txt %v", f.read("main.go"), f.exists("new.txt"), f.exists("two.txt"))
		}
		if f.m.sessionID != id || f.m.input.Value() != "first prompt" {
			t.Errorf("session %q, input %q", f.m.sessionID, f.m.input.Value())
		}
		if msgs, _ := f.bot.Store().Messages(context.Background(), id); len(msgs) != 0 {
			t.Errorf("%d messages left", len(msgs))
		}
		archived, err := f.bot.Store().List(context.Background(), session.ListOptions{Archived: true})
		if err != nil || len(archived) != 1 || archived[0].MessageCount != 10 {
			t.Errorf("the archived copy: %+v %v", archived, err)
		}
		wantScreen(t, f, "Rewound to before message 1 “first prompt”: 3 files restored, 10 messages removed.", "kept in the archived session")
		if s := f.screen(); strings.Contains(s, "Done one.") || strings.Contains(s, "› first prompt\n") {
			t.Errorf("the rewound conversation still shows:\n%s", s)
		}
		// Sent again, it continues the same session.
		f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Fresh start.")))
		f.m.comp = compState{}
		f.press("enter")
		f.pump(func() bool { return f.m.job == jobNone })
		if f.m.sessionID != id {
			t.Errorf("session after resending: %q", f.m.sessionID)
		}
		wantScreen(t, f, "Fresh start.")
	})
	t.Run("files only keeps the conversation", func(t *testing.T) {
		f := newFixture(t, 100, 40)
		two(f)
		f.slash("/rewind")
		f.press("down", "enter")
		f.answer("2")
		wantScreen(t, f, "(files only)?", "delete  two.txt")
		f.answer("y")
		if f.exists("two.txt") || f.exists("new.txt") {
			t.Error("files not rewound")
		}
		if f.m.sessionID == "" || f.m.input.Value() != "" {
			t.Errorf("session %q, input %q", f.m.sessionID, f.m.input.Value())
		}
		wantScreen(t, f, "Done two.", "Rewound to before message 1 “first prompt”: 3 files restored.")
	})
	t.Run("conversation only keeps the files", func(t *testing.T) {
		f := newFixture(t, 100, 40)
		two(f)
		f.slash("/rewind")
		f.press("enter")
		f.answer("3")
		wantScreen(t, f, "(conversation only)?", "Conversation: the 4 messages after it removed")
		if s := f.m.renderRestore(); strings.Contains(s, "No file changes") || strings.Contains(s, "two.txt") {
			t.Errorf("files in a conversation-only preview:\n%s", s)
		}
		f.answer("y")
		if !f.exists("two.txt") {
			t.Error("a conversation-only rewind touched the files")
		}
		wantScreen(t, f, "Rewound to before message 2 “second prompt”: 4 messages removed.")
	})
	t.Run("esc cancels the list", func(t *testing.T) {
		f := newFixture(t, 100, 40)
		two(f)
		f.slash("/rewind")
		f.press("esc")
		if f.m.restore != nil || !f.exists("two.txt") {
			t.Fatal("not cancelled")
		}
		wantScreen(t, f, "Cancelled: nothing was rewound.")
	})
}

// TestRestoreRefusals: each case a restore cannot run says why, as a
// line in the conversation.
func TestRestoreRefusals(t *testing.T) {
	textTurn := func(f *fixture) {
		f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Just words.")))
		f.turn("hello")
	}
	cases := []struct {
		name  string
		setup func(f *fixture)
		cmd   string
		want  string
	}{
		{"undo before any message", func(*fixture) {}, "/undo", "Nothing to undo yet: the session starts with your first message."},
		{"redo before any message", func(*fixture) {}, "/redo", "Nothing to redo yet"},
		{"rewind before any message", func(*fixture) {}, "/rewind", "Nothing to rewind yet"},
		{"undo with no file changed", textTurn, "/undo", "Nothing to undo: no turn of this session changed files"},
		{"redo with nothing undone", textTurn, "/redo", "Nothing to redo: no undo to take back"},
		{"undo while a turn runs", func(f *fixture) { f.busyTurn() }, "/undo", "/undo waits for an idle prompt: let the turn finish, or press Esc to stop it."},
		{"rewind while a turn runs", func(f *fixture) { f.busyTurn() }, "/rewind", "/rewind waits for an idle prompt"},
		{"a session that is not stored", func(f *fixture) { f.m.sessionID = "s-nope" }, "/undo", "Could not work out what /undo would change"},
		{"a session another process holds", func(f *fixture) {
			f.editTurn("change main")
			st := f.bot.Store().(*session.SQLite)
			st.LockTimeout = 0
			unlock, err := st.Lock(context.Background(), f.m.sessionID)
			if err != nil {
				f.t.Fatal(err)
			}
			f.t.Cleanup(unlock)
		}, "/undo", "The session is busy: a turn is running in it (here or in another hearth process)."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 100, 40)
			tc.setup(f)
			f.slash(tc.cmd)
			f.pump(func() bool { return f.m.job == jobNone || f.m.job == jobTurn })
			wantScreen(t, f, tc.want)
			if f.m.restore != nil {
				t.Error("a panel stayed up")
			}
		})
	}
}

// TestRestoreWithoutCheckpoints: with checkpoints off, /undo says so, and
// /rewind can still take back the conversation.
func TestRestoreWithoutCheckpoints(t *testing.T) {
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
		Workspace: ws, Sandbox: hearth.Sandbox{Home: home, TempRoot: home}, Store: st, NoCheckpoints: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(Options{Agent: a, NoColor: true, Theme: "dark", Width: 100, Height: 40})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(); a.Close() })
	os.WriteFile(filepath.Join(ws, "main.go"), []byte(mainGo), 0o644)
	f := &fixture{t: t, m: m, srv: srv, bot: a, ws: ws}
	f.editTurn("change main")
	f.restoreCmd("/undo")
	wantScreen(t, f, "Checkpoints are off: nothing the agent changed can be restored.")
	f.slash("/rewind")
	f.press("enter")
	f.answer("1")
	wantScreen(t, f, "Checkpoints are off", "/rewind can still take back the")
	f.slash("/rewind")
	f.press("enter")
	f.answer("3")
	f.answer("y")
	wantScreen(t, f, "Rewound to before message 1 “change main”: 6 messages removed.")
	if f.m.input.Value() != "change main" {
		t.Errorf("input %q", f.m.input.Value())
	}
}

// TestRestorePanelKeys: the panel's keys, without the store (the
// preview is fed as the worker would send it).
func TestRestorePanelKeys(t *testing.T) {
	preview := func(conflicts ...string) restoreDoneMsg {
		return restoreDoneMsg{dry: true, res: &hearth.RestoreResult{RestoreInfo: agent.RestoreInfo{Op: "undo", Turn: 1,
			Files: []agent.FileChange{{Path: "a.txt", Action: "modify"}}}, Conflicts: conflicts, DryRun: true}, turn: turnLabel{n: 1, text: "go"}}
	}
	cases := []struct {
		name      string
		conflicts []string
		keys      []string
		wantSel   int
		wantPanel bool
	}{
		{"no conflict: n cancels", nil, []string{"n"}, 0, false},
		{"no conflict: other keys wait", nil, []string{"x", "down"}, 0, true},
		{"conflict: keep is the default", []string{"a.txt"}, nil, 1, true},
		{"conflict: down moves", []string{"a.txt"}, []string{"down"}, 2, true},
		{"conflict: down wraps", []string{"a.txt"}, []string{"down", "down"}, 0, true},
		{"conflict: ctrl+c cancels", []string{"a.txt"}, []string{"ctrl+c"}, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 80, 24)
			f.m.sessionID = "s-1"
			f.m.restore = &restoreState{op: hearth.Undo, sessionID: "s-1", stage: stageWork}
			f.send(preview(tc.conflicts...))
			f.press(tc.keys...)
			if (f.m.restore != nil) != tc.wantPanel {
				t.Fatalf("panel up: %v\n%s", f.m.restore != nil, f.screen())
			}
			if f.m.restore != nil && f.m.restore.sel != tc.wantSel {
				t.Errorf("selection %d, want %d", f.m.restore.sel, tc.wantSel)
			}
		})
	}
}

func TestTypedText(t *testing.T) {
	cases := []struct{ stored, want string }{
		{"fix it", "fix it"},
		{"look at @a.go please\n\nContent of a.go:\n```\npackage a\n```", "look at @a.go please"},
		{"see @big.log\n\nContent of big.log (first 256 KB of 900 KB):\n```\nx\n```", "see @big.log"},
		{"list @src\n\nContents of the directory src:\na.go\n", "list @src"},
		{"Output of commands I ran:\n$ ls\n```\na\n\nb\n```\n$ pwd\n```\n/x\n```\n\nnow fix it", "now fix it"},
		{"Output of commands I ran:\n$ true\n```\n\n```\n\nand then @a.go\n\nContent of a.go:\n```\nx\n```", "and then @a.go"},
		{"Output of commands I ran:\nnot a note", "Output of commands I ran:\nnot a note"},
	}
	for _, tc := range cases {
		if got := typedText(tc.stored); got != tc.want {
			t.Errorf("typedText(%q) = %q, want %q", tc.stored, got, tc.want)
		}
	}
}

func TestRewindPoints(t *testing.T) {
	msg := func(seq int, role llm.Role, content string) session.Message {
		return session.Message{Seq: seq, Message: llm.Message{Role: role, Content: content}}
	}
	sum := msg(9, llm.RoleUser, "summary")
	sum.Summary = true
	got := rewindPoints([]session.Message{msg(1, llm.RoleUser, "one"), msg(2, llm.RoleAssistant, "a"), msg(3, llm.RoleUser, "two\nmore"), msg(4, llm.RoleAssistant, "b"), sum})
	want := []rewindPoint{{seq: 3, through: 2, n: 2, text: "two\nmore"}, {seq: 1, through: 0, n: 1, text: "one"}}
	if len(got) != len(want) {
		t.Fatalf("%+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[0].label() != "two" {
		t.Errorf("label %q", got[0].label())
	}
}

// TestCheckpointEvent: a checkpoint marks its call's card; files it could
// not keep are said.
func TestCheckpointEvent(t *testing.T) {
	f := newFixture(t, 100, 30)
	f.busyTurn()
	f.events(agent.Event{Type: agent.EventToolCall, ID: "c1", Name: "write_file", Args: json.RawMessage(`{"file_path":"a.txt"}`)},
		agent.Event{Type: agent.EventCheckpoint, ID: "c1", Name: "write_file", Checkpoint: &agent.CheckpointInfo{ID: 12, Seq: 2, Files: 3, TooLarge: []string{"big.bin"}}},
		agent.Event{Type: agent.EventCheckpoint, ID: "nope", Name: "write_file", Checkpoint: &agent.CheckpointInfo{ID: 13}},
		agent.Event{Type: agent.EventCheckpoint, ID: "c1", Name: "write_file"})
	it := lastItem[*toolItem](t, f.m)
	if it.checkpoint != 12 {
		t.Errorf("checkpoint %d", it.checkpoint)
	}
	wantScreen(t, f, "◦ checkpoint 12", "! not restorable (over the checkpoint size cap): big.bin")
}
