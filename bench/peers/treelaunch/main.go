// Command treelaunch runs a command and reports, as one JSON line on its
// stdout, what the command and every process it started cost: wall time
// until the last of them exited, peak resident memory, CPU time. The
// command's own stdout and stderr go to files (-stdout, -stderr); its stdin
// is /dev/null.
//
// It is the peer benchmark's launcher (bench/peers). Node CLIs start
// children (Gemini CLI relaunches itself, Codex's npm wrapper starts the
// native binary, which starts shells), so it measures the whole tree:
//
//   - treelaunch makes itself a child subreaper (PR_SET_CHILD_SUBREAPER):
//     a descendant orphaned by its parent is re-parented to it, not to init,
//     and it waits for all of them; wall time ends when the last one exits
//     (or when it killed the ones left -grace after the command itself
//     exited, which the report says);
//   - maxrss_tree_kib is getrusage(RUSAGE_CHILDREN).ru_maxrss: the largest
//     peak RSS of any one process of the tree, as the kernel counted it
//     (exact, but not a sum);
//   - sum_peak_kib is the largest sum of the tree's resident memory seen by
//     sampling /proc/PID/statm every -sample (10 ms): shared pages (the node
//     binary, libraries) count once per process that maps them, and a
//     process that lived less than one interval may be missed;
//   - user_us and sys_us are the CPU time of the whole tree;
//   - start_ns is when the command was started (Unix nanoseconds), for
//     setting the times a server saw its requests against.
//
// Why a process of its own (see also cmd/hearth/testdata/rsslaunch): Go
// starts a child with CLONE_VM, and Linux counts the parent's high-water
// RSS in the child's ru_maxrss; started from this small program, a
// command's peak is its own unless it is below this program's 2–3 MB.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

const prSetChildSubreaper = 36

type report struct {
	StartNs       int64  `json:"start_ns"`
	WallUs        int64  `json:"wall_us"`
	MainUs        int64  `json:"main_us"`
	Exit          int    `json:"exit"`
	Signal        string `json:"signal,omitempty"`
	MaxRSSMainKiB int64  `json:"maxrss_main_kib"`
	MaxRSSTreeKiB int64  `json:"maxrss_tree_kib"`
	SumPeakKiB    int64  `json:"sum_peak_kib"`
	Procs         int    `json:"procs"`
	UserUs        int64  `json:"user_us"`
	SysUs         int64  `json:"sys_us"`
	Leftover      int    `json:"leftover"`
	TimedOut      bool   `json:"timed_out"`
	Error         string `json:"error,omitempty"`
}

func main() {
	stdout := flag.String("stdout", os.DevNull, "file for the command's stdout")
	stderr := flag.String("stderr", os.DevNull, "file for the command's stderr")
	timeout := flag.Duration("timeout", 3*time.Minute, "kill the tree after this long")
	grace := flag.Duration("grace", 10*time.Second, "after the command exits, wait this long for its descendants, then kill them")
	sample := flag.Duration("sample", 10*time.Millisecond, "how often to sample the tree's resident memory (0: never)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: treelaunch [flags] -- COMMAND [ARG...]")
		os.Exit(2)
	}
	r := run(flag.Args(), *stdout, *stderr, *timeout, *grace, *sample)
	fmt.Printf(`{"start_ns":%d,"wall_us":%d,"main_us":%d,"exit":%d,"signal":%q,"maxrss_main_kib":%d,"maxrss_tree_kib":%d,"sum_peak_kib":%d,"procs":%d,"user_us":%d,"sys_us":%d,"leftover":%d,"timed_out":%t,"error":%q}`+"\n",
		r.StartNs, r.WallUs, r.MainUs, r.Exit, r.Signal, r.MaxRSSMainKiB, r.MaxRSSTreeKiB, r.SumPeakKiB, r.Procs, r.UserUs, r.SysUs, r.Leftover, r.TimedOut, r.Error)
	if r.Error != "" {
		os.Exit(1)
	}
}

func run(argv []string, stdoutPath, stderrPath string, timeout, grace, sample time.Duration) (r report) {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		r.Error = "prctl(PR_SET_CHILD_SUBREAPER): " + e.Error()
		return r
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		r.Error = err.Error()
		return r
	}
	in, err := os.Open(os.DevNull)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	out, err := os.Create(stdoutPath)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	errf, err := os.Create(stderrPath)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	self := os.Getpid()
	var (
		mu       sync.Mutex
		mainDone bool
		timedOut bool
		killed   int
	)
	start := time.Now()
	r.StartNs = start.UnixNano()
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{Env: os.Environ(), Files: []uintptr{in.Fd(), out.Fd(), errf.Fd()}})
	if err != nil {
		r.Error = "start: " + err.Error()
		return r
	}
	in.Close()
	out.Close()
	errf.Close()

	stopSampling := make(chan struct{})
	sampled := make(chan [2]int64, 1)
	go func() {
		if sample <= 0 {
			sampled <- [2]int64{}
			return
		}
		t := newTree(self)
		tick := time.NewTicker(sample)
		defer tick.Stop()
		var peak int64
		for {
			if s := t.scan(); s > peak {
				peak = s
			}
			select {
			case <-stopSampling:
				sampled <- [2]int64{peak, int64(len(t.seen))}
				return
			case <-tick.C:
			}
		}
	}()

	deadline := time.AfterFunc(timeout, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		killDescendants(self)
	})
	var graceTimer *time.Timer
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		wpid, err := syscall.Wait4(-1, &ws, 0, &ru)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.ECHILD) {
			break
		}
		if err != nil {
			r.Error = "wait4: " + err.Error()
			break
		}
		if wpid != pid {
			continue
		}
		r.MainUs = time.Since(start).Microseconds()
		r.MaxRSSMainKiB = ru.Maxrss
		switch {
		case ws.Exited():
			r.Exit = ws.ExitStatus()
		case ws.Signaled():
			r.Exit = -1
			r.Signal = ws.Signal().String()
		}
		mu.Lock()
		mainDone = true
		mu.Unlock()
		graceTimer = time.AfterFunc(grace, func() {
			n := killDescendants(self)
			mu.Lock()
			killed = n
			mu.Unlock()
		})
	}
	r.WallUs = time.Since(start).Microseconds()
	deadline.Stop()
	if graceTimer != nil {
		graceTimer.Stop()
	}
	close(stopSampling)
	s := <-sampled
	r.SumPeakKiB, r.Procs = s[0], int(s[1])
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	r.MaxRSSTreeKiB = ru.Maxrss
	r.UserUs = ru.Utime.Sec*1e6 + ru.Utime.Usec
	r.SysUs = ru.Stime.Sec*1e6 + ru.Stime.Usec
	mu.Lock()
	r.TimedOut, r.Leftover = timedOut, killed
	if !mainDone && r.Error == "" {
		r.Error = "the command was never reaped"
	}
	mu.Unlock()
	if r.SumPeakKiB < r.MaxRSSTreeKiB {
		// A tree shorter than one sampling interval: its one process's
		// peak is the best figure there is.
		r.SumPeakKiB = r.MaxRSSTreeKiB
	}
	return r
}

// tree follows the descendants of one process through /proc.
type tree struct {
	root int
	desc map[int]bool // pid → descendant (false: known not to be)
	last map[int]bool // pids present at the previous scan
	seen map[int]bool // every descendant ever seen
	page int64
}

func newTree(root int) *tree {
	return &tree{root: root, desc: map[int]bool{}, last: map[int]bool{}, seen: map[int]bool{}, page: int64(os.Getpagesize())}
}

// scan classifies the processes that appeared since the last scan and
// returns the resident memory of the descendants, in KiB.
func (t *tree) scan() int64 {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	now := map[int]bool{}
	var fresh []int
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		now[pid] = true
		if !t.last[pid] {
			delete(t.desc, pid) // a new process, or a pid used again
			fresh = append(fresh, pid)
		}
	}
	t.last = now
	parents := map[int]int{}
	for _, pid := range fresh {
		if pp, ok := ppid(pid); ok {
			parents[pid] = pp
		}
	}
	// Parents usually have lower pids; resolve in rounds for the rest.
	sort.Ints(fresh)
	for changed := true; changed; {
		changed = false
		for _, pid := range fresh {
			if _, done := t.desc[pid]; done {
				continue
			}
			pp, ok := parents[pid]
			if !ok {
				t.desc[pid] = false
				changed = true
				continue
			}
			if pp == t.root || t.desc[pp] {
				t.desc[pid] = true
				changed = true
				continue
			}
			if isDesc, known := t.desc[pp]; known && !isDesc {
				t.desc[pid] = false
				changed = true
			} else if _, fresh := parents[pp]; !fresh {
				t.desc[pid] = false // parent older than the tree, and not in it
				changed = true
			}
		}
	}
	var sum int64
	for pid := range now {
		if !t.desc[pid] {
			continue
		}
		t.seen[pid] = true
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		pages, _ := strconv.ParseInt(f[1], 10, 64)
		sum += pages * t.page / 1024
	}
	return sum
}

// ppid reads a process's parent from /proc/PID/stat.
func ppid(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	pp, err := strconv.Atoi(f[1])
	return pp, err == nil
}

// killDescendants sends SIGKILL to every descendant of root (as a
// subreaper, orphans of the tree are root's children) and returns how many.
func killDescendants(root int) int {
	d, err := os.Open("/proc")
	if err != nil {
		return 0
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	parent := map[int]int{}
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			if pp, ok := ppid(pid); ok {
				parent[pid] = pp
			}
		}
	}
	n := 0
	for pid := range parent {
		for p, hops := parent[pid], 0; hops < 64; p, hops = parent[p], hops+1 {
			if p == root {
				syscall.Kill(pid, syscall.SIGKILL)
				n++
				break
			}
			if p <= 1 {
				break
			}
		}
	}
	return n
}
