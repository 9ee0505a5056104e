package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

const pullDigest = "sha256:163553aea1b1de62de7c5eb2ef5afb756b4b3133308d9ae7e42e951d8d696ef5"

// pullScenario is Ollama's /api/pull stream for a model of one 2.5 GB
// layer, cut short by an error after the layer's first half when errMsg is
// set.
func pullScenario(errMsg string) llmtest.Scenario {
	lines := []string{`{"status":"pulling manifest"}`,
		fmt.Sprintf(`{"status":"pulling 163553aea1b1","digest":"%s","total":2497279808}`, pullDigest),
		fmt.Sprintf(`{"status":"pulling 163553aea1b1","digest":"%s","total":2497279808,"completed":1248639904}`, pullDigest)}
	if errMsg != "" {
		lines = append(lines, `{"error":"`+errMsg+`"}`)
	} else {
		lines = append(lines, fmt.Sprintf(`{"status":"pulling 163553aea1b1","digest":"%s","total":2497279808,"completed":2497279808}`, pullDigest),
			`{"status":"verifying sha256 digest"}`, `{"status":"writing manifest"}`, `{"status":"success"}`)
	}
	return llmtest.NDJSON(lines...)
}

// freshOllama is an Ollama with no models that pulls qwen3:4b.
func freshOllama(t *testing.T) *llmtest.Server {
	srv := llmtest.New(t)
	srv.Respond("/api/pull", func(r llmtest.Request) (llmtest.Scenario, bool) {
		srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 40960})
		return pullScenario(""), true
	})
	return srv
}

// syncBuffer is a buffer written by the command while the test reads it;
// seen is closed once it holds mark.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	mark string
	seen chan struct{}
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if s.seen != nil && s.mark != "" && strings.Contains(s.b.String(), s.mark) {
		close(s.seen)
		s.seen = nil
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// doctorOnTerminal runs hearth with stdin and stderr on a (pretended)
// terminal; stdout is not one.
func doctorOnTerminal(ctx context.Context, t *testing.T, env map[string]string, in io.Reader, errw io.Writer, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	a := &app{io: stdio{in: in, out: &out, err: errw}, getenv: func(k string) string { return env[k] },
		isTTY: func(w io.Writer) bool { return w == errw }, isTTYIn: func(io.Reader) bool { return true }}
	root := a.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}

func doctorEnv(t *testing.T, srv *llmtest.Server) map[string]string {
	return map[string]string{"OLLAMA_HOST": srv.URL, "HEARTH_HOME": t.TempDir(), "HEARTH_NO_KEYRING": "1"}
}

// The window is compared with what the run sends: the default prompt, the
// project's notes and the tools.
func TestDoctorPromptWindow(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "small:2k", Capabilities: []string{"completion", "tools"}, ContextLength: 40960, NumCtx: 2048})
	env := doctorEnv(t, srv)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(strings.Repeat("Use tabs. ", 200)), 0o644)

	code, out, _ := runHearth(t, env, "doctor", "-m", "small:2k", "-w", ws, "--no-chat")
	if code != exitFailed || !strings.Contains(out, "✗ prompt") || !strings.Contains(out, "of 2k tokens before your first message") ||
		!strings.Contains(out, "with AGENTS.md 0.5k") || !strings.Contains(out, "tools") || !strings.Contains(out, "HEARTH_NUM_CTX=8192") {
		t.Errorf("does not fit: exit %d\n%s", code, out)
	}

	env["HEARTH_NUM_CTX"] = "16384"
	code, out, _ = runHearth(t, env, "doctor", "-m", "small:2k", "-w", ws, "--no-chat", "--json")
	var r struct {
		Ready         bool
		PromptTokens  int `json:"prompt_tokens"`
		ContextLength int `json:"context_length"`
		Checks        []struct{ Name, Status, Detail string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != 0 || !r.Ready || r.ContextLength != 16384 || r.PromptTokens < 1000 || r.PromptTokens > 4000 {
		t.Fatalf("HEARTH_NUM_CTX=16384: exit %d, %v\n%s", code, err, out)
	}
	for _, c := range r.Checks {
		if c.Name == "prompt" && (c.Status != "ok" || !strings.Contains(c.Detail, "of 16k tokens")) {
			t.Errorf("prompt with a 16k window: %+v", c)
		}
	}
}

// On a terminal, a missing model is offered; yes pulls it with a bar, and
// the model is checked again.
func TestDoctorPullAsks(t *testing.T) {
	srv := freshOllama(t)
	errw := &syncBuffer{}
	out, err := doctorOnTerminal(context.Background(), t, doctorEnv(t, srv), strings.NewReader("\n"), errw, "doctor", "-m", "qwen3:4b", "--no-chat")
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errw)
	}
	stderr := errw.String()
	if !strings.Contains(stderr, "qwen3:4b is not on the Ollama server at "+srv.URL+".\nPull qwen3:4b from Ollama now? [Y/n] ") ||
		!strings.Contains(stderr, "▕") || !strings.Contains(stderr, "100%") || !strings.HasSuffix(stderr, "\r\033[K") {
		t.Errorf("stderr: %q", stderr)
	}
	var body map[string]any
	srv.RequestsTo("/api/pull")[0].JSON(t, &body)
	if body["model"] != "qwen3:4b" {
		t.Errorf("pulled %v", body)
	}
	if !strings.Contains(out, "✓ pull") || !strings.Contains(out, "qwen3:4b pulled from Ollama's registry (2.5 GB in ") ||
		!strings.Contains(out, "✓ model     qwen3:4b is on the server") || !strings.Contains(out, "✓ prompt") || !strings.Contains(out, "Ready") ||
		strings.Index(out, "pull") > strings.Index(out, "✓ model ") {
		t.Errorf("report after the pull:\n%s", out)
	}
}

func TestDoctorPullDeclined(t *testing.T) {
	srv := freshOllama(t)
	errw := &syncBuffer{}
	out, err := doctorOnTerminal(context.Background(), t, doctorEnv(t, srv), strings.NewReader("n\n"), errw, "doctor", "-m", "qwen3:4b")
	if !errors.Is(err, errNotReady) || len(srv.RequestsTo("/api/pull")) != 0 {
		t.Fatalf("%v, %d pulls", err, len(srv.RequestsTo("/api/pull")))
	}
	if !strings.Contains(out, "✗ model") || !strings.Contains(out, "add --pull to this command, or run `ollama pull qwen3:4b`") {
		t.Errorf("report:\n%s", out)
	}
}

// Not on a terminal: no question, the report says how; --pull pulls with
// plain progress lines.
func TestDoctorPullNonInteractive(t *testing.T) {
	srv := freshOllama(t)
	env := doctorEnv(t, srv)
	code, out, stderr := runHearth(t, env, "doctor", "-m", "qwen3:4b", "--no-chat")
	if code != exitFailed || strings.Contains(stderr, "[Y/n]") || len(srv.RequestsTo("/api/pull")) != 0 ||
		!strings.Contains(out, "add --pull to this command") {
		t.Errorf("without --pull: exit %d\n%s\n%s", code, out, stderr)
	}

	code, out, stderr = runHearth(t, env, "doctor", "-m", "qwen3:4b", "--no-chat", "--pull")
	if code != 0 || !strings.Contains(out, "✓ pull") || !strings.Contains(out, "Ready") {
		t.Errorf("--pull: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.ContainsAny(stderr, "\r\033") || !strings.Contains(stderr, "qwen3:4b: pulling manifest\n") ||
		!strings.Contains(stderr, "qwen3:4b: pulling 163553aea1b1 (2.5 GB)\n") || !strings.Contains(stderr, "qwen3:4b: success\n") {
		t.Errorf("plain progress: %q", stderr)
	}
}

// A pull that fails midway says why and what to do; the model stays
// missing.
func TestDoctorPullFails(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/pull", pullScenario("max retries exceeded: read tcp 192.168.1.20:51234->172.66.0.235:443: read: connection reset by peer"))
	code, out, _ := runHearth(t, doctorEnv(t, srv), "doctor", "-m", "qwen3:4b", "--pull")
	if code != exitFailed || !strings.Contains(out, "✗ pull") || !strings.Contains(out, "pulling qwen3:4b failed: max retries exceeded") ||
		!strings.Contains(out, "could not reach its registry") || !strings.Contains(out, "✗ model") ||
		strings.Index(out, "✗ pull") < strings.Index(out, "✗ model") || strings.Contains(out, "add --pull") {
		t.Errorf("exit %d\n%s", code, out)
	}

	srv.Enqueue("/api/pull", llmtest.OllamaError(400, "invalid model name"))
	code, out, _ = runHearth(t, doctorEnv(t, srv), "doctor", "-m", "qwen3::4b", "--pull")
	if code != exitFailed || !strings.Contains(out, "✗ pull") || !strings.Contains(out, "ollama.com/library") {
		t.Errorf("bad name: exit %d\n%s", code, out)
	}
}

// Ctrl-C during the download, or at the question, stops cleanly.
func TestDoctorPullInterrupted(t *testing.T) {
	srv := llmtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv.Respond("/api/pull", func(llmtest.Request) (llmtest.Scenario, bool) {
		sc := pullScenario("")
		sc.Chunks = sc.Chunks[:3]
		sc.Hang = true // the download goes on…
		cancel()       // …when the user presses Ctrl-C
		return sc, true
	})
	var out, errb bytes.Buffer
	env := doctorEnv(t, srv)
	code := run(ctx, []string{"doctor", "-m", "qwen3:4b", "--pull"}, stdio{in: strings.NewReader(""), out: &out, err: &errb}, func(k string) string { return env[k] })
	if code != exitInterrupted || out.Len() != 0 || !strings.Contains(errb.String(), "the same command resumes it\nhearth: interrupted") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out.String(), errb.String())
	}
	waitUntil(t, func() bool { return srv.ClientsGone() > 0 }) // the server saw the client go: Ollama stops downloading

	// At the question: nobody answers, Ctrl-C.
	srv2 := freshOllama(t)
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	asked := make(chan struct{})
	errw := &syncBuffer{mark: "[Y/n]", seen: asked}
	go func() {
		<-asked
		cancel2()
	}()
	stdin, typing := io.Pipe() // a terminal nobody types on
	defer typing.Close()
	_, err := doctorOnTerminal(ctx2, t, doctorEnv(t, srv2), stdin, errw, "doctor", "-m", "qwen3:4b")
	if !errors.Is(err, context.Canceled) || len(srv2.RequestsTo("/api/pull")) != 0 {
		t.Errorf("at the question: %v", err)
	}
}
