package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/sandbox"
)

// TestMultiStepTaskWithRealTools drives the agent through a small fix with
// the real built-in tools: read a file, edit it, run a test command, answer.
func TestMultiStepTaskWithRealTools(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs real commands in the sandbox, twice (the race stage runs it)")
	}
	dialects := []struct {
		name   string
		path   string
		new    func(*llmtest.Server) llm.Provider
		stream func(string, ...llmtest.Part) llmtest.Scenario
	}{
		{"ollama", "/api/chat", func(s *llmtest.Server) llm.Provider {
			return ollama.New(ollama.Options{BaseURL: s.URL, NumCtx: 8192, MaxRetries: -1})
		}, llmtest.OllamaStream},
		{"openai", "/v1/chat/completions", func(s *llmtest.Server) llm.Provider {
			return openai.New(openai.Options{BaseURL: s.OpenAIURL(), MaxRetries: -1})
		}, llmtest.OpenAIStream},
	}
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, "greet.sh"), []byte("#!/bin/sh\necho \"Hello, wrold\"\n"), 0o755)
			os.WriteFile(filepath.Join(root, "test.sh"), []byte("#!/bin/sh\nsh greet.sh | grep -q 'Hello, world' && echo PASS || { echo FAIL; exit 1; }\n"), 0o755)
			ws, _ := sandbox.New(root)
			set, err := New(Options{Workspace: ws, Shell: shellForTest(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer set.Close()
			reg, _ := set.Registry()
			srv := llmtest.New(t)
			srv.Enqueue(d.path,
				d.stream("m", llmtest.Thinking("Look at the script first."), llmtest.Call("read_file", `{"file_path":"greet.sh"}`)),
				d.stream("m", llmtest.Call("edit", `{"file_path":"greet.sh","old_string":"echo \"Hello, wrold\"","new_string":"echo \"Hello, world\""}`)),
				d.stream("m", llmtest.Call("run_shell_command", `{"command":"sh test.sh"}`)),
				d.stream("m", llmtest.Text("Fixed the typo in greet.sh; the test passes.")))
			a := &agent.Agent{Provider: d.new(srv), Model: "m", Tools: reg, Mode: agent.ModeYolo,
				System: agent.DefaultSystemPrompt(ws.Root(), fixedNow)}
			var results []agent.Event
			res := a.Run(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "fix the greeting and run the test"}}, func(e agent.Event) {
				if e.Type == agent.EventToolResult {
					results = append(results, e)
				}
			})
			if res.Reason != agent.DoneStop || res.Text != "Fixed the typo in greet.sh; the test passes." {
				t.Fatalf("%+v", res)
			}
			if len(results) != 3 {
				t.Fatalf("results: %+v", results)
			}
			for _, r := range results {
				if !r.OK {
					t.Fatalf("%s failed: %s", r.Name, r.Error)
				}
			}
			if !strings.Contains(results[0].Output, "wrold") || !strings.Contains(results[1].Display, "+echo \"Hello, world\"") || !strings.Contains(results[2].Output, "PASS") {
				t.Errorf("outputs: %q / %q / %q", results[0].Output, results[1].Display, results[2].Output)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "greet.sh")); !strings.Contains(string(b), "Hello, world") {
				t.Errorf("file: %s", b)
			}
		})
	}
}
