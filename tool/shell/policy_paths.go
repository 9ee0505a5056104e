package shell

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/sandbox"
)

// The path rules: every checker ends here, with the paths a command would
// delete, write or work in.

// op is what a command does to a path.
type op int

const (
	opWrite         op = iota // create or change (follows symlinks)
	opWriteNoFollow           // change the link itself (chown -h)
	opDelete                  // delete (the link itself, not its target)
	opDeleteUnder             // delete what is under it (find -delete)
	opChdir                   // make it the working directory
)

// verb is what o does, as a refusal says it.
func (o op) verb() string {
	switch o {
	case opDelete, opDeleteUnder:
		return "delete"
	case opChdir:
		return "work in"
	}
	return "write"
}

// abs makes p absolute against the checker's directory ("" when unknown).
func (c *checker) abs(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if c.dir == "" {
		return ""
	}
	return filepath.Join(c.dir, p)
}

// harmlessDevices may be written, and are not disks.
var harmlessDevices = set("/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr",
	"/dev/fd/1", "/dev/fd/2", "/dev/random", "/dev/urandom", "/dev/tty")

func harmlessDevice(p string) bool { return harmlessDevices[p] }

func isDevice(p string) bool { return p == "/dev" || strings.HasPrefix(p, "/dev/") }

// path checks one path operand.
func (c *checker) path(o op, p string) *Refusal {
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) && c.dir == "" {
		return nil // relative to a directory not known yet: checked when it runs
	}
	if o != opDelete && o != opDeleteUnder && harmlessDevice(filepath.Clean(p)) {
		return nil
	}
	follow := o == opWrite || o == opChdir
	real, err := sandbox.RealPath(c.dir, p, follow)
	if err != nil {
		return c.refuse(RuleOutside, "cannot tell where %s leads (%v); use a plain path inside the workspace %s", p, err, c.p.Workspace)
	}
	return c.classify(o, p, real)
}

// classify decides about the resolved path real.
func (c *checker) classify(o op, p, real string) *Refusal {
	pol := c.p
	shown := p
	if real != filepath.Clean(c.abs(p)) {
		shown = fmt.Sprintf("%s (which is %s)", p, real)
	}
	hint := fmt.Sprintf("only files inside the workspace %s (and $TMPDIR) may be changed", pol.Workspace)
	if pol.ReadOnlyWorkspace != "" {
		hint = fmt.Sprintf("only files in $TMPDIR may be changed (the workspace %s is read-only)", pol.Workspace)
	}
	if o == opChdir {
		hint = fmt.Sprintf("commands run inside the workspace %s (or $TMPDIR)", pol.Workspace)
	}
	if o != opDelete && o != opDeleteUnder && harmlessDevice(real) {
		return nil
	}
	if real == "/" || pol.FSRoot != "" && real == pol.FSRoot {
		return c.refuse(RuleRoot, "it would %s %s, the filesystem root; %s", o.verb(), shown, hint)
	}
	if d := filepath.Dir(real); strings.ContainsAny(filepath.Base(real), "*?[") && (d == "/" || d == pol.FSRoot) {
		// A pattern not expanded yet (a static check): everything in the root.
		return c.refuse(RuleRoot, "it would %s %s, everything in the filesystem root; %s", o.verb(), shown, hint)
	}
	if pol.Home != "" && (real == pol.Home || sandbox.Within(pol.Home, real)) &&
		!(o == opChdir && (sandbox.Within(pol.Workspace, real) || real == pol.Workspace)) {
		what := "the home directory"
		if real != pol.Home {
			what = "a directory holding the home directory"
		}
		return c.refuse(RuleHome, "it would %s %s, %s; %s", o.verb(), shown, what, hint)
	}
	if isDevice(real) {
		return c.refuse(RuleDevice, "it would %s the device %s; only /dev/null and the like may be written", o.verb(), real)
	}
	for _, sys := range pol.systemDirs() {
		if sandbox.Within(real, sys) && !sandbox.Within(pol.Workspace, sys) {
			return c.refuse(RuleSystem, "it would %s %s, in the system directory %s; %s", o.verb(), shown, sys, hint)
		}
	}
	writable := pol.Writable
	if pol.ReadOnlyWorkspace == "" {
		writable = append([]string{pol.Workspace}, writable...)
	}
	for _, w := range writable {
		if w == "" {
			continue
		}
		if real == w && (o == opDelete) {
			what := "the workspace root"
			if w != pol.Workspace {
				what = "$TMPDIR itself"
			}
			return c.refuse(RuleWorkspace, "it would delete %s; delete what is inside it instead", what)
		}
		if sandbox.Within(real, w) {
			if w == pol.Workspace && o != opChdir && protectedPath(pol.Workspace, real) {
				return c.refuse(RuleProtected, "it would %s %s: git's metadata (.git, at any depth) and Hearth's project config (.hearth) are read-only to commands, since git and Hearth run what they hold later, outside the sandbox; ask the user to make this change (a commit, a git config setting)", o.verb(), shown)
			}
			return nil
		}
	}
	if pol.ReadOnlyWorkspace != "" && sandbox.Within(real, pol.Workspace) {
		if o == opChdir {
			return nil // reading is allowed: working there too
		}
		return c.refuse(RuleReadOnly, "it would %s %s: %s; only $TMPDIR may be changed: read the workspace, and tell the user what you would change instead", o.verb(), shown, strings.TrimRight(pol.ReadOnlyWorkspace, "."))
	}
	if pol.Home != "" && sandbox.Within(real, pol.Home) {
		return c.refuse(RuleHome, "it would %s %s, in the home directory outside the workspace; %s", o.verb(), shown, hint)
	}
	if sandbox.Within(pol.Workspace, real) {
		return c.refuse(RuleOutside, "it would %s %s, which holds the workspace; %s", o.verb(), shown, hint)
	}
	if real == "/tmp" || strings.HasPrefix(real, "/tmp/") || real == "/var/tmp" {
		hint += "; for temporary files use $TMPDIR, a private temp directory"
	}
	return c.refuse(RuleOutside, "it would %s %s, outside the workspace; %s", o.verb(), shown, hint)
}

// protectedPath reports whether real, inside the workspace ws, is or lies
// in a .git (the workspace's repository, a nested one, a submodule's .git
// file) or a .hearth (the workspace's, or a folder inside it that is a
// workspace of its own, maybe trusted).
func protectedPath(ws, real string) bool {
	rel, err := filepath.Rel(ws, real)
	if err != nil || rel == "." {
		return false
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		if part == ".git" || part == ".hearth" {
			return true
		}
	}
	return false
}

// systemDirs returns the protected system directories, both as written
// and under FSRoot.
func (p *Policy) systemDirs() []string {
	sys := p.System
	if sys == nil {
		sys = DefaultSystemDirs
	}
	if p.FSRoot == "" || p.FSRoot == "/" {
		return sys
	}
	out := make([]string, 0, 2*len(sys))
	out = append(out, sys...)
	for _, s := range sys {
		out = append(out, filepath.Join(p.FSRoot, s))
	}
	return out
}

// paths checks each of ps, and returns the first refusal.
func (c *checker) paths(o op, ps []string) *Refusal {
	for _, p := range ps {
		if r := c.path(o, p); r != nil {
			return r
		}
	}
	return nil
}

// dropStdio drops "-" (standard input or output) and "" from ps.
func dropStdio(ps []string) []string {
	out := ps[:0:0]
	for _, p := range ps {
		if p != "-" && p != "" {
			out = append(out, p)
		}
	}
	return out
}
