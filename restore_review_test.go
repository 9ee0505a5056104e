package hearth_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// R1: an ignored file the agent edits in a call that is not the turn's
// first is absent from the turn's first snapshot: undo deletes it.
func TestUndoDeletesIgnoredFileTheAgentEdited(t *testing.T) {
	f := newRestoreFixture(t, false)
	os.WriteFile(filepath.Join(f.root, ".gitignore"), []byte("build/\n"), 0o644)
	os.MkdirAll(filepath.Join(f.root, "build"), 0o755)
	conf := filepath.Join(f.root, "build", "conf.txt")
	os.WriteFile(conf, []byte("original\n"), 0o644)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`)),
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"build/conf.txt","old_string":"original","new_string":"agent"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	f.turn(t, "s1", "edit")
	if got := read(t, conf); got != "agent\n" {
		t.Fatalf("the turn did not edit build/conf.txt: %q", got)
	}
	res, err := f.bot.Session("s1").Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("undo: files %+v failed %+v conflicts %v", res.Files, res.Failed, res.Conflicts)
	if got := read(t, conf); got != "original\n" {
		t.Fatalf("after undo build/conf.txt is %q, want its content before the turn", got)
	}
}

// R2: the agent writes a file through a symlink (CLAUDE.md -> AGENTS.md):
// the after-edit snapshot only looks at the link, and undo does not take
// the change back.
func TestEditThroughSymlinkIsNotUndone(t *testing.T) {
	f := newRestoreFixture(t, false)
	os.WriteFile(filepath.Join(f.root, "AGENTS.md"), []byte("rules\n"), 0o644)
	os.Symlink("AGENTS.md", filepath.Join(f.root, "CLAUDE.md"))
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"CLAUDE.md","old_string":"rules","new_string":"agent rules"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	f.turn(t, "s1", "edit")
	if got := read(t, filepath.Join(f.root, "AGENTS.md")); got != "agent rules\n" {
		t.Fatalf("the edit did not go through the link: %q", got)
	}
	res, err := f.bot.Session("s1").Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
	t.Logf("undo: %+v, %v", res, err)
	if got := read(t, filepath.Join(f.root, "AGENTS.md")); got != "rules\n" {
		t.Fatalf("after undo AGENTS.md is %q", got)
	}
}

// R3: the user edits a file between two turns that both change it; undo
// of the second gives the user's version back; undo of the first then
// overwrites it with no conflict.
func TestSecondUndoOverwritesUsersWorkSilently(t *testing.T) {
	f := newRestoreFixture(t, false)
	x := filepath.Join(f.root, "x.txt")
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"x.txt","content":"agent 1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "first")
	os.WriteFile(x, []byte("the user's work\n"), 0o644)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"x.txt"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"x.txt","content":"agent 2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("two")))
	f.turn(t, "s1", "second")
	s := f.bot.Session("s1")
	ctx := context.Background()
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, x); got != "the user's work\n" {
		t.Fatalf("undo of the second turn: %q", got)
	}
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
	var ce *hearth.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("undo of the first turn overwrote the user's version without a conflict (res %+v, err %v); x.txt is now %q", res, err, read(t, x))
	}
}

// R4: a rewind back, then a rewind forward to the end: the turns stay
// marked undone, and undo finds nothing to undo.
func TestRewindForwardThenUndo(t *testing.T) {
	f := newRestoreFixture(t, false)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "first")
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("two")))
	f.turn(t, "s1", "second")
	s := f.bot.Session("s1")
	ctx := context.Background()
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 1, FilesOnly: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 8, FilesOnly: true}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(f.root, "two.txt")) != "2\n" {
		t.Fatal("the rewind forward did not bring two.txt back")
	}
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
	if err != nil {
		t.Fatalf("undo after a rewind to the end: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "two.txt")); err == nil {
		t.Fatalf("undo did not take back the second turn: %+v", res)
	}
}

// R5: the user reverted the last turn's change by hand; undo finds no
// change to make, records nothing, and every later undo picks the same
// turn again: the turn before can never be undone.
func TestUndoStuckOnARevertedTurn(t *testing.T) {
	f := newRestoreFixture(t, false)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "first")
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("two")))
	f.turn(t, "s1", "second")
	os.Remove(filepath.Join(f.root, "two.txt")) // the user takes it back by hand
	s := f.bot.Session("s1")
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
		if err != nil {
			t.Logf("undo %d: %v", i+1, err)
			continue
		}
		t.Logf("undo %d: turn %d, files %+v", i+1, res.Turn, res.Files)
	}
	if _, err := os.Stat(filepath.Join(f.root, "one.txt")); err == nil {
		t.Fatal("three undos never took back the first turn")
	}
}

// R6: rewind of files and conversation to an assistant message with tool
// calls: the conversation keeps the calls' results, the files are as
// before the calls ran.
func TestRewindToACallMessage(t *testing.T) {
	f := newRestoreFixture(t, false)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "first")
	s := f.bot.Session("s1")
	ctx := context.Background()
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 2})
	if err != nil {
		t.Fatal(err)
	}
	msgs, _ := f.bot.Store().Messages(ctx, "s1")
	last := msgs[len(msgs)-1]
	_, statErr := os.Stat(filepath.Join(f.root, "one.txt"))
	t.Logf("conversation ends with %s %q; one.txt: %v; files %+v", last.Role, last.Content, statErr, res.Files)
	if last.Role == "tool" && statErr != nil {
		t.Fatalf("the conversation keeps the result %q but one.txt is gone", last.Content)
	}
}
