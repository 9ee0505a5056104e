package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

func call(cmd string) tool.Call {
	b, _ := json.Marshal(Args{Command: cmd})
	return tool.Call{ID: "call_1", Args: b}
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) S …: the state follows the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

// readPid reads the pid a command's process wrote to path, as this test
// sees it: a process in the shell host's PID namespace wrote its pid
// there, which Hearth's namespace numbers differently (outerPid). It is 0
// when the process is gone.
func readPid(t *testing.T, path string) int {
	t.Helper()
	return outerPid(readPidRaw(t, path), filepath.Dir(filepath.Dir(path)))
}

// readPidRaw reads the pid written to path, as it is.
func readPidRaw(t *testing.T, path string) int {
	t.Helper()
	var b []byte
	var err error
	// As long as it takes a loaded machine to start the process (a
	// minute is the hang bound).
	for i := 0; i < 3000; i++ {
		if b, err = os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("no pid in %s: %q %v", path, b, err)
	}
	return pid
}

// kernelRefused reports whether output shows the kernel refusing a write:
// EROFS where the shell host's mounts are read-only, EACCES from Landlock
// where there are no namespaces.
func kernelRefused(output string) bool {
	return strings.Contains(output, "Read-only file system") || strings.Contains(output, "Permission denied")
}

func waitDead(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d is still running", pid)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

const spawnScript = `#!/bin/sh
sleep 60 &
echo $! > grandchild.pid
echo $$ > child.pid
wait
`

// growingTimeout runs try with a timeout of 1 s, then 2, 4, 8 and 16 s,
// until try reports that the command got as far as the test needs (its
// processes started, their pids written) before the timeout fired: on a
// loaded machine a program can take seconds to start. What is tested is
// what a timeout does, never how soon.
func growingTimeout(t *testing.T, try func(timeout time.Duration) bool) {
	t.Helper()
	for d := time.Second; d <= 16*time.Second; d *= 2 {
		if try(d) {
			return
		}
		t.Logf("the command had not started its processes within %v: again with twice the time", d)
	}
	t.Fatal("the command never started its processes before its timeout")
}

// written reports whether a command wrote a pid to path.
func written(path string) bool {
	b, err := os.ReadFile(path)
	return err == nil && len(strings.TrimSpace(string(b))) > 0
}

// A timeout stops the command, and its whole process group dies with it:
// the grandchild too.
func TestTimeoutKillsTheProcessGroup(t *testing.T) {
	slow(t)
	growingTimeout(t, func(timeout time.Duration) bool {
		f := newFixture(t, false, func(c *Config) { c.Timeout = timeout })
		if err := os.WriteFile(filepath.Join(f.ws, "spawn.sh"), []byte(spawnScript), 0o755); err != nil {
			t.Fatal(err)
		}
		res, err := f.tool.Run(context.Background(), call("./spawn.sh"))
		if err == nil || !strings.Contains(err.Error(), "timed out after "+timeout.String()) {
			t.Fatalf("want a timeout error, got %v %q", err, res.Output)
		}
		if !written(filepath.Join(f.ws, "child.pid")) || !written(filepath.Join(f.ws, "grandchild.pid")) {
			return false
		}
		waitDead(t, readPid(t, filepath.Join(f.ws, "child.pid")), readPid(t, filepath.Join(f.ws, "grandchild.pid")))
		return true
	})
}

// A process that ignores SIGTERM gets SIGKILL after the grace period.
func TestKillEscalatesToSIGKILL(t *testing.T) {
	slow(t)
	growingTimeout(t, func(timeout time.Duration) bool {
		f := newFixture(t, false, func(c *Config) { c.Timeout = timeout; c.KillGrace = 300 * time.Millisecond })
		script := "#!/bin/sh\ntrap '' TERM\n" + strings.TrimPrefix(spawnScript, "#!/bin/sh\n")
		if err := os.WriteFile(filepath.Join(f.ws, "stubborn.sh"), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		if _, err := f.tool.Run(context.Background(), call("./stubborn.sh")); err == nil {
			t.Fatal("the stubborn script was not stopped")
		}
		if !written(filepath.Join(f.ws, "child.pid")) || !written(filepath.Join(f.ws, "grandchild.pid")) {
			return false
		}
		waitDead(t, readPid(t, filepath.Join(f.ws, "child.pid")), readPid(t, filepath.Join(f.ws, "grandchild.pid")))
		return true
	})
}

func TestCancelStopsEverything(t *testing.T) {
	f := newFixture(t, false)
	if err := os.WriteFile(filepath.Join(f.ws, "spawn.sh"), []byte(spawnScript), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the grandchild runs (the fixture's timeout, 10 s,
		// is the bound if it never does, and fails the test).
		for !written(filepath.Join(f.ws, "grandchild.pid")) || !written(filepath.Join(f.ws, "child.pid")) {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	_, err := f.tool.Run(ctx, call("echo started; ./spawn.sh"))
	cancel()
	if err == nil || !strings.Contains(err.Error(), "[cancelled") || !strings.Contains(err.Error(), "started") {
		t.Fatalf("want a cancellation with the output so far, got %v", err)
	}
	waitDead(t, readPid(t, filepath.Join(f.ws, "child.pid")), readPid(t, filepath.Join(f.ws, "grandchild.pid")))
}

// Nothing a command starts outlives the call.
func TestBackgroundProcessesDieWithTheCall(t *testing.T) {
	f := newFixture(t, false)
	bg := "#!/bin/sh\necho $$ > bg.pid\nexec sleep 100\n"
	if err := os.WriteFile(filepath.Join(f.ws, "bg.sh"), []byte(bg), 0o755); err != nil {
		t.Fatal(err)
	}
	// A call that waited for its background job (100 s) would end at the
	// fixture's timeout (10 s) with an error.
	_, err := f.tool.Run(context.Background(), call("./bg.sh & while [ ! -s bg.pid ]; do sleep 0.05; done; echo launched"))
	if err != nil {
		t.Fatal(err)
	}
	waitDead(t, readPid(t, filepath.Join(f.ws, "bg.pid")))
}

// A program writing gigabytes is stopped promptly, and only the start
// and the end of its output are kept.
func TestOutputFloodIsCapped(t *testing.T) {
	f := newFixture(t, false, func(c *Config) { c.OutputCap = 1000; c.OutputLimit = 8 << 20 })
	var progressed int
	var mu sync.Mutex
	c := call("yes flood")
	c.Progress = func(s string) { mu.Lock(); progressed += len(s); mu.Unlock() }
	_, err := f.tool.Run(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "printed more than 8388608 bytes") {
		t.Fatalf("want an output-limit error, got %.300v", err)
	}
	// (A flood the limit did not stop would end at the fixture's
	// timeout, with another error.)
	msg := err.Error()
	if len(msg) > 1500 || !strings.HasPrefix(msg, "flood\nflood\n") || !strings.Contains(msg, "bytes of output dropped") {
		t.Errorf("kept output: %d bytes:\n%s", len(msg), msg)
	}
	mu.Lock()
	defer mu.Unlock()
	if progressed > 2000 {
		t.Errorf("streamed %d bytes to progress; want about the kept start", progressed)
	}
}

func TestOutputKeepsStartAndEnd(t *testing.T) {
	f := newFixture(t, false, func(c *Config) { c.OutputCap = 2000 })
	res, err := f.tool.Run(context.Background(), call("seq 1 100000"))
	if err != nil {
		t.Fatal(err)
	}
	out := res.Output
	if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "99999\n100000\n") {
		t.Errorf("want the start and the end, got:\n%s", out)
	}
	if !strings.Contains(out, "bytes of output dropped") || len(out) > 2100 {
		t.Errorf("want a note of what was dropped and at most the cap, got %d bytes", len(out))
	}
}

func TestSecretsAreScrubbed(t *testing.T) {
	f := newFixture(t, false, func(c *Config) { c.KeepEnv = []string{"MY_SERVICE_PASSWORD"} })
	res, err := f.tool.Run(context.Background(), call(`env; echo "key=[$OPENAI_API_KEY]"; sh -c 'echo "token=[$GITHUB_TOKEN]"'`))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"sk-test-secret", "ghp_testsecret", "hearth-secret", "aws-secret", "postgres://user:pw"} {
		if strings.Contains(res.Output, secret) {
			t.Errorf("secret %q reached the command:\n%s", secret, res.Output)
		}
	}
	for _, want := range []string{"INNOCENT=visible", "key=[]", "token=[]", "MY_SERVICE_PASSWORD=hunter2", "TMPDIR=" + f.tool.tmp} {
		if !strings.Contains(res.Output, want) {
			t.Errorf("missing %q:\n%s", want, res.Output)
		}
	}
}

// Output reaches Call.Progress while the command runs, not at the end.
func TestProgressStreams(t *testing.T) {
	f := newFixture(t, false)
	// The command prints its first line, then waits for a file that only
	// the Progress callback makes, once it has seen that line: it finishes
	// only if its output streams while it runs. No clocks: a slow machine
	// is slower, not wrong.
	gate := filepath.Join(f.ws, "gate")
	var mu sync.Mutex
	var seen strings.Builder
	c := call("echo first; while [ ! -e gate ]; do sleep 0.02; done; echo second")
	c.Progress = func(s string) {
		mu.Lock()
		defer mu.Unlock()
		seen.WriteString(s)
		if strings.Contains(seen.String(), "first\n") && !strings.Contains(seen.String(), "second") {
			_ = os.WriteFile(gate, nil, 0o644)
		}
	}
	res, err := f.tool.Run(context.Background(), c)
	if err != nil || res.Output != "first\nsecond\n" {
		t.Fatalf("%q %v (the first line was not streamed while the command ran?)", res.Output, err)
	}
}

// The kernel stops a program that writes outside the workspace even when
// the policy cannot see what it will do: a script taking the path as an
// argument.
func TestLandlockStopsAScriptTheParserCannotSee(t *testing.T) {
	f := newFixture(t, false)
	if !f.tool.Sandbox().Active {
		t.Skipf("no Landlock on this kernel: %s", f.tool.Sandbox().Note)
	}
	script := "#!/bin/sh\necho pwned > \"$1\" && echo wrote\n"
	if err := os.WriteFile(filepath.Join(f.ws, "w.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(f.out, "pwned")
	res, err := f.tool.Run(context.Background(), call("./w.sh "+target+"; ./w.sh inside.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !kernelRefused(res.Output) || strings.Count(res.Output, "wrote") != 1 {
		t.Errorf("want one denial and one write:\n%s", res.Output)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the file outside the workspace was written")
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "inside.txt")); string(b) != "pwned\n" {
		t.Errorf("the write inside the workspace failed: %q", b)
	}
}

func TestRunsCommands(t *testing.T) {
	f := newFixture(t, false)
	if err := os.Mkdir(filepath.Join(f.ws, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ cmd, dir, want string }{
		{"echo hello", "", "hello\n"},
		{"printf 'b\\na\\n' | sort | head -1", "", "a\n"},
		{"echo one > f && echo two >> f && cat f", "", "one\ntwo\n"},
		{"ls nope 2>&1 | grep -c 'No such'", "", "1\n"},
		{"echo err >&2", "", "err\n"},
		{"echo x > /dev/null && echo ok", "", "ok\n"},
		{"pwd", "sub", filepath.Join("sub") + "\n"},
		{"cd sub && pwd", "", "sub\n"},
		{"cat", "", "[no output; exit status 0]"},
		{"false", "", "[exit status 1]"},
		{"exit 3", "", "[exit status 3]"},
		{"nosuchcommand-xyz", "", "nosuchcommand-xyz: command not found\n[exit status 127]"},
		{"bash -c 'echo $0 $1' a b", "", "a b\n"},
		{"x=$(echo hi | tr a-z A-Z); echo $x", "", "HI\n"},
		{"for i in 1 2 3; do echo $i; done | paste -sd,", "", "1,2,3\n"},
		{"test -d $TMPDIR && touch $TMPDIR/x && echo tmp-ok", "", "tmp-ok\n"},
		{"cat <<EOF\nheredoc\nEOF", "", "heredoc\n"},
		{"diff <(echo a) <(echo a) && echo same", "", "same\n"},
	} {
		b, _ := json.Marshal(Args{Command: tc.cmd, Directory: tc.dir})
		res, err := f.tool.Run(context.Background(), tool.Call{Args: b})
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		got := res.Output
		if tc.cmd == "pwd" || strings.HasPrefix(tc.cmd, "cd sub") {
			got = strings.TrimPrefix(got, f.ws+"/")
		}
		if got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestBadArguments(t *testing.T) {
	f := newFixture(t, true)
	for _, tc := range []struct{ args, want string }{
		{`{}`, "command is empty"},
		{`{"command":"  "}`, "command is empty"},
		{`{"command":"ls","extra":1}`, "unknown field"},
		{`{"command":"ls","directory":"../.."}`, "outside the workspace"},
		{`{"command":"ls","directory":"/etc"}`, "outside the workspace"},
		{`{"command":"ls","directory":"missing"}`, "does not exist"},
		{`{"command":"echo 'unclosed"}`, "cannot parse"},
		{`not json`, "reading the arguments"},
	} {
		_, err := f.tool.Run(context.Background(), tool.Call{Args: json.RawMessage(tc.args)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.args, err, tc.want)
		}
	}
}

// A refusal is an error that names the rule, so the model can correct
// itself; output produced before a refusal at run time is kept.
func TestRefusalMessages(t *testing.T) {
	f := newFixture(t, true)
	_, err := f.tool.Run(context.Background(), call("rm -rf /"))
	var r *Refusal
	if !errors.As(err, &r) || r.Rule != RuleRoot {
		t.Fatalf("want a *Refusal by rule root, got %T %v", err, err)
	}
	if !strings.Contains(err.Error(), "refused (rule root): `rm -rf /`") || !strings.Contains(err.Error(), f.ws) {
		t.Errorf("message: %v", err)
	}
	_, err = f.tool.Run(context.Background(), call("echo before; X=/; rm -rf $X; echo after"))
	if err == nil || !strings.HasPrefix(err.Error(), "before\n") || strings.Contains(err.Error(), "after") || !strings.Contains(err.Error(), "rule root") {
		t.Errorf("want the output before the refusal and nothing after: %v", err)
	}
}

func TestSpecAndDescribe(t *testing.T) {
	f := newFixture(t, true)
	spec := f.tool.Spec()
	if spec.Name != "run_shell_command" || f.tool.Kind() != tool.Execute {
		t.Errorf("%+v %v", spec, f.tool.Kind())
	}
	t.Logf("description %d bytes, parameters %d bytes", len(spec.Description), len(spec.Parameters))
	if n := len(spec.Description); n > 600 {
		t.Errorf("description is %d bytes; keep it under 600 for small models", n)
	}
	if n := len(spec.Description) + len(spec.Parameters); n > 1100 {
		t.Errorf("the whole definition is %d bytes", n)
	}
	var schema map[string]any
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	reg, err := tool.NewRegistry(f.tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Validate(Name, json.RawMessage(`{"command":"ls","directory":"src"}`)); err != nil {
		t.Error(err)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"command":"go test ./..."}`, "run `go test ./...`"},
		{`{"command":"make","directory":"src","description":"build it"}`, "run `make` in src (build it)"},
		{`{"command":"a\n  b"}`, "run `a b`"},
		{`{}`, "run a shell command (invalid arguments)"},
	} {
		if got := f.tool.Describe(json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("Describe(%s) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestConcurrentCalls(t *testing.T) {
	f := newFixture(t, false)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, err := f.tool.Run(context.Background(), call(fmt.Sprintf("echo %d > f%d; cat f%d", i, i, i)))
			if err != nil || res.Output != fmt.Sprintf("%d\n", i) {
				t.Errorf("%d: %q %v", i, res.Output, err)
			}
		}(i)
	}
	wg.Wait()
}

func TestGoBuildCacheIsWritable(t *testing.T) {
	f := newFixture(t, false)
	if !f.tool.Sandbox().Active {
		t.Skip("no Landlock")
	}
	res, err := f.tool.Run(context.Background(), call("go env GOCACHE"))
	if err != nil {
		t.Skipf("no go: %v", err)
	}
	if !strings.HasPrefix(res.Output, f.tool.TempDir()) {
		t.Errorf("GOCACHE %q is not in the private temp directory, which is all the sandbox lets go write", res.Output)
	}
}

// The private temp directory is made for the first command: a run that
// runs none makes none.
func TestNoTempDirWithoutACommand(t *testing.T) {
	root := t.TempDir()
	ws, err := sandbox.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tl, err := New(Config{Workspace: ws, TempRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 || tl.TempDir() != "" {
		t.Errorf("made before any command: %v %q", entries, tl.TempDir())
	}
	if err := tl.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	// A command after Close (a turn racing the agent's Close) makes none.
	if _, err := tl.Run(context.Background(), call("echo hi")); err == nil {
		t.Error("a closed tool ran a command")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("made after Close: %v", entries)
	}
	if !strings.Contains(tl.Sandbox().Note, "hearth-shell-") && tl.Sandbox().Active {
		t.Errorf("the sandbox note leaves out the temp directory: %s", tl.Sandbox().Note)
	}
}

func TestCloseRemovesTheTempDir(t *testing.T) {
	f := newFixture(t, false)
	if _, err := f.tool.Run(context.Background(), call("mkdir -p $TMPDIR/ro/x && chmod 500 $TMPDIR/ro")); err != nil {
		t.Fatal(err)
	}
	if err := f.tool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.tool.TempDir()); err == nil {
		t.Error("the temp directory is still there")
	}
}

// kill signals what the call started, and nothing else.
func TestKillOnlyOwnProcesses(t *testing.T) {
	f := newFixture(t, false)
	bg := "#!/bin/sh\necho $$ > bg.pid\nexec sleep 100\n"
	if err := os.WriteFile(filepath.Join(f.ws, "bg.sh"), []byte(bg), 0o755); err != nil {
		t.Fatal(err)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Process.Kill()
	res, err := f.tool.Run(context.Background(), call(fmt.Sprintf(
		"./bg.sh & while [ ! -s bg.pid ]; do sleep 0.05; done; kill -9 $(cat bg.pid) && echo killed-own; kill %d || echo refused-other", other.Process.Pid)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "killed-own") || !strings.Contains(res.Output, "refused-other") || !strings.Contains(res.Output, "not a process this command started") {
		t.Errorf("output:\n%s", res.Output)
	}
	if !alive(other.Process.Pid) {
		t.Error("a process the command did not start was killed")
	}
}
