package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// runEnv is a fake Ollama serving model "m", a HEARTH_HOME and a workspace,
// for in-process runs of `hearth run`.
type runEnv struct {
	srv *llmtest.Server
	env map[string]string
	ws  string
}

func newRunEnv(t *testing.T) *runEnv {
	t.Helper()
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 32768})
	return &runEnv{srv: srv, env: map[string]string{"HEARTH_HOME": t.TempDir(), "OLLAMA_HOST": srv.URL}, ws: t.TempDir()}
}

func (r *runEnv) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runHearth(t, r.env, append([]string{"-m", "m", "-w", r.ws}, args...)...)
}

// hostile holds what a model steered by prompt injection writes to attack
// the terminal: a clipboard write (OSC 52), a window title (OSC 0 and 2), a
// screen clear and cursor home, a hyperlink whose target is not its text,
// a right-to-left override. The answer is streamed in pieces that cut every
// sequence in two.
var hostile = struct {
	parts []string
	raw   string // the pieces joined: what json output keeps
	text  string // what text output shows
}{
	parts: []string{
		"Done.\x1b]52;c;",
		"cm0gLXJmIH4K\x07 The \x1b]0;",
		"pwned\x07build \x1b]2;sudo\x1b",
		"\\\x1b[2",
		"J\x1b[Hpasses: see \x1b]8;;https://evil.example/\x1b\\the log\x1b]8;;\x1b\\.\u202e",
	},
	text: "Done. The build passes: see the log.[U+202E]\n",
}

func init() { hostile.raw = strings.Join(hostile.parts, "") }

func hostileAnswer() llmtest.Scenario {
	var parts []llmtest.Part
	for _, p := range hostile.parts {
		parts = append(parts, llmtest.Text(p))
	}
	return llmtest.OllamaStream("m", append(parts, llmtest.Usage(1600, 20))...)
}

// noControls fails if s holds an escape, BEL or any control a terminal
// would act on.
func noControls(t *testing.T, what, s string) {
	t.Helper()
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			t.Errorf("%s holds %U: %q", what, r, s)
			return
		}
	}
}

func TestRunTextStripsControlSequences(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Enqueue("/api/chat", hostileAnswer())
	code, out, errOut := r.run(t, "run", "--context", "s1", "Build \x1b]0;t\x07fixed\x1b[2J")
	if code != 0 || out != hostile.text || errOut != "" {
		t.Errorf("text: exit %d\nstdout %q\nwant   %q\nstderr %q", code, out, hostile.text, errOut)
	}

	// The session's title (from the prompt here; a model's in the terminal
	// UI) is stripped where it is shown; so is the stored answer.
	code, out, _ = r.run(t, "sessions", "list")
	if code != 0 || !strings.Contains(out, "Build fixed") {
		t.Errorf("sessions list: %d %q", code, out)
	}
	noControls(t, "sessions list", out)
	code, out, _ = r.run(t, "sessions", "show", "s1")
	if code != 0 || !strings.Contains(out, "# Build fixed\n") || !strings.Contains(out, "Done. The build passes") {
		t.Errorf("sessions show: %d %q", code, out)
	}
	noControls(t, "sessions show", out)
	// JSON exports are exact.
	code, out, _ = r.run(t, "sessions", "export", "s1")
	var exp struct {
		Session  struct{ Title string }
		Messages []struct{ Content string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || exp.Session.Title != "Build \x1b]0;t\x07fixed\x1b[2J" || exp.Messages[1].Content != hostile.raw {
		t.Errorf("sessions export: %d %q", code, out)
	}
}

func TestRunJSONKeepsTextExact(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Always("/api/chat", hostileAnswer())

	code, out, errOut := r.run(t, "run", "-o", "json", "did the build pass?")
	var j jsonResult
	if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil || j.Response != hostile.raw {
		t.Errorf("json: exit %d %v\n%s\n%s", code, err, out, errOut)
	}

	code, out, _ = r.run(t, "run", "-o", "stream-json", "did the build pass?")
	var text strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if ev.Type == "text_delta" {
			text.WriteString(ev.Text)
		}
		if ev.Type == "done" && ev.Text != hostile.raw {
			t.Errorf("done.text %q", ev.Text)
		}
	}
	if code != 0 || text.String() != hostile.raw {
		t.Errorf("stream-json: exit %d, text %q", code, text.String())
	}
}

func TestRunVerboseStripsControlSequences(t *testing.T) {
	r := newRunEnv(t)
	os.WriteFile(filepath.Join(r.ws, "notes.txt"), []byte("\x1b]52;c;ZXZpbA==\x07hello\x1b[2J from the file\r\n"), 0o644)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Thinking("I will \x1b]0;"), llmtest.Thinking("x\x07read it\x08\x08"),
			llmtest.Call("read_file", `{"file_path":"notes.txt"}`), llmtest.Call("read_file", "{\"file_path\":\"\u009b2Jtxt.\u202eexe\"}")),
		llmtest.OllamaStream("m", llmtest.Text("It says \x1b[31mhello\x1b[0m."), llmtest.Usage(1600, 5)),
		llmtest.OllamaWhole("m", llmtest.Text("Notes")))
	code, out, errOut := r.run(t, "run", "--verbose", "--approval-mode", "yolo", "--trust", "trusted", "what is in notes.txt?")
	if code != 0 || out != "It says hello.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	noControls(t, "stderr", errOut)
	for _, want := range []string{"[thinking] I will read it\n", "[tool] read_file notes.txt\n", "[tool] read_file 2Jtxt.[U+202E]exe\n", "  ok: hello from the file\n", "  failed: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

func TestRunErrorQuotingTheServerIsStripped(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Always("/api/chat", llmtest.OllamaError(500, "model runner crashed \x1b]0;pwned\x07\x1b[2Jbadly"))
	code, _, errOut := r.run(t, "run", "hi")
	if code != exitFailed || !strings.Contains(errOut, "model runner crashed badly") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	noControls(t, "stderr", errOut)
}

// stall is a reply that sends a first piece of the answer and then
// nothing, until the client goes away.
func stall() llmtest.Scenario {
	sc := llmtest.OllamaStream("m", llmtest.Text("partial answer"))
	sc.Chunks = sc.Chunks[:1]
	sc.Hang = true
	return sc
}

func TestRunTimeout(t *testing.T) {
	const msg = "stopped: the run reached its time limit (--timeout 300ms); raise --timeout to give it longer"
	r := newRunEnv(t)
	r.srv.Always("/api/chat", stall())

	code, out, errOut := r.run(t, "run", "--context", "s1", "--timeout", "300ms", "hi")
	if code != exitFailed || out != "partial answer\n" || !strings.HasPrefix(errOut, "hearth: "+msg+" (session s1 keeps what happened") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("text: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	code, out, _ = r.run(t, "-p", "hi", "--timeout", "300ms", "-o", "json")
	var j jsonResult
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != exitFailed || j.Reason != "cancelled" || j.Error == nil || j.Error.Code != "timeout" || !strings.HasPrefix(j.Error.Message, msg) {
		t.Errorf("json: exit %d\n%s", code, out)
	}

	code, out, _ = r.run(t, "run", "--timeout", "300ms", "-o", "stream-json", "hi")
	var types []string
	var last []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		types = append(types, ev["type"].(string))
		last = append(last, ev)
	}
	if n := len(last); code != exitFailed || n < 2 || strings.Join(types, " ") != "session text_delta error done" ||
		last[n-2]["code"] != "timeout" || !strings.HasPrefix(last[n-2]["message"].(string), msg) || last[n-2]["retryable"] != false ||
		last[n-1]["reason"] != "cancelled" || last[n-1]["text"] != "partial answer" {
		t.Errorf("stream-json: exit %d\n%s", code, out)
	}

	// From the environment, the message names the variable.
	r.env["HEARTH_TIMEOUT"] = "300ms"
	code, _, errOut = r.run(t, "run", "hi")
	if code != exitFailed || !strings.Contains(errOut, "time limit (HEARTH_TIMEOUT=300ms); raise HEARTH_TIMEOUT, or pass a longer --timeout") {
		t.Errorf("HEARTH_TIMEOUT: exit %d %q", code, errOut)
	}
}

// TestRunTimeoutBeforeTheTurn: the limit comes while Hearth is still
// asking the server about the model, before the turn begins.
func TestRunTimeoutBeforeTheTurn(t *testing.T) {
	const msg = "stopped: the run reached its time limit (--timeout 300ms); raise --timeout to give it longer"
	r := newRunEnv(t)
	r.srv.Always("/api/show", llmtest.Scenario{HeaderDelay: time.Hour})
	r.srv.Always("/api/chat", stall())
	code, _, errOut := r.run(t, "run", "--timeout", "300ms", "hi")
	if code != exitFailed || errOut != "hearth: "+msg+"\n" {
		t.Errorf("text: exit %d %q", code, errOut)
	}
	code, out, _ := r.run(t, "run", "--timeout", "300ms", "-o", "stream-json", "hi")
	if code != exitFailed || !strings.Contains(out, `{"type":"error","code":"timeout","message":"`+msg) || !strings.HasSuffix(out, `{"type":"done","reason":"cancelled","text":""}`+"\n") {
		t.Errorf("stream-json: exit %d %q", code, out)
	}
}

// TestRunInterruptIsNotATimeout: Ctrl-C during a run with a time limit is
// an interrupt (130), with no timeout error.
func TestRunInterruptIsNotATimeout(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Always("/api/chat", stall())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		waitUntil(t, func() bool { return len(r.srv.RequestsTo("/api/chat")) > 0 })
		cancel()
	}()
	var out, errb bytes.Buffer
	code := run(ctx, []string{"-m", "m", "-w", r.ws, "run", "--timeout", "1h", "-o", "stream-json", "hi"},
		stdio{in: strings.NewReader(""), out: &out, err: &errb}, func(k string) string { return r.env[k] })
	if code != exitInterrupted || strings.Contains(out.String(), "timeout") || !strings.Contains(out.String(), `"reason":"cancelled"`) {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}
}

func TestAPIKeyFlagWarns(t *testing.T) {
	srv := fakeOllama(t)
	const warning = "hearth: warning: a key given with --api-key can be read by every process on this machine"
	code, _, errOut := runHearth(t, map[string]string{"OLLAMA_HOST": srv.URL}, "--api-key", "sk-secret", "models")
	if code != 0 || strings.Count(errOut, warning) != 1 || !strings.Contains(errOut, "HEARTH_API_KEY") || !strings.Contains(errOut, "api_key_env") || strings.Contains(errOut, "sk-secret") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runHearth(t, map[string]string{"OLLAMA_HOST": srv.URL, "HEARTH_API_KEY": "sk-secret"}, "models")
	if code != 0 || errOut != "" {
		t.Errorf("from the environment: exit %d, stderr %q", code, errOut)
	}
}

func TestListsStripServerText(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "evil\x1b]0;pwned\x07:latest", Capabilities: []string{"completion"}, ContextLength: 4096})
	code, out, _ := runHearth(t, map[string]string{"OLLAMA_HOST": srv.URL}, "models")
	if code != 0 || !strings.Contains(out, "evil:latest") {
		t.Errorf("models: %d %q", code, out)
	}
	noControls(t, "models", out)
	code, out, _ = runHearth(t, map[string]string{"OLLAMA_HOST": srv.URL}, "models", "--json")
	if code != 0 || !strings.Contains(out, `evil\u001b]0;pwned\u0007:latest`) {
		t.Errorf("models --json: %d %q", code, out)
	}
}
