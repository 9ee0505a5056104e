package hearth_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// R1b: the turn drops a line of .gitignore; the next full snapshot of the
// turn finds the folder it ignored; undo takes its files (which were
// there all along) for files the turn created and deletes them, a file
// over the size cap too, which no checkpoint kept.
func TestUndoOfAGitignoreEditDeletesTheFolderItIgnored(t *testing.T) {
	f := newRestoreFixture(t, false)
	os.WriteFile(filepath.Join(f.root, ".gitignore"), []byte("data/\n"), 0o644)
	os.MkdirAll(filepath.Join(f.root, "data"), 0o755)
	os.WriteFile(filepath.Join(f.root, "data", "small.csv"), []byte("1,2\n"), 0o644)
	big := make([]byte, 33<<20)
	big[0] = 'x'
	os.WriteFile(filepath.Join(f.root, "data", "model.bin"), big, 0o644)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":".gitignore"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":".gitignore","content":"*.log\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"true"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	f.turn(t, "s1", "tidy .gitignore")
	res, err := f.bot.Session("s1").Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("undo: files %+v, failed %+v, conflicts %v", res.Files, res.Failed, res.Conflicts)
	for _, n := range []string{"small.csv", "model.bin"} {
		if _, err := os.Stat(filepath.Join(f.root, "data", n)); err != nil {
			t.Errorf("undo deleted data/%s: %v", n, err)
		}
	}
}
