//go:build linux

package envscrub

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

const (
	childEnv    = "ENVSCRUB_TEST_CHILD"
	secretValue = "sk-envscrub-0123456789abcdef"
)

// TestTakeScrubsProcEnviron starts a copy of the test binary with secrets
// in its environment; the copy takes them and checks its own
// /proc/self/environ, then waits while this test reads /proc/<pid>/environ
// from outside, as another process of the user would.
func TestTakeScrubsProcEnviron(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		childScrub(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTakeScrubsProcEnviron$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"=1",
		"ENVSCRUB_SECRET="+secretValue,
		"ENVSCRUB_SECRET_TOO="+secretValue+"-2",
		"ENVSCRUB_KEEP=visible")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer // the child's output, once it has ended
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if sc.Text() == "SCRUBBED" {
				ready <- true
				return
			}
			fmt.Fprintln(os.Stderr, "child:", sc.Text())
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			cmd.Wait()
			t.Fatalf("the child failed:\n%s", out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not scrub in time:\n%s", out.String())
	}
	environ, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte(secretValue)) {
		t.Errorf("/proc/%d/environ still holds the secret", cmd.Process.Pid)
	}
	if !bytes.Contains(environ, []byte("\x00ENVSCRUB_KEEP=visible\x00")) {
		t.Error("a variable not taken was damaged")
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

func childScrub(t *testing.T) {
	args := strings.Join(os.Args, " ")
	if err := Take("ENVSCRUB_SECRET", "ENVSCRUB_SECRET_TOO"); err != nil {
		t.Fatalf("Take: %v", err)
	}
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(environ, []byte(secretValue)) {
		t.Errorf("/proc/self/environ still holds the secret: %q", environ)
	}
	if !bytes.Contains(environ, []byte("\x00ENVSCRUB_SECRET=\x00")) {
		t.Errorf("the name and layout were not kept: %q", environ)
	}
	if Getenv("ENVSCRUB_SECRET") != secretValue || Getenv("ENVSCRUB_SECRET_TOO") != secretValue+"-2" {
		t.Errorf("the values are lost to Hearth: %q", Getenv("ENVSCRUB_SECRET"))
	}
	if os.Getenv("ENVSCRUB_KEEP") != "visible" || strings.Join(os.Args, " ") != args {
		t.Error("the rest of the environment or the arguments changed")
	}
	// A program started now inherits none of it.
	got, err := exec.Command("/bin/sh", "-c", "env").Output()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(got, []byte("ENVSCRUB_SECRET")) {
		t.Errorf("a child inherited the secret:\n%s", got)
	}
	if t.Failed() {
		return
	}
	fmt.Println("SCRUBBED")
	bufio.NewReader(os.Stdin).ReadString('\n') // until the parent closes it
}
