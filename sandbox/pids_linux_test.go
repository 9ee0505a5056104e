//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A pids cgroup left by a Hearth that was killed (its pid gone) is
// removed, with what still ran in it; one whose Hearth lives is kept.
func TestSweepCgroups(t *testing.T) {
	initReaper()
	parent := pidsParent()
	if parent == "" {
		t.Skip("no pids cgroup this process may make (not root, no delegation)")
	}
	// A pid that was just used and is gone.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	deadOwner := gone.Process.Pid
	mk := func(owner int) (string, *exec.Cmd) {
		dir := filepath.Join(parent, "hearth-"+strconv.FormatUint(uint64(owner)<<24|7, 16))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		sleeper := exec.Command("sleep", "60")
		if err := sleeper.Start(); err != nil {
			t.Fatal(err)
		}
		go sleeper.Wait()
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			sleeper.Process.Kill()
			time.Sleep(50 * time.Millisecond)
			os.Remove(dir)
		})
		return dir, sleeper
	}
	stale, victim := mk(deadOwner)
	live, keeper := mk(os.Getppid()) // the test's parent: alive
	sweepCgroups(parent)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the stale cgroup %s is still there", stale)
	}
	time.Sleep(50 * time.Millisecond)
	if err := unix.Kill(victim.Process.Pid, 0); err == nil {
		var st string
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(victim.Process.Pid) + "/stat"); err == nil {
			st = string(b)
		}
		if st != "" && !containsZombie(st) {
			t.Errorf("the process in the stale cgroup still runs: %s", st)
		}
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live Hearth's cgroup was removed: %v", err)
	}
	if err := unix.Kill(keeper.Process.Pid, 0); err != nil {
		t.Errorf("a live Hearth's process was killed: %v", err)
	}
}

func containsZombie(stat string) bool {
	for i := len(stat) - 1; i > 0; i-- {
		if stat[i] == ')' {
			return len(stat) > i+2 && stat[i+2] == 'Z'
		}
	}
	return false
}

// pidsRoom sees the tightest limit among a cgroup and its ancestors, less
// what runs there.
func TestPidsRoom(t *testing.T) {
	initReaper()
	parent := pidsParent()
	if parent == "" {
		t.Skip("no pids cgroup this process may make (not root, no delegation)")
	}
	outer := filepath.Join(parent, "hearth-test-room-"+strconv.Itoa(os.Getpid()))
	inner := filepath.Join(outer, "inner")
	for _, d := range []string{outer, inner} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(outer)
	defer os.Remove(inner)
	if err := os.WriteFile(filepath.Join(outer, "pids.max"), []byte("300"), 0); err != nil {
		t.Fatal(err)
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	if err := os.WriteFile(filepath.Join(inner, "cgroup.procs"), []byte(strconv.Itoa(sleeper.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	// inner has no limit of its own; outer's 300 holds one process.
	if got := pidsRoom(inner); got < 0 || got > 299 {
		t.Errorf("pidsRoom(inner) = %d, want at most 299", got)
	}
	if err := os.WriteFile(filepath.Join(inner, "pids.max"), []byte("10"), 0); err != nil {
		t.Fatal(err)
	}
	if got := pidsRoom(inner); got != 9 {
		t.Errorf("pidsRoom(inner) with its own limit of 10 = %d, want 9", got)
	}
}
