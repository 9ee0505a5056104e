package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// These tests drive the real binary in tmux against the scripted fake
// server, as a person at a terminal would: keys in, the screen read back.

var tmuxN atomic.Int64

// tmuxTUI is hearth's terminal UI running in a tmux server of its own.
type tmuxTUI struct {
	t    *testing.T
	sock string
}

// startTUI opens `hearth -m m -w WS args…` in a w×h tmux window.
func startTUI(t *testing.T, e *e2e, w, h int, args ...string) *tmuxTUI {
	t.Helper()
	return startTUIEnv(t, e, w, h, nil, args...)
}

// startTUIEnv is startTUI with more environment variables.
func startTUIEnv(t *testing.T, e *e2e, w, h int, env []string, args ...string) *tmuxTUI {
	t.Helper()
	if !slices.Contains(args, "--trust") {
		// Not the first-run question (TestTUIAsksTrustOnce has it):
		// trusted, as the user who chose the approval modes here.
		args = append([]string{"--trust", "trusted"}, args...)
	}
	s := openTUI(t, e, w, h, env, args...)
	s.waitFor("the input box", func(sc string) bool { return strings.Contains(sc, "Ask anything") })
	return s
}

// openTUI runs `hearth -m m -w WS args…` in a w×h tmux window, without
// waiting for anything.
func openTUI(t *testing.T, e *e2e, w, h int, env []string, args ...string) *tmuxTUI {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed: the terminal UI end-to-end tests drive the binary in tmux (apt-get install tmux)")
	}
	s := &tmuxTUI{t: t, sock: fmt.Sprintf("hearth-test-%d-%d", os.Getpid(), tmuxN.Add(1))}
	conf := filepath.Join(t.TempDir(), "tmux.conf")
	// No status bar (the screen is hearth's alone), no wait after Esc.
	os.WriteFile(conf, []byte("set -g status off\nset -g escape-time 0\n"), 0o644)
	argv := []string{"env", "HEARTH_HOME=" + e.home, "OLLAMA_HOST=" + e.srv.URL, "TERM=xterm-256color", "COLORTERM=truecolor", "HEARTH_NO_KEYRING=1"}
	argv = append(argv, env...)
	argv = append(argv, e.bin, "-m", "m", "-w", e.ws)
	argv = append(argv, args...)
	for i, a := range argv {
		argv[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	// The shell stays after hearth exits, so that its last words are read
	// before the pane goes (tmux can drop what a dying pane wrote last).
	cmdline := strings.Join(argv, " ") + `; echo "[hearth exited $?]"; sleep 600`
	s.tmux("-f", conf, "new-session", "-d", "-s", "main", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), cmdline)
	socket := strings.TrimSpace(s.tmux("display-message", "-p", "#{socket_path}"))
	t.Cleanup(func() {
		exec.Command("tmux", "-L", s.sock, "kill-server").Run()
		os.Remove(socket) // tmux leaves it behind
	})
	return s
}

func (s *tmuxTUI) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.sock}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is the visible pane.
func (s *tmuxTUI) screen() string { return s.tmux("capture-pane", "-p", "-t", "main") }

// waitFor polls the screen until ok says so, or fails after a deadline.
func (s *tmuxTUI) waitFor(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		sc := s.screen()
		if ok(sc) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; the screen:\n%s", what, sc)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *tmuxTUI) waitText(text string) string {
	s.t.Helper()
	return s.waitFor(fmt.Sprintf("%q", text), func(sc string) bool { return strings.Contains(sc, text) })
}

// keys sends tmux key names (Enter, Escape, C-c).
func (s *tmuxTUI) keys(k ...string) { s.tmux(append([]string{"send-keys", "-t", "main"}, k...)...) }

// typeText types text literally.
func (s *tmuxTUI) typeText(text string) { s.tmux("send-keys", "-t", "main", "-l", text) }

func (s *tmuxTUI) send(text string) {
	s.typeText(text)
	s.keys("Enter")
}

// slowText streams text in small chunks with a pause between them.
func slowText(text string, pause time.Duration) []llmtest.Part {
	var parts []llmtest.Part
	for len(text) > 0 {
		n := min(6, len(text))
		parts = append(parts, llmtest.Pause(pause), llmtest.Text(text[:n]))
		text = text[n:]
	}
	return parts
}

func TestTUIStreamedAnswerWithThinking(t *testing.T) {
	e := newE2E(t)
	parts := []llmtest.Part{llmtest.Thinking("The user greets me. ")}
	for i := 0; i < 30; i++ { // three seconds of live thinking
		parts = append(parts, llmtest.Pause(100*time.Millisecond), llmtest.Thinking("I think some more. "))
	}
	parts = append(parts, slowText("Hello! Here is **bold** and `code`:\n\n```go\nfmt.Println(\"hi\")\n```\n\nBye.", 30*time.Millisecond)...)
	parts = append(parts, llmtest.Usage(1600, 40))
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", parts...), llmtest.OllamaWhole("m", llmtest.Text("Greeting")))
	s := startTUI(t, e, 100, 30)
	s.send("hello there")
	live := s.waitText("I think some more")
	if !strings.Contains(live, "✻ Thinking") || !strings.Contains(live, "esc to stop") {
		t.Errorf("the thinking is not shown live:\n%s", live)
	}
	sc := s.waitText("Bye.")
	for _, want := range []string{"› hello there", "Thought for", "Hello! Here is bold and", `fmt.Println("hi")`} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q on the screen:\n%s", want, sc)
		}
	}
	if strings.Contains(sc, "I think some more") {
		t.Errorf("the thinking did not collapse when the answer came:\n%s", sc)
	}
	s.waitText("Greeting") // the session's title in the status line
	// ctrl+t shows the thinking again.
	s.keys("C-t")
	s.waitText("I think some more")
	// Two ctrl+c on an idle prompt quit, saying how to continue.
	s.keys("C-c")
	s.waitText("Press Ctrl-C again to quit")
	s.keys("C-c")
	sc = s.waitText("[hearth exited")
	if !strings.Contains(sc, "is saved: continue it with hearth --session s-") || !strings.Contains(sc, "[hearth exited 0]") {
		t.Errorf("on the way out:\n%s", sc)
	}
}

func TestTUIApprovalAcceptedAndDenied(t *testing.T) {
	e := newE2E(t)
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"echo approved-run"}`)),
		llmtest.OllamaStream("m", llmtest.Text("It ran.")),
		llmtest.OllamaWhole("m", llmtest.Text("Shell test")),
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"touch denied-file"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Understood, I will not.")))
	s := startTUI(t, e, 100, 34)
	s.send("run echo")
	sc := s.waitText("Allow run_shell_command?")
	if !strings.Contains(sc, "run `echo approved-run`") || !strings.Contains(sc, "needs your approval") {
		t.Errorf("the approval prompt:\n%s", sc)
	}
	s.keys("y")
	sc = s.waitText("It ran.")
	if !strings.Contains(sc, "✓ run_shell_command echo approved-run") || !strings.Contains(sc, "approved-run") {
		t.Errorf("the allowed call:\n%s", sc)
	}

	s.send("now touch a file")
	s.waitText("touch denied-file")
	s.waitText("Allow run_shell_command?")
	s.keys("4") // deny with a message
	s.waitText("Why deny")
	s.send("not in this repo")
	sc = s.waitText("Understood, I will not.")
	if !strings.Contains(sc, "✗ run_shell_command touch denied-file") || !strings.Contains(sc, "the user denied this call: not in this repo") {
		t.Errorf("the denied call:\n%s", sc)
	}
	if _, err := os.Stat(filepath.Join(e.ws, "denied-file")); err == nil {
		t.Error("the denied command ran")
	}
	reqs := e.srv.RequestsTo("/api/chat")
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "the user denied this call: not in this repo") {
		t.Errorf("the model was not told:\n%s", last)
	}
}

func TestTUICancelMidStream(t *testing.T) {
	e := newE2E(t)
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", slowText(strings.Repeat("streaming words ", 200), 100*time.Millisecond)...))
	s := startTUI(t, e, 100, 30)
	s.send("tell me a long story")
	s.waitText("streaming words streaming")
	s.keys("Escape")
	sc := s.waitText("Stopped. What came so far is kept in the session.")
	if !strings.Contains(sc, "● streaming words") {
		t.Errorf("the partial answer is gone:\n%s", sc)
	}
	// The prompt is usable again, and the partial reply was stored.
	s.waitFor("an idle prompt", func(sc string) bool { return !strings.Contains(sc, "esc to stop") })
	st := e.store()
	list, err := st.List(context.Background(), session.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions: %v %v", list, err)
	}
	msgs, _ := st.Messages(context.Background(), list[0].ID)
	if len(msgs) != 2 || msgs[1].Role != llm.RoleAssistant || !msgs[1].Partial || !strings.HasPrefix(msgs[1].Content, "streaming words") {
		t.Errorf("stored: %+v", msgs)
	}
	if e.srv.ClientsGone() == 0 {
		t.Error("the model's stream was not closed on cancel")
	}
}

func TestTUIResizeReflows(t *testing.T) {
	e := newE2E(t)
	long := strings.TrimSpace(strings.Repeat("reflowing paragraph text ", 30))
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text(long+"\n\nEND-MARK")), llmtest.OllamaWhole("m", llmtest.Text("Resize")))
	s := startTUI(t, e, 120, 30)
	s.send("write a paragraph")
	wide := s.waitText("END-MARK")
	s.tmux("resize-window", "-t", "main", "-x", "60", "-y", "30")
	narrow := s.waitFor("the narrow layout", func(sc string) bool {
		for _, l := range strings.Split(sc, "\n") {
			if len([]rune(l)) > 60 {
				return false
			}
		}
		return strings.Contains(sc, "END-MARK") && strings.Contains(sc, "╰"+strings.Repeat("─", 58)+"╯")
	})
	if rows(narrow, "reflowing") <= rows(wide, "reflowing") {
		t.Errorf("the paragraph did not rewrap into more rows:\nwide:\n%s\nnarrow:\n%s", wide, narrow)
	}
	s.tmux("resize-window", "-t", "main", "-x", "120", "-y", "30")
	s.waitFor("the wide layout again", func(sc string) bool { return rows(sc, "reflowing") == rows(wide, "reflowing") })
}

// rows counts the screen rows that hold sub.
func rows(screen, sub string) int {
	n := 0
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

func TestTUINotOnAPipe(t *testing.T) {
	e := newE2E(t)
	// No terminal: the root command prints help, as before.
	code, out, _ := e.run("")
	if code != 0 || !strings.Contains(out, "Usage:") {
		t.Errorf("exit %d\n%s", code, out)
	}
}
