// Package shell is the run_shell_command tool: it runs a bash command line
// in the workspace and returns its output, and it is built so that a model
// driving it cannot harm the machine.
//
// Three layers stand between a command and the machine:
//
//  1. The whole command line is parsed (mvdan.cc/sh) and checked before
//     anything runs (Policy.CheckScript): fork bombs, and every command and
//     redirection whose words are known without running anything.
//  2. It is then interpreted by mvdan.cc/sh's interpreter inside Hearth, not
//     by a real shell, so that every simple command is checked again after
//     expansion, just before it runs ($(…), variables, globs and ~ all
//     expanded: Policy.Check), every file a redirection opens for writing is
//     checked (Policy.CheckWrite) and opened so that the kernel refuses any
//     path that leaves the checked directory (openat2 RESOLVE_BENEATH), and
//     sh -c / bash -c strings and eval are interpreted the same way.
//  3. Every program runs confined by the kernel (package sandbox: Landlock
//     on Linux): it may write only inside the workspace and a private temp
//     directory, whatever it is — a script file, python -c, make — and in
//     its own session, tagged as the call's (sandbox.Group), so that a
//     timeout, a cancel or the end of the call stops it and everything it
//     started, also what detached itself (setsid, a double fork).
//
// A workspace the user made read-only (sandbox.Workspace.WithReadOnlyRoot,
// its trust level) is read-only to all three layers, whatever the approval
// mode: the policy refuses every change inside it (RuleReadOnly), and the
// kernel lets commands write only in their private temp directory.
//
// The policy refuses, in every approval mode, yolo included: deleting or
// writing the filesystem root, the home directory, system directories or
// anything outside the workspace; sudo, su and the like; disk, device and
// kernel writers (mkfs, dd of=/dev/…, mount); shutdown and reboot;
// kill -1; fork bombs; requests that a daemon run code outside the sandbox
// (containers given the machine, compose files, systemctl start, D-Bus
// calls, at and cron); and code it cannot check (a shell reading commands
// from its input, xargs rm). Each refusal names its rule and says what to
// do instead.
//
// Each call has a timeout, an output cap (the start and the end are kept),
// a limit past which a flooding command is stopped, an environment without
// secrets (ScrubEnv), and its output streamed to Call.Progress as it runs.
package shell

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// Name is the tool's name, as the model sees it.
const Name = "run_shell_command"

// Defaults for Config's zero fields.
const (
	DefaultTimeout     = 2 * time.Minute
	DefaultOutputCap   = 64 << 10 // bytes of output the model sees
	DefaultOutputLimit = 64 << 20 // bytes after which a command is stopped
	DefaultKillGrace   = 2 * time.Second
	DefaultMaxFileSize = 4 << 30 // largest file a command may write
	DefaultMaxProcs    = 256     // processes one call may run at once
	DefaultMemoryLimit = 256 << 20
	DefaultSubstLimit  = 16 << 20 // bytes a $(…) may capture
)

// Config configures the tool. Only Workspace is required.
type Config struct {
	// Workspace bounds everything: commands run inside it and may change
	// only what is inside it (and their private temp directory). When its
	// root is read-only (sandbox.Workspace.WithReadOnlyRoot), commands
	// may read it and change nothing in it: their private temp directory
	// is the only place they may write, and refusals give its reason.
	Workspace *sandbox.Workspace
	// Timeout bounds each call (DefaultTimeout).
	Timeout time.Duration
	// OutputCap is how many bytes of output the model gets: the first and
	// the last half, with a note of what was dropped between
	// (DefaultOutputCap).
	OutputCap int
	// OutputLimit is how many bytes a command may print before it is
	// stopped (DefaultOutputLimit).
	OutputLimit int64
	// KillGrace is how long processes get between SIGTERM and SIGKILL
	// when a call is cancelled or times out (DefaultKillGrace).
	KillGrace time.Duration
	// DenyNetwork cuts commands off the network: a network namespace of
	// their own where the system allows it (no network at all), and
	// Landlock's TCP rules (ABI 4+).
	DenyNetwork bool
	// Secrets lists paths commands may not read (sandbox.SecretLocations:
	// the user's keys and credentials, Hearth's own config and data).
	Secrets []string
	// Writable lists more directories commands may write (absolute): a
	// profile's build caches, say. Keep it short: each is a way out. It is
	// ignored when the workspace is read-only.
	Writable []string
	// Env is the environment commands start from (os.Environ() when nil).
	// Secrets are removed (ScrubEnv) except the names in KeepEnv.
	Env     []string
	KeepEnv []string
	// Home is the home directory the policy protects (Env's HOME when
	// empty). FSRoot is the filesystem root it protects ("/" when empty).
	// Tests point both at throwaway directories.
	Home   string
	FSRoot string
	// MaxFileSize caps the size of any file a command writes
	// (DefaultMaxFileSize; negative: no cap).
	MaxFileSize int64
	// MaxProcs caps the programs one call runs at once (DefaultMaxProcs).
	MaxProcs int
	// MemoryLimit bounds the shell variables of a call
	// (DefaultMemoryLimit; negative: no bound). A process-wide brake stops
	// calls while Hearth's heap has grown by 8 times as much since they
	// started (a variable doubling between two commands).
	MemoryLimit int64
	// TempRoot is where the private temp directory is made
	// (os.TempDir() when empty).
	TempRoot string
	// Logger receives a line at start-up saying how commands are confined
	// (slog.Default() when nil).
	Logger *slog.Logger
}

// Tool is the run_shell_command tool. It is safe for concurrent use; each
// call runs on its own.
type Tool struct {
	cfg    Config
	ws     *sandbox.Workspace
	status sandbox.Status
	// readOnly is why the workspace is read-only ("" when it is not).
	readOnly string
	// writable are cfg.Writable's directories, resolved (none when the
	// workspace is read-only).
	writable []string

	// The private temp directory is made for the first command (a run
	// that runs none makes none); policy, conf and env include it from
	// then on. tmpMu guards the four, which are set once, before any
	// command reads them.
	tmpMu   sync.Mutex
	tmpGone bool // Close ran: no temp directory is made any more
	tmp     string
	policy  *Policy
	conf    *sandbox.Confinement
	env     []string
	baseEnv []string // the scrubbed environment, before childEnv

	closeOnce sync.Once

	// hostOnce records, from the first command, what the shell host
	// could apply (namespaces, Landlock).
	hostOnce   sync.Once
	hostStatus sandbox.SelfReport

	// spare is a shell host started and confined ahead of the next
	// command (its start is most of a command's fixed cost); Close stops
	// it.
	spareMu   sync.Mutex
	spare     *hostProc
	preparing bool
	spareDone chan struct{}  // closed when the preparation under way ends
	prepared  sync.WaitGroup // prepareSpare calls under way
	exiting   sync.WaitGroup // hosts whose command is over, still exiting
	closed    bool

	// execHook, when set (tests), runs each program instead of starting
	// it: the dry run that lets hostile tests prove a refusal happens
	// before anything executes.
	execHook func(argv []string, dir string) error
}

var (
	_ tool.Tool      = (*Tool)(nil)
	_ tool.Describer = (*Tool)(nil)
)

// New returns the tool. The private temp directory is made for the first
// command; Close removes it.
func New(cfg Config) (*Tool, error) {
	if cfg.Workspace == nil {
		return nil, errors.New("shell: no workspace")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.OutputCap <= 0 {
		cfg.OutputCap = DefaultOutputCap
	}
	if cfg.OutputLimit <= 0 {
		cfg.OutputLimit = DefaultOutputLimit
	}
	if cfg.OutputLimit < int64(cfg.OutputCap) {
		cfg.OutputLimit = int64(cfg.OutputCap)
	}
	if cfg.KillGrace <= 0 {
		cfg.KillGrace = DefaultKillGrace
	}
	if cfg.MaxFileSize == 0 {
		cfg.MaxFileSize = DefaultMaxFileSize
	}
	if cfg.MaxProcs <= 0 {
		cfg.MaxProcs = DefaultMaxProcs
	}
	if cfg.MemoryLimit == 0 {
		cfg.MemoryLimit = DefaultMemoryLimit
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	home := cfg.Home
	if home == "" {
		home = lookupEnv(cfg.Env, "HOME")
	}
	if home != "" {
		if r, err := sandbox.RealPath("/", home, true); err == nil {
			home = r
		}
	}
	fsRoot := cfg.FSRoot
	if fsRoot == "" {
		fsRoot = "/"
	}
	readOnly, _ := cfg.Workspace.ReadOnlyRoot()
	var writable []string
	for _, w := range cfg.Writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("shell: writable directory %q is not absolute", w)
		}
		r, err := sandbox.RealPath("/", w, true)
		if err != nil {
			return nil, fmt.Errorf("shell: writable directory %s: %v", w, err)
		}
		writable = append(writable, r)
	}
	if readOnly != "" {
		// Read-only: the private temp directory is the only place
		// commands write.
		writable = nil
	}
	t := &Tool{cfg: cfg, ws: cfg.Workspace, readOnly: readOnly, writable: writable}
	t.policy = &Policy{
		Workspace:         cfg.Workspace.Root(),
		ReadOnlyWorkspace: readOnly,
		Writable:          writable,
		FSRoot:            fsRoot,
		Home:              home,
	}
	maxFile := cfg.MaxFileSize
	if maxFile < 0 {
		maxFile = 0
	}
	t.conf = &sandbox.Confinement{
		Writable:    t.writableDirs(""),
		DenyNetwork: cfg.DenyNetwork,
		MaxFileSize: maxFile,
		MaxProcs:    cfg.MaxProcs * 4,
		ReadOnly:    protectedDirs(cfg.Workspace.Root()),
		Hidden:      hiddenDirs(cfg.Secrets, cfg.Workspace.Root(), readOnly != ""),
	}
	// The status says what commands will be confined to, the temp
	// directory they get included (it is made for the first of them).
	shown := sandbox.Confinement{Writable: t.writableDirs(filepath.Join(tempRoot(cfg.TempRoot), "hearth-shell-…")),
		DenyNetwork: t.conf.DenyNetwork, MaxFileSize: t.conf.MaxFileSize, MaxProcs: t.conf.MaxProcs, ReadOnly: t.conf.ReadOnly, Hidden: t.conf.Hidden}
	t.status = shown.Status()
	if readOnly != "" {
		t.status.Note += "; the workspace " + cfg.Workspace.Root() + " is read-only to commands: " + readOnly
		if !t.status.Active {
			t.status.Note += " (without Landlock, the command policy enforces it, and read-only mounts where the system allows them)"
		}
	}
	// Processes a command starts and that detach themselves (setsid, a
	// double fork) are adopted by Hearth, so that they can be found and
	// stopped when the call ends (sandbox.Group).
	if err := sandbox.AdoptOrphans(); err != nil {
		t.status.Note += "; processes that detach themselves from a command may outlive it (" + err.Error() + ")"
	}
	env, removed := ScrubEnv(cfg.Env, cfg.KeepEnv)
	t.baseEnv = env
	cfg.Logger.Info("run_shell_command", "sandbox", t.status.Note, "secrets_removed", len(removed))
	return t, nil
}

// prepare makes the private temp directory, if the tool has none yet, and
// makes it writable to commands and their $TMPDIR. Every command calls it
// first.
func (t *Tool) prepare() error {
	t.tmpMu.Lock()
	defer t.tmpMu.Unlock()
	if t.tmp != "" {
		return nil
	}
	if t.tmpGone {
		return errors.New("shell: the tool is closed")
	}
	made, err := os.MkdirTemp(t.cfg.TempRoot, "hearth-shell-")
	if err != nil {
		return fmt.Errorf("shell: private temp directory: %w", err)
	}
	tmp, err := sandbox.RealPath("/", made, true)
	if err != nil {
		os.Remove(made)
		return fmt.Errorf("shell: private temp directory: %w", err)
	}
	pol := *t.policy
	pol.Writable = append([]string{tmp}, pol.Writable...)
	// The confinement is changed in place (it keeps state of its own, what
	// the kernel refused): nothing has used it before this.
	t.conf.Writable = t.writableDirs(tmp)
	t.tmp, t.policy = tmp, &pol
	t.env = childEnv(t.baseEnv, tmp, t.status.Active, pol.Writable)
	return nil
}

// writableDirs is what the confinement lets commands write: the workspace
// root (unless it is read-only), the private temp directory tmp (when not
// ""), and the configured writable directories (none when the workspace is
// read-only).
func (t *Tool) writableDirs(tmp string) []string {
	var dirs []string
	if t.readOnly == "" {
		dirs = append(dirs, t.ws.Root())
	}
	if tmp != "" {
		dirs = append(dirs, tmp)
	}
	return append(dirs, t.writable...)
}

// hiddenDirs are the secret locations the confinement covers. A location
// that holds the workspace root is not covered (the user chose to work
// there): the confinement leaves out one that holds a writable directory,
// so with a read-only workspace it is left out here, or the workspace
// itself would vanish from the commands' view.
func hiddenDirs(secrets []string, root string, readOnly bool) []string {
	if !readOnly {
		return secrets
	}
	var out []string
	for _, s := range secrets {
		holds := filepath.IsAbs(s) && sandbox.Within(root, filepath.Clean(s))
		if r, err := sandbox.RealPath("/", s, true); err == nil && sandbox.Within(root, r) {
			holds = true
		}
		if !holds {
			out = append(out, s)
		}
	}
	return out
}

// tempRoot is where the private temp directory is made.
func tempRoot(root string) string {
	if root == "" {
		return os.TempDir()
	}
	return root
}

// state returns what commands run with: the policy, the confinement and
// the environment (the temp directory in them once prepare made it).
func (t *Tool) state() (*Policy, *sandbox.Confinement, []string) {
	t.tmpMu.Lock()
	defer t.tmpMu.Unlock()
	return t.policy, t.conf, t.env
}

// protectedDirs are the paths of the workspace root that commands may read
// but not change: .git (a directory, or a file naming the repository
// elsewhere, together with what it names when that is inside the
// workspace) and .hearth.
func protectedDirs(root string) []string {
	dirs := []string{filepath.Join(root, ".git"), filepath.Join(root, ".hearth")}
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil || len(b) > 4096 {
		return dirs
	}
	if gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
		gitdir = strings.TrimSpace(gitdir)
		if !filepath.IsAbs(gitdir) {
			gitdir = filepath.Join(root, gitdir)
		}
		if real, err := sandbox.RealPath("/", gitdir, true); err == nil && sandbox.Within(real, root) {
			dirs = append(dirs, real)
		}
	}
	return dirs
}

// childEnv sets what commands need to run well without a person at a
// terminal, and points temp files and build caches into the private temp
// directory when the sandbox would refuse the usual ones.
func childEnv(env []string, tmp string, confined bool, writable []string) []string {
	set := map[string]string{
		"TMPDIR":              tmp,
		"PAGER":               "cat",
		"GIT_PAGER":           "cat",
		"GIT_TERMINAL_PROMPT": "0",
		"TERM":                "dumb",
		"DEBIAN_FRONTEND":     "noninteractive",
	}
	if confined {
		inWritable := func(name string) bool {
			v := lookupEnv(env, name)
			if v == "" {
				return false
			}
			for _, w := range writable {
				if sandbox.Within(filepath.Clean(v), w) {
					return true
				}
			}
			return false
		}
		if !inWritable("XDG_CACHE_HOME") {
			set["XDG_CACHE_HOME"] = filepath.Join(tmp, "cache")
		}
		if !inWritable("GOCACHE") {
			set["GOCACHE"] = filepath.Join(tmp, "cache", "go-build")
		}
		if !inWritable("npm_config_cache") {
			set["npm_config_cache"] = filepath.Join(tmp, "cache", "npm")
		}
	}
	out := make([]string, 0, len(env)+len(set))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if _, over := set[name]; !over {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		out = append(out, k+"="+v)
	}
	return out
}

func lookupEnv(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// Close removes the private temp directory.
func (t *Tool) Close() error {
	var err error
	t.closeOnce.Do(func() {
		t.spareMu.Lock()
		t.closed = true
		h := t.spare
		t.spare = nil
		t.spareMu.Unlock()
		if h != nil {
			h.discard()
		}
		t.prepared.Wait() // a spare being started is discarded by its starter
		t.exiting.Wait()  // hosts whose command is over, still exiting
		// Make everything removable first: commands may leave read-only
		// directories (Go's module cache does).
		t.tmpMu.Lock()
		tmp := t.tmp
		t.tmpGone = true
		t.tmpMu.Unlock()
		if tmp == "" {
			return // no command ran: nothing was made
		}
		_ = filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o700)
			}
			return nil
		})
		err = os.RemoveAll(tmp)
	})
	return err
}

// Policy returns the policy the tool enforces (with the temp directory
// once a command has run).
func (t *Tool) Policy() *Policy {
	p, _, _ := t.state()
	return p
}

// Sandbox says how commands are confined on this machine.
func (t *Tool) Sandbox() sandbox.Status { return t.status }

// TempDir returns the private temp directory ($TMPDIR of commands): ""
// until the first command makes it.
func (t *Tool) TempDir() string {
	t.tmpMu.Lock()
	defer t.tmpMu.Unlock()
	return t.tmp
}

const description = "Run a bash command in the workspace and get its output (stdout and stderr) and exit status. " +
	"Pipes, redirections and && work. No interactive input: pass flags like -y. " +
	"%s; sudo, and deleting or writing outside the workspace, are refused. " +
	"Long-running commands are stopped after %s."

// What commands may change, as the description says it.
const (
	mayChange         = "Commands may change files only inside the workspace (temporary files go in $TMPDIR)"
	mayChangeReadOnly = "This workspace is read-only: commands may read it but change nothing in it (temporary files go in $TMPDIR)"
)

var parameters = json.RawMessage(`{"type":"object","properties":{` +
	`"command":{"type":"string","description":"the bash command, e.g. go test ./..."},` +
	`"description":{"type":"string","description":"what it does, in a few words, for the user"},` +
	`"directory":{"type":"string","description":"directory to run in, relative to the workspace (default: its root)"}` +
	`},"required":["command"]}`)

// Spec implements tool.Tool.
func (t *Tool) Spec() llm.ToolSpec {
	change := mayChange
	if t.readOnly != "" {
		change = mayChangeReadOnly
	}
	d := fmt.Sprintf(description, change, t.cfg.Timeout)
	if t.cfg.DenyNetwork {
		d += " The network is off: commands cannot connect or download."
	}
	return llm.ToolSpec{Name: Name, Description: d, Parameters: parameters}
}

// Kind implements tool.Tool: commands run programs.
func (t *Tool) Kind() tool.Kind { return tool.Execute }

// Args are the tool's arguments.
type Args struct {
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	Directory   string `json:"directory,omitempty"`
}

func parseArgs(raw json.RawMessage) (Args, error) {
	var a Args
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("reading the arguments: %v", err)
	}
	if strings.TrimSpace(a.Command) == "" {
		return a, errors.New("command is empty: give the bash command to run")
	}
	return a, nil
}

// Describe implements tool.Describer: a line for an approval prompt.
func (t *Tool) Describe(raw json.RawMessage) string {
	a, err := parseArgs(raw)
	if err != nil {
		return "run a shell command (invalid arguments)"
	}
	cmd := strings.Join(strings.Fields(a.Command), " ")
	if len(cmd) > 200 {
		cmd = cmd[:200] + "…"
	}
	s := "run `" + cmd + "`"
	if a.Directory != "" && a.Directory != "." {
		s += " in " + a.Directory
	}
	if d := strings.TrimSpace(a.Description); d != "" {
		if len(d) > 120 {
			d = d[:120] + "…"
		}
		s += " (" + d + ")"
	}
	return s
}

// Run implements tool.Tool.
func (t *Tool) Run(ctx context.Context, call tool.Call) (tool.Result, error) {
	a, err := parseArgs(call.Args)
	if err != nil {
		return tool.Result{}, err
	}
	dir, err := t.workDir(a.Directory)
	if err != nil {
		return tool.Result{}, fmt.Errorf("directory: %v", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return tool.Result{}, fmt.Errorf("directory %s does not exist or is not a directory", a.Directory)
	}
	o := t.run(ctx, a.Command, dir, call.Progress)
	return o.result()
}

// workDir resolves the directory a command runs in: one tools may write,
// or, in a read-only workspace, one inside it that they may read.
func (t *Tool) workDir(d string) (string, error) {
	if t.readOnly == "" {
		return t.ws.Resolve(d, sandbox.Write)
	}
	dir, err := t.ws.Resolve(d, sandbox.Read)
	if err != nil {
		return "", err
	}
	if !sandbox.Within(dir, t.ws.Root()) {
		return "", &sandbox.PathError{Path: d, Access: sandbox.Read, Rule: "commands run inside the workspace " + t.ws.Root()}
	}
	return dir, nil
}
