//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMain lets the test binary act as the sandbox launcher, as hearth's
// main does (the package's init already does it; this documents it).
func TestMain(m *testing.M) {
	MaybeRunLauncher()
	os.Exit(m.Run())
}

func requireLandlock(t *testing.T, abi int) {
	t.Helper()
	if got := landlockABI(); got < abi {
		t.Skipf("this kernel's Landlock ABI is %d; the test needs %d (Linux 5.13+ with landlock enabled at boot)", got, abi)
	}
}

// run runs argv confined by c and returns its combined output and error.
func run(t *testing.T, c *Confinement, dir string, argv ...string) (string, error) {
	t.Helper()
	path, err := exec.LookPath(argv[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := c.Command(path, argv, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.String(), err
}

// The kernel stops a confined child that writes outside the workspace,
// whatever program it is: here sh, which Hearth's policy never sees.
func TestLandlockStopsWritesOutsideTheWorkspace(t *testing.T) {
	requireLandlock(t, 1)
	ws, tmp, outside := t.TempDir(), t.TempDir(), t.TempDir()
	c := &Confinement{Writable: []string{ws, tmp}}
	if st := c.Status(); !st.Active {
		t.Fatalf("status: %+v", st)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`echo in > %[1]s/inside && echo tmp > %[2]s/t &&
		mkdir %[1]s/d && mv %[1]s/inside %[1]s/d/moved &&
		cat %[3]s/victim &&
		{ echo pwned > %[3]s/new; echo "new:$?"; }
		{ echo pwned > %[3]s/victim; echo "overwrite:$?"; }
		{ rm -f %[3]s/victim; echo "rm:$?"; }
		{ mkdir %[3]s/dir; echo "mkdir:$?"; }
		{ ln -s /etc/passwd %[3]s/link; echo "ln:$?"; }
		{ echo x > /dev/null; echo "devnull:$?"; }`, ws, tmp, outside)
	out, err := run(t, c, ws, "sh", "-c", script)
	if err != nil {
		t.Fatalf("sh: %v\n%s", err, out)
	}
	for _, want := range []string{"keep", "new:", "overwrite:", "rm:", "mkdir:", "ln:", "devnull:0"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	for _, denied := range []string{"new:0", "overwrite:0", "rm:0", "mkdir:0", "ln:0"} {
		if strings.Contains(out, denied) {
			t.Errorf("the kernel allowed %s:\n%s", denied, out)
		}
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("want the kernel's EACCES (Permission denied) in:\n%s", out)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Errorf("victim changed: %q %v", b, err)
	}
	for _, p := range []string{"new", "dir", "link"} {
		if _, err := os.Lstat(filepath.Join(outside, p)); err == nil {
			t.Errorf("%s was created outside the workspace", p)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "d", "moved")); err != nil {
		t.Errorf("work inside the workspace failed: %v\n%s", err, out)
	}
}

// A Go program's own write, as a direct syscall, is stopped the same way:
// the test binary re-runs itself as the target.
func TestLandlockStopsADirectSyscall(t *testing.T) {
	requireLandlock(t, 1)
	if os.Getenv("HEARTH_SANDBOX_TEST_CHILD") == "1" {
		err := os.WriteFile(os.Getenv("HEARTH_SANDBOX_TEST_TARGET"), []byte("pwned"), 0o644)
		fmt.Printf("write error: %v\n", err)
		os.Exit(0)
	}
	ws, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "f")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c := &Confinement{Writable: []string{ws}}
	env := append(os.Environ(), "HEARTH_SANDBOX_TEST_CHILD=1", "HEARTH_SANDBOX_TEST_TARGET="+target)
	cmd, err := c.Command(self, []string{self, "-test.run=^TestLandlockStopsADirectSyscall$"}, env)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(string(out), "permission denied") {
		t.Errorf("want EACCES, got:\n%s", out)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the file was written outside the workspace")
	}
}

func TestLandlockDeniesNetwork(t *testing.T) {
	requireLandlock(t, 4)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	if os.Getenv("HEARTH_SANDBOX_TEST_DIAL") != "" {
		c, err := net.Dial("tcp4", os.Getenv("HEARTH_SANDBOX_TEST_DIAL"))
		if err == nil {
			c.Close()
		}
		fmt.Printf("dial error: %v\n", err)
		os.Exit(0)
	}
	self, _ := os.Executable()
	ws := t.TempDir()
	for _, deny := range []bool{false, true} {
		c := &Confinement{Writable: []string{ws}, DenyNetwork: deny}
		env := append(os.Environ(), fmt.Sprintf("HEARTH_SANDBOX_TEST_DIAL=127.0.0.1:%d", port))
		cmd, _ := c.Command(self, []string{self, "-test.run=^TestLandlockDeniesNetwork$"}, env)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		denied := strings.Contains(string(out), "permission denied")
		if denied != deny {
			t.Errorf("DenyNetwork=%v: got %s", deny, out)
		}
	}
}

func TestLauncherLimitsFileSize(t *testing.T) {
	ws := t.TempDir()
	c := &Confinement{Writable: []string{ws}, MaxFileSize: 1 << 20}
	out, err := run(t, c, ws, "sh", "-c", "head -c 3000000 /dev/zero > big; echo status:$?")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fi, err := os.Stat(filepath.Join(ws, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 1<<20 {
		t.Errorf("wrote %d bytes past a 1 MiB limit", fi.Size())
	}
	if strings.Contains(out, "status:0") {
		t.Errorf("the write past the limit succeeded: %s", out)
	}
}

func TestLauncherFailsClosed(t *testing.T) {
	// A writable directory that does not exist makes the rule set fail:
	// the launcher must not run the program unconfined.
	requireLandlock(t, 1)
	ws := t.TempDir()
	c := &Confinement{Writable: []string{ws, filepath.Join(ws, "missing")}}
	out, err := run(t, c, ws, "sh", "-c", "echo ran")
	if err == nil || strings.Contains(out, "ran") {
		t.Fatalf("the program ran: %v %s", err, out)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 126 {
		t.Errorf("want exit 126, got %v", err)
	}
	if !strings.Contains(out, "hearth sandbox") {
		t.Errorf("no explanation: %s", out)
	}
}

func TestCommandValidates(t *testing.T) {
	c := &Confinement{Writable: []string{"relative"}}
	if _, err := c.Command("/bin/true", []string{"true"}, nil); err == nil {
		t.Error("relative writable directory accepted")
	}
	c = &Confinement{}
	if _, err := c.Command("true", []string{"true"}, nil); err == nil {
		t.Error("relative program path accepted")
	}
	if _, err := c.Command("/bin/true", nil, nil); err == nil {
		t.Error("empty argv accepted")
	}
}

func TestLaunchMarkerDoesNotLeak(t *testing.T) {
	ws := t.TempDir()
	c := &Confinement{Writable: []string{ws}}
	out, err := run(t, c, ws, "env")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, launchEnv) {
		t.Errorf("the launcher's marker reached the program:\n%s", out)
	}
}

// A library named by LD_PRELOAD runs in the confined program, never in the
// launcher before it is confined: the launcher runs without the program's
// environment (the red team's finding: hearth is dynamically linked).
func TestLoaderVariablesDoNotReachTheLauncher(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles a shared library with cc and starts confined processes (the race stage runs it)")
	}
	requireLandlock(t, 1)
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	ws, outside := t.TempDir(), t.TempDir()
	marker := filepath.Join(outside, "preloaded")
	src := filepath.Join(ws, "evil.c")
	so := filepath.Join(ws, "evil.so")
	code := `#include <stdio.h>
__attribute__((constructor)) static void evil(void) { FILE *f = fopen("` + marker + `", "a"); if (f) { fputs("ran\n", f); fclose(f); } }`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput(); err != nil {
		t.Skipf("cannot build a shared library: %v %s", err, out)
	}
	// The control: unconfined, the library runs and writes the marker.
	ctl := exec.Command("/bin/true")
	ctl.Env = append(os.Environ(), "LD_PRELOAD="+so)
	if err := ctl.Run(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Skip("LD_PRELOAD does not run here; the test proves nothing")
	}
	os.Remove(marker)

	c := &Confinement{Writable: []string{ws}}
	cmd, err := c.Command("/bin/true", []string{"true"}, append(os.Environ(), "LD_PRELOAD="+so, "LD_AUDIT="+so))
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Run()
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a preloaded library wrote outside the workspace: it ran before the confinement")
	}
}
