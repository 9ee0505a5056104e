package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/tool"
)

// npmServers returns the directory scripts/mcp-servers.sh installed the
// real MCP servers into, or skips the test.
func npmServers(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("HEARTH_MCP_SERVERS")
	if dir == "" {
		t.Skip("set HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh) to run against the real npm MCP servers (scripts/test.sh does)")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the npm MCP servers need it")
	}
	for _, p := range []string{everythingJS(dir), filesystemJS(dir)} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("HEARTH_MCP_SERVERS=%s lacks %s: run scripts/mcp-servers.sh", dir, p)
		}
	}
	return dir
}

func everythingJS(dir string) string {
	return filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

func filesystemJS(dir string) string {
	return filepath.Join(dir, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js")
}

func everything(dir string) ServerConfig {
	return ServerConfig{Name: "everything", Command: "node", Args: []string{everythingJS(dir), "stdio"}}
}

func TestRealEverythingOverStdio(t *testing.T) {
	dir := npmServers(t)
	images := t.TempDir()
	m := newManager(t, Options{Servers: []ServerConfig{everything(dir)}, ImageDir: images})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	m.Prepare(context.Background())
	st := statusOf(m, "everything")
	if st.State != StateReady {
		t.Fatalf("%+v", st)
	}
	t.Logf("server-everything: %s, %d tools, %d resources, prompts %v, started in %d ms", st.Server, len(st.Tools), st.Resources, st.Prompts, st.StartMS)
	for _, want := range []string{"everything__echo", "everything__get-sum", "everything__get-tiny-image", "everything__get-structured-content", "everything__trigger-long-running-operation", "everything__read_resource"} {
		if _, ok := reg.Get(want); !ok {
			t.Errorf("no %s in %v", want, reg.Names())
		}
	}
	call := func(name, args string) string {
		t.Helper()
		tl, ok := reg.Get(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		if err := reg.Validate(name, json.RawMessage(args)); err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		out, err := run(t, tl, args)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out
	}
	if out := call("everything__echo", `{"message":"hello"}`); !strings.Contains(out, "hello") {
		t.Errorf("echo: %q", out)
	}
	if out := call("everything__get-sum", `{"a":2,"b":40}`); !strings.Contains(out, "42") {
		t.Errorf("get-sum: %q", out)
	}
	if out := call("everything__get-tiny-image", `{}`); !strings.Contains(out, "[image: image/png") || !strings.Contains(out, images) {
		t.Errorf("image: %q", out)
	}
	if out := call("everything__get-structured-content", `{"location":"Chicago"}`); !strings.Contains(out, "temperature") {
		t.Errorf("structured: %q", out)
	}
	res, err := m.CallTool(context.Background(), "everything", "get-structured-content", json.RawMessage(`{"location":"Chicago"}`))
	if err != nil || !strings.Contains(string(res.Structured), "temperature") {
		t.Errorf("structured: %+v %v", res, err)
	}
	rs := m.Resources()
	if len(rs) == 0 {
		t.Fatal("no resources")
	}
	if out := call("everything__read_resource", fmt.Sprintf(`{"uri":%q}`, rs[0].URI)); len(out) < 20 {
		t.Errorf("resource %s: %q", rs[0].URI, out)
	}
	msgs, err := m.GetPrompt(context.Background(), "everything", "simple-prompt", nil)
	if err != nil || len(msgs) == 0 || msgs[0].Content == "" {
		t.Errorf("prompt: %+v %v", msgs, err)
	}
	// A long operation reports progress.
	lr, _ := reg.Get("everything__trigger-long-running-operation")
	var notes []string
	r, err := lr.Run(context.Background(), tool.Call{Args: json.RawMessage(`{"duration":1,"steps":2}`), Progress: func(s string) { notes = append(notes, s) }})
	// The last note can come after the answer (notifications are handled
	// apart from responses): it is then dropped.
	if err != nil || !strings.Contains(r.Output, "completed") || len(notes) == 0 || notes[0] != "progress 1/2\n" {
		t.Errorf("long op: %q %v %q", r.Output, err, notes)
	}
}

func TestRealEverythingKilledMidCall(t *testing.T) {
	dir := npmServers(t)
	m := newManager(t, Options{Servers: []ServerConfig{everything(dir)}})
	m.Prepare(context.Background())
	pid := statusOf(m, "everything").PID
	if pid == 0 {
		t.Fatalf("%+v", statusOf(m, "everything"))
	}
	progressed := make(chan struct{}, 10)
	done := make(chan error, 1)
	go func() {
		_, err := m.callTool(context.Background(), m.byName["everything"], "trigger-long-running-operation", json.RawMessage(`{"duration":30,"steps":60}`), func(string) { progressed <- struct{}{} })
		done <- err
	}()
	select {
	case <-progressed: // mid-call
	case <-time.After(10 * time.Second):
		t.Fatal("no progress")
	}
	syscall.Kill(pid, syscall.SIGKILL)
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "signal: killed") || !strings.Contains(err.Error(), "started again on the next call") {
			t.Errorf("%v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not notice the killed server")
	}
	if s := statusOf(m, "everything"); s.State != StateCrashed {
		t.Errorf("%+v", s)
	}
	res, err := m.CallTool(context.Background(), "everything", "echo", json.RawMessage(`{"message":"back"}`))
	if err != nil || !strings.Contains(res.Text, "back") {
		t.Fatalf("after the restart: %+v %v", res, err)
	}
	if s := statusOf(m, "everything"); s.Starts != 2 || alive(pid) {
		t.Errorf("%+v (old pid alive: %v)", s, alive(pid))
	}
}

func TestRealFilesystem(t *testing.T) {
	dir := npmServers(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the key is under the mat\n"), 0o644)
	os.Mkdir(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "main.go"), []byte("package main\n"), 0o644)
	cfg := ServerConfig{Name: "fs", Command: "node", Args: []string{filesystemJS(dir), root}, Exclude: []string{"move_file"}}
	m := newManager(t, Options{Servers: []ServerConfig{cfg}})
	reg, _ := tool.NewRegistry()
	m.Attach(reg, func(t tool.Tool) bool { return tool.Allows([]string{"fs__*", "!fs__write_file"}, t) })
	m.Prepare(context.Background())
	if s := statusOf(m, "fs"); s.State != StateReady {
		t.Fatalf("%+v", s)
	}
	for name, kind := range map[string]tool.Kind{"fs__read_text_file": tool.ReadOnly, "fs__list_directory": tool.ReadOnly, "fs__edit_file": tool.Execute} {
		tl, ok := reg.Get(name)
		if !ok || tl.Kind() != kind {
			t.Errorf("%s: %v %v", name, ok, tl)
		}
	}
	for _, gone := range []string{"fs__write_file", "fs__move_file"} {
		if _, ok := reg.Get(gone); ok {
			t.Errorf("%s offered", gone)
		}
	}
	rd, _ := reg.Get("fs__read_text_file")
	out, err := run(t, rd, fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "notes.txt")))
	if err != nil || !strings.Contains(out, "under the mat") {
		t.Errorf("read: %q %v", out, err)
	}
	ls, _ := reg.Get("fs__list_directory")
	out, err = run(t, ls, fmt.Sprintf(`{"path":%q}`, root))
	if err != nil || !strings.Contains(out, "[DIR] src") || !strings.Contains(out, "[FILE] notes.txt") {
		t.Errorf("list: %q %v", out, err)
	}
	if _, err := run(t, rd, `{"path":"/etc/passwd"}`); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("outside its directory: %v", err)
	}
}

// freePort returns a port nothing listens on.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startHTTPEverything runs server-everything in an HTTP mode and returns
// its process once it listens.
func startHTTPEverything(t *testing.T, dir, mode string, port int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("node", everythingJS(dir), mode)
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = procAttr()
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); close(waited) }()
	t.Cleanup(func() {
		signalGroup(cmd.Process, true)
		<-waited
	})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
		}
	}()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return cmd
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("server-everything %s did not listen on %d", mode, port)
	return nil
}

func TestRealEverythingOverHTTP(t *testing.T) {
	dir := npmServers(t)
	for _, c := range []struct{ mode, path, want string }{
		{"streamableHttp", "/mcp", "http"},
		{"sse", "/sse", "sse"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			port := freePort(t)
			cmd := startHTTPEverything(t, dir, c.mode, port)
			url := fmt.Sprintf("http://127.0.0.1:%d%s", port, c.path)
			m := newManager(t, Options{Servers: []ServerConfig{{Name: "web", URL: url, StartTimeout: 2 * time.Minute, CallTimeout: 2 * time.Minute}}})
			reg, _ := tool.NewRegistry()
			m.Attach(reg, nil)
			m.Prepare(context.Background())
			st := statusOf(m, "web")
			if st.State != StateReady || st.Transport != c.want || len(st.Tools) < 5 {
				t.Fatalf("%+v", st)
			}
			sum, _ := reg.Get("web__get-sum")
			if out, err := run(t, sum, `{"a":1,"b":2}`); err != nil || !strings.Contains(out, "3") {
				t.Errorf("get-sum: %q %v", out, err)
			}
			if c.mode != "streamableHttp" {
				return
			}
			// The server goes away: the call fails clearly, the agent
			// goes on, and the next call after it is back reconnects.
			signalGroup(cmd.Process, true)
			time.Sleep(100 * time.Millisecond)
			if _, err := run(t, sum, `{"a":1,"b":2}`); err == nil || !strings.Contains(err.Error(), "MCP server web") {
				t.Errorf("a call to a dead HTTP server: %v", err)
			} else {
				t.Logf("a call to a dead HTTP server: %v (%+v)", err, statusOf(m, "web"))
			}
			startHTTPEverything(t, dir, c.mode, port)
			if out, err := run(t, sum, `{"a":5,"b":5}`); err != nil || !strings.Contains(out, "10") {
				t.Errorf("after the server came back: %q %v (%+v)", out, err, statusOf(m, "web"))
			}
		})
	}
}

// TestRealServersInParallel starts both npm servers and one that never
// answers. The npm servers become ready while the silent one is still
// starting (so they were not waiting for it: the starts run in parallel),
// and the first turn waits for the silent one no longer than its start
// timeout: Prepare returns with it failed by that limit, not by
// PrepareWait, and the others ready. How long any of it takes is not
// asserted (BenchmarkStartup measures start-up).
func TestRealServersInParallel(t *testing.T) {
	dir := npmServers(t)
	root := t.TempDir()
	servers := func(silentTimeout time.Duration) []ServerConfig {
		silent := fake(t, "silent", "silent")
		silent.StartTimeout = silentTimeout
		// The silent one comes first: started one after the other, the
		// others would wait for its start to fail.
		e := everything(dir)
		e.StartTimeout = 2 * time.Minute // only a hang detector
		return []ServerConfig{
			silent,
			e,
			{Name: "fs", Command: "node", Args: []string{filesystemJS(dir), root}, StartTimeout: 2 * time.Minute},
		}
	}
	t.Run("parallel", func(t *testing.T) {
		m := newManager(t, Options{Servers: servers(time.Hour)})
		go m.Start() // returns at once; if it did not, the wait below would say so
		ready := func() bool {
			return statusOf(m, "everything").State == StateReady && statusOf(m, "fs").State == StateReady
		}
		for deadline := time.Now().Add(3 * time.Minute); !ready(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) { // a hang detector
				t.Fatalf("the npm servers were not ready while the silent one was starting: %+v", m.Status())
			}
		}
		if s := statusOf(m, "silent"); s.State != StateStarting {
			t.Errorf("silent: %+v", s)
		}
	})
	t.Run("prepare", func(t *testing.T) {
		m := newManager(t, Options{Servers: servers(2 * time.Second), PrepareWait: 5 * time.Minute})
		m.Start()
		m.Prepare(context.Background())
		for _, s := range m.Status() {
			switch {
			case s.Name == "silent":
				if s.State != StateFailed || !strings.Contains(s.Error, "did not finish starting within 2s") {
					t.Errorf("%s: %+v", s.Name, s)
				}
			case s.State != StateReady:
				t.Errorf("%s: %+v", s.Name, s)
			}
		}
	})
}

// TestRealMCPToolInAnAgentTurn runs a scripted model that calls MCP tools
// through the agent: a read-only one runs at once, one that is not asks
// the same approval hook as built-in tools.
func TestRealMCPToolInAnAgentTurn(t *testing.T) {
	dir := npmServers(t)
	m := newManager(t, Options{Servers: []ServerConfig{everything(dir)}})
	m.Start()
	reg, _ := tool.NewRegistry()
	m.Attach(reg, nil)
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("everything__get-sum", `{"a":20,"b":22}`)),
		llmtest.OllamaStream("m", llmtest.Call("everything__toggle-simulated-logging", `{}`)),
		llmtest.OllamaStream("m", llmtest.Text("The sum is 42.")))
	var asked []agent.Request
	a := &agent.Agent{
		Provider: ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), Model: "m", Tools: reg,
		Prepare: m.Prepare,
	}
	o := agent.RunOptions{Approver: agent.ApproverFunc(func(ctx context.Context, r agent.Request) (agent.Answer, error) {
		asked = append(asked, r)
		return agent.Answer{Decision: agent.Deny, Message: "not now"}, nil
	})}
	var results []agent.Event
	res := a.RunWith(context.Background(), []llm.Message{{Role: llm.RoleUser, Content: "add 20 and 22"}}, o, func(e agent.Event) {
		if e.Type == agent.EventToolResult {
			results = append(results, e)
		}
	})
	if res.Reason != agent.DoneStop || res.Text != "The sum is 42." {
		t.Fatalf("%+v", res)
	}
	if len(results) != 2 || !results[0].OK || !strings.Contains(results[0].Output, "42") {
		t.Fatalf("%+v", results)
	}
	if len(asked) != 1 || asked[0].Tool != "everything__toggle-simulated-logging" || asked[0].Kind != tool.Execute ||
		!strings.Contains(asked[0].Reason, "toggle-simulated-logging on MCP server everything") {
		t.Errorf("approvals: %+v", asked)
	}
	if results[1].OK || !strings.Contains(results[1].Error, "denied") {
		t.Errorf("%+v", results[1])
	}
	// The model saw the tools on its first call, though the server was
	// still starting when the turn began.
	reqs := srv.RequestsTo("/api/chat")
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "everything__get-sum") {
		t.Error("the first model call did not offer the MCP tools")
	}
}
