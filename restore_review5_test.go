package hearth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// R17: the turn renames a file over the size cap; undo removes the new
// name (a file the turn "created") and cannot bring back the old one (not
// kept): the file is gone, and no checkpoint has it.
func TestUndoOfARenamedLargeFileLosesIt(t *testing.T) {
	f := newRestoreFixture(t, false)
	big := make([]byte, 33<<20)
	copy(big, "weights")
	os.WriteFile(filepath.Join(f.root, "model.bin"), big, 0o644)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"mkdir -p assets && mv model.bin assets/model.bin"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Moved.")))
	f.turn(t, "s1", "move the model to assets/")
	res, err := f.bot.Session("s1").Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
	t.Logf("undo: %+v, %v", res, err)
	_, e1 := os.Stat(filepath.Join(f.root, "model.bin"))
	_, e2 := os.Stat(filepath.Join(f.root, "assets", "model.bin"))
	if e1 != nil && e2 != nil {
		t.Fatalf("the 33 MiB file is gone from both places: %v / %v", e1, e2)
	}
}
