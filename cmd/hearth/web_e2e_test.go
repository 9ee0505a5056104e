//go:build unix

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// webDir is the web UI's source tree, relative to this package.
const webDir = "../../web"

// TestWebUI runs the web UI's end-to-end tests (web/e2e/*.test.mjs, with
// node:test and playwright-core) in a real Chromium against the real hearth
// serve, whose model is the scripted fake. The prompts the browser sends
// carry a marker saying what the fake answers (see webModel):
//
//	go test -run TestWebUI -v ./cmd/hearth
//	HEARTH_E2E_FILES=workspaces-switch.test.mjs go test -run 'TestWebUI$' ./cmd/hearth
//	HEARTH_SCREENSHOTS=$PWD/docs/screenshots go test -run TestWebUI ./cmd/hearth
//
// HEARTH_E2E_FILES runs only those files of web/e2e (comma-separated
// names). With HEARTH_SCREENSHOTS it runs only e2e/screenshots.test.mjs,
// which writes the docs' screenshots there.
//
// The trust of the servers' own workspaces is chosen (untrusted, as it is
// by default) before the tests, so that the page does not ask about it in
// every test; workspaces-switch.test.mjs gets a server of its own, whose
// workspace is never seen, to be asked about.
//
// It needs node, web/node_modules (npm ci in web) and Chromium
// (/usr/bin/chromium, or HEARTH_CHROMIUM); it skips without them, unless
// HEARTH_WEB_E2E=1 (in CI), where their absence fails. The binary embeds
// whatever server/ui holds: build the UI first (npm run build in web).
// Node gets 20 minutes, or what go test's -timeout leaves (each test 5
// minutes, each step in a test 1): limits that only detect a hang, since a
// loaded machine slows every step; then it, the browsers and the server are
// stopped, and processes left behind fail the test.
func TestWebUI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hearth and drives Chromium")
	}
	runWebUI(t, nil, nil)
}

// TestWebUIOnPostgres runs the web UI's tests of sessions, chat, tools,
// cancel and restores (undo, rewind, fork, archive) against a server whose
// sessions are in PostgreSQL: the UI works the same on either store.
func TestWebUIOnPostgres(t *testing.T) {
	if testing.Short() {
		t.Skip("builds hearth and drives Chromium")
	}
	webPrereqs(t)
	runWebUI(t, []string{"HEARTH_DATABASE_URL=" + pgtest.URL(t)},
		[]string{"sessions.test.mjs", "chat.test.mjs", "tools.test.mjs", "cancel.test.mjs", "restore.test.mjs", "plan.test.mjs", "workspaces.test.mjs"})
}

// runWebUI runs the web UI's Playwright tests (only files, when given)
// against hearth serve started with env.
func runWebUI(t *testing.T, env []string, files []string) {
	web, node, chromium := webPrereqs(t)

	// The files to run: those given, or every one; only those named by
	// HEARTH_E2E_FILES among them.
	tests, _ := filepath.Glob(filepath.Join(web, "e2e", "*.test.mjs"))
	if files != nil {
		tests = nil
		for _, f := range files {
			tests = append(tests, filepath.Join(web, "e2e", f))
		}
	}
	if only := os.Getenv("HEARTH_E2E_FILES"); only != "" && os.Getenv("HEARTH_SCREENSHOTS") == "" {
		var kept []string
		for _, name := range strings.Split(only, ",") {
			name = strings.TrimSpace(name)
			if i := slices.IndexFunc(tests, func(p string) bool { return filepath.Base(p) == name }); i >= 0 {
				kept = append(kept, tests[i])
			}
		}
		if len(kept) == 0 {
			t.Skipf("HEARTH_E2E_FILES=%s names none of the files this test runs", only)
		}
		tests = kept
	}
	runs := func(name string) bool {
		return os.Getenv("HEARTH_SCREENSHOTS") == "" && slices.ContainsFunc(tests, func(p string) bool { return filepath.Base(p) == name })
	}

	e := newE2E(t)
	e.serveFor = 25 * time.Minute // outlives node's limit
	var calls atomic.Int64
	webServed(t, e, &calls)
	s := e.serve(env)
	chooseTrust(t, s)
	if env != nil && !strings.Contains(strings.Join(s.out, "\n"), "sessions  PostgreSQL") {
		t.Fatalf("the server does not keep its sessions in PostgreSQL:\n%s", strings.Join(s.out, "\n"))
	}
	if !strings.Contains(strings.Join(s.out, "\n"), "write_file") {
		t.Fatalf("write_file is not among the served tools:\n%s", strings.Join(s.out, "\n"))
	}

	// A second server whose model server is gone: the page must say so,
	// with the fix.
	dead := newE2E(t)
	dead.serveFor = e.serveFor
	dead.srv.Close()
	ds := dead.serve(nil)
	chooseTrust(t, ds)

	// A server of its own for the workspace switcher's test (in SQLite,
	// whatever the others use): its workspace never seen, so that the page
	// asks how far it is trusted; and a second folder to add, switch to,
	// and run a turn in.
	var fresh *served
	var switchWS string
	if runs("workspaces-switch.test.mjs") {
		fe := newE2E(t)
		fe.serveFor = e.serveFor
		webServed(t, fe, &calls)
		fresh = fe.serve(nil)
		var err error
		if switchWS, err = filepath.EvalSymlinks(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(switchWS, "README.md"), []byte("# the second workspace\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Every process node starts (Chromium and its helpers) inherits this
	// mark, by which leftovers are found at the end.
	var mark [8]byte
	rand.Read(mark[:])
	marker := "HEARTH_E2E_RUN=" + hex.EncodeToString(mark[:])
	// A folder for the workspaces test to add (resolved, as the API keeps
	// it), with a file in it to be refused as one.
	newWS, wsErr := filepath.EvalSymlinks(t.TempDir())
	if wsErr != nil {
		t.Fatal(wsErr)
	}
	if err := os.WriteFile(filepath.Join(newWS, "notes.txt"), []byte("not a folder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nodeEnv := append(os.Environ(), marker,
		"HEARTH_E2E_URL="+s.base, "HEARTH_E2E_TOKEN="+s.token, "HEARTH_E2E_WORKSPACE="+e.ws,
		"HEARTH_E2E_NEW_WORKSPACE="+newWS,
		"HEARTH_E2E_DEAD_URL="+ds.base+"/?token="+ds.token,
		"HEARTH_CHROMIUM="+chromium, "NO_COLOR=1", "FORCE_COLOR=0")
	if fresh != nil {
		nodeEnv = append(nodeEnv, "HEARTH_E2E_FRESH_URL="+fresh.base, "HEARTH_E2E_FRESH_TOKEN="+fresh.token,
			"HEARTH_E2E_SWITCH_WORKSPACE="+switchWS)
	}
	// The files, not the directory: node 21 and later take a directory
	// argument for a module to run.
	if dir := os.Getenv("HEARTH_SCREENSHOTS"); dir != "" {
		// Only the screenshots, on this fresh server: a sidebar without
		// the other tests' sessions.
		tests = []string{filepath.Join(web, "e2e", "screenshots.test.mjs")}
		abs, err := filepath.Abs(dir) // node runs in web/
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			t.Fatal(err)
		}
		nodeEnv = append(nodeEnv, "HEARTH_SCREENSHOTS="+abs)
	}

	limit := 20 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d)-30*time.Second < limit {
		// go test's own -timeout comes first: stop node in time to say so
		// and to clean up, rather than be killed with a stack dump.
		limit = max(time.Until(d)-30*time.Second, time.Minute)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-concurrency=1", "--test-timeout=300000", "--test-reporter=spec")
	cmd.Args = append(cmd.Args, tests...)
	cmd.Dir = web
	cmd.Env = nodeEnv
	// node and the browsers it starts form a process group, killed whole
	// on timeout.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	out := &testLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	out.flush()
	timedOut := ctx.Err() != nil
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever is left of the group
	}
	if leaked := reap(marker, 5*time.Second); len(leaked) > 0 && !timedOut {
		t.Errorf("processes left running after node ended (killed): %v", leaked)
	}
	if err != nil {
		if !out.live {
			t.Logf("node --test output:\n%s", out.all.String())
		}
		switch {
		case timedOut:
			t.Fatalf("the web UI tests did not end within %v (killed): a hang, or go test's -timeout is too short for this machine", limit.Round(time.Second))
		default:
			t.Fatalf("the web UI tests failed after %v: %v", time.Since(start).Round(time.Millisecond), err)
		}
	}
	t.Logf("the web UI tests passed in %v", time.Since(start).Round(time.Millisecond))
	for _, srv := range []*served{s, ds, fresh} {
		if srv == nil {
			continue
		}
		if code := srv.stop(); code != 0 {
			t.Errorf("hearth serve exited %d after Ctrl-C", code)
		}
	}
}

// webServed readies e for the web UI's tests: a profile whose tools
// include one that needs approval (write_file, in the default mode) and
// the plan, with the model held to it (strict_plan); a second model; and
// the scripted fake model (webModel).
func webServed(t *testing.T, e *e2e, calls *atomic.Int64) {
	t.Helper()
	cfg := "[profiles.api]\ntools = [\"read_file\", \"write_file\", \"list_directory\", \"update_plan\"]\napproval_mode = \"default\"\nstrict_plan = true\n"
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.srv.AddModel(llmtest.Model{Name: "m2", Capabilities: []string{"completion", "tools", "thinking"}, ContextLength: 32768})
	e.srv.Respond("/api/chat", func(r llmtest.Request) (llmtest.Scenario, bool) {
		return webModel(r, calls), true
	})
}

// chooseTrust records the trust of the server's own workspace as chosen
// (untrusted, what it is by default), so that the web UI does not ask
// about it.
func chooseTrust(t *testing.T, s *served) {
	t.Helper()
	code, body := s.call("GET", "/v1/workspaces", s.token, "")
	var list struct {
		Default string `json:"default"`
	}
	if err := json.Unmarshal([]byte(body), &list); code != 200 || err != nil || list.Default == "" {
		t.Fatalf("GET /v1/workspaces: %d %s (%v): no default workspace", code, body, err)
	}
	req, _ := json.Marshal(map[string]string{"path": list.Default, "trust": "untrusted"})
	if code, body := s.call("POST", "/v1/workspaces", s.token, string(req)); code != 200 && code != 201 {
		t.Fatalf("POST /v1/workspaces %s: %d %s", req, code, body)
	}
}

// webPrereqs returns the web directory, node and Chromium, or skips the
// test when one is missing (fails it when HEARTH_WEB_E2E=1).
func webPrereqs(t *testing.T) (web, node, chromium string) {
	t.Helper()
	var missing []string
	web, err := filepath.Abs(webDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(web, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "web/node_modules/playwright-core (run npm ci in web)")
	}
	if tests, _ := filepath.Glob(filepath.Join(web, "e2e", "*.test.mjs")); len(tests) == 0 {
		missing = append(missing, "the tests, web/e2e/*.test.mjs")
	}
	node, err = exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node on PATH")
	}
	chromium = os.Getenv("HEARTH_CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	if p, err := exec.LookPath(chromium); err != nil {
		missing = append(missing, "Chromium at "+chromium+" (or set HEARTH_CHROMIUM)")
	} else {
		chromium = p
	}
	if len(missing) > 0 {
		msg := "the web UI tests need " + strings.Join(missing, ", ")
		if os.Getenv("HEARTH_WEB_E2E") == "1" {
			t.Fatal(msg + " (HEARTH_WEB_E2E=1 requires them)")
		}
		t.Skip(msg + " (set HEARTH_WEB_E2E=1 to make this a failure)")
	}
	return web, node, chromium
}

// webModel is the fake model of the web UI tests: it answers by the
// markers in the user's last message (the screenshots' prompts go without
// them, in plain words).
//
//   - a title request (not streamed): the first prompt's first six words
//     without markers (after 4 s for a prompt with "[slowtitle]");
//   - "[think]", or "maps in Go": reasoning (slowly enough to see the panel
//     open), then a Markdown answer with a Go code block, and usage;
//   - "[tool]", or "Save a note…": a write_file call of note-WORD.txt
//     (WORD: the prompt's last word), which needs approval; once the
//     request holds the call's result, an answer saying whether the file
//     was written;
//   - "[read]": a read_file call of a file that is not there (it fails at
//     once, needing no approval), then an answer;
//   - "[slow]": an answer in pieces over some 20 s, to be stopped;
//   - "[plan]", or "Summarise the notes…": a plan of three steps
//     (update_plan), each then marked in progress and done, one reply at a
//     time with a pause before each, then an answer (see webPlan);
//   - "[planskip]": a plan of two steps, the first done, then an answer with
//     the second open: strict_plan sends the model back (the reminder, a
//     user message the fake tells from the prompt), and it skips the second
//     with a reason, then answers;
//   - anything else: an echo.
func webModel(r llmtest.Request, calls *atomic.Int64) llmtest.Scenario {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(r.Body, &req); err != nil {
		return llmtest.OllamaError(400, "webModel: the request is not JSON: "+err.Error())
	}
	model := req.Model
	first, prompt, toolResult, answered := "", "", "", false
	results, reminded := 0, false // tool results since the prompt; strict_plan's reminder came
	for _, m := range req.Messages {
		switch m.Role {
		case "user":
			if strings.HasPrefix(m.Content, webReminder) {
				reminded = true
				continue
			}
			prompt, toolResult, answered, results, reminded = m.Content, "", false, 0, false
			if first == "" {
				first = prompt
			}
		case "tool":
			toolResult, answered = m.Content, true
			results++
		}
	}
	if !req.Stream || strings.HasPrefix(prompt, "Write a title") {
		// The title question comes after the conversation: the title is
		// that of its first prompt.
		sc := llmtest.OllamaWhole(model, llmtest.Text(webTitle(first)))
		if strings.Contains(first, "[slowtitle]") {
			sc.HeaderDelay = 4 * time.Second
		}
		return sc
	}
	usage := llmtest.Usage(1600, 48)
	think := strings.Contains(prompt, "[think]") || strings.Contains(prompt, "maps in Go")
	tool := strings.Contains(prompt, "[tool]") || strings.HasPrefix(prompt, "Save a note")
	switch {
	case think:
		return llmtest.OllamaStream(model,
			llmtest.Thinking("The user asks about Go maps. "), llmtest.Pause(800*time.Millisecond),
			llmtest.Thinking("I should show how to make one and read a key."), llmtest.Pause(1200*time.Millisecond),
			llmtest.Text("A **map** is made with `make`:\n\n"), llmtest.Pause(300*time.Millisecond),
			llmtest.Text("```go\nm := make(map[string]int)\nm[\"answer\"] = 42\nfmt.Println(m[\"answer\"])\n```\n\n"),
			llmtest.Pause(300*time.Millisecond),
			llmtest.Text("Reading a missing key gives the zero value."), usage)
	case tool && !answered:
		n := calls.Add(1)
		args, _ := json.Marshal(map[string]string{"file_path": webNoteFile(prompt), "content": "a note from the web UI test\n"})
		return llmtest.OllamaStream(model,
			llmtest.Text("I'll write the note."),
			llmtest.CallID("call_w"+strconv.FormatInt(n, 10), "write_file", string(args)), usage)
	case tool:
		if strings.Contains(toolResult, "denied") {
			return llmtest.OllamaStream(model, llmtest.Text("You denied the write, so I left the file alone."), usage)
		}
		return llmtest.OllamaStream(model, llmtest.Text("I wrote "+webNoteFile(prompt)+"."), usage)
	case strings.Contains(prompt, "[read]") && !answered:
		// read_file of a file that is not there: the call fails at once,
		// with no approval to wait for.
		args, _ := json.Marshal(map[string]string{"file_path": "missing-" + webNoteFile(prompt)})
		return llmtest.OllamaStream(model, llmtest.CallID("call_r"+strconv.FormatInt(calls.Add(1), 10), "read_file", string(args)), usage)
	case strings.Contains(prompt, "[read]"):
		return llmtest.OllamaStream(model, llmtest.Text("That file is not there."), usage)
	case strings.Contains(prompt, "[planskip]"):
		return webPlanSkip(model, results, reminded, calls, usage)
	case strings.Contains(prompt, "[plan]") || strings.HasPrefix(prompt, "Summarise the notes"):
		return webPlan(model, results, calls, usage)
	case strings.Contains(prompt, "[slow]"):
		parts := []llmtest.Part{llmtest.Text("Counting slowly: one")}
		for _, w := range []string{"two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"} {
			parts = append(parts, llmtest.Pause(2*time.Second), llmtest.Text(", "+w))
		}
		return llmtest.OllamaStream(model, append(parts, usage)...)
	}
	return llmtest.OllamaStream(model, llmtest.Text("You said: "+prompt), usage)
}

// webReminder begins what strict_plan tells the model when it answers with
// steps of its plan open (agent.planReminder).
const webReminder = "Your plan still has "

// webPlanPause comes before each reply of a plan turn, so that the page
// shows each state of the checklist for a while (the test does not rely on
// it: it records every state the page shows).
const webPlanPause = 700 * time.Millisecond

// webPlan is the "[plan]" turn after results tool results: a plan of three
// steps, all pending; then each step in progress, then done with the next
// in progress; then every step done; then the answer.
func webPlan(model string, results int, calls *atomic.Int64, usage llmtest.Part) llmtest.Scenario {
	names := []string{"Read the notes", "Write the summary", "Check the summary"}
	const n = 3
	if results > n+1 {
		return llmtest.OllamaStream(model, llmtest.Pause(webPlanPause), llmtest.Text("All three steps are done."), usage)
	}
	// results 0: all pending; 1..n: step results-1 in progress, those
	// before it done; n+1: all done.
	statuses := make([]string, n)
	for i := range statuses {
		switch {
		case results == n+1 || i < results-1:
			statuses[i] = "done"
		case i == results-1:
			statuses[i] = "in_progress"
		default:
			statuses[i] = "pending"
		}
	}
	var parts []llmtest.Part
	if results == 0 {
		parts = append(parts, llmtest.Text("I'll plan this first."))
	} else {
		parts = append(parts, llmtest.Pause(webPlanPause))
	}
	parts = append(parts, webPlanCall(calls, names, statuses, nil), usage)
	return llmtest.OllamaStream(model, parts...)
}

// webPlanSkip is the "[planskip]" turn: two steps, the first done, then an
// answer with the second open; sent back, the model skips it.
func webPlanSkip(model string, results int, reminded bool, calls *atomic.Int64, usage llmtest.Part) llmtest.Scenario {
	names := []string{"Find the typo", "Check the other files"}
	switch {
	case results == 0:
		return llmtest.OllamaStream(model, webPlanCall(calls, names, []string{"in_progress", "pending"}, nil), usage)
	case results == 1:
		return llmtest.OllamaStream(model, llmtest.Pause(webPlanPause), webPlanCall(calls, names, []string{"done", "pending"}, nil), usage)
	case !reminded:
		return llmtest.OllamaStream(model, llmtest.Pause(webPlanPause), llmtest.Text("I fixed the typo."), usage)
	case results == 2:
		return llmtest.OllamaStream(model, llmtest.Pause(webPlanPause),
			webPlanCall(calls, names, []string{"done", "skipped"}, map[int]string{1: "there are no other files"}), usage)
	}
	return llmtest.OllamaStream(model, llmtest.Text("I fixed the typo; there were no other files to check."), usage)
}

// webPlanCall is an update_plan call of the steps names with statuses (and
// the reasons of skipped ones, by index).
func webPlanCall(calls *atomic.Int64, names, statuses []string, reasons map[int]string) llmtest.Part {
	type step struct {
		Step   string `json:"step"`
		Status string `json:"status"`
		Reason string `json:"reason,omitempty"`
	}
	var steps []step
	for i, name := range names {
		steps = append(steps, step{name, statuses[i], reasons[i]})
	}
	args, _ := json.Marshal(map[string]any{"steps": steps})
	return llmtest.CallID("call_p"+strconv.FormatInt(calls.Add(1), 10), "update_plan", string(args))
}

var webMarker = regexp.MustCompile(`\[[a-z]+\]`)

// webTitle is the session title the fake gives a prompt: its first six
// words, without markers.
func webTitle(prompt string) string {
	words := strings.Fields(webMarker.ReplaceAllString(prompt, " "))
	if len(words) == 0 {
		return "Untitled chat"
	}
	return strings.Join(words[:min(6, len(words))], " ")
}

// webNoteFile is the file a "[tool]" prompt writes: note-WORD.txt, WORD
// its last word (a test's unique id).
func webNoteFile(prompt string) string {
	words := strings.Fields(prompt)
	w := "x"
	if len(words) > 0 {
		w = regexp.MustCompile(`[^A-Za-z0-9-]`).ReplaceAllString(words[len(words)-1], "")
	}
	return "note-" + w + ".txt"
}

// testLog collects a command's output, and passes each line to t.Log as
// it comes when live.
type testLog struct {
	t    *testing.T
	live bool
	mu   sync.Mutex
	all  bytes.Buffer
	line []byte
}

func (l *testLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all.Write(p)
	if l.live {
		l.line = append(l.line, p...)
		for {
			i := bytes.IndexByte(l.line, '\n')
			if i < 0 {
				break
			}
			l.t.Log(string(l.line[:i]))
			l.line = l.line[i+1:]
		}
	}
	return len(p), nil
}

func (l *testLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live && len(l.line) > 0 {
		l.t.Log(string(l.line))
		l.line = nil
	}
}

// reap waits up to grace for the processes carrying marker in their
// environment to end, kills those that do not, and returns their
// descriptions. It finds them through /proc (Linux); elsewhere it finds
// none.
func reap(marker string, grace time.Duration) []string {
	deadline := time.Now().Add(grace)
	for {
		pids := marked(marker)
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var out []string
			for _, pid := range pids {
				cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
				name := strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
				if len(name) > 120 {
					name = name[:120] + "…"
				}
				out = append(out, strconv.Itoa(pid)+" "+name)
				if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
					out[len(out)-1] += " (cannot kill: " + err.Error() + ")"
				}
			}
			return out
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// marked lists the live processes whose environment holds marker.
func marked(marker string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(env, []byte(marker+"\x00")) {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			// A zombie has ended; its parent just has not waited for it.
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && bytes.HasPrefix(stat[i+1:], []byte(" Z")) {
				continue
			}
		}
		pids = append(pids, pid)
	}
	return pids
}
