package shell

// The shell policy. This file holds its types and entry points; the
// table from a command's name to what checks it is in policy_table.go, the
// one option parser the checkers read options with in policy_options.go,
// the path rules every checker ends in in policy_paths.go, and the
// checkers themselves in one file per family of commands:
// policy_files.go (deleting, writing, copying and moving files),
// policy_archive.go (in-place editors, sorters, archivers, downloaders),
// policy_system.go (privileges, disks, power, services, signals),
// policy_container.go (docker, podman and compose), policy_find.go (find,
// xargs), policy_exec.go (wrappers, env, cd) and policy_shells.go (shells
// and the builtins that run code).

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Rules a command can be refused by. A Refusal names one, so that tests
// (and people) can tell which rule fired.
const (
	RuleRoot      = "root"              // deleting or overwriting the filesystem root
	RuleHome      = "home"              // the home directory, or anything in it outside the workspace
	RuleSystem    = "system-dir"        // /etc, /usr, /bin, … and what is in them
	RuleDevice    = "device"            // writing to a device file
	RuleOutside   = "outside-workspace" // any other write outside the workspace and $TMPDIR
	RuleWorkspace = "workspace-root"    // deleting the workspace (or $TMPDIR) itself
	RuleCwd       = "cwd"               // changing into a directory outside the workspace
	RulePrivilege = "privilege"         // sudo, su, doas, …
	RuleDisk      = "disk-writer"       // mkfs, fdisk, dd of=/dev/…, mount, …
	RulePower     = "power"             // shutdown, reboot, …
	RuleKillAll   = "kill-all"          // kill -1, killall5
	RuleDetach    = "detach"            // processes that outlive the call: setsid, crontab, at, …
	RuleDaemon    = "daemon"            // asking a service manager to run or change units (systemctl start, …)
	RuleForkBomb  = "fork-bomb"         // functions that call themselves in a pipe or the background
	RuleUnchecked = "unchecked"         // code that cannot be checked before it runs
	RuleLimit     = "limit"             // recursion, processes or memory beyond the limits
	RuleProtected = "protected"         // .git and .hearth: what git or Hearth runs later, outside the sandbox
	RuleReadOnly  = "read-only"         // any change inside a workspace the user made read-only (its trust level)
)

// Refusal is a command refused by the policy. Its message names the rule
// and says what to do instead, so that a model can correct itself.
type Refusal struct {
	Rule    string // one of the Rule constants
	Command string // the command as it would have run, after expansion
	Reason  string
}

// Error renders the refusal as a model reads it: the rule, the command
// and what to do instead.
func (r *Refusal) Error() string {
	if r.Command == "" {
		return fmt.Sprintf("refused (rule %s): %s", r.Rule, r.Reason)
	}
	return fmt.Sprintf("refused (rule %s): `%s`: %s", r.Rule, r.Command, r.Reason)
}

// DefaultSystemDirs are the directories no command may write in (unless
// the workspace itself lies inside one, as /srv/app or /var/www/site do:
// then only the workspace part is writable).
var DefaultSystemDirs = []string{
	"/bin", "/boot", "/dev", "/efi", "/etc", "/home", "/lib", "/lib32", "/lib64", "/libx32",
	"/lost+found", "/media", "/mnt", "/nix", "/opt", "/proc", "/root", "/run", "/sbin",
	"/snap", "/srv", "/sys", "/usr", "/var",
	// macOS
	"/Applications", "/Library", "/System", "/Users", "/Volumes", "/cores", "/private",
}

// Policy decides which commands may run. It checks one simple command at a
// time, after the shell has expanded it (Check), a whole script before any
// of it runs (CheckScript), and each file a redirection writes (CheckWrite).
// Its paths must be absolute and clean; tests point FSRoot and Home at
// throwaway directories.
type Policy struct {
	// Workspace is the workspace root (symlinks resolved). Commands may
	// change anything inside it, but not delete it, unless
	// ReadOnlyWorkspace is set.
	Workspace string
	// ReadOnlyWorkspace, when not "", makes the workspace read-only (the
	// user's trust level for it): commands may read it and work in it,
	// but change nothing in it (RuleReadOnly). It says why, and what the
	// user can do, for the refusals.
	ReadOnlyWorkspace string
	// Writable lists other directories commands may change: the private
	// temp directory (the only one, with a read-only workspace).
	Writable []string
	// FSRoot is the filesystem root, "/" (refused as well when it is not).
	FSRoot string
	// Home is the user's home directory; "" when unknown.
	Home string
	// System lists system directories (DefaultSystemDirs when nil); each is
	// protected both as written and under FSRoot.
	System []string
}

// maxDepth bounds how deep wrappers and nested shells are followed.
const maxDepth = 8

// checker carries one check's context.
type checker struct {
	p     *Policy
	argv  []string // the command being checked, for messages
	dir   string   // its working directory; "" when not known (static checks)
	real  bool     // run by a real program (a wrapper or real shell), not by Hearth's interpreter
	depth int
}

// Check checks one simple command: argv after expansion, run in dir (an
// absolute path, or "" when not known: relative paths are then not
// checked). It returns a *Refusal, or nil.
func (p *Policy) Check(argv []string, dir string) error {
	c := &checker{p: p, argv: argv, dir: cleanDir(dir)}
	if r := c.check(argv); r != nil {
		return r
	}
	return nil
}

// CheckWrite checks that a redirection may open path (relative to dir)
// for writing.
func (p *Policy) CheckWrite(path, dir string) error {
	c := &checker{p: p, argv: []string{"> " + path}, dir: cleanDir(dir)}
	if r := c.path(opWrite, path); r != nil {
		r.Command = "> " + path
		return r
	}
	return nil
}

// cleanDir cleans an absolute dir; any other is not known ("").
func cleanDir(dir string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Clean(dir)
}

// refuse makes a refusal of the command being checked.
func (c *checker) refuse(rule, format string, args ...any) *Refusal {
	return &Refusal{Rule: rule, Command: quoteArgv(c.argv), Reason: fmt.Sprintf(format, args...)}
}

// quoteArgv renders argv as shell words, cut to a readable length.
func quoteArgv(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			q = fmt.Sprintf("%q", a)
		}
		b.WriteString(q)
		if b.Len() > 200 {
			return b.String()[:200] + "…"
		}
	}
	return b.String()
}

// commandName is the name a command is known by: the base name of argv[0],
// lower-cased (case-insensitive file systems run RM as rm).
func commandName(arg0 string) string {
	return strings.ToLower(filepath.Base(arg0))
}

// set makes a set of names.
func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// check checks argv: the checker its command's name has in the table
// (checkers) decides.
func (c *checker) check(argv []string) *Refusal {
	if len(argv) == 0 {
		return nil
	}
	if c.depth > maxDepth {
		return c.refuse(RuleUnchecked, "commands nested more than %d deep cannot be checked", maxDepth)
	}
	name := commandName(argv[0])
	if f := checkerFor(name); f != nil {
		return f(c, name, argv[1:])
	}
	return nil
}

// nested checks a command that argv's program runs itself, for real.
func (c *checker) nested(argv []string) *Refusal {
	if len(argv) == 0 {
		return nil
	}
	sub := *c
	sub.depth++
	sub.real = true
	return sub.check(argv)
}

// script checks a shell command string statically. strict is for strings a
// real shell will run, where only what can be checked now is allowed.
func (c *checker) script(src string, strict bool) *Refusal {
	f, err := parse(src)
	if err != nil {
		return c.refuse(RuleUnchecked, "cannot parse the command string to check it: %v", err)
	}
	s := &static{p: c.p, dir: c.dir, strict: strict, depth: c.depth + 1, real: c.real || strict}
	return s.file(f)
}
