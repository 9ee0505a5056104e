//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reaper is this process's side of the Groups: the subreaper attribute,
// the limit its tags are taken below, and the live Groups by tag.
var reaper struct {
	once  sync.Once
	err   error // from PR_SET_CHILD_SUBREAPER
	self  int   // this process's pid, as /proc names it
	limit tag   // this process's own hard limits: what an untagged process has
	tags  bool  // the limits are high enough to take tags below them

	mu   sync.Mutex
	seq  uint64
	live map[uint64]*Group // by id

	swept sync.Once // stale pids cgroups removed (sweepCgroups)
}

// A tag is a pair of hard limits: RLIMIT_LOCKS, which the kernel no longer
// enforces, and RLIMIT_RTTIME, which only bounds real-time scheduled
// processes and is set far beyond any real use. Group n gets
//
//	locks = L_locks - 1 - n   (lower for every new group)
//	rt    = L_rt - 1 - 2^48 + n   (higher for every new group)
//
// below this process's own limits L. A process can lower its hard limits,
// never raise them (without CAP_SYS_RESOURCE); to take another group's tag
// it would have to raise one of the two, so a process that changes its tag
// matches no group at all: it becomes a stray, which every Close kills.
type tag struct{ locks, rt uint64 }

// minTagLimit: tags are taken from just below this process's own limits;
// below this there is no room for them (a limit was lowered by hand).
const minTagLimit = 1 << 50

// tagSpan bounds a group's n: 24 bits of pid, 24 of sequence.
const tagSpan = 1 << 48

func tagOf(n uint64) tag {
	return tag{locks: reaper.limit.locks - 1 - n, rt: reaper.limit.rt - 1 - tagSpan + n}
}

// idOf returns the id of the group whose tag t is, or 0.
func idOf(t tag) uint64 {
	if !reaper.tags || t.locks >= reaper.limit.locks {
		return 0
	}
	n := reaper.limit.locks - 1 - t.locks
	if n == 0 || n >= tagSpan || tagOf(n) != t {
		return 0
	}
	return n
}

func initReaper() {
	reaper.once.Do(func() {
		reaper.self = os.Getpid()
		if s, err := os.Readlink("/proc/self"); err == nil {
			if pid, err := strconv.Atoi(s); err == nil {
				reaper.self = pid
			}
		}
		var locks, rt unix.Rlimit
		if unix.Getrlimit(unix.RLIMIT_LOCKS, &locks) == nil && unix.Getrlimit(unix.RLIMIT_RTTIME, &rt) == nil {
			reaper.limit = tag{locks.Max, rt.Max}
			reaper.tags = locks.Max >= minTagLimit && rt.Max >= minTagLimit
		}
		reaper.live = map[uint64]*Group{}
		reaper.err = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	})
}

// AdoptOrphans makes this process a child subreaper (Linux 3.4+): a
// process whose parent dies is then adopted by this process, not by init,
// so that whatever a command starts stays a descendant of Hearth, however
// it detaches. The first NewGroup does it too; calling it earlier (when the
// shell tool is made) reports whether the kernel agreed. It cannot be
// undone, and it means processes orphaned by Hearth's other children are
// adopted too: Groups never touch those, and any that exit stay zombies
// until Hearth exits.
func AdoptOrphans() error {
	initReaper()
	if reaper.err != nil {
		return fmt.Errorf("sandbox: cannot become a child subreaper: %w", reaper.err)
	}
	return nil
}

// NewGroup returns a new, empty Group. Close it when its command ends.
func NewGroup() *Group {
	initReaper()
	reaper.mu.Lock()
	defer reaper.mu.Unlock()
	for {
		reaper.seq++
		id := uint64(reaper.self&0xffffff)<<24 | reaper.seq&0xffffff
		if id != 0 && reaper.live[id] == nil {
			g := &Group{id: id}
			reaper.live[id] = g
			return g
		}
	}
}

// limits returns the hard limits the launcher sets for g (RLIMIT_LOCKS,
// RLIMIT_RTTIME), or zeros when this process's limits leave no room.
func (g *Group) limits() (uint64, uint64) {
	if g == nil || g.id == 0 || !reaper.tags {
		return 0, 0
	}
	t := tagOf(g.id)
	return t.locks, t.rt
}

// Signal sends sig to every live process of the group; it returns how many
// were signalled.
func (g *Group) Signal(sig syscall.Signal) int {
	n := g.signalCgroup(sig)
	for _, p := range g.members(false) {
		if !p.dead() {
			if signalProc(p, sig) {
				n++
			}
		}
	}
	return n
}

// Owns reports whether pid is a live process of the group.
func (g *Group) Owns(pid int) bool {
	for _, p := range g.members(false) {
		if p.pid == pid && !p.dead() {
			return true
		}
	}
	return false
}

// closeTimeout bounds how long Close keeps killing.
const closeTimeout = 3 * time.Second

// Close kills every process of the group that is left, and the strays of
// groups already closed, reaps those this process adopted, and retires the
// group. It returns how many processes were still alive when it gave up
// (0: none; a process stuck in the kernel cannot be killed at once).
func (g *Group) Close() int {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return 0
	}
	g.closed = true
	started := g.started
	g.mu.Unlock()
	left := 0
	if started && g.initEnded() {
		// Its PID namespace ended with its init: the kernel killed and
		// released every process in it before the init could exit.
		started = false
	}
	if started {
		// The cgroup first: it holds every process of the call, and
		// killing through it keeps up with a fork bomb, where a walk of
		// /proc does not. The walk then finds what is outside it (none,
		// unless there is no cgroup) and reaps what Hearth adopted.
		g.killCgroup(3 * closeTimeout)
		left = g.kill(closeTimeout)
	}
	g.removeCgroup()
	reaper.mu.Lock()
	delete(reaper.live, g.id)
	reaper.mu.Unlock()
	return left
}

// StartedInit records that pid, started as Started records, is the init
// of a PID namespace of its own, in which every process of g runs (a
// SelfCommand copy started in namespaces: see InOwnPIDNamespace). When it
// has exited, the kernel has killed every process in that namespace, and
// Close has nothing to look for.
func (g *Group) StartedInit(pid int) {
	g.Started(pid)
	p, ok := readStat(pid)
	g.mu.Lock()
	defer g.mu.Unlock()
	if ok {
		g.init, g.initStart = pid, p.start
	}
}

// initEnded reports whether g's PID namespace init (StartedInit) has
// exited: a zombie (its namespace is empty before it becomes one), or
// reaped and gone.
func (g *Group) initEnded() bool {
	g.mu.Lock()
	pid, start := g.init, g.initStart
	g.mu.Unlock()
	if pid == 0 {
		return false
	}
	p, ok := readStat(pid)
	return !ok || p.start != start || p.dead()
}

// kill sends SIGKILL to every live member and stray until none is left,
// reaping the zombies this process adopted, for at most timeout.
func (g *Group) kill(timeout time.Duration) int {
	deadline := time.Now().Add(timeout)
	delay := time.Millisecond
	for {
		live := 0
		for _, p := range g.members(true) {
			if p.dead() {
				if p.ppid == reaper.self && !g.isWaited(p.pid) {
					var ws unix.WaitStatus
					_, _ = unix.Wait4(p.pid, &ws, unix.WNOHANG, nil)
				}
				continue
			}
			live++
			signalProc(p, unix.SIGKILL)
		}
		if live == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(delay)
		delay = min(2*delay, 20*time.Millisecond)
	}
}

// proc is one process as /proc showed it.
type proc struct {
	pid, ppid int
	state     byte
	start     uint64 // start time, in clock ticks after boot
}

func (p proc) dead() bool { return p.state == 'Z' || p.state == 'X' || p.state == 'x' }

// readSmall reads a small file of /proc into buf (a whole
// os.ReadFile costs three times as much, and a scan reads one per process).
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if k == 0 {
			break
		}
		n += k
	}
	return buf[:n], true
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (proc, bool) {
	var buf [1024]byte
	b, ok := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if !ok {
		return proc{}, false
	}
	// pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime priority nice threads
	// itrealvalue starttime …; comm may hold anything, ')' included.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, state: f[0][0], start: start}, true
}

// readTag reads the tag of pid, its RLIMIT_LOCKS and RLIMIT_RTTIME hard
// limits, from /proc/PID/limits (readable by anyone, for zombies too).
func readTag(pid int) (tag, bool) {
	var buf [4096]byte
	b, ok := readSmall("/proc/"+strconv.Itoa(pid)+"/limits", buf[:])
	if !ok {
		return tag{}, false
	}
	var t tag
	found := 0
	for _, line := range strings.Split(string(b), "\n") {
		var dst *uint64
		var rest string
		if r, ok := strings.CutPrefix(line, "Max file locks"); ok {
			dst, rest = &t.locks, r
		} else if r, ok := strings.CutPrefix(line, "Max realtime timeout"); ok {
			dst, rest = &t.rt, r
		} else {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 2 {
			return tag{}, false
		}
		if f[1] == "unlimited" {
			*dst = unix.RLIM_INFINITY
		} else if v, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			*dst = v
		} else {
			return tag{}, false
		}
		found++
	}
	return t, found == 2
}

// envGroup reads the group id from pid's environment (0: none, or it
// cannot be read).
func envGroup(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return 0
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(groupEnv+"=")); ok {
			id, err := strconv.ParseUint(string(v), 16, 64)
			if err == nil {
				return id
			}
		}
	}
	return 0
}

// members returns the descendants of this process that belong to g, and
// with strays those that carry a tag of no live group.
func (g *Group) members(strays bool) []proc {
	if g == nil {
		return nil
	}
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	all := make(map[int]proc, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == reaper.self {
			continue
		}
		if p, ok := readStat(pid); ok {
			all[pid] = p
		}
	}
	reaper.mu.Lock()
	live := make(map[uint64]*Group, len(reaper.live))
	for id, lg := range reaper.live {
		live[id] = lg
	}
	reaper.mu.Unlock()

	// below[pid]: pid descends from this process; the chain from it up
	// to (not including) this process, nearest first.
	isBelow := map[int]bool{}
	var below func(pid int, depth int) bool
	below = func(pid int, depth int) bool {
		if v, ok := isBelow[pid]; ok {
			return v
		}
		p, ok := all[pid]
		v := false
		switch {
		case !ok || depth > 4096 || p.ppid <= 0:
		case p.ppid == reaper.self:
			v = true
		default:
			v = below(p.ppid, depth+1)
		}
		isBelow[pid] = v
		return v
	}
	tags := map[int]tag{}
	tagOfProc := func(pid int) tag {
		if v, ok := tags[pid]; ok {
			return v
		}
		v, ok := readTag(pid)
		if !ok {
			v = reaper.limit // unreadable: as if untagged
		}
		tags[pid] = v
		return v
	}
	envs := map[int]uint64{}
	envOf := func(pid int) uint64 {
		if v, ok := envs[pid]; ok {
			return v
		}
		v := envGroup(pid)
		envs[pid] = v
		return v
	}

	var out []proc
	for pid, p := range all {
		if !below(pid, 0) {
			continue
		}
		// The nearest process on the chain (itself first) that carries
		// a live group's tag says whose it is.
		var owner *Group
		tagged := false
		for q, n := pid, 0; q != reaper.self && n < 4096; n++ {
			if v := tagOfProc(q); v != reaper.limit {
				if lg := live[idOf(v)]; lg != nil {
					owner = lg
					break
				}
				tagged = true
			} else if e := envOf(q); e != 0 {
				// Not tagged by its limit (a launcher that has not
				// set it yet, or no room for tags): its environment.
				if lg := live[e]; lg != nil {
					owner = lg
					break
				}
				tagged = true
			}
			qp, ok := all[q]
			if !ok {
				break
			}
			q = qp.ppid
		}
		if owner == g || owner == nil && tagged && strays {
			out = append(out, p)
		}
	}
	return out
}

// signalProc sends sig to p if it is still the process /proc showed (same
// pid, same start time), through a pidfd so that a pid reused since is
// never signalled.
func signalProc(p proc, sig syscall.Signal) bool {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if errors.Is(err, unix.ENOSYS) {
		if q, ok := readStat(p.pid); ok && q.start == p.start {
			return unix.Kill(p.pid, sig) == nil
		}
		return false
	}
	if err != nil {
		return false // gone
	}
	defer unix.Close(fd)
	// The pidfd names the process that had the pid when it was opened; if
	// /proc still shows p's start time, that was p.
	if q, ok := readStat(p.pid); !ok || q.start != p.start {
		return false
	}
	return unix.PidfdSendSignal(fd, sig, nil, 0) == nil
}

// SameGroup reports whether pid carries the same Group tag as this
// process, for a process that runs inside a Group (the shell host): pid is
// then one of the same call's processes, wherever it went.
func SameGroup(pid int) bool {
	own, ok := readTag(os.Getpid())
	if !ok || own.locks == unix.RLIM_INFINITY {
		return false
	}
	t, ok := readTag(pid)
	return ok && t == own
}

func unixAccessW(p string) bool { return unix.Access(p, unix.W_OK) == nil }
