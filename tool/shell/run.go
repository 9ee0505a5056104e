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
	"mvdan.cc/sh/v3/syntax"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// Why a run was stopped (context causes).
var (
	errTimeout     = errors.New("timed out")
	errOutputLimit = errors.New("output limit")
	errMemory      = errors.New("memory limit")
	// errProcessLimit: the call's pids cgroup refused a fork.
	errProcessLimit = errors.New("process limit")
	errRefused      = errors.New("refused")
)

// outcome is what one call did.
type outcome struct {
	output    string
	total     int64 // bytes printed
	dropped   int64 // bytes not kept
	exit      int
	refusal   *Refusal
	stopped   error // errTimeout, errOutputLimit, errMemory, or the caller's cancellation
	err       error // the command could not run at all
	timeout   time.Duration
	limit     int64
	procLimit int // processes and threads one call may run at once
	duration  time.Duration
	noNet     bool   // the network was denied
	notice    string // what Hearth did after the command, for the model
	readOnly  string // why the workspace is read-only ("" when it is not)
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
	if o.notice != "" {
		note(o.notice + "\n")
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
	case errors.Is(o.stopped, errProcessLimit):
		note(fmt.Sprintf("[stopped: the command tried to run more than %d processes and threads at once (a fork bomb?); it and every process it started were stopped]", o.procLimit))
		return tool.Result{}, errors.New(b.String())
	case errors.Is(o.stopped, errMemory):
		note("[stopped: the shell used too much memory (a variable or $(…) growing without end?)]")
		return tool.Result{}, errors.New(b.String())
	case errors.Is(o.stopped, context.DeadlineExceeded):
		note("[stopped: the run reached its own time limit, and the command and every process it started were stopped with it]")
		return tool.Result{}, errors.New(b.String())
	case o.stopped != nil:
		note("[cancelled: the command and every process it started were stopped]")
		return tool.Result{}, errors.New(b.String())
	}
	if o.exit != 0 && o.noNet && networkFailure(o.output) {
		note("[" + NetworkOffNote + "]")
	}
	switch {
	case o.exit != 0 && o.readOnly != "" && writeDenied(o.output):
		note("[the system refuses changes here: " + o.readOnly + "]")
	case o.exit != 0 && readOnlyGit(o.output):
		note("[.git is read-only to commands, so that nothing a command plants there runs later when the user runs git: ask the user to commit, or to change git's settings]")
	}
	if o.exit != 0 {
		note(fmt.Sprintf("[exit status %d]", o.exit))
	} else if b.Len() == 0 {
		b.WriteString("[no output; exit status 0]")
	}
	return tool.Result{Output: b.String()}, nil
}

// NetworkOffNote tells the model, and through it the user, why a command
// could not reach the network and how to allow it.
const NetworkOffNote = "the network is off for commands: nothing a command runs can connect or download, nor make a Unix socket. " +
	"If this task needs it, ask the user to allow it with network = true in their profile " +
	"(~/.config/hearth/config.toml, [profiles.NAME]); a project's own config cannot"

// networkFailure reports whether a command's output looks like a network
// connection that failed.
func networkFailure(out string) bool {
	for _, s := range []string{"Network is unreachable", "network is unreachable", "Could not resolve", "could not resolve",
		"Temporary failure in name resolution", "Name or service not known", "Failed to connect", "Connection refused",
		"connection refused", "getaddrinfo", "EAI_AGAIN", "ENETUNREACH", "dial tcp", "No address associated", "Could not connect"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// readOnlyGit reports whether a command's output shows it failed to
// write git's metadata (a commit, git config, git init over a
// repository): the sandbox mounts .git read-only.
func readOnlyGit(out string) bool {
	return strings.Contains(out, "Read-only file system") && strings.Contains(out, ".git")
}

// writeDenied reports whether a command's output shows the system refused
// it a change (a read-only mount, Landlock).
func writeDenied(out string) bool {
	for _, s := range []string{"Read-only file system", "read-only file system", "Permission denied", "permission denied",
		"Operation not permitted", "operation not permitted", "EACCES", "EROFS", "EPERM"} {
		if strings.Contains(out, s) {
			return true
		}
	}
	return false
}

// runState is one interpretation of a command line: in the shell host
// (host.go), confined, or in Hearth's process for the dry runs of tests.
type runState struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	out    *output // nil in the host: output goes straight to its pipe
	notes  io.Writer

	policy   *Policy
	env      []string
	maxProcs int
	memLimit int64
	// execHook, when set (tests), runs each program instead of starting
	// it (Tool.execHook).
	execHook func(argv []string, dir string) error

	// onSpawner, when set (the shell host), runs f on the one OS thread
	// that starts and signals every program: Landlock before ABI 8
	// confines each thread on its own, in a domain of its own, and a
	// confined process may signal only processes of its own domain.
	onSpawner func(f func())

	mu      sync.Mutex
	refusal *Refusal
	live    atomic.Int32
	calls   atomic.Int64
	goBase  int
}

// run runs src in dir: checked first as a whole, then interpreted by the
// shell host, a confined copy of this binary (host.go), or, in the dry runs
// of tests, in this process with programs never started.
func (t *Tool) run(parent context.Context, src, dir string, progress func(string)) outcome {
	o := outcome{timeout: t.cfg.Timeout, limit: t.cfg.OutputLimit, noNet: t.cfg.DenyNetwork, readOnly: t.readOnly}
	if err := t.prepare(); err != nil {
		o.err = err
		return o
	}
	pol, _, _ := t.state()
	f, err := parse(src)
	if err != nil {
		o.err = fmt.Errorf("cannot parse the command: %v", err)
		return o
	}
	// Layer 1: everything that can be checked before anything runs.
	if r := pol.checkFile(f, dir); r != nil {
		o.refusal = r
		return o
	}
	if t.execHook != nil {
		return t.runDry(parent, f, dir, progress, o)
	}
	return t.runHost(parent, src, dir, progress, o)
}

// runDry interprets f in this process with every program handed to
// t.execHook: the policy layers alone, for tests that must prove a refusal
// comes before anything runs.
func (t *Tool) runDry(parent context.Context, f *syntax.File, dir string, progress func(string), o outcome) outcome {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	rs := t.newRunState(ctx, cancel)
	rs.out = newOutput(t.cfg.OutputCap, t.cfg.OutputLimit, progress, func() { cancel(errOutputLimit) })
	rs.notes = rs.out
	r, err := rs.runner(dir, rs.out, rs.out)
	if err != nil {
		o.err = err
		return o
	}
	runErr := r.Run(ctx, f)
	o.output, o.total, o.dropped = rs.out.close()
	rs.mu.Lock()
	o.refusal = rs.refusal
	rs.mu.Unlock()
	if o.refusal != nil {
		return o
	}
	if code, ok := errors.AsType[interp.ExitStatus](runErr); ok {
		o.exit = int(code)
	} else if runErr != nil {
		o.err = runErr
	}
	return o
}

func (t *Tool) newRunState(ctx context.Context, cancel context.CancelCauseFunc) *runState {
	pol, _, env := t.state()
	return &runState{ctx: ctx, cancel: cancel, policy: pol, env: env, maxProcs: t.cfg.MaxProcs,
		memLimit: t.cfg.MemoryLimit, execHook: t.execHook, goBase: runtime.NumGoroutine()}
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
		rs.note("hearth: " + r.Error() + "\n")
		rs.cancel(errRefused)
	}
	return r
}

// note shows s in the command's output, whatever the output cap.
func (rs *runState) note(s string) {
	if rs.out != nil {
		rs.out.notify(s)
		return
	}
	_, _ = io.WriteString(rs.notes, s)
}

func (rs *runState) check(args []string, dir string) error {
	if err := rs.policy.Check(args, dir); err != nil {
		return rs.refuse(err.(*Refusal))
	}
	return nil
}

// runner builds an interpreter for the run. Every interpreter of the run
// (sh -c strings included) shares its handlers.
func (rs *runState) runner(dir string, stdout, stderr io.Writer, opts ...interp.RunnerOption) (*interp.Runner, error) {
	base := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(rs.env...)),
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
	if n := runtime.NumGoroutine() - rs.goBase; n > 20*rs.maxProcs {
		return nil, rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: "too many commands running at once (a fork bomb?)"})
	}
	if l, ok := hc.Stdout.(interface{ Len() int }); ok && int64(l.Len()) > DefaultSubstLimit {
		return nil, rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: fmt.Sprintf("a $(…) captured more than %d bytes", DefaultSubstLimit)})
	}
	if rs.memLimit > 0 && envSize(hc.Env) > rs.memLimit {
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
	s := &static{p: rs.policy, dir: dir, strict: strict}
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
		if ops := operands(args[1:], shellOptions).afterOpts; len(ops) > 0 {
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
	if strings.Contains(args[0], "/") && isShellScript(path) {
		// A script in the workspace: check it too (a program is not
		// read whole to find out).
		if r := rs.checkScriptFile(path, hc.Dir, false); r != nil {
			return rs.refuse(r)
		}
	}
	if rs.execHook != nil {
		return rs.execHook(args, hc.Dir)
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
// its commands is checked after expansion like the rest. It reads the
// shell's options as the policy did (shellOptions), so that the string it
// runs is the one the policy checked, not one a real shell would then run
// unchecked (bash -O extglob -c …).
func (rs *runState) shellC(ctx context.Context, hc interp.HandlerContext, args []string) (bool, error) {
	p := operands(args[1:], shellOptions)
	var opts []string
	hasC := false
	for _, o := range p.opts {
		switch o.short {
		case 'c':
			hasC = true
		case 'e', 'u', 'x', 'f':
			opts = append(opts, string(o.sign)+string(o.short))
		case 'o':
			if o.takes && (o.value == "pipefail" || o.value == "errexit" || o.value == "nounset") {
				opts = append(opts, string(o.sign)+"o", o.value)
			}
		}
	}
	rest := p.afterOpts // STRING [name args…]
	if !hasC || len(rest) == 0 {
		return false, nil
	}
	name := args[0]
	if len(rest) > 1 {
		name = rest[1]
	}
	f, err := parseNamed(rest[0], name)
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return true, interp.ExitStatus(2)
	}
	params := append(opts, "--")
	if len(rest) > 2 {
		params = append(params, rest[2:]...)
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
	if _, ok := errors.AsType[interp.ExitStatus](err); ok || err == nil {
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

// start runs one program. In the shell host the program inherits the
// host's confinement, its process group and its tag: Hearth stops them all
// with the host.
func (rs *runState) start(ctx context.Context, hc interp.HandlerContext, path string, args []string) error {
	if n := rs.live.Add(1); int(n) > rs.maxProcs {
		rs.live.Add(-1)
		return rs.refuse(&Refusal{Rule: RuleLimit, Command: quoteArgv(args), Reason: fmt.Sprintf("more than %d programs running at once (a fork bomb?)", rs.maxProcs)})
	}
	defer rs.live.Add(-1)
	mk := func() *exec.Cmd {
		cmd := &exec.Cmd{Path: path, Args: args, Env: execEnv(hc.Env), Dir: hc.Dir}
		if hc.Stdin != nil {
			cmd.Stdin = hc.Stdin
		}
		cmd.Stdout = rs.writer(hc.Stdout)
		cmd.Stderr = rs.writer(hc.Stderr)
		// A program that exits while something it started still holds
		// its output open: wait this long for the output, then move on
		// (the leftovers are stopped when the call ends).
		cmd.WaitDelay = time.Second
		return cmd
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cmd := mk()
	err := rs.spawn(cmd.Start)
	for delay := time.Millisecond; isETXTBSY(err) && delay < 300*time.Millisecond; delay *= 2 {
		time.Sleep(delay)
		cmd = mk()
		err = rs.spawn(cmd.Start)
	}
	if err != nil {
		fmt.Fprintf(hc.Stderr, "%s: %v\n", args[0], err)
		return interp.ExitStatus(126)
	}
	stop := context.AfterFunc(ctx, func() { _ = rs.spawn(func() error { return cmd.Process.Signal(syscall.SIGTERM) }) })
	err = cmd.Wait()
	stop()
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

// spawn runs f where programs are started and signalled (onSpawner).
func (rs *runState) spawn(f func() error) error {
	if rs.onSpawner == nil {
		return f()
	}
	var err error
	rs.onSpawner(func() { err = f() })
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
	if err := rs.policy.CheckWrite(path, dir); err != nil {
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
	for _, root := range append([]string{rs.policy.Workspace}, rs.policy.Writable...) {
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
