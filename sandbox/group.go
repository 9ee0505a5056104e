package sandbox

import "sync"

// A Group is the set of processes started for one command (one
// run_shell_command call), with every process they start in turn, so that
// all of them can be stopped when the command ends: also those that left
// their process group and session (setsid, a double fork, a daemon), which
// a process-group kill misses.
//
// On Linux:
//
//   - The first Group makes this process a child subreaper
//     (PR_SET_CHILD_SUBREAPER): a process whose parent dies is adopted by
//     this process instead of init, so every process a command starts stays
//     a descendant of this one however it detaches.
//   - The launcher tags each program it starts for the Group, before it
//     runs, by lowering two hard limits that restrict nothing real:
//     RLIMIT_LOCKS (no longer enforced by the kernel) and RLIMIT_RTTIME
//     (which only bounds real-time scheduled processes, and is set far
//     beyond any real use). Every descendant inherits them, across fork and
//     exec, with a clean environment or not, and the kernel shows them in
//     /proc/PID/limits, of zombies too. Without CAP_SYS_RESOURCE a process
//     can lower a hard limit but never raise it. Each new Group's tag is
//     lower in one limit and higher in the other than every earlier one, so
//     no process can turn its tag into another Group's: one of the two
//     would have to rise. A process that changes its tag matches no Group
//     and becomes a stray. The Group's id is also set in the environment
//     (HEARTH_SANDBOX_GROUP), which marks a launcher before it has set its
//     limits.
//   - Signal, Owns and Close walk /proc: a descendant of this process
//     belongs to the Group if it, or the nearest process above it (below
//     this one) that carries a live Group's tag, carries this Group's. A
//     descendant that carries a tag of no live Group (a process that changed
//     its tag, or a leftover) is a stray, and Close kills the strays too.
//     Processes are signalled through a pidfd after checking they are still
//     the ones found (same pid, same start time), so a reused pid is never
//     signalled.
//   - Close kills the members, again and again until none is left or a few
//     seconds have passed (a fork bomb forks while it is killed), and reaps
//     the ones this process adopted. It never touches a process it did not
//     tag: Hearth's other children (MCP servers, say), and what they start,
//     are left alone.
//
// What is not covered: a process with CAP_SYS_RESOURCE (Hearth run as
// root) can raise its limits back, and then passes for one of Hearth's
// other children unless its environment still names the Group; and
// whatever a daemon outside the tree runs on a command's behalf (dockerd,
// the systemd user manager) is not a descendant at all, which is why the
// shell's policy refuses such requests.
//
// Outside Linux, a Group does nothing: only process groups are killed.
type Group struct {
	id uint64 // the tag; 0 when processes cannot be tagged

	mu      sync.Mutex
	waited  map[int]bool // launchers an exec.Cmd waits for: not reaped here
	started bool
	closed  bool
	cgroup  string // the pids cgroup of LimitProcesses, removed by Close
	// init is the process whose PID namespace holds every process of
	// the group (StartedInit), and its start time; 0: none.
	init      int
	initStart uint64
}

// groupEnv holds a Group's id, in hex, in its processes' environment.
const groupEnv = "HEARTH_SANDBOX_GROUP"

// Started records that pid, a launcher started with CommandIn, runs: the
// exec.Cmd that started it will reap it, so Close does not.
func (g *Group) Started(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.started = true
	if g.waited == nil {
		g.waited = map[int]bool{}
	}
	g.waited[pid] = true
}

// Waited records that pid has been reaped by its exec.Cmd.
func (g *Group) Waited(pid int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.waited, pid)
}

func (g *Group) isWaited(pid int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waited[pid]
}
