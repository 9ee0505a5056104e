package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperMain is the test binary run as a program by the tests' commands
// (TestMain): a process that detaches itself from the command the way a
// daemon does, so that the tests need neither python nor a compiler.
//
//	hearth-test-escape DIR DELAY [tamper | steal PIDFILE]
//
// starts a copy of itself in a new session (setsid), with an empty
// environment and no standard streams, and exits; that copy starts a
// third and exits too (a double fork). The third, orphaned, writes its pid
// to DIR/escaped.pid, sleeps DELAY, and writes DIR/escaped.marker: the
// marker appears only if it outlived the command. With tamper, the third
// first lowers its hard limits that carry the group's tag (RLIMIT_LOCKS,
// RLIMIT_RTTIME) by one; with steal, it lowers each to the value the
// process whose pid is in PIDFILE has, where that is lower: as close to
// another call's tag as it can get.
func helperMain(mode string, args []string) {
	self, err := os.Executable()
	if err != nil {
		os.Exit(2)
	}
	next := map[string]string{"hearth-test-escape": "hearth-test-escape-1", "hearth-test-escape-1": "hearth-test-escape-2"}
	if n, ok := next[mode]; ok {
		cmd := exec.Command(self, append([]string{n}, args...)...)
		// No environment (so no HEARTH_SANDBOX_GROUP), but for the race
		// detector's exit delay (1 s by default), which would keep the
		// intermediate copies alive.
		cmd.Env = []string{"GORACE=atexit_sleep_ms=0"}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: mode == "hearth-test-escape"}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if mode != "hearth-test-escape-2" || len(args) < 2 {
		os.Exit(2)
	}
	dir := args[0]
	delay, _ := time.ParseDuration(args[1])
	const rlimitLocks, rlimitRTTime = 10, 15
	lower := func(resource int, to func(uint64) uint64) {
		var rl syscall.Rlimit
		if syscall.Getrlimit(resource, &rl) == nil {
			rl.Max = to(rl.Max)
			rl.Cur = min(rl.Cur, rl.Max)
			syscall.Setrlimit(resource, &rl)
		}
	}
	switch {
	case len(args) > 2 && args[2] == "tamper":
		lower(rlimitLocks, func(v uint64) uint64 { return v - 1 })
		lower(rlimitRTTime, func(v uint64) uint64 { return v - 1 })
	case len(args) > 3 && args[2] == "steal":
		b, _ := os.ReadFile(args[3])
		other, _ := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/limits")
		for _, line := range strings.Split(string(other), "\n") {
			for name, res := range map[string]int{"Max file locks": rlimitLocks, "Max realtime timeout": rlimitRTTime} {
				if rest, ok := strings.CutPrefix(line, name); ok {
					if f := strings.Fields(rest); len(f) > 1 {
						if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
							lower(res, func(own uint64) uint64 { return min(own, v) })
						}
					}
				}
			}
		}
	}
	os.WriteFile(filepath.Join(dir, "escaped.pid.tmp"), []byte(strconv.Itoa(os.Getpid())), 0o644)
	os.Rename(filepath.Join(dir, "escaped.pid.tmp"), filepath.Join(dir, "escaped.pid"))
	// Wait for the test to release it (after the call returned), or for
	// delay: a marker then means it outlived the call, whatever the
	// machine's speed.
	for end := time.Now().Add(delay); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "release")); err == nil {
			break
		}
	}
	os.WriteFile(filepath.Join(dir, "escaped.marker"), []byte(fmt.Sprintf("process %d outlived the command\n", os.Getpid())), 0o644)
}

// escaper returns the command line that runs the helper in dir (relative
// to the workspace) and waits until the escaped process has written its
// pid.
func escaper(t *testing.T, dir, delay string, extra ...string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("mkdir -p %s && GORACE=atexit_sleep_ms=0 %q hearth-test-escape %s %s %s; while [ ! -s %s/escaped.pid ]; do sleep 0.02; done; echo launched",
		dir, self, dir, delay, strings.Join(extra, " "), dir)
}

// noMarker releases the escaped process (it writes its marker as soon as
// it sees dir/release, made only now that the call has returned), waits for
// it to be dead, and checks that it did not live to write its marker.
// Nothing here depends on the machine's speed: a process alive when the
// call returned writes the marker.
func noMarker(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	waitDead(t, pid)
	if b, err := os.ReadFile(filepath.Join(dir, "escaped.marker")); err == nil {
		t.Errorf("a process the command started outlived it: %s", b)
	}
}

// The tests below are about sandbox.Group, which stops a call's processes
// where there are no namespaces; with them, the host's PID namespace does
// (TestPIDNamespaceEndsEverything).

// Processes that leave their process group and session (setsid, a double
// fork), with an empty environment, are stopped when the call ends:
// before the fix only process groups were killed, and these ran on.
func TestDetachedProcessesDieWithTheCall(t *testing.T) {
	slow(t)
	for _, tamper := range []bool{false, true} {
		t.Run(fmt.Sprintf("tamper=%v", tamper), func(t *testing.T) {
			f := newFixture(t, false)
			f.tool.conf.DisableNamespaces() // the Group, not the PID namespace: see TestPIDNamespaceEndsEverything
			var extra []string
			if tamper {
				extra = []string{"tamper"}
			}
			res, err := f.tool.Run(context.Background(), call(escaper(t, "e", "30s", extra...)))
			if err != nil || !strings.Contains(res.Output, "launched") {
				t.Fatalf("%q %v", res.Output, err)
			}
			noMarker(t, filepath.Join(f.ws, "e"), readPid(t, filepath.Join(f.ws, "e", "escaped.pid")))
		})
	}
}

// The same with the programs a model would write: python's and perl's
// setsid and double fork.
func TestDetachedScriptsDieWithTheCall(t *testing.T) {
	slow(t)
	scripts := map[string]string{
		"python3": pythonEscaper,
		"perl": `use POSIX;
exit 0 if fork;
POSIX::setsid();
exit 0 if fork;
close STDIN; close STDOUT; close STDERR;
open(my $f, ">", "escaped.pid.tmp"); print $f $$; close $f; rename "escaped.pid.tmp", "escaped.pid";
for (1..3000) { last if -e "release"; select(undef, undef, undef, 0.01); }
open(my $m, ">", "escaped.marker"); print $m "perl outlived the command\n"; close $m;
`,
	}
	for prog, script := range scripts {
		t.Run(prog, func(t *testing.T) {
			if _, err := exec.LookPath(prog); err != nil {
				t.Skipf("no %s", prog)
			}
			f := newFixture(t, false)
			f.tool.conf.DisableNamespaces()
			if err := os.WriteFile(filepath.Join(f.ws, "esc"), []byte(script), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := f.tool.Run(context.Background(), call(prog+" esc; while [ ! -s escaped.pid ]; do sleep 0.02; done; echo launched"))
			if err != nil || !strings.Contains(res.Output, "launched") {
				t.Fatalf("%q %v", res.Output, err)
			}
			noMarker(t, f.ws, readPid(t, filepath.Join(f.ws, "escaped.pid")))
		})
	}
}

// A timeout stops the detached processes too, not only at the end.
func TestTimeoutKillsDetachedProcesses(t *testing.T) {
	slow(t)
	growingTimeout(t, func(timeout time.Duration) bool {
		f := newFixture(t, false, func(c *Config) { c.Timeout = timeout })
		f.tool.conf.DisableNamespaces()
		_, err := f.tool.Run(context.Background(), call(escaper(t, "e", "30s")+"; sleep 60"))
		if err == nil || !strings.Contains(err.Error(), "timed out") {
			t.Fatalf("want a timeout, got %v", err)
		}
		pidFile := filepath.Join(f.ws, "e", "escaped.pid")
		if !written(pidFile) {
			return false
		}
		noMarker(t, filepath.Join(f.ws, "e"), readPid(t, pidFile))
		return true
	})
}

// Concurrent calls are independent: the end of one stops its own detached
// processes, not those of a call still running; and a process cannot pass
// itself off as another call's by changing its tag.
func TestConcurrentCallsKeepTheirDetachedProcesses(t *testing.T) {
	slow(t)
	for _, steal := range []bool{false, true} {
		t.Run(fmt.Sprintf("steal=%v", steal), func(t *testing.T) {
			// A generous timeout: the long call must outlast the short
			// one however loaded the machine is; it is a hang
			// detector, not what is tested.
			f := newFixture(t, false, func(c *Config) { c.Timeout = time.Minute })
			f.tool.conf.DisableNamespaces()
			long := make(chan error, 1)
			go func() {
				_, err := f.tool.Run(context.Background(), call(escaper(t, "a", "30s")+"; sleep 3"))
				long <- err
			}()
			pidA := readPid(t, filepath.Join(f.ws, "a", "escaped.pid"))
			var extra []string
			if steal {
				extra = []string{"steal", "a/escaped.pid"}
			}
			if _, err := f.tool.Run(context.Background(), call(escaper(t, "b", "30s", extra...))); err != nil {
				t.Fatal(err)
			}
			waitDead(t, readPid(t, filepath.Join(f.ws, "b", "escaped.pid")))
			if !alive(pidA) {
				t.Fatal("the end of one call killed a process of another call, still running")
			}
			if err := <-long; err != nil {
				t.Fatal(err)
			}
			waitDead(t, pidA)
		})
	}
}

// Hearth adopts orphans, but kills only those of its commands: a process
// orphaned by another child of Hearth (an MCP server's, say) is left alone.
func TestOtherOrphansAreLeftAlone(t *testing.T) {
	f := newFixture(t, false)
	f.tool.conf.DisableNamespaces()
	// Make sure Hearth is a subreaper before the orphan is made.
	if _, err := f.tool.Run(context.Background(), call("true")); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "orphan.pid")
	orphaner := exec.Command("/bin/sh", "-c", `sleep 30 </dev/null >/dev/null 2>&1 & echo $! > "$1"`, "sh", pidFile)
	if err := orphaner.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := readPidRaw(t, pidFile) // started here, not by a command
	defer syscall.Kill(orphan, syscall.SIGKILL)
	if _, err := f.tool.Run(context.Background(), call(escaper(t, "e", "30s"))); err != nil {
		t.Fatal(err)
	}
	waitDead(t, readPid(t, filepath.Join(f.ws, "e", "escaped.pid")))
	if !alive(orphan) {
		t.Error("an orphan of another child of Hearth was killed")
	}
}

// In namespaces, the shell host is the init of a PID namespace of its own:
// when it exits, the kernel kills every process left in it, however it
// detached, before the call returns. Nothing with its working directory in
// the workspace is left, and nothing lives to write its marker.
func TestPIDNamespaceEndsEverything(t *testing.T) {
	slow(t)
	f := newFixture(t, false)
	needNamespaces(t, f)
	if !f.tool.hostStatus.PIDNamespace {
		t.Skip("no PID namespace here")
	}
	script := pythonEscaper
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	if err := os.WriteFile(filepath.Join(f.ws, "esc"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := f.tool.Run(context.Background(), call(escaper(t, "e", "30s")+"; python3 esc; while [ ! -s escaped.pid ]; do sleep 0.02; done; echo launched"))
	if err != nil || !strings.Contains(res.Output, "launched") {
		t.Fatalf("%q %v", res.Output, err)
	}
	// The call has returned: nothing of it may run now.
	if left := processesIn(f.ws); len(left) > 0 {
		t.Fatalf("processes of the call outlived it: %v", left)
	}
	for _, d := range []string{f.ws, filepath.Join(f.ws, "e")} {
		if err := os.WriteFile(filepath.Join(d, "release"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if left := processesIn(f.ws); len(left) > 0 {
		t.Fatalf("processes of the call outlived it: %v", left)
	}
	for _, d := range []string{f.ws, filepath.Join(f.ws, "e")} {
		if b, err := os.ReadFile(filepath.Join(d, "escaped.marker")); err == nil {
			t.Errorf("a process the command started outlived it: %s", b)
		}
	}
}

// processesIn lists the live processes whose working directory is dir or
// below it, but shell hosts.
func processesIn(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd")
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if strings.HasPrefix(string(cmd), hostArg0+"\x00") {
				continue // the spare host, waiting for the next command
			}
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

// outerPid returns the pid, in this process's PID namespace, of the live
// process whose pid in its own namespace is inner and whose working
// directory is under dir; 0 when there is none. A process in no namespace
// of its own is its own pid.
func outerPid(inner int, dir string) int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var ns []string
		for _, line := range strings.Split(string(b), "\n") {
			if rest, ok := strings.CutPrefix(line, "NSpid:"); ok {
				ns = strings.Fields(rest)
			}
		}
		if len(ns) == 0 || ns[len(ns)-1] != strconv.Itoa(inner) {
			continue
		}
		if cwd, err := os.Readlink("/proc/" + e.Name() + "/cwd"); err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			return pid
		}
	}
	return 0
}

// pythonEscaper is a python program that detaches the way a daemon does
// (fork, setsid, fork, close its output), writes its pid to escaped.pid,
// and writes escaped.marker unless it is dead before release appears.
const pythonEscaper = `import os, time
if os.fork(): os._exit(0)
os.setsid()
if os.fork(): os._exit(0)
for fd in (0, 1, 2): os.close(fd)
open("escaped.pid.tmp", "w").write(str(os.getpid())); os.rename("escaped.pid.tmp", "escaped.pid")
for _ in range(3000):
    if os.path.exists("release"): break
    time.sleep(0.01)
open("escaped.marker", "w").write("python outlived the command\n")
`
