package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// say runs hearth in the run environment and adds the outcome to tr.
func (r *runEnv) say(t *testing.T, tr *transcript, args ...string) (int, string, string) {
	t.Helper()
	args = append([]string{"-m", "m", "-w", r.ws}, args...)
	code, out, errOut := runHearth(t, r.env, args...)
	tr.add(args, code, out, errOut)
	return code, out, errOut
}

func (r *runEnv) transcript() *transcript {
	return newTranscript(r.ws, "WORKSPACE", r.srv.URL, "http://OLLAMA")
}

// reply is a model reply as Ollama streams it, with a realistic prompt
// count (the system prompt and tools are some 1,400 tokens: a smaller
// count would be flagged as a prompt the server cut).
func reply(parts ...llmtest.Part) llmtest.Scenario {
	return llmtest.OllamaStream("m", append(parts, llmtest.Usage(1600, 12))...)
}

// TestRefusedHeadless: in the default approval mode a headless run refuses
// edits and commands; stderr says what was refused and which flag allows
// it, without --verbose, once per refused call, whether the run then
// answers or stops at its turn limit.
func TestRefusedHeadless(t *testing.T) {
	r := newRunEnv(t)
	tr := r.transcript()
	write := llmtest.Call("write_file", `{"file_path":"notes.txt","content":"hello\nworld\n"}`)

	// Refused, then an answer: exit 0, and the refusal said.
	r.srv.Enqueue("/api/chat", reply(write), reply(llmtest.Text("I could not write notes.txt: writing needs your approval.")))
	if code, _, errOut := r.say(t, tr, "run", "--context", "s1", "write hello to notes.txt"); code != 0 || !strings.Contains(errOut, "hearth: refused write_file notes.txt: needs approval") {
		t.Errorf("answered: exit %d %q", code, errOut)
	}
	// Refused until the turn limit: the refusal said once, then the limit.
	r.srv.Enqueue("/api/chat", reply(write), reply(write))
	if code, _, errOut := r.say(t, tr, "run", "--context", "s2", "--max-turns", "2", "write hello to notes.txt"); code != exitFailed || strings.Count(errOut, "hearth: refused") != 1 || !strings.Contains(errOut, "turn limit") {
		t.Errorf("turn limit: exit %d %q", code, errOut)
	}
	// A command needs yolo, in the default mode and in auto_edit.
	shell := llmtest.Call("run_shell_command", `{"command":"go test ./...","description":"run the tests"}`)
	for _, mode := range []string{"default", "auto_edit"} {
		r.srv.Enqueue("/api/chat", reply(shell), reply(llmtest.Text("I could not run the tests.")))
		if code, _, errOut := r.say(t, tr, "run", "--context", "s-"+mode, "--approval-mode", mode, "--trust", "trusted", "run the tests"); code != 0 || !strings.Contains(errOut, "--approval-mode yolo to allow commands") {
			t.Errorf("%s: exit %d %q", mode, code, errOut)
		}
	}
	// In JSON the refusal is on stderr too; stdout stays JSON.
	r.srv.Enqueue("/api/chat", reply(write), reply(llmtest.Text("Not written.")))
	if code, out, errOut := r.run(t, "run", "-o", "json", "write hello to notes.txt"); code != 0 || !strings.HasPrefix(out, "{") || !strings.Contains(errOut, "hearth: refused write_file notes.txt") {
		t.Errorf("json: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "notes.txt")); err == nil {
		t.Error("the refused write happened")
	}
	golden(t, "refused", tr.String())
}

// TestVerboseView: --verbose shows a person the run on stderr — the
// reasoning, what the model says between calls, each call and its result,
// a refusal — and the token usage after the answer, which is on stdout
// alone.
func TestVerboseView(t *testing.T) {
	r := newRunEnv(t)
	os.WriteFile(filepath.Join(r.ws, "notes.txt"), []byte("buy milk\ncall the plumber\n"), 0o644)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Thinking("The user wants a summary of notes.txt.\nI should read it first."),
			llmtest.Text("Let me read the notes."), llmtest.Call("read_file", `{"file_path":"notes.txt"}`), llmtest.Usage(1612, 40)),
		llmtest.OllamaStream("m", llmtest.Thinking("Two items. I will also save a summary."),
			llmtest.Call("write_file", `{"file_path":"summary.txt","content":"2 items\n"}`), llmtest.Usage(1680, 30)),
		llmtest.OllamaStream("m", llmtest.Text("Your notes say: buy milk, and call the plumber.\n\n"), llmtest.Usage(1750, 14)),
		llmtest.OllamaWhole("m", llmtest.Text("Notes summary"), llmtest.Usage(1600, 2)))
	tr := r.transcript()
	code, out, errOut := r.say(t, tr, "run", "-v", "--context", "s1", "summarise notes.txt")
	if code != 0 || out != "Your notes say: buy milk, and call the plumber.\n" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	if strings.Contains(errOut, "level=") || strings.Contains(errOut, "Your notes say") {
		t.Errorf("stderr holds a log line or the answer:\n%s", errOut)
	}
	golden(t, "verbose", tr.String())
}

// TestVerboseToolOutput: a call's streamed output and long results are
// cut to their first lines; a failure shows its error.
func TestVerboseToolOutput(t *testing.T) {
	r := newRunEnv(t)
	var long strings.Builder
	for i := 1; i <= 20; i++ {
		long.WriteString("line " + strings.Repeat("x", i) + "\n")
	}
	os.WriteFile(filepath.Join(r.ws, "long.txt"), []byte(long.String()), 0o644)
	r.srv.Enqueue("/api/chat",
		reply(llmtest.Call("read_file", `{"file_path":"long.txt"}`)),
		reply(llmtest.Call("run_shell_command", `{"command":"seq 1 12; echo done"}`)),
		reply(llmtest.Call("read_file", `{"file_path":"missing.txt"}`)),
		reply(llmtest.Text("Done.")))
	tr := r.transcript()
	code, out, errOut := r.say(t, tr, "run", "-v", "--approval-mode", "yolo", "--trust", "trusted", "--context", "s1", "look around")
	if code != 0 || out != "Done.\n" {
		t.Fatalf("exit %d %q\n%s", code, out, errOut)
	}
	for _, want := range []string{"  ok, 20 lines:\n", "    … 14 more lines\n", "    1\n", "    6\n    … 7 more lines\n  ok\n", "  failed: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestStructuredLogIsItsOwnSwitch: --verbose writes no log records;
// HEARTH_LOG does, as slog lines (text or JSON), and a log line never
// starts in the middle of a line of the view.
func TestStructuredLogIsItsOwnSwitch(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Always("/api/chat", reply(llmtest.Thinking("thinking it over"), llmtest.Text("Four.")))
	code, _, errOut := r.run(t, "run", "-v", "2+2?")
	if code != 0 || strings.Contains(errOut, "level=") || strings.Contains(errOut, "msg=") {
		t.Errorf("-v: exit %d\n%s", code, errOut)
	}
	r.env["HEARTH_LOG"] = "debug"
	code, out, errOut := r.run(t, "run", "-v", "2+2?")
	if code != 0 || out != "Four.\n" || !strings.Contains(errOut, `level=DEBUG msg="message committed"`) || !strings.Contains(errOut, "[thinking] thinking it over\n") {
		t.Errorf("HEARTH_LOG=debug: exit %d\n%s", code, errOut)
	}
	for _, l := range strings.Split(errOut, "\n") {
		if i := strings.Index(l, "time="); i > 0 {
			t.Errorf("a log record in the middle of a line: %q", l)
		}
	}
	r.env["HEARTH_LOG_FORMAT"] = "json"
	code, _, errOut = r.run(t, "run", "2+2?")
	if code != 0 || !strings.Contains(errOut, `"level":"DEBUG","msg":"message committed"`) {
		t.Errorf("HEARTH_LOG_FORMAT=json: exit %d\n%s", code, errOut)
	}
	r.env["HEARTH_LOG"], r.env["HEARTH_LOG_FORMAT"] = "loud", ""
	if code, _, errOut := r.run(t, "run", "2+2?"); code != exitUsage || !strings.Contains(errOut, `HEARTH_LOG="loud": want debug, info, warn or error`) {
		t.Errorf("bad HEARTH_LOG: exit %d %q", code, errOut)
	}
	r.env["HEARTH_LOG"], r.env["HEARTH_LOG_FORMAT"] = "", "xml"
	if code, _, errOut := r.run(t, "run", "2+2?"); code != exitUsage || !strings.Contains(errOut, `HEARTH_LOG_FORMAT="xml": want text or json`) {
		t.Errorf("bad HEARTH_LOG_FORMAT: exit %d %q", code, errOut)
	}
}

// TestWarningsAreSentences: without HEARTH_LOG, what is logged as a warning
// reaches a person as a sentence, never as a slog line; a project's
// settings that were ignored are said in a sentence too.
func TestWarningsAreSentences(t *testing.T) {
	r := newRunEnv(t)
	os.MkdirAll(filepath.Join(r.ws, ".hearth"), 0o755)
	os.WriteFile(filepath.Join(r.ws, ".hearth", "config.toml"), []byte("[profiles.headless]\nread_only_dirs = [\"/etc\"]\n"), 0o644)
	// An empty reply is logged as a warning.
	r.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Usage(1600, 0)))
	code, _, errOut := r.run(t, "run", "--context", "s1", "hi")
	if code != 0 || strings.Contains(errOut, "level=") || strings.Contains(errOut, "time=") {
		t.Errorf("exit %d, a slog line:\n%s", code, errOut)
	}
	for _, want := range []string{
		"hearth: The project's .hearth/config.toml asks to read /etc (read_only_dirs in profile \"headless\"); a project may only tighten your settings, so this was ignored.",
		"hearth: warning: the model sent an empty reply (model: m)\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestVerboseColours: on a terminal the view is coloured, unless NO_COLOR
// is set; never in a pipe.
func TestVerboseColours(t *testing.T) {
	r := newRunEnv(t)
	r.srv.Always("/api/chat", reply(llmtest.Thinking("hmm"), llmtest.Text("Four.")))
	for _, tc := range []struct {
		tty     bool
		noColor string
		want    bool
	}{{true, "", true}, {true, "1", false}, {false, "", false}} {
		var out, errb bytes.Buffer
		env := map[string]string{"HEARTH_HOME": r.env["HEARTH_HOME"], "OLLAMA_HOST": r.srv.URL, "NO_COLOR": tc.noColor}
		a := &app{io: stdio{in: strings.NewReader(""), out: &out, err: &errb}, getenv: func(k string) string { return env[k] },
			isTTY: func(io.Writer) bool { return tc.tty }}
		root := a.rootCommand()
		root.SetArgs([]string{"-m", "m", "-w", r.ws, "run", "-v", "2+2?"})
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(errb.String(), "\x1b["); got != tc.want || out.String() != "Four.\n" {
			t.Errorf("tty=%v NO_COLOR=%q: colours %v, want %v\n%q\n%q", tc.tty, tc.noColor, got, tc.want, errb.String(), out.String())
		}
	}
}
