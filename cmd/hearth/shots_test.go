package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/termshot"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestTUIScreenshots writes PNG screenshots of the terminal UI's main
// states (captured from tmux with colours) into the directory named by
// HEARTH_SCREENSHOTS:
//
//	HEARTH_SCREENSHOTS=$PWD/docs/screenshots go test -run TUIScreenshots ./cmd/hearth
func TestTUIScreenshots(t *testing.T) {
	dir := os.Getenv("HEARTH_SCREENSHOTS")
	if dir == "" {
		t.Skip("set HEARTH_SCREENSHOTS to a directory to write the terminal UI's screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	const w, h = 100, 34
	shot := func(s *tmuxTUI, name string) {
		t.Helper()
		screen := s.tmux("capture-pane", "-e", "-p", "-t", "main")
		f, err := os.Create(filepath.Join(dir, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := termshot.WritePNG(f, screen, w, h, termshot.Options{}); err != nil {
			t.Fatal(err)
		}
	}

	e := newE2E(t)
	// The workspace shows as ~/src/calc.
	home := t.TempDir()
	e.ws = filepath.Join(home, "src", "calc")
	os.MkdirAll(e.ws, 0o755)
	env := []string{"HOME=" + home}
	os.WriteFile(filepath.Join(e.ws, "calc.go"), []byte("package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"), 0o644)
	think := "The user says the test for Add fails. I should read calc.go, find the bug, and fix it with an edit. "
	var stream []llmtest.Part
	for _, w := range strings.SplitAfter(think+think, " ") {
		stream = append(stream, llmtest.Pause(40*time.Millisecond), llmtest.Thinking(w))
	}
	stream = append(stream, llmtest.Call("read_file", `{"file_path":"calc.go"}`))
	answer := "Fixed: `Add` subtracted instead of adding.\n\n## What changed\n\n- `calc.go`: `return a - b` became `return a + b`\n- the doc comment already said **sum**\n\n```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```\n\nRun `go test ./...` to check.\n"
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", stream...),
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"calc.go","old_string":"return a - b","new_string":"return a + b"}`)),
		llmtest.OllamaStream("m", append(slowText(answer, 25*time.Millisecond), llmtest.Usage(9800, 120))...),
		llmtest.OllamaWhole("m", llmtest.Text("Fix Add")),
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"for i in 1 2 3 4 5 6 7 8; do echo \"=== RUN TestAdd/case_$i\"; sleep 0.4; done; echo PASS"}`)),
		llmtest.OllamaStream("m", llmtest.Text("All eight cases pass.")))

	s := startTUIEnv(t, e, w, h, env)
	s.typeText("the test for Add fails, fix it @calc")
	s.waitText("calc.go")
	shot(s, "completion-file")
	s.keys("Tab")
	s.keys("Enter")
	s.waitText("I should read calc.go")
	time.Sleep(600 * time.Millisecond)
	shot(s, "thinking")
	s.waitText("Allow edit?")
	shot(s, "approval-edit")
	s.keys("y")
	s.waitText("to check.")
	s.waitText("Fix Add")
	shot(s, "answer")

	s.send("run the tests")
	s.waitText("Allow run_shell_command?")
	shot(s, "approval-command")
	s.keys("y")
	s.waitText("case_3")
	shot(s, "tool-running")
	s.waitText("All eight cases pass.")

	s.typeText("/")
	s.waitText("/compress")
	shot(s, "slash-commands")
	s.keys("C-u")
	s.send("/help")
	s.waitText("Commands and keys")
	shot(s, "help")

	// A server that is not there.
	e2 := newE2E(t)
	e2.ws = e.ws
	e2.srv.Close()
	s2 := startTUIEnv(t, e2, w, 14, env)
	s2.waitText("unreachable")
	screen := s2.tmux("capture-pane", "-e", "-p", "-t", "main")
	f, _ := os.Create(filepath.Join(dir, "unreachable.png"))
	termshot.WritePNG(f, screen, w, 14, termshot.Options{})
	f.Close()
}
