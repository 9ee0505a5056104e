package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
)

// Confining a Go program of Hearth's own, whole.
//
// Command confines a program Hearth starts by name. Some work must run as
// Go code of Hearth's and still be confined: the shell interpreter, whose
// redirections, here-documents and temporary files would otherwise be
// opened by Hearth's own, unconfined, process. SelfCommand starts a copy of
// this binary that calls ConfineSelf first thing: from then on the copy,
// every thread of it and everything it starts are held by the same rules.
//
// On Linux the copy starts in namespaces of its own where the system
// allows it (a mount namespace, and a user namespace when Hearth is not
// root; a network namespace when the network is denied), so that beyond
// Landlock's rules:
//
//   - Confinement.ReadOnly paths inside the writable directories (the
//     workspace's .git and .hearth) are bound read-only: Landlock can only
//     grant, never take away below a granted directory;
//   - Confinement.Hidden paths (the user's secret locations) are covered by
//     an empty, unreadable directory or file;
//   - the sockets of daemons that would run code outside the sandbox
//     (Docker, Podman, D-Bus, systemd) are covered too;
//   - with DenyNetwork, no network at all (UDP and abstract sockets
//     included, which Landlock cannot deny before ABI 10).
//
// The copy then sets its limits, applies Landlock without the right to
// make device nodes, and drops the capabilities that reach past it
// (CAP_SYS_ADMIN, CAP_SYS_RESOURCE, CAP_SYS_PTRACE, CAP_MKNOD, …) on every
// thread: a root Hearth's commands keep ordinary root file access inside
// the sandbox, not the kernel's administration.

// selfEnv carries the configuration to a copy started by SelfCommand.
const selfEnv = "HEARTH_SANDBOX_SELF"

// selfConfig is what a copy started by SelfCommand applies to itself.
type selfConfig struct {
	launchConfig
	ReadOnly []string `json:"read_only,omitempty"`
	Hidden   []string `json:"hidden,omitempty"`
	// Namespaced: the copy was started in a mount namespace of its own
	// (UserNS: and a user namespace).
	Namespaced bool `json:"namespaced,omitempty"`
	UserNS     bool `json:"userns,omitempty"`
	UID        int  `json:"uid,omitempty"`
	GID        int  `json:"gid,omitempty"`

	// onExecThread is ConfineSelf's caller's: see ConfineSelfFor.
	onExecThread func(func())
}

// SelfReport is what ConfineSelf applied, for the copy to pass back.
type SelfReport struct {
	// Namespaced is true when the read-only and hidden paths were
	// mounted (a private mount namespace was available).
	Namespaced bool `json:"namespaced"`
	// NetworkIsolated is true when the copy has a network namespace of
	// its own (no interface but a loopback that is down).
	NetworkIsolated bool `json:"network_isolated,omitempty"`
	// PIDNamespace is true when the copy is the init of a PID namespace
	// of its own: nothing it starts outlives it.
	PIDNamespace bool `json:"pid_namespace,omitempty"`
	// Landlock is the ABI applied (0: none).
	Landlock int `json:"landlock"`
	// UnixSocketsDenied is true when a seccomp filter refuses new Unix
	// sockets (with the network off): a listening socket elsewhere on the
	// machine cannot be reached.
	UnixSocketsDenied bool `json:"unix_sockets_denied,omitempty"`
	// Problems lists what could not be applied, in words.
	Problems []string `json:"problems,omitempty"`
}

// noNamespaces is set once starting a copy in namespaces failed: later
// copies start without them at once. It belongs to the Confinement.
type nsState struct{ failed atomic.Bool }

// SelfCommand returns a command that runs this binary (/proc/self/exe)
// with argv (argv[0] is the marker the copy recognises itself by), confined
// by c once the copy calls ConfineSelf. The caller sets Dir, the standard
// streams and ExtraFiles, and starts it with StartSelf.
func (c *Confinement) SelfCommand(g *Group, argv, env []string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == launchArg0 {
		return nil, errors.New("sandbox: SelfCommand needs a marker of its own in argv[0]")
	}
	cfg := selfConfig{launchConfig: launchConfig{DenyNetwork: c.DenyNetwork, MaxFileSize: c.MaxFileSize, MaxProcs: c.MaxProcs}}
	if g != nil && g.id != 0 {
		cfg.TagLocks, cfg.TagRTTime = g.limits()
		env = append(stripEnv(env, groupEnv), fmt.Sprintf("%s=%x", groupEnv, g.id))
	}
	for _, list := range []struct {
		in  []string
		out *[]string
	}{{c.Writable, &cfg.Writable}, {c.ReadOnly, &cfg.ReadOnly}, {c.Hidden, &cfg.Hidden}} {
		for _, p := range list.in {
			if !filepath.IsAbs(p) {
				return nil, fmt.Errorf("sandbox: path %q is not absolute", p)
			}
			*list.out = append(*list.out, filepath.Clean(p))
		}
	}
	return selfCommand(c, cfg, argv, stripEnv(stripLaunchEnv(env), selfEnv))
}

// StartSelf starts a command made by SelfCommand. Where the system refuses
// the namespaces (no unprivileged user namespaces), it starts it again
// without them, and so every later one: the copy then relies on Landlock
// alone, and its report says what that leaves out.
func (c *Confinement) StartSelf(cmd *exec.Cmd) error {
	err := cmd.Start()
	if err == nil || !withoutNamespaces(cmd) {
		return err
	}
	c.ns.failed.Store(true)
	return cmd.Start() // withoutNamespaces made it a new, unstarted command
}

// ConfineSelf applies the confinement that SelfCommand passed to this
// process, on every thread, for good, and removes it from the
// environment. A process that was not started by SelfCommand gets an
// error and must not go on: it would run unconfined.
func ConfineSelf() (SelfReport, error) { return ConfineSelfFor(nil) }

// ConfineSelfFor is ConfineSelf for a process that starts every program
// from one OS thread: onExec runs a function on that thread (locked to it).
// What matters only to exec (the capability bounding set) is then applied
// to that thread alone, which saves some 5 ms; every other rule still holds
// on every thread.
func ConfineSelfFor(onExec func(func())) (SelfReport, error) {
	raw, ok := os.LookupEnv(selfEnv)
	if !ok {
		return SelfReport{}, errors.New("sandbox: not started by SelfCommand")
	}
	_ = os.Unsetenv(selfEnv)
	var cfg selfConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		return SelfReport{}, fmt.Errorf("sandbox: bad configuration: %v", err)
	}
	cfg.onExecThread = onExec
	return confineSelf(cfg)
}

// hideable reports whether p may be covered: not when a writable
// directory lies inside it or it contains one (the user chose to work
// there).
func hideable(p string, writable []string) bool {
	for _, w := range writable {
		if within(w, p) || within(p, w) {
			return false
		}
	}
	return true
}

// DisableNamespaces makes SelfCommand start copies without namespaces,
// as on a system that refuses them: for benchmarks and tests of that
// fallback.
func (c *Confinement) DisableNamespaces() { c.ns.failed.Store(true) }
