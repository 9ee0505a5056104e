package hearth_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

// BenchmarkTurnCheckpoints measures what checkpoints add to a turn: a turn
// that writes one file (two model calls on the in-memory scripted model)
// in a workspace of 10,000 files with a large ignored node_modules, with
// checkpoints on (a checkpoint before the call and one after the turn)
// and off. Compare the two in one run (docs/benchmarks.md).
func BenchmarkTurnCheckpoints(b *testing.B) {
	root := b.TempDir()
	body := make([]byte, 2048)
	for i := range 10000 {
		dir := filepath.Join(root, "src", fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("sub%02d", (i/20)%20))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), body, 0o644)
	}
	for i := range 20000 {
		dir := filepath.Join(root, "node_modules", fmt.Sprintf("dep%03d", i%200))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%05d.js", i)), body[:512], 0o644)
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644)
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			fake := llmtest.New(b)
			fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
			st, err := session.Open(context.Background(), filepath.Join(b.TempDir(), "s.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			bot, err := hearth.New(hearth.Config{
				Provider: ollama.New(ollama.Options{BaseURL: fake.URL, HTTPClient: fake.InMemory(), MaxRetries: -1}), Model: "m", ContextLength: 32768,
				Workspace: root, Store: st, Checkpoints: b.TempDir(), NoCheckpoints: !on, Sandbox: hearth.Sandbox{Home: b.TempDir()},
				Profile: hearth.Profile{Tools: []string{"write_file"}, Mode: hearth.ModeYolo},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer bot.Close()
			run := func(i int) {
				fake.Enqueue("/api/chat",
					llmtest.OllamaStream("m", llmtest.Call("write_file", fmt.Sprintf(`{"file_path":"out/%d.txt","content":"x"}`, i))),
					llmtest.OllamaStream("m", llmtest.Text("ok")))
				res, err := bot.NewTurn(context.Background(), hearth.Request{SessionID: fmt.Sprintf("s%d", i), Message: "write"}).Result()
				if err != nil || res.Reason != hearth.DoneStop {
					b.Fatalf("turn: %v %+v", err, res)
				}
			}
			run(-1) // the first snapshot stores every file: not what a turn pays after it
			i := 0
			for b.Loop() {
				run(i)
				i++
			}
		})
	}
}
