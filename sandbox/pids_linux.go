//go:build linux

package sandbox

import (
	"errors"

	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Per-call process limits for root. RLIMIT_NPROC, which bounds a fork bomb
// for other users, does not bind root; a fork bomb run as root by a program
// (python's os.fork in a loop) would exhaust the machine's pids, and
// Hearth's own next thread with them. Where Hearth may make cgroups (root,
// or a delegated subtree), each call's processes go in a pids cgroup of
// their own, whose pids.max the kernel enforces for everyone.

// pidsParent returns a directory of the pids controller in which this
// process may make cgroups, or "".
func pidsParent() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		switch {
		case f[0] != "0" && hasWord(f[1], "pids"): // v1
			if d := filepath.Join("/sys/fs/cgroup/pids", f[2]); writableDir(d) {
				return d
			}
		case f[0] == "0" && f[1] == "": // v2
			d := filepath.Join("/sys/fs/cgroup", f[2])
			ctl, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
			if err == nil && hasWord(string(ctl), "pids") && writableDir(d) {
				return d
			}
		}
	}
	return ""
}

func hasWord(s, w string) bool {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		if f == w {
			return true
		}
	}
	return false
}

func writableDir(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir() && unixAccessW(d)
}

// hearthThreads is what Hearth keeps for its own threads below the
// pids limits of the cgroups it runs in; minCallProcs is the least a call
// gets, however full those are.
const (
	hearthThreads = 64
	minCallProcs  = 16
)

// pidsRoom returns how many more processes (and threads) the cgroup dir
// and its ancestors allow, the tightest of them; -1 when none has a limit.
func pidsRoom(dir string) int {
	room := -1
	for d := dir; strings.HasPrefix(d, "/sys/fs/cgroup/"); d = filepath.Dir(d) {
		maxb, err1 := os.ReadFile(filepath.Join(d, "pids.max"))
		curb, err2 := os.ReadFile(filepath.Join(d, "pids.current"))
		if err1 != nil || err2 != nil {
			continue // the hierarchy's root has neither
		}
		limit, err1 := strconv.Atoi(strings.TrimSpace(string(maxb)))
		cur, err2 := strconv.Atoi(strings.TrimSpace(string(curb)))
		if err1 != nil || err2 != nil {
			continue // "max": no limit here
		}
		if r := max(limit-cur, 0); room < 0 || r < room {
			room = r
		}
	}
	return room
}

// LimitProcesses puts pid, a process of g that has not forked yet, in a
// pids cgroup of g's own that allows at most limit processes (threads
// included) at once, where this system lets Hearth make one: fewer when
// the cgroups Hearth runs in have less room. It returns the limit set, 0
// when there is no cgroup; Close removes it.
func (g *Group) LimitProcesses(pid, limit int) int {
	if g == nil || limit <= 0 {
		return 0
	}
	parent := pidsParent()
	if parent == "" {
		return 0
	}
	reaper.swept.Do(func() { sweepCgroups(parent) })
	// The call's cgroup is inside Hearth's own, and shares its
	// ancestors' limits (a container's pids limit, systemd's TasksMax): a
	// fork bomb that filled them would leave Hearth no thread of its own.
	if room := pidsRoom(parent); room >= 0 {
		limit = min(limit, max(room-room/4-hearthThreads, minCallProcs))
	}
	dir := filepath.Join(parent, "hearth-"+strconv.FormatUint(g.id, 16))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return 0
	}
	if os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.Itoa(limit)), 0) != nil ||
		os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0) != nil {
		_ = os.Remove(dir)
		return 0
	}
	g.mu.Lock()
	g.cgroup = dir
	g.mu.Unlock()
	return limit
}

// removeCgroup removes g's pids cgroup once its processes are gone.
func (g *Group) removeCgroup() {
	g.mu.Lock()
	dir := g.cgroup
	g.cgroup = ""
	g.mu.Unlock()
	if dir == "" {
		return
	}
	for i := 0; i < 50; i++ {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond) // the last exits are being reaped
	}
}

// cgroupPids returns the processes in g's pids cgroup ("" : none).
func cgroupPids(dir string) []int {
	if dir == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}

// signalCgroup signals every process in g's pids cgroup, if it has one,
// and returns how many there were. No process can leave the cgroup (its
// files are outside what a confined process may write), so this reaches
// all of them, however fast they fork or far they detach.
func (g *Group) signalCgroup(sig unix.Signal) int {
	g.mu.Lock()
	dir := g.cgroup
	g.mu.Unlock()
	pids := cgroupPids(dir)
	for _, pid := range pids {
		_ = unix.Kill(pid, sig)
	}
	return len(pids)
}

// killCgroup kills everything in g's pids cgroup until it is empty, for at
// most timeout: a fork bomb forks while it is killed, but only up to the
// cgroup's limit, so each round leaves fewer. It reports whether the
// cgroup is empty.
func (g *Group) killCgroup(timeout time.Duration) bool {
	g.mu.Lock()
	dir := g.cgroup
	g.mu.Unlock()
	if dir == "" {
		return true
	}
	deadline := time.Now().Add(timeout)
	for {
		if g.signalCgroup(unix.SIGKILL) == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
}

// ProcessLimitRefusals returns how many forks (and thread creations) of
// g's processes its pids cgroup has refused so far. It is 0 when g has no
// cgroup (RLIMIT_NPROC binds then, which leaves no count to read).
func (g *Group) ProcessLimitRefusals() int64 {
	g.mu.Lock()
	dir := g.cgroup
	g.mu.Unlock()
	if dir == "" {
		return 0
	}
	b, err := os.ReadFile(filepath.Join(dir, "pids.events"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "max" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// HasProcessLimit reports whether g's processes are in a pids cgroup of
// their own (see LimitProcesses).
func (g *Group) HasProcessLimit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cgroup != ""
}

// sweepCgroups removes the pids cgroups in parent that a Hearth which is
// gone left behind (killed before its calls' Close), with whatever still
// runs in them: each is named for its Group's id, whose high bits are its
// Hearth's pid. A cgroup whose Hearth is alive, or may be (its pid in use),
// is left alone.
func sweepCgroups(parent string) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		hex, ok := strings.CutPrefix(e.Name(), "hearth-")
		if !ok || !e.IsDir() {
			continue
		}
		id, err := strconv.ParseUint(hex, 16, 64)
		if err != nil || id == 0 {
			continue
		}
		owner := int(id >> 24)
		if owner == reaper.self || owner == 0 {
			continue
		}
		if err := unix.Kill(owner, 0); err == nil || errors.Is(err, unix.EPERM) {
			continue // alive, or its pid reused: not ours to judge
		}
		stale := &Group{cgroup: filepath.Join(parent, e.Name())}
		stale.killCgroup(2 * time.Second)
		stale.removeCgroup()
	}
}
