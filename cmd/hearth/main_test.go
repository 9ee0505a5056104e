package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// runHearth runs the command in-process with the given environment.
func runHearth(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	getenv := func(k string) string { return env[k] }
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	code = run(ctx, args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, getenv)
	return code, out.String(), errb.String()
}

func fakeOllama(t *testing.T) *llmtest.Server {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 40960})
	srv.AddModel(llmtest.Model{Name: "tiny:latest", Capabilities: []string{"completion"}, ContextLength: 4096, NumCtx: 2048})
	return srv
}

func TestVersionAndHelp(t *testing.T) {
	code, out, _ := runHearth(t, nil, "--version")
	if code != 0 || !strings.HasPrefix(out, "hearth 0.") {
		t.Errorf("--version: %d %q", code, out)
	}
	code, out, _ = runHearth(t, nil, "--help")
	for _, want := range []string{"doctor", "models", "OLLAMA_HOST", "OPENAI_API_KEY", "--provider", "--base-url", "--model", "--api-key"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("--help exit %d", code)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"--no-such-flag"}, {"--provider", "foo", "models"}, {"models", "extra"}} {
		code, _, errOut := runHearth(t, nil, args...)
		if code != exitUsage || !strings.Contains(errOut, "hearth --help") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
	code, _, errOut := runHearth(t, map[string]string{"HEARTH_NUM_CTX": "lots"}, "models")
	if code != exitUsage || !strings.Contains(errOut, "HEARTH_NUM_CTX") {
		t.Errorf("bad HEARTH_NUM_CTX: exit %d, %q", code, errOut)
	}
}

func TestModels(t *testing.T) {
	srv := fakeOllama(t)
	code, out, errOut := runHearth(t, map[string]string{"OLLAMA_HOST": srv.URL}, "models")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("table:\n%s", out)
	}
	if !strings.Contains(lines[1], "qwen3:4b") || !strings.Contains(lines[1], "tools,thinking") || !strings.Contains(lines[1], "16384/40960") {
		t.Errorf("qwen3 row: %q", lines[1])
	}
	if !strings.Contains(lines[2], "2048/4096") {
		t.Errorf("tiny row: %q", lines[2])
	}
	// How each gets its tools: natively, or described in the prompt for
	// the one without the tools capability.
	if !strings.HasSuffix(lines[0], "TOOLS") || !strings.HasSuffix(lines[1], " native") || !strings.HasSuffix(lines[2], " prompted") {
		t.Errorf("tools column:\n%s", out)
	}
	code, out, _ = runHearth(t, nil, "--base-url", srv.URL, "models", "--json")
	var models []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &models) != nil || len(models) != 2 {
		t.Fatalf("--json: %d %s", code, out)
	}
	if models[1]["tool_mode"] != "prompted" || models[1]["tool_mode_reason"] != "the server says this model cannot call tools" || models[0]["tool_mode"] != "native" {
		t.Errorf("--json tool modes: %v / %v", models[0], models[1])
	}
	// --tool-mode chooses for every model.
	code, out, _ = runHearth(t, nil, "--base-url", srv.URL, "--tool-mode", "prompted", "models")
	if lines = strings.Split(strings.TrimSpace(out), "\n"); code != 0 || !strings.HasSuffix(lines[1], " prompted") {
		t.Errorf("--tool-mode prompted:\n%s", out)
	}
}

func TestModelsOpenAI(t *testing.T) {
	srv := fakeOllama(t)
	env := map[string]string{"OPENAI_BASE_URL": srv.OpenAIURL(), "OPENAI_API_KEY": "sk-x"}
	code, out, errOut := runHearth(t, env, "models")
	if code != 0 || !strings.Contains(out, "qwen3:4b") || !strings.Contains(out, "?") || !strings.Contains(out, "native?") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := srv.RequestsTo("/v1/models")[0].Header.Get("Authorization"); got != "Bearer sk-x" {
		t.Errorf("OPENAI_API_KEY not sent: %q", got)
	}
}

func TestDoctor(t *testing.T) {
	srv := fakeOllama(t)
	srv.Always("/api/chat", llmtest.OllamaStream("qwen3:4b", llmtest.Thinking("ok"), llmtest.Text("ready")))
	env := map[string]string{"OLLAMA_HOST": srv.URL}

	code, out, _ := runHearth(t, env, "doctor", "--model", "qwen3:4b")
	if code != 0 || !strings.Contains(out, "Ready") || !strings.Contains(out, "✓ chat") {
		t.Errorf("ready: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "\033[") {
		t.Errorf("colors written to a non-terminal:\n%q", out)
	}

	code, out, _ = runHearth(t, env, "doctor", "--model", "missing")
	if code != exitFailed || !strings.Contains(out, "ollama pull missing") || !strings.Contains(out, "Not ready") {
		t.Errorf("missing model: exit %d\n%s", code, out)
	}

	code, out, _ = runHearth(t, env, "doctor")
	if code != exitFailed || !strings.Contains(out, "--model qwen3:4b") {
		t.Errorf("no model: exit %d\n%s", code, out)
	}

	code, out, _ = runHearth(t, env, "doctor", "-m", "tiny", "--no-chat", "--json")
	var r struct {
		Ready  bool
		Checks []struct{ Name, Status, Detail, Fix string }
	}
	// A 2048-token window cannot hold Hearth's prompt and a conversation.
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitFailed || r.Ready {
		t.Fatalf("--json: exit %d, %v\n%s", code, err, out)
	}
	for _, c := range r.Checks {
		if c.Name == "context" && (c.Status != "warn" || !strings.Contains(c.Fix, "4096")) {
			t.Errorf("small window not flagged with its fix: %+v", c)
		}
		if c.Name == "prompt" && (c.Status != "fail" || !strings.Contains(c.Fix, "HEARTH_NUM_CTX=4096")) {
			t.Errorf("a prompt that does not fit not flagged with its fix: %+v", c)
		}
		if c.Name == "chat" {
			t.Errorf("--no-chat still chatted")
		}
	}

	code, out, _ = runHearth(t, map[string]string{"OLLAMA_HOST": "127.0.0.1:1"}, "doctor")
	if code != exitFailed || !strings.Contains(out, "ollama serve") {
		t.Errorf("unreachable: exit %d\n%s", code, out)
	}
}

// TestInterruptExit130 runs the real binary against a server that never
// answers and sends it SIGINT.
func TestInterruptExit130(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin, err := binary() // built once for the package's tests
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	srv := llmtest.New(t)
	srv.Always("/api/version", llmtest.Scenario{HeaderDelay: time.Hour})
	cmd := exec.Command(bin, "doctor", "--base-url", srv.URL)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { return len(srv.RequestsTo("/api/version")) > 0 })
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("hearth did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Errorf("exit %d, want 130; stderr %q", code, errb.String())
	}
}

// waitUntil waits for ok to hold. Its limit only detects a hang: a loaded
// machine may take many seconds to start a process.
func waitUntil(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out (90 s) waiting for a condition")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestColors(t *testing.T) {
	srv := fakeOllama(t)
	srv.Always("/api/chat", llmtest.OllamaStream("qwen3:4b", llmtest.Text("ready")))
	for _, tc := range []struct {
		tty     bool
		noColor string
		want    bool
	}{{true, "", true}, {true, "1", false}, {false, "", false}} {
		var out, errb bytes.Buffer
		env := map[string]string{"OLLAMA_HOST": srv.URL, "NO_COLOR": tc.noColor}
		a := &app{io: stdio{in: strings.NewReader(""), out: &out, err: &errb}, getenv: func(k string) string { return env[k] },
			isTTY: func(io.Writer) bool { return tc.tty }}
		root := a.rootCommand()
		root.SetArgs([]string{"doctor", "-m", "qwen3:4b"})
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out.String(), "\033["); got != tc.want {
			t.Errorf("tty=%v NO_COLOR=%q: colours %v, want %v\n%q", tc.tty, tc.noColor, got, tc.want, out.String())
		}
	}
}

func TestEnvKnobs(t *testing.T) {
	for _, kv := range [][2]string{{"HEARTH_IDLE_TIMEOUT", "soon"}, {"HEARTH_IMPLICIT_THINK", "maybe"}} {
		code, _, errOut := runHearth(t, map[string]string{kv[0]: kv[1]}, "models")
		if code != exitUsage || !strings.Contains(errOut, kv[0]) {
			t.Errorf("%s=%s: exit %d %q", kv[0], kv[1], code, errOut)
		}
	}
}

func TestAuth(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home, "HEARTH_NO_KEYRING": "1"} // never the developer's keychain
	var out, errb bytes.Buffer
	a := &app{io: stdio{in: strings.NewReader("sk-secret\n"), out: &out, err: &errb}, getenv: func(k string) string { return env[k] }, isTTY: isTerminal}
	root := a.rootCommand()
	root.SetArgs([]string{"auth", "set", "vllm"})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	s, _ := a.secrets()
	if _, err := os.Stat(filepath.Join(home, "secrets.toml")); err != nil {
		t.Errorf("not in the file: %v", err)
	}
	if v, err := s.Get("vllm"); err != nil || v != "sk-secret" {
		t.Errorf("%q %v (%s)", v, err, errb.String())
	}
	if code, _, _ := runHearth(t, env, "auth", "rm", "vllm"); code != 0 {
		t.Errorf("rm: %d", code)
	}
	if _, err := s.Get("vllm"); err == nil {
		t.Error("still there")
	}
}
