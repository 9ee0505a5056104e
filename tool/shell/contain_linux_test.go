//go:build linux

package shell

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// These tests attack the shell host itself: each command is one a hostile
// model could send, aimed past the policy (programs the policy cannot see
// into: awk, python, a compiled helper), so that only the kernel stands in
// the way. Each checks the effect, not the message.

// needNamespaces skips when this machine gives the shell host no mount
// namespace (the host then reports it; docs/shell.md says what is lost).
func needNamespaces(t *testing.T, f *fixture) {
	t.Helper()
	f.run(t, "true")
	if !f.tool.hostStatus.Namespaced {
		t.Skipf("no mount namespace for the shell host here: %v", f.tool.hostStatus.Problems)
	}
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGitAndHearthReadOnlyToCommands(t *testing.T) {
	f := newFixture(t, false)
	cfg := "[core]\n\trepositoryformatversion = 0\n"
	writeFile(t, filepath.Join(f.ws, ".git", "config"), cfg)
	writeFile(t, filepath.Join(f.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	writeFile(t, filepath.Join(f.ws, ".hearth", "config.toml"), "# project\n")
	needNamespaces(t, f)
	attacks := []string{
		// Programs the policy does not see into.
		`awk 'BEGIN { print "[core]\n\tfsmonitor = touch /tmp/pwned" >> ".git/config" }'`,
		`awk 'BEGIN { print "#!/bin/sh" > ".git/hooks/pre-commit" }'`,
		`awk 'BEGIN { print "/tmp/elsewhere" > ".git/commondir" }'`,
		`awk 'BEGIN { print "approval_mode = \"yolo\"" >> ".hearth/config.toml" }'`,
		`sh -c 'cd .git && awk "BEGIN { print 1 > \"config\" }"'`,
		// The file moved away and replaced.
		`mv .git .git-old`,
		`rm -rf .git/hooks`,
	}
	for _, a := range attacks {
		o := f.run(t, a)
		_ = o
	}
	if got := readFile(t, filepath.Join(f.ws, ".git", "config")); got != cfg {
		t.Errorf(".git/config changed: %q", got)
	}
	for _, p := range []string{".git/hooks/pre-commit", ".git/commondir", ".git-old"} {
		if _, err := os.Lstat(filepath.Join(f.ws, p)); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	if got := readFile(t, filepath.Join(f.ws, ".hearth", "config.toml")); got != "# project\n" {
		t.Errorf(".hearth/config.toml changed: %q", got)
	}
	// The policy says why, where it can see the path.
	o := f.run(t, "echo x >> .git/config")
	if o.refusal == nil || o.refusal.Rule != RuleProtected {
		t.Errorf("echo >> .git/config: refusal %v, want rule %s", o.refusal, RuleProtected)
	}
	o = f.run(t, "echo 'gitdir: /tmp/x' > sub/.git")
	if o.refusal == nil || o.refusal.Rule != RuleProtected {
		t.Errorf("a .git file: refusal %v, want rule %s", o.refusal, RuleProtected)
	}
	// The rest of the workspace stays writable, and .git readable.
	o = f.run(t, "awk 'BEGIN { print \"ok\" > \"new.txt\" }' && cat .git/HEAD")
	if o.exit != 0 || !strings.Contains(o.output, "refs/heads/main") {
		t.Errorf("writing the workspace or reading .git failed: %+v", o)
	}
	if readFile(t, filepath.Join(f.ws, "new.txt")) != "ok\n" {
		t.Error("new.txt not written")
	}
}

func TestGitRunByTheUserDoesNotRunPlantedConfig(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	f := newFixture(t, false)
	if out, err := exec.Command(git, "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	needNamespaces(t, f)
	marker := filepath.Join(f.out, "fsmonitor-ran")
	for _, a := range []string{
		"git config core.fsmonitor 'touch " + marker + "'",
		"git config --local alias.st '!touch " + marker + "'",
		"awk 'BEGIN { print \"[core]\\n\\tfsmonitor = touch " + marker + "\" >> \".git/config\" }'",
	} {
		f.run(t, a)
	}
	cmd := exec.Command(git, "status")
	cmd.Dir = f.ws
	cmd.Env = append(os.Environ(), "HOME="+f.home)
	_, _ = cmd.CombinedOutput()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the user's git status ran a planted core.fsmonitor")
	}
}

func TestSecretLocationsHidden(t *testing.T) {
	const canary = "CANARY-KEY-5f2e"
	dir, err := os.MkdirTemp("", "hearth-secrets-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	dir, _ = filepath.EvalSymlinks(dir)
	ssh := filepath.Join(dir, "ssh")
	netrc := filepath.Join(dir, "netrc")
	writeFile(t, filepath.Join(ssh, "id_ed25519"), canary+"\n")
	writeFile(t, netrc, "machine x password "+canary+"\n")
	f := newFixture(t, false, func(c *Config) { c.Secrets = []string{ssh, netrc} })
	needNamespaces(t, f)
	o := f.run(t, fmt.Sprintf(`cat %[1]s/id_ed25519; awk '{print}' %[1]s/id_ed25519; cat %[2]s; ls -la %[1]s; ln -s %[1]s/id_ed25519 l; cat l; cp -r %[1]s copy; cat copy/*`, ssh, netrc))
	if strings.Contains(o.output, canary) {
		t.Fatalf("a secret reached the output:\n%s", o.output)
	}
	if _, err := os.Stat(filepath.Join(f.ws, "copy", "id_ed25519")); err == nil {
		t.Error("the secret directory was copied")
	}
	// Hidden, not destroyed.
	if readFile(t, filepath.Join(ssh, "id_ed25519")) != canary+"\n" {
		t.Error("the secret changed")
	}
}

func TestNetworkDenied(t *testing.T) {
	slow(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// UDP too: Landlock cannot deny it before ABI 10; the host's network
	// namespace does.
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	var datagrams atomic.Int32
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := udp.ReadFrom(buf); err != nil {
				return
			}
			datagrams.Add(1)
		}
	}()
	uport := udp.LocalAddr().(*net.UDPAddr).Port
	script := fmt.Sprintf(`%s -c 'import socket; s=socket.create_connection(("127.0.0.1", %d), 2); s.send(b"x")'; `+
		`%s -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b"x", ("127.0.0.1", %d))'`, py, port, py, uport)

	f := newFixture(t, false, func(c *Config) { c.DenyNetwork = true })
	res, _ := f.tool.Run(context.Background(), call(script))
	if !strings.Contains(res.Output, NetworkOffNote) {
		t.Errorf("a failed connection does not say the network is off:\n%s", res.Output)
	}
	time.Sleep(100 * time.Millisecond) // an accept in flight is counted
	if n := accepted.Load(); n != 0 {
		t.Fatalf("with the network denied, %d connections reached the listener", n)
	}
	if n := datagrams.Load(); n != 0 {
		t.Fatalf("with the network denied, %d UDP datagrams reached the listener", n)
	}
	// The control: allowed, the same command connects (the test would
	// pass for the wrong reason otherwise).
	f = newFixture(t, false)
	f.run(t, script)
	deadline := time.Now().Add(30 * time.Second) // a bound, not a measure: the loop ends as soon as both arrived
	for (accepted.Load() == 0 || datagrams.Load() == 0) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if accepted.Load() == 0 || datagrams.Load() == 0 {
		t.Fatal("with the network allowed, the command could not connect: the test proves nothing")
	}
}

func TestNoDeviceNodes(t *testing.T) {
	slow(t)
	if os.Getuid() != 0 {
		t.Skip("making device nodes needs root")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	f := newFixture(t, false)
	f.run(t, "mknod blk b 7 0; mknod chr c 1 1; "+py+` -c 'import os; os.mknod("blk2", 0o600 | 0o060000, os.makedev(7, 0))'`)
	for _, n := range []string{"blk", "chr", "blk2"} {
		if fi, err := os.Lstat(filepath.Join(f.ws, n)); err == nil {
			t.Errorf("%s was made: %v", n, fi.Mode())
		}
	}
}

func TestHearthProcessUnreadable(t *testing.T) {
	f := newFixture(t, false)
	// $PPID is the shell host's parent: this test process, standing in
	// for Hearth. Its environment, memory and open files are off limits.
	o := f.run(t, `cat /proc/$PPID/environ > env.out; echo "env=$?"; cat /proc/$PPID/cmdline > /dev/null; ls /proc/$PPID/fd > fd.out; echo "fd=$?"; head -c 16 /proc/$PPID/mem > mem.out; echo "mem=$?"`)
	for _, want := range []string{"env=1", "fd=", "mem=1"} {
		if !strings.Contains(o.output, want) {
			t.Errorf("output lacks %q:\n%s", want, o.output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "env.out")); len(b) > 0 {
		t.Errorf("read Hearth's environment: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(f.ws, "mem.out")); len(b) > 0 {
		t.Errorf("read Hearth's memory: %q", b)
	}
}

func TestCapabilitiesDropped(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("only root has capabilities to drop")
	}
	f := newFixture(t, false)
	o := f.run(t, "grep -E '^Cap(Eff|Bnd|Amb)' /proc/self/status")
	var want uint64
	for _, c := range []uint{unix.CAP_CHOWN, unix.CAP_DAC_OVERRIDE, unix.CAP_FOWNER, unix.CAP_FSETID,
		unix.CAP_KILL, unix.CAP_SETGID, unix.CAP_SETUID, unix.CAP_NET_BIND_SERVICE, unix.CAP_AUDIT_WRITE} {
		want |= 1 << c
	}
	for _, line := range strings.Split(strings.TrimSpace(o.output), "\n") {
		name, hex, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("unexpected output: %q", o.output)
		}
		var got uint64
		fmt.Sscanf(strings.TrimSpace(hex), "%x", &got)
		if got&^want != 0 {
			t.Errorf("%s = %x: holds capabilities beyond %x (%x)", name, got, want, got&^want)
		}
	}
}

func TestInterpreterFilesConfined(t *testing.T) {
	slow(t)
	f := newFixture(t, false)
	before := f.snapshot(t)
	// The interpreter's own files (here-documents, process
	// substitutions) made with TMPDIR pointing outside, and through a
	// workspace symlink to outside: whatever the interpreter opens, it
	// opens inside the sandbox.
	for _, a := range []string{
		"export TMPDIR=" + f.out + "; cat <<EOF\nhello\nEOF\ncat <(echo hi)",
		"ln -s " + f.out + " t; export TMPDIR=$PWD/t; cat <<EOF\nhello\nEOF\n",
		"ln -s " + filepath.Join(f.out, "victim") + " v; awk 'BEGIN { print \"pwned\" > \"v\" }'",
		"bash -c 'TMPDIR=" + f.out + " ; cat <<EOF\nx\nEOF'",
	} {
		f.run(t, a)
	}
	if after := f.snapshot(t); after != before {
		t.Fatalf("something outside the workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestHearthSurvivesARunawayHost(t *testing.T) {
	f := newFixture(t, false, func(c *Config) { c.MemoryLimit = 1 << 20 })
	o := f.tool.run(context.Background(), "x=a; while :; do x=$x$x; done", f.ws, nil)
	if o.stopped != errMemory {
		t.Fatalf("stopped = %v, want the memory limit", o.stopped)
	}
	// The next call works: nothing of the last one is left in Hearth.
	if o := f.run(t, "echo still here"); !strings.Contains(o.output, "still here") {
		t.Fatalf("the next call failed: %+v", o)
	}
}

func TestProcessLimitBindsRoot(t *testing.T) {
	slow(t)
	if os.Getuid() != 0 {
		t.Skip("RLIMIT_NPROC binds other users; this is about root")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	f := newFixture(t, false, func(c *Config) { c.MaxProcs = 16 })
	// Children that sleep, until fork fails (or 3000: the test's own
	// bound, so that a broken limit cannot take the machine down).
	o := f.run(t, py+` -c '
import os, time
n = 0
while n < 3000:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    n += 1
print("forked", n)
'`)
	var n int
	if _, err := fmt.Sscanf(strings.TrimSpace(o.output), "forked %d", &n); err != nil {
		t.Fatalf("unexpected output: %q (%v)", o.output, err)
	}
	if n >= 16*4 {
		t.Fatalf("a root command forked %d processes; the limit is %d", n, 16*4)
	}
	if o := f.run(t, "echo still here"); !strings.Contains(o.output, "still here") {
		t.Fatalf("the next call failed: %+v", o)
	}
}

func TestReadOnlyGitIsExplained(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	f := newFixture(t, false)
	if out, err := exec.Command(git, "init", "-q", f.ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	needNamespaces(t, f)
	res, err := f.tool.Run(context.Background(), call("git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, ".git is read-only to commands") {
		t.Fatalf("a failed commit is not explained:\n%s", res.Output)
	}
}

// Landlock has no right for changing a file's mode, owner, times or
// extended attributes: the host's read-only mounts refuse them outside the
// writable directories.
func TestNoMetadataChangesOutside(t *testing.T) {
	slow(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	f := newFixture(t, false)
	needNamespaces(t, f)
	victim := filepath.Join(f.out, "victim")
	before := f.snapshot(t)
	fi0, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	o := f.run(t, py+` -c '
import os, sys
v = sys.argv[1]
for what, f in (("chmod", lambda: os.chmod(v, 0o777)), ("utime", lambda: os.utime(v, (1, 1))),
                 ("chown", lambda: os.chown(v, 65534, 65534)), ("xattr", lambda: os.setxattr(v, "user.x", b"1"))):
    try:
        f(); print(what, "done")
    except OSError as e:
        print(what, "refused", e.errno)
' `+victim+`; echo hi > /dev/null && echo devnull-ok; touch inside && chmod 600 inside && echo inside-ok`)
	if after := f.snapshot(t); after != before {
		t.Errorf("metadata outside the workspace changed:\n%s", o.output)
	}
	if fi, _ := os.Stat(victim); fi.ModTime() != fi0.ModTime() || fi.Mode() != fi0.Mode() {
		t.Errorf("the victim's mode or time changed: %v %v", fi.Mode(), fi.ModTime())
	}
	for _, want := range []string{"devnull-ok", "inside-ok"} {
		if !strings.Contains(o.output, want) {
			t.Errorf("%s missing: writing /dev/null or the workspace broke:\n%s", want, o.output)
		}
	}
}

// Where the system refuses namespaces, commands still run, confined by
// Landlock alone, and the host says what is missing.
func TestWithoutNamespaces(t *testing.T) {
	f := newFixture(t, false)
	f.tool.conf.DisableNamespaces()
	before := f.snapshot(t)
	o := f.run(t, "echo hi > x && cat x && awk 'BEGIN { print \"pwned\" > \""+filepath.Join(f.out, "victim")+"\" }'")
	if !strings.Contains(o.output, "hi") {
		t.Fatalf("the command did not run: %+v", o)
	}
	if f.snapshot(t) != before {
		t.Fatal("a write outside the workspace got through Landlock")
	}
	if f.tool.hostStatus.Namespaced || len(f.tool.hostStatus.Problems) == 0 {
		t.Errorf("the host's report does not say namespaces are missing: %+v", f.tool.hostStatus)
	}
}

// A repository made at the workspace root by a command, where there was
// none, is moved aside before the user can run git there: the kernel could
// not keep it read-only, since it did not exist when the command started.
func TestNewRepositoryAtTheRootMovedAside(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	marker := ""
	for _, c := range []struct{ name, cmd string }{
		{"git init and a planted fsmonitor", "git init -q . && git config core.fsmonitor 'touch {out}/planted'"},
		{"a gitdir file", "awk 'BEGIN { print \"gitdir: sub/repo\" > \".git\" }' && mkdir -p sub && git init -q --bare sub/repo && git --git-dir=sub/repo config core.fsmonitor 'touch {out}/planted'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, false)
			marker = filepath.Join(f.out, "planted")
			res, err := f.tool.Run(context.Background(), call(f.expand(c.cmd)))
			if !strings.Contains(res.Output, "Hearth moved it to") {
				t.Errorf("the result does not say the repository was moved aside:\n%s\n%v", res.Output, err)
			}
			if _, err := os.Lstat(filepath.Join(f.ws, ".git")); err == nil {
				t.Fatal(".git is still at the workspace root")
			}
			cmd := exec.Command(git, "status")
			cmd.Dir = f.ws
			cmd.Env = append(os.Environ(), "HOME="+f.home, "GIT_CEILING_DIRECTORIES="+filepath.Dir(f.ws))
			_, _ = cmd.CombinedOutput()
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the user's git status ran the planted fsmonitor")
			}
		})
	}
}

// A program cannot attach to the shell host that runs it (to change its
// checks or its report): the host is not dumpable.
func TestHostCannotBeTraced(t *testing.T) {
	slow(t)
	f := newFixture(t, false)
	o := f.run(t, `cat /proc/$PPID/status > /dev/null; head -c 1 /proc/$$/mem > m 2>/dev/null; echo "mem=$?"; ls -l /proc/$$/mem`)
	_ = o
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// ptrace(PTRACE_ATTACH, parent) from a program the host started.
	o = f.run(t, py+` -c '
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
r = libc.ptrace(16, os.getppid(), 0, 0)
print("attach", r, ctypes.get_errno())
'`)
	if !strings.Contains(o.output, "attach -1") {
		t.Fatalf("a program attached to the shell host:\n%s", o.output)
	}
}

// The spare host was confined when the workspace had no .git: once the
// user makes one, the spare's mounts are stale and it must not be used.
// waitSpare waits for the spare host the last command started behind it.
func waitSpare(t *testing.T, f *fixture) *hostProc {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		f.tool.spareMu.Lock()
		h := f.tool.spare
		f.tool.spareMu.Unlock()
		if h != nil {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatal("no spare host was started (a hang detector, not a speed test)")
		}
	}
}

func TestSpareHostNotUsedWithStaleMounts(t *testing.T) {
	f := newFixture(t, false)
	needNamespaces(t, f) // runs a command: a spare starts behind it
	waitSpare(t, f)
	cfg := "[core]\n\tbare = false\n"
	writeFile(t, filepath.Join(f.ws, ".git", "config"), cfg)
	writeFile(t, filepath.Join(f.ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	f.run(t, `awk 'BEGIN { print "[core]\n\tfsmonitor = touch /tmp/x" >> ".git/config" }'`)
	if got := readFile(t, filepath.Join(f.ws, ".git", "config")); got != cfg {
		t.Fatalf("a host made before .git existed wrote it: %q", got)
	}
}

// A spare host that died while it waited (the user's kill, the OOM
// killer) is not given the next command: a new host runs it.
func TestSpareHostThatDiedIsReplaced(t *testing.T) {
	f := newFixture(t, false)
	f.run(t, "true")
	h := waitSpare(t, f)
	if err := h.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for !processExited(h.cmd.Process.Pid) {
		time.Sleep(5 * time.Millisecond)
	}
	if o := f.run(t, "echo after"); o.err != nil || !strings.Contains(o.output, "after") {
		t.Fatalf("the command after a dead spare failed: %+v", o)
	}
}

// A fork bomb whose processes detach (setsid) and fork without end: when
// the call ends, none is left, however fast it forks. Root only: others
// are bound by RLIMIT_NPROC, and root's bomb by the call's pids cgroup.
func TestForkBombLeavesNothing(t *testing.T) {
	slow(t)
	if os.Getuid() != 0 {
		t.Skip("root's fork bombs are bound by the cgroup; see TestProcessLimitBindsRoot")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// The timeout is far away: the full cgroup is what ends the call.
	f := newFixture(t, false, func(c *Config) { c.MaxProcs = 16; c.Timeout = 10 * time.Minute })
	token := fmt.Sprintf("bomb-%d", time.Now().UnixNano())
	_, err = f.tool.Run(context.Background(), call(py+` -c '
import os, time
while True:
    try:
        if os.fork() == 0:
            os.setsid()
    except OSError:
        time.sleep(0.001)
' `+token))
	if err == nil || !strings.Contains(err.Error(), "tried to run more than 64 processes") {
		t.Errorf("the call did not end on the process limit: %v", err)
	}
	var left []string
	for range 3 { // a process being torn down may still show for a moment
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
			if err == nil && strings.Contains(string(b), token) {
				if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
					left = append(left, e.Name())
				}
			}
		}
		if len(left) == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(left) > 0 {
		for _, p := range left {
			syscall.Kill(atoi(p), syscall.SIGKILL)
		}
		t.Fatalf("%d processes of the fork bomb outlived the call", len(left))
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// With the network off, a listening pathname Unix socket outside the
// workspace (a local proxy, an agent, another program's control socket)
// cannot be reached, with or without namespaces; socketpair still works.
func TestUnixSocketsDenied(t *testing.T) {
	slow(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	sockDir, err := os.MkdirTemp("", "hearth-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	os.Chmod(sockDir, 0o777)
	sock := filepath.Join(sockDir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	os.Chmod(sock, 0o777)
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	connect := fmt.Sprintf(`%s -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(%q); print("connected")'`, py, sock)
	pair := py + ` -c 'import socket; a,b=socket.socketpair(); a.send(b"ok"); print("pair", b.recv(2).decode())'`
	// A process that is not Python (io_uring, x32 and the rest are the
	// filter's own table test).
	for _, ns := range []bool{true, false} {
		t.Run(fmt.Sprintf("namespaces=%v", ns), func(t *testing.T) {
			f := newFixture(t, false, func(c *Config) { c.DenyNetwork = true })
			if !ns {
				f.tool.conf.DisableNamespaces()
			}
			res, _ := f.tool.Run(context.Background(), call(connect+"; "+pair))
			if strings.Contains(res.Output, "connected") {
				t.Errorf("with the network off, a command connected to a Unix socket outside:\n%s", res.Output)
			}
			if !strings.Contains(res.Output, "Permission denied") {
				t.Errorf("the refusal is not EACCES:\n%s", res.Output)
			}
			if !strings.Contains(res.Output, "pair ok") {
				t.Errorf("socketpair no longer works:\n%s", res.Output)
			}
		})
	}
	time.Sleep(100 * time.Millisecond) // an accept in flight is counted
	if n := accepted.Load(); n != 0 {
		t.Fatalf("with the network off, %d connections reached the Unix socket", n)
	}
	// The control: with the network allowed, the same command connects.
	f := newFixture(t, false)
	if o := f.run(t, connect); !strings.Contains(o.output, "connected") {
		t.Fatalf("with the network allowed, the command could not connect (the test proves nothing):\n%s", o.output)
	}
}

// A command cannot change the limits of Hearth's process (the kernel lets
// any process of the same user do it): it could make Hearth fail. Setting
// its own stays allowed.
func TestCannotChangeHearthsLimits(t *testing.T) {
	slow(t)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	// The same values Hearth has: nothing changes if the call gets through.
	script := fmt.Sprintf(`%s -c '
import resource
cur = resource.prlimit(%d, resource.RLIMIT_CORE)
try:
    resource.prlimit(%d, resource.RLIMIT_CORE, cur)
    print("changed")
except PermissionError:
    print("refused")
resource.prlimit(0, resource.RLIMIT_CORE, cur)
print("own ok")
'`, py, os.Getpid(), os.Getpid())
	// Without namespaces Hearth's pid is in the command's view, and only
	// the seccomp filter stands in the way (in a PID namespace of its
	// own, the command cannot even name it).
	for _, deny := range []bool{false, true} {
		f := newFixture(t, false, func(c *Config) { c.DenyNetwork = deny })
		f.tool.conf.DisableNamespaces()
		o := f.run(t, script)
		if !strings.Contains(o.output, "refused") || !strings.Contains(o.output, "own ok") {
			t.Errorf("network off=%v: %q", deny, o.output)
		}
	}
}

// Where the system refuses the namespaces, the host is started again
// without them (Landlock alone), and so are the next ones: the caller's
// command is the one that runs.
func TestHostStartsWhenNamespacesAreRefused(t *testing.T) {
	f := newFixture(t, false)
	cmd, err := f.tool.conf.SelfCommand(nil, []string{hostArg0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A user namespace whose id map the kernel refuses (it overflows).
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
	cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 1<<32 - 2, Size: 10}}
	if err := f.tool.conf.StartSelf(cmd); err != nil {
		t.Fatalf("starting without namespaces: %v", err)
	}
	if cmd.Process == nil {
		t.Fatal("StartSelf returned nil, but the caller's command was not started")
	}
	cmd.Wait() // no pipes: it says so and exits
	if o := f.run(t, "echo next"); !strings.Contains(o.output, "next") || f.tool.hostStatus.Namespaced {
		t.Fatalf("the next command, without namespaces: %+v (namespaced %v)", o, f.tool.hostStatus.Namespaced)
	}
}
