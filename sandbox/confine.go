package sandbox

// OS-level confinement of child processes.
//
// Landlock restricts the calling process, irreversibly, and everything it
// starts afterwards. Hearth must stay free, so it confines a child by
// starting a copy of its own binary as a small launcher: Command returns an
// *exec.Cmd that runs /proc/self/exe with a marker; the copy, before doing
// anything else (this package's init, or MaybeRunLauncher at the start of
// main), sees the marker, applies the Landlock rule set and resource limits
// to itself, and replaces itself with the target program (execve). The
// target, and all it starts, then runs under those rules: it may read and
// execute anything, but write only inside Confinement.Writable (the
// workspace and a private temp directory), a few harmless devices
// (/dev/null, /dev/zero, …); it cannot signal processes outside its own
// sandbox (Landlock scopes, ABI 6), and with DenyNetwork it cannot bind or
// connect TCP sockets (ABI 4; UDP from ABI 10).
//
// On kernels without Landlock (before 5.13, or disabled at boot), and on
// other systems, the launcher still applies the resource limits but cannot
// confine writes: Status says so, and callers should tell the user.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Confinement is what a confined child process may do.
type Confinement struct {
	// Writable lists the directories the process may write in (create,
	// modify, delete, rename within): the workspace root and a private
	// temp directory. Everything else is read-and-execute only.
	Writable []string
	// DenyNetwork cuts the process off the network: no TCP bind or
	// connect (Landlock ABI 4+), no UDP (ABI 10+).
	DenyNetwork bool
	// MaxFileSize caps the size of any file the process writes
	// (RLIMIT_FSIZE; a write past it fails and the process gets SIGXFSZ).
	// Zero leaves the limit as it is.
	MaxFileSize int64
	// MaxProcs caps how many more processes the user may have while the
	// command runs (RLIMIT_NPROC, counted from what the user already has),
	// against fork bombs. Zero leaves the limit as it is. The kernel does
	// not enforce it for root.
	MaxProcs int
	// ReadOnly lists paths inside Writable that stay read-only (the
	// workspace's .git and .hearth): what git or Hearth would run later,
	// outside any sandbox. Only SelfCommand's copies enforce it, with a
	// read-only bind mount in a mount namespace of their own.
	ReadOnly []string
	// Hidden lists paths that may not be read at all (the user's secret
	// locations). Only SelfCommand's copies enforce it, by covering each
	// with an empty directory or file in their own mount namespace.
	Hidden []string

	ns nsState
}

// Status says how a Confinement is enforced on this machine.
type Status struct {
	// Active is true when the kernel confines writes to Writable.
	Active bool
	// ABI is the kernel's Landlock ABI version (0: none).
	ABI int
	// Network is true when DenyNetwork was asked for and is enforced.
	Network bool
	// Note says it in words, for logs and for the user.
	Note string
}

func (s Status) String() string { return s.Note }

// launchEnv marks a process started as the launcher; its value is the
// launch configuration as JSON. launchArg0 is the launcher's argv[0]: both
// must be present, so that a stray environment variable alone never turns
// hearth into a launcher.
const (
	launchEnv  = "HEARTH_SANDBOX_LAUNCH"
	launchArg0 = "hearth-sandbox-launcher"
)

// launchConfig is what the launcher receives.
type launchConfig struct {
	Writable    []string `json:"writable"`
	DenyNetwork bool     `json:"deny_network,omitempty"`
	MaxFileSize int64    `json:"max_file_size,omitempty"`
	MaxProcs    int      `json:"max_procs,omitempty"`
	// TagLocks and TagRTTime are the Group's tag: the RLIMIT_LOCKS and
	// RLIMIT_RTTIME hard limits to set.
	TagLocks  uint64 `json:"tag_locks,omitempty"`
	TagRTTime uint64 `json:"tag_rttime,omitempty"`
	Path      string `json:"path"`
	// Env is the program's environment. The launcher itself runs without
	// it: variables the dynamic loader obeys (LD_PRELOAD, LD_AUDIT, …)
	// would otherwise run code in the launcher before it is confined.
	Env []string `json:"env,omitempty"`
}

// Command returns a command that runs the program at path (absolute) with
// argv (argv[0] included) and environment env, confined by c. The caller
// sets Dir, the standard streams and SysProcAttr, and must not replace Env
// or Path. Each writable directory must exist.
func (c *Confinement) Command(path string, argv, env []string) (*exec.Cmd, error) {
	return c.CommandIn(nil, path, argv, env)
}

// CommandIn is Command for a program that belongs to the Group g (nil: to
// none): the launcher tags it, and so everything it starts, for g. The
// caller reports the process with g.Started once it has started, and
// g.Waited once its Wait has returned.
func (c *Confinement) CommandIn(g *Group, path string, argv, env []string) (*exec.Cmd, error) {
	if !filepath.IsAbs(path) {
		return nil, fmt.Errorf("sandbox: program path %q is not absolute", path)
	}
	if len(argv) == 0 {
		return nil, errors.New("sandbox: empty argv")
	}
	cfg := launchConfig{DenyNetwork: c.DenyNetwork, MaxFileSize: c.MaxFileSize, MaxProcs: c.MaxProcs, Path: path}
	if g != nil && g.id != 0 {
		cfg.TagLocks, cfg.TagRTTime = g.limits()
		env = append(stripEnv(env, groupEnv), fmt.Sprintf("%s=%x", groupEnv, g.id))
	}
	for _, w := range c.Writable {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("sandbox: writable directory %q is not absolute", w)
		}
		cfg.Writable = append(cfg.Writable, filepath.Clean(w))
	}
	return launcherCommand(cfg, argv, env)
}

// stripLaunchEnv returns env without the launcher's marker.
func stripLaunchEnv(env []string) []string { return stripEnv(env, launchEnv) }

// stripEnv returns env without the variable name.
func stripEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// MaybeRunLauncher turns this process into the sandbox launcher when it was
// started as one by Command, and never returns in that case. Otherwise it
// does nothing. This package's init already calls it, so any binary or test
// that links the package works as its own launcher; calling it first thing
// in main documents that and costs nothing.
func MaybeRunLauncher() {
	if len(os.Args) < 2 || os.Args[0] != launchArg0 {
		return
	}
	raw, ok := os.LookupEnv(launchEnv)
	if !ok {
		return
	}
	var cfg launchConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		launcherFail(fmt.Errorf("bad launch configuration: %v", err))
	}
	// os.Args: launchArg0, argv...
	launch(cfg, os.Args[1:], cfg.Env)
}

func init() { MaybeRunLauncher() }

// launcherFail reports a launcher error on stderr and exits 126, the shell's
// code for "found but could not run".
func launcherFail(err error) {
	fmt.Fprintf(os.Stderr, "hearth sandbox: %v\n", err)
	os.Exit(126)
}
