package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// builtDir holds the binary built for the tests ("" until built); it is
// written once, by binary, before any test reads it from TestMain.
var builtDir string

// binary builds hearth once for the end-to-end tests.
var binary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "hearth-e2e-bin-")
	if err != nil {
		return "", err
	}
	builtDir = dir
	bin := filepath.Join(dir, "hearth")
	// Static, as the README installs it (CGO_ENABLED=0).
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", &buildError{string(out), err}
	}
	return bin, nil
})

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// e2e is a sandboxed hearth: its own HEARTH_HOME, workspace and fake server.
type e2e struct {
	t    *testing.T
	bin  string
	home string
	ws   string
	srv  *llmtest.Server
	// serveFor is how long a served hearth may live before it is killed
	// (default 60 s).
	serveFor time.Duration
}

func newE2E(t *testing.T) *e2e {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin, err := binary()
	if err != nil {
		t.Fatal(err)
	}
	e := &e2e{t: t, bin: bin, home: t.TempDir(), ws: t.TempDir(), srv: llmtest.New(t)}
	e.srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	return e
}

func (e *e2e) cmd(ctx context.Context, stdin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.bin, append([]string{"-m", "m", "-w", e.ws}, args...)...)
	cmd.Env = append(os.Environ(), "HEARTH_HOME="+e.home, "OLLAMA_HOST="+e.srv.URL, "NO_COLOR=1")
	cmd.Stdin = strings.NewReader(stdin)
	if stdin == "" {
		cmd.Stdin = nil
	}
	return cmd
}

// run runs hearth to the end and returns its exit code and output.
func (e *e2e) run(stdin string, args ...string) (int, string, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.cmd(ctx, stdin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Run()
	return cmd.ProcessState.ExitCode(), out.String(), errb.String()
}

func (e *e2e) store() *session.SQLite {
	st, err := session.Open(context.Background(), filepath.Join(e.home, "hearth.db"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { st.Close() })
	return st
}

func TestE2ETwoStepContextScript(t *testing.T) {
	e := newE2E(t)
	os.WriteFile(filepath.Join(e.ws, "error.log"), []byte("panic: assignment to entry in nil map\n"), 0o644)
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"error.log"}`)),
		llmtest.OllamaStream("m", llmtest.Text("The map `m` is never initialised.")),
		llmtest.OllamaStream("m", llmtest.Text("Initialise it with make(map[string]int).")))
	code, out, errOut := e.run("", "run", "--context=s1", "analyze error.log")
	if code != 0 || out != "The map `m` is never initialised.\n" {
		t.Fatalf("step 1: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	code, out, errOut = e.run("", "run", "--context=s1", "fix the error")
	if code != 0 || out != "Initialise it with make(map[string]int).\n" {
		t.Fatalf("step 2: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	reqs := e.srv.RequestsTo("/api/chat")
	if len(reqs) != 3 {
		t.Errorf("%d model requests: a headless run asks for no title", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	reqs[len(reqs)-1].JSON(t, &body)
	var got []string
	for _, m := range body.Messages {
		got = append(got, m.Role)
	}
	if strings.Join(got, ",") != "system,user,assistant,tool,assistant,user" || !strings.Contains(body.Messages[3].Content, "nil map") {
		t.Errorf("step 2 sent %v", got)
	}
	s, _ := e.store().Get(context.Background(), "s1")
	if s.Title != "analyze error.log" || s.MessageCount != 6 {
		t.Errorf("session: %+v", s)
	}
	code, out, _ = e.run("", "sessions", "list")
	if code != 0 || !strings.Contains(out, "s1") || !strings.Contains(out, "analyze error.log") {
		t.Errorf("sessions list: %d\n%s", code, out)
	}
	code, out, _ = e.run("", "sessions", "export", "s1", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "## You\n\nfix the error") || !strings.Contains(out, "calls `read_file`") {
		t.Errorf("export markdown:\n%s", out)
	}
	code, out, _ = e.run("", "sessions", "export", "s1")
	var exp struct {
		Messages []session.Message `json:"messages"`
		ToolRuns []session.ToolRun `json:"tool_runs"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Messages) != 6 || len(exp.ToolRuns) != 1 {
		t.Errorf("export json: %d\n%s", code, out)
	}
	if code, _, _ := e.run("", "sessions", "rm", "s1"); code != 0 {
		t.Errorf("rm: %d", code)
	}
	if code, _, errOut := e.run("", "sessions", "show", "s1"); code != 1 || !strings.Contains(errOut, `no session "s1"`) {
		t.Errorf("show after rm: %d %s", code, errOut)
	}
}

func TestE2EOutputFormats(t *testing.T) {
	e := newE2E(t)
	reply := func() llmtest.Scenario {
		// A realistic prompt count: the system prompt and tools are ~1,400
		// tokens (a smaller count would rightly be flagged as a cut prompt).
		return llmtest.OllamaStream("m", llmtest.Thinking("hmm"), llmtest.Text("Four."), llmtest.Usage(1600, 3))
	}
	e.srv.Always("/api/chat", reply())

	code, out, errOut := e.run("", "run", "2+2?")
	if code != 0 || out != "Four.\n" || errOut != "" {
		t.Errorf("text: %d %q %q", code, out, errOut)
	}
	code, out, errOut = e.run("", "run", "--verbose", "2+2?")
	if code != 0 || out != "Four.\n" || !strings.Contains(errOut, "[thinking] hmm") {
		t.Errorf("text --verbose: %d %q %q", code, out, errOut)
	}
	code, out, _ = e.run("", "-p", "2+2?", "--output-format", "json")
	var j jsonResult
	if code != 0 || json.Unmarshal([]byte(out), &j) != nil || j.Response != "Four." || j.Usage.InputTokens != 1600 || j.Error != nil || !strings.HasPrefix(j.SessionID, "s-") {
		t.Errorf("json: %d\n%s", code, out)
	}
	code, out, _ = e.run("", "run", "--output-format", "stream-json", "2+2?")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var types []string
	for _, l := range lines {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		types = append(types, ev["type"].(string))
	}
	if code != 0 || strings.Join(types, " ") != "session thinking_start thinking_delta thinking_end text_delta usage done" {
		t.Errorf("stream-json: %d %v", code, types)
	}

	// Piped standard input is context.
	e.run("cat: error: permission denied\n", "run", "explain this")
	reqs := e.srv.RequestsTo("/api/chat")
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "explain this") || !strings.Contains(last, "permission denied") {
		t.Errorf("stdin not in the prompt: %s", last)
	}
}

func TestE2EExitCodes(t *testing.T) {
	e := newE2E(t)
	// (With --tool-mode native a refusal of tools is an error; in auto
	// mode the request is sent again, prompted: TestPromptedProtocol.)
	e.srv.Enqueue("/api/chat", llmtest.OllamaError(400, "registry.ollama.ai/library/m does not support tools"))
	code, _, errOut := e.run("", "--tool-mode", "native", "run", "hi")
	if code != 1 || !strings.Contains(errOut, "does not support tools") || !strings.Contains(errOut, "--tool-mode") {
		t.Errorf("provider error: %d %q", code, errOut)
	}
	for _, args := range [][]string{{"run", "--output-format", "xml", "hi"}, {"run"}, {"run", "--approval-mode", "reckless", "hi"}} {
		if code, _, errOut := e.run("", args...); code != 2 {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	// A turn limit is a failure.
	e.srv.Always("/api/chat", llmtest.OllamaStream("m", llmtest.Call("list_directory", `{}`)))
	if code, _, errOut := e.run("", "run", "--max-turns", "2", "look around"); code != 1 || !strings.Contains(errOut, "turn limit") {
		t.Errorf("max turns: %d %q", code, errOut)
	}
}

func TestE2EProviderDiesMidAnswer(t *testing.T) {
	e := newE2E(t)
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("The answer is 4"), llmtest.Cut()))
	code, out, errOut := e.run("", "run", "--context", "s1", "2+2?")
	if code != 1 || !strings.Contains(errOut, "before the reply was complete") {
		t.Errorf("exit %d %q %q", code, out, errOut)
	}
	msgs, _ := e.store().Messages(context.Background(), "s1")
	if len(msgs) != 3 || msgs[0].Content != "2+2?" || msgs[1].Content != "The answer is 4" || !msgs[1].Partial || !msgs[2].Failure {
		t.Errorf("stored: %+v", msgs)
	}
	// Something was answered: the way on is a new message.
	if !strings.Contains(errOut, "hearth: session s1 keeps what happened; continue it with: hearth run --context s1 --model m --workspace "+e.ws+" \"…\"\n") {
		t.Errorf("stderr %q", errOut)
	}
}

// interrupt starts hearth, waits until ready() says the moment has come,
// sends SIGINT and returns the exit code.
// interrupt starts hearth, sends it Ctrl-C (SIGINT) once ready says so
// (given what hearth has printed on stdout so far), and returns its exit
// code and stderr. A hearth that ignored the signal would run into the
// 60 s limit and be killed (exit code -1), which the callers' check of the
// code 130 catches: how soon it stops is not asserted.
func (e *e2e) interrupt(ready func(stdout string) bool, args ...string) (int, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := e.cmd(ctx, "", args...)
	var errb bytes.Buffer
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, &errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	waitUntil(e.t, func() bool { return ready(out.String()) })
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), errb.String()
}

// lockedBuffer is a buffer one goroutine writes while another reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestE2ECtrlCDuringStream(t *testing.T) {
	e := newE2E(t)
	sc := llmtest.OllamaStream("m", llmtest.Text("partial answer"))
	sc.Chunks = sc.Chunks[:1]
	sc.Hang = true
	e.srv.Enqueue("/api/chat", sc)
	// Ctrl-C once hearth has the first piece of the reply (its text_delta
	// event is out; stream-json shows it as it comes, text mode only at
	// the end): what was streamed must be kept. That the request was sent
	// is not enough: the piece may still be on its way, and a reply none of
	// which came is rightly not stored.
	code, errOut := e.interrupt(func(out string) bool {
		return strings.Contains(out, `"type":"text_delta"`) && strings.Contains(out, "partial answer")
	}, "run", "--context", "s1", "--output-format", "stream-json", "go")
	if code != 130 {
		t.Errorf("exit %d %q", code, errOut)
	}
	waitUntil(t, func() bool { return e.srv.ClientsGone() > 0 })
	msgs, _ := e.store().Messages(context.Background(), "s1")
	if len(msgs) != 2 || msgs[1].Content != "partial answer" || !msgs[1].Partial {
		t.Errorf("stored: %+v", msgs)
	}
}

func TestE2ECtrlCDuringTool(t *testing.T) {
	e := newE2E(t)
	marker := filepath.Join(e.ws, "started")
	// The command waits for a release file, made only once hearth has
	// exited: if it were still running then, it would write "finished".
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Call("run_shell_command",
		`{"command":"touch started; while [ ! -e release ]; do sleep 0.02; done; touch finished"}`)))
	code, errOut := e.interrupt(func(string) bool { _, err := os.Stat(marker); return err == nil },
		"run", "--context", "s1", "--approval-mode", "yolo", "--trust", "trusted", "go")
	if code != 130 {
		t.Errorf("exit %d %q", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(e.ws, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A loop still running sees the release within 20 ms; a second is
	// plenty even on a loaded machine (a slow machine can only make this
	// pass when it should fail, never the reverse).
	for range 50 {
		if _, err := os.Stat(filepath.Join(e.ws, "finished")); err == nil {
			t.Fatal("the command kept running after Ctrl-C")
		}
		time.Sleep(20 * time.Millisecond)
	}
	msgs, _ := e.store().Messages(context.Background(), "s1")
	if len(msgs) != 3 || msgs[2].Role != "tool" || !strings.Contains(msgs[2].Content, "cancel") {
		t.Errorf("stored: %+v", msgs)
	}
}

func TestE2EBusySession(t *testing.T) {
	e := newE2E(t)
	sc := llmtest.OllamaStream("m", llmtest.Text("slow"))
	sc.Chunks = sc.Chunks[:1]
	sc.Hang = true
	e.srv.Enqueue("/api/chat", sc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := e.cmd(ctx, "", "run", "--context", "s1", "first")
	first.Start()
	defer first.Wait()
	waitUntil(t, func() bool { return len(e.srv.RequestsTo("/api/chat")) > 0 })
	// The first holds the session until it is interrupted, which is only
	// after the second has returned: a second that waited for the session
	// instead of refusing it would run into its 60 s limit (exit -1).
	code, _, errOut := e.run("", "run", "--context", "s1", "second")
	if code != 1 || !strings.Contains(errOut, "is being used by another hearth process (pid") {
		t.Errorf("second: exit %d %q", code, errOut)
	}
	first.Process.Signal(syscall.SIGINT)
	first.Wait()
	msgs, _ := e.store().Messages(context.Background(), "s1")
	for _, m := range msgs {
		if m.Content == "second" {
			t.Error("the refused turn wrote its message")
		}
	}
}

func TestE2ECompression(t *testing.T) {
	e := newE2E(t)
	e.srv.AddModel(llmtest.Model{Name: "small", Capabilities: []string{"completion", "tools"}, ContextLength: 4096, NumCtx: 4096})
	big := strings.Repeat("a line of the log that matters\n", 300) // ~2,300 tokens
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("small", llmtest.Text("The log repeats one line.")),
		llmtest.OllamaWhole("small", llmtest.Text("Log repeats")),
		llmtest.OllamaWhole("small", llmtest.Text("- the user showed a log that repeats one line")),
		llmtest.OllamaStream("small", llmtest.Text("Yes, nothing else.")))
	if code, _, errOut := e.run(big, "-m", "small", "run", "--context", "s1", "what is in this log?"); code != 0 {
		t.Fatalf("turn 1: %d %s", code, errOut)
	}
	code, out, errOut := e.run("", "-m", "small", "run", "--context", "s1", "--output-format", "stream-json", "is that all?")
	if code != 0 || !strings.Contains(out, `"type":"compressed"`) {
		t.Fatalf("turn 2: %d\n%s\n%s", code, out, errOut)
	}
	reqs := e.srv.RequestsTo("/api/chat")
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "Summary of the earlier conversation") || strings.Contains(last, "a line of the log that matters") {
		t.Errorf("the last request did not replace the old turn by its summary")
	}
	msgs, _ := e.store().Messages(context.Background(), "s1")
	compacted := 0
	for _, m := range msgs {
		if m.Compacted {
			compacted++
		}
	}
	if compacted != 1 { // the big first message; the short answer fits in what is kept
		t.Errorf("%d messages compacted in the store", compacted)
	}
}

func TestE2EJSONFailures(t *testing.T) {
	e := newE2E(t)
	// A usage error in json mode still prints JSON on stdout.
	code, out, _ := e.run("", "run", "--output-format", "json", "--max-turns", "many", "hi")
	var j jsonResult
	if code != 2 || json.Unmarshal([]byte(out), &j) != nil || j.Error == nil || j.Error.Code != "usage" {
		t.Errorf("usage: %d %q", code, out)
	}
	// The turn limit is an error in the JSON as well as in the exit code.
	e.srv.Always("/api/chat", llmtest.OllamaStream("m", llmtest.Call("list_directory", `{}`)))
	code, out, _ = e.run("", "run", "--output-format", "json", "--max-turns", "1", "look")
	j = jsonResult{}
	if code != 1 || json.Unmarshal([]byte(out), &j) != nil || j.Error == nil || j.Error.Code != "max_turns" {
		t.Errorf("max turns: %d %q", code, out)
	}
	// HEARTH_MAX_TURNS is the flag's default.
	cmd := e.cmd(context.Background(), "", "run", "--output-format", "stream-json", "look")
	cmd.Env = append(cmd.Env, "HEARTH_MAX_TURNS=1")
	b, _ := cmd.Output()
	if !strings.Contains(string(b), `"reason":"max_turns"`) {
		t.Errorf("HEARTH_MAX_TURNS: %s", b)
	}
	if code, _, errOut := e.run("", "run", "--context", "a", "--session", "b", "hi"); code != 2 || !strings.Contains(errOut, "disagree") {
		t.Errorf("--context/--session: %d %q", code, errOut)
	}
}

func TestE2EBusySessionInStreamJSON(t *testing.T) {
	e := newE2E(t)
	st := e.store()
	st.LockTimeout = time.Second
	unlock, err := st.Lock(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	code, out, _ := e.run("", "run", "--context", "s1", "--output-format", "stream-json", "hi")
	if code != 1 || !strings.Contains(out, `"type":"error","code":"session_busy"`) || !strings.Contains(out, `"type":"done","reason":"error"`) {
		t.Errorf("%d %q", code, out)
	}
}

func TestE2ESilentPipeDoesNotHang(t *testing.T) {
	e := newE2E(t)
	e.srv.Always("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok"), llmtest.Usage(1600, 1)))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.cmd(ctx, "", "run", "hi")
	w, _ := cmd.StdinPipe() // open, never written, never closed
	defer w.Close()
	out, err := cmd.Output()
	if err != nil || string(out) != "ok\n" {
		t.Errorf("%q %v", out, err)
	}
}

func TestE2ESigtermExits143(t *testing.T) {
	e := newE2E(t)
	sc := llmtest.OllamaStream("m", llmtest.Text("partial"))
	sc.Chunks = sc.Chunks[:1]
	sc.Hang = true
	e.srv.Enqueue("/api/chat", sc)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.cmd(ctx, "", "run", "--context", "s1", "go")
	cmd.Start()
	waitUntil(t, func() bool { return len(e.srv.RequestsTo("/api/chat")) > 0 })
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Errorf("exit %d", code)
	}
}

func TestE2ENoStoreOnAFreshMachine(t *testing.T) {
	e := newE2E(t)
	code, out, errOut := e.run("", "sessions", "list")
	if code != 0 || out != "" || !strings.Contains(errOut, "No sessions yet") {
		t.Errorf("%d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.home, "hearth.db")); err == nil {
		t.Error("listing sessions created a database")
	}
}

// TestMain removes the binary the end-to-end tests built, if they did,
// and stops the PostgreSQL server of the tests that use one (pgtest).
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}
