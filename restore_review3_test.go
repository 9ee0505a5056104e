package hearth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// R0: the last turn ran a command that changed nothing (tests, a build
// into an ignored folder, ls): undo picks it, finds nothing to change,
// records nothing, and picks it again every time: the turn that did edit
// files can never be undone.
func TestUndoAfterATurnThatChangedNothing(t *testing.T) {
	f := newRestoreFixture(t, false)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "write it")
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"cat one.txt"}`)),
		llmtest.OllamaStream("m", llmtest.Text("it says 1")))
	f.turn(t, "s1", "check it")
	s := f.bot.Session("s1")
	for i := 0; i < 3; i++ {
		res, err := s.Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
		if err != nil {
			t.Logf("undo %d: %v", i+1, err)
			continue
		}
		t.Logf("undo %d: turn %d, files %+v", i+1, res.Turn, res.Files)
	}
	if _, err := os.Stat(filepath.Join(f.root, "one.txt")); err == nil {
		t.Fatal("one.txt is still there after three undos")
	}
}
