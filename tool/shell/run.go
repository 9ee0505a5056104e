package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// Why a run was stopped (context causes).
var (
	errTimeout     = errors.New("timed out")
	errOutputLimit = errors.New("output limit")
	errMemory      = errors.New("memory limit")
	errRefused     = errors.New("refused")
)

// abandonAfter is how long past the kill grace period a stopped call waits
// for the interpreter before returning without it.
const abandonAfter = 5 * time.Second

// outcome is what one call did.
type outcome struct {
	output   string
	total    int64 // bytes printed
	dropped  int64 // bytes not kept
	exit     int
	refusal  *Refusal
	stopped  error // errTimeout, errOutputLimit, errMemory, or the caller's cancellation
	err      error // the command could not run at all
	timeout  time.Duration
	limit    int64
	duration time.Duration
}

// result turns an outcome into what the model sees. A command that ran and
// failed is a result (its output and exit status); a refusal, a stop or a
// command that could not run is an error, with the output so far.
func (o outcome) result() (tool.Result, error) {
	var b strings.Builder
	b.WriteString(o.output)
	note := func(s string) {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	switch {
	case o.err != nil:
		return tool.Result{}, o.err
	case o.refusal != nil:
		if b.Len() > 0 {
			note(o.refusal.Error())
			return tool.Result{}, errors.New(b.String())
		}
		return tool.Result{}, o.refusal
	case errors.Is(o.stopped, errTimeout):
		note(fmt.Sprintf("[timed out after %s: the command and every process it started were stopped]", o.timeout))
		return tool.Result{}, errors.New(b.String())
	case errors.Is(o.stopped, errOutputLimit):
		note(fmt.Sprintf("[stopped: the command printed more than %d bytes; print less, e.g. pipe it through head or grep]", o.limit))
		return tool.Result{}, errors.New(b.String())
	case errors.Is(o.stopped, errMemory):
		note("[stopped: the shell used too much memory (a variable or $(…) growing without end?)]")
		return tool.Result{}, errors.New(b.String())
	case o.stopped != nil:
		note("[cancelled]")
		return tool.Result{}, errors.New(b.String())
	}
	if o.exit != 0 {
		note(fmt.Sprintf("[exit status %d]", o.exit))
	} else if b.Len() == 0 {
		b.WriteString("[no output; exit status 0]")
	}
	return tool.Result{Output: b.String()}, nil
}

// runState is one call in progress.
type runState struct {
	t      *Tool
	ctx    context.Context
	cancel context.CancelCauseFunc
	out    *output

	// group holds every process the call starts, and every process they
	// start, however they detach (setsid, double forks): all of them are
	// stopped when the call ends.
	group *sandbox.Group

	mu      sync.Mutex
	procs   map[*os.Process]struct{}
	refusal *Refusal
	live    atomic.Int32
	calls   atomic.Int64
	goBase  int
	done    chan struct{}
}

// run runs src in dir.
func (t *Tool) run(parent context.Context, src, dir string, progress func(string)) outcome {
	start := time.Now()
	o := outcome{timeout: t.cfg.Timeout, limit: t.cfg.OutputLimit}
	f, err := parse(src)
	if err != nil {
		o.err = fmt.Errorf("cannot parse the command: %v", err)
		return o
	}
	// Layer 1: everything that can be checked before anything runs.
	if r := t.policy.checkFile(f, dir); r != nil {
		o.refusal = r
		return o
	}

	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ctx, cancelTimeout := context.WithTimeoutCause(ctx, t.cfg.Timeout, errTimeout)
	defer cancelTimeout()

	rs := &runState{t: t, ctx: ctx, cancel: cancel, procs: map[*os.Process]struct{}{}, goBase: runtime.NumGoroutine(), group: sandbox.NewGroup()}
	// Whatever is left when the call returns (background jobs, daemons,
	// processes that left their session) dies with it.
	defer rs.closeGroup()
	rs.out = newOutput(t.cfg.OutputCap, t.cfg.OutputLimit, progress, func() { cancel(errOutputLimit) })
	// The variables' size is checked at every command (callHandler); this
	// brake catches what grows between commands (for ((;;)); do x=$x$x;
	// done), process-wide, so it is set well above.
	endWatch := watchMemory(8*t.cfg.MemoryLimit, func() { cancel(errMemory) })
	defer endWatch()

	// Stop every process when the run is cancelled: SIGTERM to each
	// process group and every process of the call's group, SIGKILL after
	// the grace period.
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		select {
		case <-ctx.Done():
		case <-rs.finished():
			return
		}
		rs.signalAll(false)
		select {
		case <-time.After(t.cfg.KillGrace):
			rs.signalAll(true)
		case <-rs.finished():
		}
	}()

	r, err := rs.runner(dir, rs.out, rs.out)
	if err != nil {
		o.err = err
		return o
	}
	// The interpreter stops at the next command once ctx is done, and its
	// programs die with their process groups. Should it still hang
	// (blocked in a way cancellation cannot reach), the call returns
	// anyway, a few seconds after the grace period, and leaves it behind.
	runDone := make(chan error, 1)
	go func() { runDone <- r.Run(ctx, f) }()
	var runErr error
	select {
	case runErr = <-runDone:
	case <-ctx.Done():
		select {
		case runErr = <-runDone:
		case <-time.After(t.cfg.KillGrace + abandonAfter):
			runErr = context.Cause(ctx)
		}
	}
	rs.finish()
	<-killerDone
	// Whatever is left (background jobs, daemons a script started, a
	// process that called setsid itself) dies with the call: the process
	// groups at once, then every process of the call's group, wherever
	// it went.
	rs.signalGroups(true)
	rs.closeGroup()

	o.output, o.total, o.dropped = rs.out.close()
	o.duration = time.Since(start)
	rs.mu.Lock()
	o.refusal = rs.refusal
	rs.mu.Unlock()
	if o.refusal != nil {
		return o
	}
	if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
		o.stopped = cause
		if parent.Err() != nil {
			o.stopped = context.Cause(parent)
		}
		return o
	}
	var ref *Refusal
	switch {
	case runErr == nil:
	case errors.As(runErr, &ref):
		o.refusal = ref
	default:
		if code, ok := interp.IsExitStatus(runErr); ok {
			o.exit = int(code)
		} else {
			o.err = fmt.Errorf("%s\n%v", o.output, runErr)
		}
	}
	return o
}

// finished returns a channel closed once the interpreter has returned.
func (rs *runState) finished() <-chan struct{} {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.done == nil {
		rs.done = make(chan struct{})
	}
	return rs.done
}

func (rs *runState) finish() {
	rs.finished()
	rs.mu.Lock()
	defer rs.mu.Unlock()
	select {
	case <-rs.done:
	default:
		close(rs.done)
	}
}

// signalGroups signals every process group the call started.
func (rs *runState) signalGroups(kill bool) bool {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for p := range rs.procs {
		signalGroup(p, kill)
	}
	return len(rs.procs) > 0
}

// signalAll signals every process group the call started, and every
// process of the call wherever it went.
func (rs *runState) signalAll(kill bool) {
	if rs.signalGroups(kill) {
		sig := syscall.SIGTERM
		if kill {
			sig = syscall.SIGKILL
		}
		rs.group.Signal(sig)
	}
}

// closeGroup kills what is left of the call's processes and reaps them.
func (rs *runState) closeGroup() {
	if left := rs.group.Close(); left > 0 {
		rs.t.cfg.Logger.Warn("run_shell_command: processes could not be stopped", "left", left)
	}
}

// refuse records a refusal, shows it in the output and stops the run.
func (rs *runState) refuse(r *Refusal) error {
	rs.mu.Lock()
	first := rs.refusal == nil
	if first {
		rs.refusal = r
	}
	rs.mu.Unlock()
	if first {
		rs.out.notify("hearth: " + r.Error() + "\n")
		rs.cancel(errRefused)
	}
	return r
}

func (rs *runState) check(args []string, dir string) error {
	if err := rs.t.policy.Check(args, dir); err != nil {
		return rs.refuse(err.(*Refusal))
	}
	return nil
}

// runner builds an interpreter for the run. Every interpreter of the run
// (sh -c strings included) shares its handlers.
func (rs *runState) runner(dir string, stdout, stderr io.Writer, opts ...interp.RunnerOption) (*interp.Runner, error) {
	base := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(rs.t.env...)),
		interp.Dir(dir),
		interp.StdIO(nil, stdout, stderr),
		interp.CallHandler(rs.callHandler),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return rs.execHandler }),
		interp.OpenHandler(rs.openHandler),
	}
	return interp.New(append(base, opts...)...)
}

// callHandler runs before every simple command, builtins and functions
// included, after expansion.
func (rs *runState) callHandler(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if rs.calls.Add(1)%stackCheckEvery == 0 && stackTooDeep() {
		return nil, rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: "shell functions are nested too deep (a recursion without end?)"})
	}
	if n := runtime.NumGoroutine() - rs.goBase; n > 20*rs.t.cfg.MaxProcs {
		return nil, rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: "too many commands running at once (a fork bomb?)"})
	}
	if l, ok := hc.Stdout.(interface{ Len() int }); ok && int64(l.Len()) > DefaultSubstLimit {
		return nil, rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: fmt.Sprintf("a $(…) captured more than %d bytes", DefaultSubstLimit)})
	}
	if rs.t.cfg.MemoryLimit > 0 && envSize(hc.Env) > rs.t.cfg.MemoryLimit {
		rs.cancel(errMemory)
		return nil, errMemory
	}
	if err := rs.check(args, hc.Dir); err != nil {
		return nil, err
	}
	switch args[0] {
	case "kill":
		// The interpreter has no kill, and a confined program may only
		// signal its own descendants: Hearth signals, itself, processes
		// this call started, and nothing else.
		if rs.kill(hc, args[1:]) {
			return []string{"true"}, nil
		}
		return []string{"false"}, nil
	case "source", ".":
		// The interpreter runs the file through these handlers; check it
		// as a whole first, for fork bombs.
		if len(args) > 1 {
			if r := rs.checkScriptFile(args[1], hc.Dir, false); r != nil {
				return nil, rs.refuse(r)
			}
		}
	}
	return args, nil
}

// checkScriptFile checks a script file statically, as far as it can be read.
func (rs *runState) checkScriptFile(path, dir string, strict bool) *Refusal {
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 1<<20 {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	f, err := parse(string(b))
	if err != nil {
		return nil // not a script Hearth can read: it runs under the OS sandbox
	}
	s := &static{p: rs.t.policy, dir: dir, strict: strict}
	return s.file(f)
}

// execHandler runs every program, after the policy.
func (rs *runState) execHandler(ctx context.Context, args []string) error {
	hc := interp.HandlerCtx(ctx)
	if err := rs.check(args, hc.Dir); err != nil {
		return err
	}
	name := commandName(args[0])
	if posixShells[name] {
		if handled, err := rs.shellC(ctx, hc, args); handled {
			return err
		}
		// A script file: check what can be checked, then run it for real,
		// confined.
		if ops := operands(args[1:], optSpec{stopAtOperand: true}).afterOpts; len(ops) > 0 {
			if r := rs.checkScriptFile(ops[0], hc.Dir, false); r != nil {
				return rs.refuse(r)
			}
		}
	}
	path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: command not found\n", args[0])
		return interp.ExitStatus(127)
	}
	if strings.Contains(args[0], "/") {
		// A script in the workspace: check it too.
		if r := rs.checkScriptFile(path, hc.Dir, false); r != nil && isShellScript(path) {
			return rs.refuse(r)
		}
	}
	if rs.t.execHook != nil {
		return rs.t.execHook(args, hc.Dir)
	}
	return rs.start(ctx, hc, path, args)
}

// isShellScript reports whether path starts with a #! line naming a
// POSIX shell.
func isShellScript(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [128]byte
	n, _ := io.ReadFull(f, b[:])
	line, _, _ := strings.Cut(string(b[:n]), "\n")
	if !strings.HasPrefix(line, "#!") {
		return false
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 {
		return false
	}
	prog := commandName(fields[0])
	if prog == "env" && len(fields) > 1 {
		prog = commandName(fields[1])
	}
	return posixShells[prog]
}

// shellC interprets `sh -c STRING [name args…]` in-process, so that each of
// its commands is checked after expansion like the rest.
func (rs *runState) shellC(ctx context.Context, hc interp.HandlerContext, args []string) (bool, error) {
	var opts []string
	i := 1
	hasC := false
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") || a == "-" {
			break
		}
		if strings.HasPrefix(a, "--") {
			continue // --norc, --posix, …
		}
		for _, ch := range a[1:] {
			switch ch {
			case 'c':
				hasC = true
			case 'e', 'u', 'x', 'f':
				opts = append(opts, string(a[0])+string(ch))
			case 'o':
				if i+1 < len(args) && (args[i+1] == "pipefail" || args[i+1] == "errexit" || args[i+1] == "nounset") {
					opts = append(opts, string(a[0])+"o", args[i+1])
				}
				i++
			}
		}
	}
	if !hasC || i >= len(args) {
		return false, nil
	}
	name := args[0]
	if i+1 < len(args) {
		name = args[i+1]
	}
	f, err := parseNamed(args[i], name)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return true, interp.ExitStatus(2)
	}
	params := append(opts, "--")
	if i+2 < len(args) {
		params = append(params, args[i+2:]...)
	}
	env := execEnv(hc.Env)
	sub, err := rs.runner(hc.Dir, hc.Stdout, hc.Stderr,
		interp.Env(expand.ListEnviron(env...)),
		interp.StdIO(hc.Stdin, hc.Stdout, hc.Stderr),
		interp.Params(params...))
	if err != nil {
		return true, err
	}
	err = sub.Run(ctx, f)
	if _, ok := interp.IsExitStatus(err); ok || err == nil {
		return true, err
	}
	return true, err
}

// envSize is how many bytes the shell's variables hold.
func envSize(env expand.Environ) int64 {
	var n int64
	env.Each(func(name string, vr expand.Variable) bool {
		n += int64(len(name) + len(vr.Str))
		for _, s := range vr.List {
			n += int64(len(s))
		}
		for k, v := range vr.Map {
			n += int64(len(k) + len(v))
		}
		return true
	})
	return n
}

// execEnv is the exported environment of the interpreter, for a program.
func execEnv(env expand.Environ) []string {
	vals := map[string]string{}
	var order []string
	env.Each(func(name string, vr expand.Variable) bool {
		if !vr.IsSet() {
			delete(vals, name)
			return true
		}
		if vr.Exported && vr.Kind == expand.String {
			if _, seen := vals[name]; !seen {
				order = append(order, name)
			}
			vals[name] = vr.String()
		}
		return true
	})
	out := make([]string, 0, len(order))
	for _, n := range order {
		if v, ok := vals[n]; ok {
			out = append(out, n+"="+v)
		}
	}
	return out
}

// start runs one program, confined, in its own session.
func (rs *runState) start(ctx context.Context, hc interp.HandlerContext, path string, args []string) error {
	if n := rs.live.Add(1); int(n) > rs.t.cfg.MaxProcs {
		rs.live.Add(-1)
		return rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: fmt.Sprintf("more than %d programs running at once (a fork bomb?)", rs.t.cfg.MaxProcs)})
	}
	defer rs.live.Add(-1)
	cmd, err := rs.t.conf.CommandIn(rs.group, path, args, execEnv(hc.Env))
	if err != nil {
		return err
	}
	cmd.Dir = hc.Dir
	if hc.Stdin != nil {
		cmd.Stdin = hc.Stdin
	}
	cmd.Stdout = rs.writer(hc.Stdout)
	cmd.Stderr = rs.writer(hc.Stderr)
	cmd.SysProcAttr = procAttr()
	// A program that exits while something it started still holds its
	// output open: wait this long for the output, then move on (the
	// leftovers are stopped when the call ends).
	cmd.WaitDelay = time.Second
	if err := ctx.Err(); err != nil {
		return err
	}
	err = cmd.Start()
	for delay := time.Millisecond; isETXTBSY(err) && delay < 300*time.Millisecond; delay *= 2 {
		time.Sleep(delay)
		cmd, _ = rs.t.conf.CommandIn(rs.group, path, args, execEnv(hc.Env))
		cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Dir, nil, rs.writer(hc.Stdout), rs.writer(hc.Stderr)
		if hc.Stdin != nil {
			cmd.Stdin = hc.Stdin
		}
		cmd.SysProcAttr, cmd.WaitDelay = procAttr(), time.Second
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return interp.ExitStatus(126)
	}
	rs.group.Started(cmd.Process.Pid)
	rs.mu.Lock()
	rs.procs[cmd.Process] = struct{}{}
	rs.mu.Unlock()
	if ctx.Err() != nil {
		signalGroup(cmd.Process, false)
	}
	err = cmd.Wait()
	rs.group.Waited(cmd.Process.Pid)
	var ee *exec.ExitError
	switch {
	case err == nil, errors.Is(err, exec.ErrWaitDelay):
		return nil
	case errors.As(err, &ee):
		if sig, ok := exitSignal(ee.ProcessState); ok {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return interp.ExitStatus(128 + sig)
		}
		return interp.ExitStatus(ee.ExitCode())
	}
	return err
}

// writer returns what a program's output goes to: files and pipes
// directly, the call's output as is, and anything else (the interpreter's
// buffer for $(…)) through a limit.
func (rs *runState) writer(w io.Writer) io.Writer {
	switch w := w.(type) {
	case nil:
		return nil
	case *os.File, *output:
		return w
	case stdAlias:
		return rs.writer(w.Writer)
	}
	return &limitWriter{w: w, n: DefaultSubstLimit, onLimit: func() {
		rs.refuse(&Refusal{Rule: RuleLimit, Reason: fmt.Sprintf("a $(…) captured more than %d bytes; capture less, e.g. through head", DefaultSubstLimit)})
	}}
}

// stdAlias is /dev/stdout or /dev/stderr opened by a redirection: the
// interpreter's own stream, not Hearth's.
type stdAlias struct{ io.Writer }

func (stdAlias) Read([]byte) (int, error) { return 0, io.EOF }
func (stdAlias) Close() error             { return nil }

type readOnly struct{ io.Reader }

func (readOnly) Write([]byte) (int, error) { return 0, errors.New("not open for writing") }
func (readOnly) Close() error              { return nil }

// openHandler opens the files redirections name.
func (rs *runState) openHandler(ctx context.Context, path string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	switch path {
	case "/dev/stdout", "/dev/fd/1":
		return stdAlias{hc.Stdout}, nil
	case "/dev/stderr", "/dev/fd/2":
		return stdAlias{hc.Stderr}, nil
	case "/dev/stdin", "/dev/fd/0":
		if hc.Stdin == nil {
			return readOnly{strings.NewReader("")}, nil
		}
		return readOnly{hc.Stdin}, nil
	case "/dev/tty":
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("no terminal: commands run without one")}
	}
	write := flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0
	if write {
		return rs.openWrite(path, hc.Dir, flag, perm)
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(hc.Dir, abs)
	}
	fi, err := os.Stat(abs)
	if err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("named pipes cannot be redirected (they could block forever)")}
	}
	f, err := os.OpenFile(abs, flag, perm)
	if err != nil {
		return nil, err
	}
	r := &ctxReader{ctx: rs.ctx, f: f, n: -1}
	if err == nil && fi.Mode()&fs.ModeDevice != 0 {
		r.n = DefaultSubstLimit // /dev/zero, /dev/urandom: never endless
	}
	return r, nil
}

func (rs *runState) openWrite(path, dir string, flag int, perm os.FileMode) (io.ReadWriteCloser, error) {
	if err := rs.t.policy.CheckWrite(path, dir); err != nil {
		return nil, rs.refuse(err.(*Refusal))
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	if harmlessDevice(filepath.Clean(abs)) {
		return os.OpenFile(abs, flag, perm)
	}
	real, err := sandbox.RealPath(dir, path, true)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if fi, err := os.Lstat(real); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: path, Err: errors.New("only regular files can be redirected to")}
	}
	for _, root := range append([]string{rs.t.policy.Workspace}, rs.t.policy.Writable...) {
		if sandbox.Within(real, root) {
			rel, err := filepath.Rel(root, real)
			if err != nil {
				break
			}
			return sandbox.OpenBeneath(root, rel, flag, perm)
		}
	}
	// CheckWrite passed, so this is a path the policy allows elsewhere
	// (none today); refuse rather than guess.
	return nil, rs.refuse(&Refusal{Rule: RuleOutside, Command: "> " + path, Reason: "it is outside the workspace"})
}

// ctxReader reads a file until the run is stopped, and at most n bytes
// (n < 0: no bound), so that $(< /dev/zero) ends.
type ctxReader struct {
	ctx context.Context
	f   *os.File
	n   int64
}

func (r *ctxReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	if r.n > 0 && int64(len(p)) > r.n {
		p = p[:r.n]
	}
	k, err := r.f.Read(p)
	if r.n > 0 {
		r.n -= int64(k)
	}
	return k, err
}

func (r *ctxReader) Write([]byte) (int, error) { return 0, errors.New("not open for writing") }
func (r *ctxReader) Close() error              { return r.f.Close() }
