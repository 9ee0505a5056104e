package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/interp"

	"github.com/hearth-agent/hearth/sandbox"
)

// The shell host: the whole command inside the sandbox.
//
// Hearth does not interpret a command line itself. It starts a copy of its
// own binary (sandbox.SelfCommand) marked as the shell host; the copy
// confines itself (sandbox.ConfineSelf: namespaces, read-only .git and
// .hearth, hidden secrets, Landlock, limits, capabilities dropped), reads
// the job from file descriptor 3, and only then interprets the command
// line with the same handlers as before: the policy checks each command
// after expansion, redirections are opened, here-documents and temporary
// files made, programs started — all by the confined copy. Its output
// goes to the pipe Hearth reads (standard output and error); refusals and
// the exit status come back as one JSON report on file descriptor 4.
// Hearth's own process never opens a path on a command's behalf, and a
// command that exhausts the host's memory or threads ends the host, not
// Hearth.

// hostArg0 marks the shell host (argv[0]).
const hostArg0 = "hearth-shell-host"

// hostJob is what Hearth sends the host.
type hostJob struct {
	Script      string   `json:"script"`
	Dir         string   `json:"dir"`
	Env         []string `json:"env"`
	Policy      Policy   `json:"policy"`
	MaxProcs    int      `json:"max_procs"`
	MemoryLimit int64    `json:"memory_limit"`
}

// hostReport is what the host sends back when the command line is done.
type hostReport struct {
	Exit    int                `json:"exit"`
	Refusal *Refusal           `json:"refusal,omitempty"`
	Error   string             `json:"error,omitempty"`
	Memory  bool               `json:"memory,omitempty"`
	Sandbox sandbox.SelfReport `json:"sandbox"`
	// Ended: the host was its PID namespace's init, and nothing else is
	// left in it (endNamespace); its output is closed.
	Ended bool `json:"ended,omitempty"`
}

func init() { maybeRunHost() }

// maybeRunHost turns this process into the shell host when Hearth started
// it as one, and never returns then.
func maybeRunHost() {
	if len(os.Args) == 0 || os.Args[0] != hostArg0 {
		return
	}
	os.Exit(hostMain())
}

// hostMain is the shell host: confine, read the job, interpret, report.
func hostMain() int {
	// The spawner thread exists before confinement, so that it is
	// confined with the others (psx applies Landlock to every thread).
	spawner := newSpawner()
	rep, err := sandbox.ConfineSelfFor(spawner)
	if err == nil {
		err = protectHost()
	}
	if err != nil {
		// Fail closed: nothing runs unconfined.
		fmt.Fprintf(os.Stderr, "hearth: the sandbox could not be applied, so the command did not run: %v\n", err)
		return 126
	}
	jobFile, reportFile := os.NewFile(3, "job"), os.NewFile(4, "report")
	if jobFile == nil || reportFile == nil {
		fmt.Fprintln(os.Stderr, "hearth: the shell host was started without its pipes")
		return 126
	}
	// Hearth stops the host's whole process group with SIGTERM, then
	// SIGKILL: stop interpreting at once, so that the programs' own
	// SIGTERM is all that is left to wait for. (Set up before the job:
	// it takes a fraction of a millisecond.)
	ctx, stopSignals := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()
	warmUp(spawner)
	// Confined and waiting: Hearth knows this spare is ready.
	if _, err := reportFile.Write([]byte{hostReady}); err != nil {
		return 126
	}
	var job hostJob
	if err := json.NewDecoder(io.LimitReader(jobFile, 64<<20)).Decode(&job); err != nil {
		fmt.Fprintf(os.Stderr, "hearth: reading the command: %v\n", err)
		return 126
	}
	jobFile.Close()
	out := hostReport{Sandbox: rep}
	out.Exit, out.Refusal, out.Memory, err = interpret(ctx, job, spawner)
	if err != nil {
		out.Error = err.Error()
	}
	if rep.PIDNamespace {
		// The init of the call's PID namespace: end everything the
		// command left (background jobs, daemons), reap it, and let go
		// of the output, so that Hearth may return as soon as it reads
		// the report, without waiting for this process's own exit (the
		// teardown of its namespaces takes milliseconds).
		out.Ended = endNamespace(spawner)
		os.Stdout.Close()
		os.Stderr.Close()
	}
	raw, _ := json.Marshal(out)
	_, _ = reportFile.Write(raw)
	reportFile.Close()
	return 0
}

// warmUp interprets a command line of builtins, with the handlers of a
// real job, while the host waits for its job: the first run of that code
// in a fresh process costs page faults and one-time set-up that would
// otherwise fall on the command.
func warmUp(spawner func(func())) {
	_, _, _, _ = interpret(context.Background(), hostJob{Script: `x=1; if [ "$x" = 1 ]; then : "${x}"; fi`, Dir: "/", Policy: Policy{}, MaxProcs: 1}, spawner)
	heapBytes() // runtime/metrics builds its tables on the first read
	// And the first program started from the spawner thread (a
	// harmless one, inside the sandbox).
	if _, err := os.Stat("/bin/true"); err == nil {
		spawner(func() { _ = exec.Command("/bin/true").Run() })
	}
}

// interpret runs the job's command line in this (confined) process, until
// ctx ends (Hearth's SIGTERM).
func interpret(ctx context.Context, job hostJob, onSpawner func(func())) (exit int, refusal *Refusal, memory bool, err error) {
	f, err := parse(job.Script)
	if err != nil {
		return 2, nil, false, fmt.Errorf("cannot parse the command: %v", err)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	pol := job.Policy
	rs := &runState{ctx: ctx, cancel: cancel, notes: os.Stderr, policy: &pol, env: job.Env,
		maxProcs: job.MaxProcs, memLimit: job.MemoryLimit, goBase: runtime.NumGoroutine(), onSpawner: onSpawner}
	// The variables' size is checked at every command (callHandler);
	// this brake catches what grows between commands (for ((;;)); do
	// x=$x$x; done).
	endWatch := watchMemory(8*job.MemoryLimit, func() { cancel(errMemory) })
	defer endWatch()
	r, err := rs.runner(job.Dir, os.Stdout, os.Stderr)
	if err != nil {
		return 0, nil, false, err
	}
	runErr := r.Run(ctx, f)
	rs.mu.Lock()
	refusal = rs.refusal
	rs.mu.Unlock()
	if refusal != nil {
		return 0, refusal, false, nil
	}
	if errors.Is(context.Cause(ctx), errMemory) {
		return 0, nil, true, nil
	}
	if code, ok := errors.AsType[interp.ExitStatus](runErr); ok {
		return int(code), nil, false, nil
	}
	if runErr != nil && ctx.Err() == nil {
		return 0, nil, false, runErr
	}
	return 0, nil, false, nil
}

// newSpawner starts the goroutine, locked to its OS thread for good, that
// starts and signals every program of the host (runState.onSpawner), and
// returns how to run a function on it.
func newSpawner() func(func()) {
	work := make(chan func())
	ready := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is the spawner's
		close(ready)
		for f := range work {
			f()
		}
	}()
	<-ready
	return func(f func()) {
		done := make(chan struct{})
		work <- func() { f(); close(done) }
		<-done
	}
}

// runHost runs the command line in the shell host and waits for it, its
// timeout or its cancellation; everything the command started is stopped
// when it returns.
func (t *Tool) runHost(parent context.Context, src, dir string, progress func(string), o outcome) outcome {
	start := time.Now()
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, t.cfg.Timeout, errTimeout)
	defer cancelTimeout()

	out := newOutput(t.cfg.OutputCap, t.cfg.OutputLimit, progress, func() { cancel(errOutputLimit) })
	policy, _, env := t.state()
	// A .git the workspace root did not have: nothing could be mounted
	// read-only over it, so it is checked after the call (newRepository).
	gitPath := filepath.Join(policy.Workspace, ".git")
	_, statErr := os.Lstat(gitPath)
	hadGit := statErr == nil

	h, err := t.takeHost()
	if err != nil {
		o.err = fmt.Errorf("starting the command: %v", err)
		return o
	}
	// The next command's host starts when this one has ended (while
	// the model reads the result): it does not take this command's CPU.
	defer func() { go t.prepareSpare() }()
	cmd, group, outR, jobW, repR := h.cmd, h.group, h.outR, h.jobW, h.repR
	closeGroup := func() {
		if left := group.Close(); left > 0 {
			t.cfg.Logger.Warn("run_shell_command: processes could not be stopped", "left", left)
		}
	}
	defer func() { closeGroup() }()

	// The job goes in; the output and the report come out.
	pol := *policy
	raw, _ := json.Marshal(hostJob{Script: src, Dir: dir, Env: env, Policy: pol, MaxProcs: t.cfg.MaxProcs, MemoryLimit: t.cfg.MemoryLimit})
	go func() {
		_, _ = jobW.Write(raw)
		jobW.Close()
	}()
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(out, outR)
	}()
	reported := make(chan []byte, 1)
	go func() {
		if !h.ready && !h.awaitReady() {
			reported <- nil // it never got as far as its job
			return
		}
		b, _ := io.ReadAll(io.LimitReader(repR, 1<<20))
		reported <- b
	}()

	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	// A pids cgroup that stays full ends the call (a fork bomb).
	if group.HasProcessLimit() {
		go watchProcessLimit(ctx, group, func() { cancel(errProcessLimit) })
	}
	// A host that is its PID namespace's init ends the namespace itself
	// and says so in its report: the call is over then, and the host's
	// own exit is waited for in the background.
	var early <-chan []byte
	if h.pidNS {
		early = reported
	}
	var waitErr error
	var repRaw []byte
	gotReport := false
	select {
	case waitErr = <-waited:
	case repRaw = <-early:
		gotReport = true
	case <-ctx.Done():
		// SIGTERM to the host's process group and to every process of
		// the call wherever it went; SIGKILL after the grace period.
		signalGroup(cmd.Process, false)
		group.Signal(syscall.SIGTERM)
		select {
		case waitErr = <-waited:
		case <-time.After(t.cfg.KillGrace):
			signalGroup(cmd.Process, true)
			group.Signal(syscall.SIGKILL)
			waitErr = <-waited
		}
	}
	var rep hostReport
	hasReport := gotReport && json.Unmarshal(repRaw, &rep) == nil
	if hasReport && rep.Ended {
		// Nothing of the command is left: the host exits on its own.
		closeGroup = func() {}
		t.exiting.Add(1)
		go func() {
			defer t.exiting.Done()
			<-waited
			if left := group.Close(); left > 0 {
				t.cfg.Logger.Warn("run_shell_command: processes could not be stopped", "left", left)
			}
		}()
	} else {
		if gotReport {
			waitErr = <-waited
		}
		// Whatever is left (background jobs, daemons a script started,
		// a process that called setsid) dies with the call, before its
		// output is waited for: a leftover could hold the pipe open for
		// ever.
		signalGroup(cmd.Process, true)
		closeGroup()
	}
	select {
	case <-copied:
	case <-time.After(time.Second):
		outR.Close() // something outside the group holds it: stop reading
		<-copied
	}
	outR.Close()
	if !gotReport {
		repRaw = <-reported
		hasReport = len(repRaw) > 0 && json.Unmarshal(repRaw, &rep) == nil
	}
	repR.Close()

	if !hadGit && t.readOnly == "" {
		// (In a read-only workspace no command can have made it: a .git
		// there now is the user's, and Hearth changes nothing there.)
		o.notice = newRepository(gitPath)
	}
	o.output, o.total, o.dropped = out.close()
	o.duration = time.Since(start)
	if hasReport {
		t.noteSandbox(rep.Sandbox)
	}
	switch {
	case hasReport && rep.Refusal != nil:
		o.refusal = rep.Refusal
		return o
	case ctx.Err() != nil:
		o.stopped = context.Cause(ctx)
		o.procLimit = h.procLimit
		if parent.Err() != nil {
			o.stopped = context.Cause(parent)
		}
		return o
	case hasReport && rep.Memory:
		o.stopped = errMemory
		return o
	case hasReport && rep.Error != "":
		o.err = fmt.Errorf("%s\n%s", o.output, rep.Error)
		return o
	case hasReport:
		o.exit = rep.Exit
		return o
	}
	// No report: the host died (out of memory or threads, killed).
	o.err = fmt.Errorf("%s\n[the shell stopped before the command finished (%v): a fork bomb or a runaway command?]", strings.TrimRight(o.output, "\n"), waitErr)
	return o
}

// watchProcessLimit calls stop once group's pids cgroup has gone on
// refusing forks for a second: a fork bomb keeps it full, and would
// otherwise spin on every core until the timeout. A program that meets
// the limit once and waits (a build's job server, a pool that backs off)
// is left alone.
func watchProcessLimit(ctx context.Context, group *sandbox.Group, stop func()) {
	const every, sustained = 100 * time.Millisecond, 10
	tick := time.NewTicker(every)
	defer tick.Stop()
	last, run := int64(0), 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		n := group.ProcessLimitRefusals()
		if n > last {
			run++
		} else {
			run = 0
		}
		last = n
		if run >= sustained {
			stop()
			return
		}
	}
}

// hostProc is a shell host started and confined, waiting for its job on
// its pipe: the one a command takes, or the spare the next command will.
type hostProc struct {
	cmd   *exec.Cmd
	group *sandbox.Group
	outR  *os.File // its standard output and error
	jobW  *os.File // its job
	repR  *os.File // its report
	// view is what its mounts were made from (sandbox.Confinement.View):
	// a spare is used only while that is unchanged.
	view string
	// procLimit is its pids cgroup's limit (0: none).
	procLimit int
	// ready: it said it is confined and waits for its job (awaitReady).
	ready bool
	// pidNS: it is the init of a PID namespace of its own.
	pidNS bool
}

// hostReady is the byte a shell host writes on its report pipe once it is
// confined and waits for its job.
const hostReady = 'R'

// awaitReady waits until the host is confined and waits for its job, and
// reports whether it got there (it exits instead when it cannot confine
// itself: nothing runs unconfined).
func (h *hostProc) awaitReady() bool {
	var b [1]byte
	n, _ := io.ReadFull(h.repR, b[:])
	h.ready = n == 1 && b[0] == hostReady
	return h.ready
}

// startHost starts a shell host in the workspace root. It confines itself
// and waits for its job.
func (t *Tool) startHost() (*hostProc, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	jobR, jobW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		jobR.Close()
		jobW.Close()
		return nil, err
	}
	group := sandbox.NewGroup()
	policy, conf, env := t.state()
	view := conf.View()
	cmd, err := conf.SelfCommand(group, []string{hostArg0}, hostEnv(env))
	if err == nil {
		cmd.Dir = policy.Workspace
		cmd.Stdout, cmd.Stderr = outW, outW
		cmd.ExtraFiles = []*os.File{jobR, repW}
		err = conf.StartSelf(cmd)
	}
	outW.Close()
	jobR.Close()
	repW.Close()
	if err != nil {
		outR.Close()
		jobW.Close()
		repR.Close()
		group.Close()
		return nil, err
	}
	pidNS := sandbox.InOwnPIDNamespace(cmd)
	if pidNS {
		group.StartedInit(cmd.Process.Pid)
	} else {
		group.Started(cmd.Process.Pid)
	}
	// Before the host has its job, it has started nothing: its pids
	// cgroup, where the system allows one, holds everything the command
	// will start (a fork bomb run as root, which RLIMIT_NPROC does not
	// bind, stops there and not at the machine's last pid).
	limit := group.LimitProcesses(cmd.Process.Pid, t.cfg.MaxProcs*4)
	return &hostProc{cmd: cmd, group: group, outR: outR, jobW: jobW, repR: repR, view: view, procLimit: limit, pidNS: pidNS}, nil
}

// exited reports whether the host has exited (it is not reaped: Wait
// still does that, so its pid is still its own).
func (h *hostProc) exited() bool { return processExited(h.cmd.Process.Pid) }

// discard stops a host that was never given a job.
func (h *hostProc) discard() {
	h.jobW.Close() // the host reads EOF and exits
	signalGroup(h.cmd.Process, true)
	_ = h.cmd.Wait()
	h.outR.Close()
	h.repR.Close()
	h.group.Close()
}

// takeHost returns the spare host when it was made from what the
// filesystem still holds, or starts a new one.
func (t *Tool) takeHost() (*hostProc, error) {
	t.spareMu.Lock()
	if t.spare == nil && t.preparing {
		// One is on its way (a command right after another): it is
		// ready sooner than a new one would be.
		done := t.spareDone
		t.spareMu.Unlock()
		<-done
		t.spareMu.Lock()
	}
	h := t.spare
	t.spare = nil
	t.spareMu.Unlock()
	if h != nil {
		if _, conf, _ := t.state(); h.view == conf.View() && !h.exited() {
			return h, nil
		}
		// .git, .hearth, a secret location or a daemon's socket came or
		// went since it started: its mounts no longer match. Or it died
		// while it waited (killed by the user, or the OOM killer).
		h.discard()
	}
	return t.startHost()
}

// prepareSpare starts the next command's host, unless there is one or the
// tool is closed.
func (t *Tool) prepareSpare() {
	t.spareMu.Lock()
	if t.spare != nil || t.closed || t.preparing {
		t.spareMu.Unlock()
		return
	}
	t.preparing = true
	done := make(chan struct{})
	t.spareDone = done
	t.prepared.Add(1)
	t.spareMu.Unlock()
	defer t.prepared.Done()
	h, err := t.startHost()
	if err == nil && !h.awaitReady() {
		// It could not confine itself: the command that would have
		// taken it starts its own host, and reports why.
		h.discard()
		err = errors.New("the spare shell host did not get ready")
	}
	t.spareMu.Lock()
	t.preparing = false
	defer close(done)
	if err != nil {
		t.spareMu.Unlock()
		return
	}
	if t.spare != nil || t.closed {
		t.spareMu.Unlock()
		h.discard()
		return
	}
	t.spare = h
	t.spareMu.Unlock()
}

// newRepository moves aside a .git that a command made at the workspace
// root during the call (a git init, or a gitdir: file): what it holds —
// hooks, core.fsmonitor, a pager — would run outside the sandbox the next
// time the user runs git there, and the kernel could not keep it read-only,
// since it did not exist when the command started. It returns the note for
// the output, or "".
func newRepository(gitPath string) string {
	if _, err := os.Lstat(gitPath); err != nil {
		return ""
	}
	aside := fmt.Sprintf("%s.quarantined-%d", gitPath, time.Now().UnixNano())
	if err := os.Rename(gitPath, aside); err != nil {
		return fmt.Sprintf("[hearth: the command made %s, a git repository git would run hooks and settings from outside the sandbox, and Hearth could not move it aside (%v): check it before you run git here]", gitPath, err)
	}
	return fmt.Sprintf("[hearth: the command made %s; git runs what a repository holds (hooks, core.fsmonitor, a pager) when the user runs it, outside the sandbox, so Hearth moved it to %s. If the user asked for a new repository, ask them to run git init themselves]", gitPath, filepath.Base(aside))
}

// hostEnv is the environment the host starts with: only what the Go
// runtime and the sandbox need; the command's own environment travels in
// the job.
func hostEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "TMPDIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// noteSandbox records what the host could apply, once, for Status and
// the log.
func (t *Tool) noteSandbox(rep sandbox.SelfReport) {
	t.hostOnce.Do(func() {
		t.hostStatus = rep
		if len(rep.Problems) > 0 {
			t.cfg.Logger.Warn("run_shell_command: sandbox", "problems", strings.Join(rep.Problems, "; "))
		}
	})
}
