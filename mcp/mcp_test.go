package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/tool"
)

func TestToolName(t *testing.T) {
	for _, c := range []struct{ server, tool, want string }{
		{"github", "create_issue", "github__create_issue"},
		{"everything", "get-sum", "everything__get-sum"},
		{"fs", "read.file/x", "fs__read_file_x"},
		{"my server", "échec", "my_server____chec"},
	} {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	long1 := ToolName("server", strings.Repeat("a", 80)+"1")
	long2 := ToolName("server", strings.Repeat("a", 80)+"2")
	if len(long1) != 64 || long1 == long2 || !strings.HasPrefix(long1, "server__aaa") {
		t.Errorf("long names: %q %q", long1, long2)
	}
	if !IsServerPattern("!github__*", []string{"github"}) || IsServerPattern("*", []string{"github"}) || IsServerPattern("read_file", []string{"github"}) {
		t.Error("IsServerPattern")
	}
}

func TestValidate(t *testing.T) {
	cs := []ServerConfig{{Name: "a", Command: "npx", Args: []string{"-y", "x"}}, {Name: "b", URL: "http://127.0.0.1:1/sse"}}
	if cs[0].TransportName() != "stdio" || cs[1].TransportName() != "sse" || cs[0].Target() != "npx -y x" {
		t.Errorf("%s %s %s", cs[0].TransportName(), cs[1].TransportName(), cs[0].Target())
	}
	for _, bad := range []ServerConfig{
		{Name: "x"},
		{Name: "x", Command: "a", URL: "http://h"},
		{Name: "x y", Command: "a"},
		{Name: "x", URL: "ftp://h"},
		{Name: "x", Command: "a", Transport: "sse"},
		{Name: "x", Command: "a", Include: []string{"["}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := New(Options{Servers: []ServerConfig{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}}); err == nil {
		t.Error("a duplicate server name passed")
	}
}

// newManager makes a Manager closed with the test. Unless the test sets
// them, the limits on starting are hang detectors only (a loaded machine
// can take many seconds to start a process): the product's defaults, 10 s
// for the first turn and 30 s per start, are not what these tests check.
func newManager(t *testing.T, o Options) *Manager {
	t.Helper()
	if o.PrepareWait == 0 {
		o.PrepareWait = 5 * time.Minute
	}
	for i := range o.Servers {
		if o.Servers[i].StartTimeout == 0 {
			o.Servers[i].StartTimeout = 5 * time.Minute
		}
	}
	m, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func statusOf(m *Manager, name string) ServerStatus {
	for _, s := range m.Status() {
		if s.Name == name {
			return s
		}
	}
	return ServerStatus{}
}

func run(t *testing.T, tl tool.Tool, args string) (string, error) {
	t.Helper()
	res, err := tl.Run(context.Background(), tool.Call{ID: "c1", Args: json.RawMessage(args)})
	return res.Output, err
}

func TestStdioToolsResourcesPrompts(t *testing.T) {
	images := t.TempDir()
	cfg := fake(t, "fake", "ok")
	cfg.Exclude = []string{"write.note"}
	m := newManager(t, Options{Servers: []ServerConfig{cfg}, ImageDir: images})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := statusOf(m, "fake")
	if st.State != StateReady || st.Server != "fake 1.2.3" || st.Transport != "stdio" || st.Resources != 1 || len(st.Prompts) != 1 || st.Starts != 1 {
		t.Fatalf("status: %+v", st)
	}
	got := strings.Join(reg.Names(), ",")
	for _, want := range []string{"fake__echo", "fake__weather", "fake__picture", "fake__read_resource"} {
		if !strings.Contains(got, want) {
			t.Errorf("registry lacks %s: %s", want, got)
		}
	}
	if strings.Contains(got, "write") {
		t.Errorf("exclude_tools ignored: %s", got)
	}
	echo, _ := reg.Get("fake__echo")
	if echo.Kind() != tool.ReadOnly {
		t.Error("a read-only annotated tool is not ReadOnly")
	}
	fail, _ := reg.Get("fake__fail")
	if fail.Kind() != tool.Execute {
		t.Error("an unannotated tool must be Execute, to be approved")
	}
	if err := reg.Validate("fake__echo", json.RawMessage(`{"text":1}`)); err == nil {
		t.Error("the server's schema is not checked")
	}
	if out, err := run(t, echo, `{"text":"hi"}`); err != nil || out != "echo: hi" {
		t.Errorf("echo: %q %v", out, err)
	}
	w, _ := reg.Get("fake__weather")
	if out, err := run(t, w, `{}`); err != nil || !strings.Contains(out, `"temperature":21`) || strings.Count(out, "temperature") != 1 {
		t.Errorf("structured: %q %v", out, err)
	}
	pic, _ := reg.Get("fake__picture")
	out, err := run(t, pic, `{}`)
	if err != nil || !strings.Contains(out, "[image: image/png, 69 bytes, saved to "+images) {
		t.Errorf("image: %q %v", out, err)
	}
	res, err := m.CallTool(context.Background(), "fake", "picture", nil)
	if err != nil || len(res.Images) != 1 || string(res.Images[0].Data) != string(tinyPNG) {
		t.Errorf("image bytes: %+v %v", res, err)
	}
	if _, err := run(t, fail, `{}`); err == nil || !strings.Contains(err.Error(), "the disk is full") {
		t.Errorf("a tool error: %v", err)
	}
	rd, _ := reg.Get("fake__read_resource")
	if !strings.Contains(rd.Spec().Description, "fake://notes/today") {
		t.Errorf("the reader does not list resources: %s", rd.Spec().Description)
	}
	if out, err := run(t, rd, `{"uri":"fake://notes/today"}`); err != nil || !strings.Contains(out, "buy milk") {
		t.Errorf("resource: %q %v", out, err)
	}
	if _, err := run(t, rd, `{"uri":"fake://nope"}`); err == nil {
		t.Error("an unknown resource read")
	}
	ps := m.Prompts()
	if len(ps) != 1 || ps[0].Name != "greet" || !ps[0].Arguments[0].Required {
		t.Fatalf("prompts: %+v", ps)
	}
	msgs, err := m.GetPrompt(context.Background(), "fake", "greet", map[string]string{"who": "Ada"})
	if err != nil || len(msgs) != 1 || msgs[0].Content != "Say hello to Ada" {
		t.Errorf("prompt: %+v %v", msgs, err)
	}
	// Progress reaches the caller, on its goroutine.
	slow, _ := reg.Get("fake__slow")
	var notes []string
	r, err := slow.Run(context.Background(), tool.Call{ID: "c", Args: json.RawMessage(`{"steps":3,"ms":10}`), Progress: func(s string) { notes = append(notes, s) }})
	// (The last note may come after the answer, and is then dropped.)
	if err != nil || r.Output != "slow done" || len(notes) < 2 || notes[1] != "progress 2/3: step 2\n" {
		t.Errorf("progress: %q %v %q", r.Output, err, notes)
	}
}

func TestProgressKeepsACallAlive(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a real server process and a 1.6 s call (the race stage runs it)")
	}
	cfg := fake(t, "fake", "ok")
	cfg.CallTimeout = 700 * time.Millisecond
	m := newManager(t, Options{Servers: []ServerConfig{cfg}})
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	// 8 steps of 200 ms: 1.6 s in all, never 700 ms silent.
	res, err := m.CallTool(context.Background(), "fake", "slow", json.RawMessage(`{"steps":8,"ms":200}`))
	if err != nil || res.Text != "slow done" {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestServerThatFailsToStart(t *testing.T) {
	m := newManager(t, Options{Servers: []ServerConfig{
		fake(t, "broken", "exit"),
		{Name: "missing", Command: "hearth-no-such-mcp-server"},
		fake(t, "good", "ok"),
	}})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Prepare(context.Background())
	b := statusOf(m, "broken")
	if b.State != StateFailed || !strings.Contains(b.Error, "exit status 2") || !strings.Contains(b.Error, "GITHUB_TOKEN is not set") {
		t.Errorf("broken: %+v", b)
	}
	if s := statusOf(m, "missing"); s.State != StateFailed || !strings.Contains(s.Error, "not installed or not on PATH") {
		t.Errorf("missing: %+v", s)
	}
	if s := statusOf(m, "good"); s.State != StateReady || len(s.Tools) == 0 {
		t.Errorf("a failed server kept another from starting: %+v", s)
	}
	if _, ok := reg.Get("good__echo"); !ok {
		t.Error("the good server's tools are missing")
	}
	if _, err := m.CallTool(context.Background(), "broken", "x", nil); err == nil || !strings.Contains(err.Error(), "not available") || !strings.Contains(err.Error(), "GITHUB_TOKEN") {
		t.Errorf("calling a broken server: %v", err)
	}
}

func TestServerThatNeverAnswers(t *testing.T) {
	silent := fake(t, "silent", "silent")
	silent.StartTimeout = 500 * time.Millisecond
	// PrepareWait is far away: what ends the first turn's wait for the
	// silent server is its own start timeout, the limit its error names.
	m := newManager(t, Options{Servers: []ServerConfig{silent, fake(t, "good", "ok")}, PrepareWait: 5 * time.Minute})
	m.Prepare(context.Background())
	s := statusOf(m, "silent")
	if s.State != StateFailed || !strings.Contains(s.Error, "did not finish starting within 500ms") || !strings.Contains(s.Error, "timeout in [mcp_servers.silent]") {
		t.Errorf("silent: %+v", s)
	}
	if statusOf(m, "good").State != StateReady {
		t.Error("the good server is not ready")
	}
}

func TestCrashMidCallAndRestart(t *testing.T) {
	m := newManager(t, Options{Servers: []ServerConfig{fake(t, "fake", "ok")}})
	_, err := m.CallTool(context.Background(), "fake", "crash", nil)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "something broke") || !strings.Contains(err.Error(), "started again on the next call") {
		t.Fatalf("crash: %v", err)
	}
	if s := statusOf(m, "fake"); s.State != StateCrashed || !strings.Contains(s.Error, "exit status 3") {
		t.Errorf("status after the crash: %+v", s)
	}
	res, err := m.CallTool(context.Background(), "fake", "echo", json.RawMessage(`{"text":"again"}`))
	if err != nil || res.Text != "echo: again" {
		t.Fatalf("after the restart: %+v %v", res, err)
	}
	if s := statusOf(m, "fake"); s.State != StateReady || s.Starts != 2 {
		t.Errorf("status after the restart: %+v", s)
	}
}

func pidOf(t *testing.T, file string) int {
	t.Helper()
	for range 100 {
		if b, err := os.ReadFile(file); err == nil && len(b) > 0 {
			pid, _ := strconv.Atoi(string(b))
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the fake server wrote no pid")
	return 0
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestKilledMidCall(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: kills and restarts a real server process (the race stage runs it)")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	m := newManager(t, Options{Servers: []ServerConfig{fake(t, "fake", "ok", "HEARTH_FAKE_PIDFILE", pidfile)}})
	if err := m.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := pidOf(t, pidfile)
	// The server is killed once the call is under way (its first
	// progress note). The call would otherwise take 100 minutes: one that
	// did not notice the death would hang, not end with it.
	var once sync.Once
	kill := func(string) { once.Do(func() { syscall.Kill(pid, syscall.SIGKILL) }) }
	_, err := m.callTool(context.Background(), m.byName["fake"], "slow", json.RawMessage(`{"steps":6000,"ms":1000}`), kill)
	if err == nil || !strings.Contains(err.Error(), "signal: killed") {
		t.Fatalf("killed mid-call: %v", err)
	}
	if _, err := m.CallTool(context.Background(), "fake", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("not restarted: %v", err)
	}
}

func TestHungCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out call timeouts, kills and restarts a real server process (the race stage runs it)")
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	cfg := fake(t, "fake", "ok", "HEARTH_FAKE_PIDFILE", pidfile)
	cfg.CallTimeout = 300 * time.Millisecond
	m := newManager(t, Options{Servers: []ServerConfig{cfg}})
	// A call that never ends, on a server that still answers pings: the
	// call is abandoned, the server kept.
	_, err := m.CallTool(context.Background(), "fake", "hang", nil)
	if err == nil || !strings.Contains(err.Error(), "did not finish the call within 300ms") {
		t.Fatalf("hang: %v", err)
	}
	if s := statusOf(m, "fake"); s.State != StateReady || s.Starts != 1 {
		t.Errorf("a live server was dropped: %+v", s)
	}
	// A server that stops answering altogether is killed and restarted.
	pid := pidOf(t, pidfile)
	fr, err := m.CallTool(context.Background(), "fake", "freeze", nil)
	if err == nil || !strings.Contains(err.Error(), "does not answer pings") {
		t.Fatalf("freeze: %+v %v", fr, err)
	}
	if s := statusOf(m, "fake"); s.State != StateCrashed || !strings.Contains(s.Error, "stopped answering") {
		t.Errorf("status: %+v", s)
	}
	if alive(pid) {
		t.Error("the frozen server still runs")
	}
	os.Remove(pidfile)
	if _, err := m.CallTool(context.Background(), "fake", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("not restarted: %v", err)
	}
}

func TestCancelledCallKeepsTheServer(t *testing.T) {
	hanging := filepath.Join(t.TempDir(), "hanging")
	m := newManager(t, Options{Servers: []ServerConfig{fake(t, "fake", "ok", "HEARTH_FAKE_HANGING", hanging)}})
	// The server is ready first: the cancel is of a call, not of a start.
	if err := m.Wait(hangCtx(t)); err != nil {
		t.Fatal(err)
	}
	if s := statusOf(m, "fake"); s.State != StateReady {
		t.Fatalf("%+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// The user cancels once the server is working on the call.
		for {
			if _, err := os.Stat(hanging); err == nil || ctx.Err() != nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := m.CallTool(ctx, "fake", "hang", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled call: %v", err)
	}
	if _, err := os.Stat(hanging); err != nil {
		t.Fatal("the call was cancelled before the server had it")
	}
	if s := statusOf(m, "fake"); s.State != StateReady || s.Starts != 1 {
		t.Errorf("the user's cancel dropped the server: %+v", s)
	}
	// The same process takes the next call.
	if _, err := m.CallTool(hangCtx(t), "fake", "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Errorf("after the cancel: %v", err)
	}
	if s := statusOf(m, "fake"); s.Starts != 1 {
		t.Errorf("the server was started again: %+v", s)
	}
}

// hangCtx bounds a wait that only a hang would make long.
func hangCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func TestCloseEndsEveryProcess(t *testing.T) {
	dir := t.TempDir()
	var cfgs []ServerConfig
	for i := range 3 {
		cfgs = append(cfgs, fake(t, "s"+strconv.Itoa(i), "ok", "HEARTH_FAKE_PIDFILE", filepath.Join(dir, strconv.Itoa(i))))
	}
	m, err := New(Options{Servers: cfgs})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	m.Wait(context.Background())
	var pids []int
	for i := range 3 {
		pids = append(pids, pidOf(t, filepath.Join(dir, strconv.Itoa(i))))
	}
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Close() // it returns once they are gone (a hang would be caught by go test's own limit)
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d outlived Close", pid)
		}
	}
	tl, _ := reg.Get("s0__echo")
	if _, err := run(t, tl, `{"text":"x"}`); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("a tool of a closed manager: %v", err)
	}
	if s := statusOf(m, "s0"); s.State != StateClosed {
		t.Errorf("%+v", s)
	}
}

func TestAttachFiltersAndLateServers(t *testing.T) {
	slow := fake(t, "late", "ok", "HEARTH_FAKE_DELAY", "300ms")
	m := newManager(t, Options{Servers: []ServerConfig{slow}})
	reg, _ := tool.NewRegistry(tool.MustFunc("late__echo", "a built-in that takes the name", tool.ReadOnly, func(context.Context, struct{}) (string, error) { return "", nil }))
	m.Attach(reg, func(t tool.Tool) bool { return tool.Allows([]string{"*", "!late__fail"}, t) })
	m.Start()
	if len(reg.Names()) != 1 {
		t.Fatal("tools before the server is ready")
	}
	m.Wait(context.Background())
	names := strings.Join(reg.Names(), ",")
	if !strings.Contains(names, "late__weather") || strings.Contains(names, "late__fail") {
		t.Errorf("after start: %s", names)
	}
	if s := statusOf(m, "late"); len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], "late__echo not offered") {
		t.Errorf("a name clash is not reported: %+v", s.Warnings)
	}
}

func TestConcurrentCallsShareOneStart(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	m := newManager(t, Options{Servers: []ServerConfig{fake(t, "fake", "ok", "HEARTH_FAKE_PIDFILE", pidfile)}})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := m.CallTool(context.Background(), "fake", "echo", json.RawMessage(`{"text":"x"}`))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if s := statusOf(m, "fake"); s.Starts != 1 {
		t.Errorf("%d starts for concurrent first calls", s.Starts)
	}
}

func TestHTTPTransports(t *testing.T) {
	seen := make(chan string, 100)
	srv := httptest.NewServer(httpFake(seen))
	defer srv.Close()
	for _, c := range []struct {
		path string
		tr   Transport
		want string
	}{
		{"/mcp", "", "http"},
		{"/mcp", TransportHTTP, "http"},
		{"/sse", "", "sse"},
		{"/sse", TransportSSE, "sse"},
	} {
		t.Run(c.path+"/"+string(c.tr), func(t *testing.T) {
			m := newManager(t, Options{
				Servers: []ServerConfig{{Name: "web", URL: srv.URL + c.path, Transport: c.tr, Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}}},
				Getenv:  func(k string) string { return map[string]string{"TOKEN": "s3cret"}[k] },
			})
			res, err := m.CallTool(context.Background(), "web", "echo", json.RawMessage(`{"text":"over http"}`))
			if err != nil || res.Text != "echo: over http" {
				t.Fatalf("%+v %v", res, err)
			}
			st := statusOf(m, "web")
			if st.Transport != c.want || st.State != StateReady {
				t.Errorf("%+v", st)
			}
			if h := <-seen; h != "Bearer s3cret" {
				t.Errorf("header %q", h)
			}
			m.Close()
		})
	}
}

func TestHTTPServerGone(t *testing.T) {
	srv := httptest.NewServer(httpFake(nil))
	url := srv.URL + "/mcp"
	srv.Close()
	m := newManager(t, Options{Servers: []ServerConfig{{Name: "web", URL: url, StartTimeout: 2 * time.Second}}})
	m.Prepare(context.Background())
	if s := statusOf(m, "web"); s.State != StateFailed || !strings.Contains(s.Error, "connection refused") {
		t.Errorf("%+v", s)
	}
}

func TestRetryOnLaterTurns(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ready")
	// A server that fails until a file exists.
	script := filepath.Join(t.TempDir(), "srv.sh")
	exe, _ := os.Executable()
	os.WriteFile(script, []byte("#!/bin/sh\n[ -f "+marker+" ] || { echo 'not yet' >&2; exit 1; }\nHEARTH_MCP_FAKE=ok exec "+exe+" -test.run='^$'\n"), 0o755)
	m := newManager(t, Options{Servers: []ServerConfig{{Name: "flaky", Command: script}}, RetryAfter: time.Millisecond})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Prepare(context.Background())
	if s := statusOf(m, "flaky"); s.State != StateFailed || !strings.Contains(s.Error, "not yet") {
		t.Fatalf("%+v", s)
	}
	os.WriteFile(marker, nil, 0o644)
	time.Sleep(5 * time.Millisecond)
	m.Prepare(context.Background()) // the next turn: started again in the background
	m.Wait(context.Background())
	if _, ok := reg.Get("flaky__echo"); !ok {
		t.Errorf("not restarted on the next turn: %+v", statusOf(m, "flaky"))
	}
}

func TestRestart(t *testing.T) {
	m := newManager(t, Options{Servers: []ServerConfig{fake(t, "fake", "ok")}})
	if err := m.Restart(context.Background(), "fake"); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(context.Background(), "fake"); err != nil {
		t.Fatal(err)
	}
	if s := statusOf(m, "fake"); s.State != StateReady || s.Starts != 2 {
		t.Errorf("%+v", s)
	}
	if err := m.Restart(context.Background(), "nope"); err == nil || !strings.Contains(err.Error(), "configured: fake") {
		t.Error(err)
	}
}

func TestPrepareWaitsBoundedly(t *testing.T) {
	// The server cannot finish starting until the test opens its gate
	// (a barrier of two: its own file and the test's), so the first turn's
	// wait can only end by PrepareWait, the limit under test.
	gate := t.TempDir()
	slow := fake(t, "slow", "ok", "HEARTH_FAKE_BARRIER", gate+":2")
	slow.StartTimeout = 5 * time.Minute
	m := newManager(t, Options{Servers: []ServerConfig{slow}, PrepareWait: 200 * time.Millisecond})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Start()
	m.Prepare(context.Background())
	if s := statusOf(m, "slow"); s.State != StateStarting {
		t.Errorf("%+v", s)
	}
	os.WriteFile(filepath.Join(gate, "open"), nil, 0o644)
	// It goes on starting, and its tools arrive in the registry the turn
	// reads at each model call.
	m.Wait(context.Background())
	if _, ok := reg.Get("slow__echo"); !ok {
		t.Error("the late server's tools never arrived")
	}
}
