package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/hearth-agent/hearth/sandbox"
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
)

// Refusal is a command refused by the policy. Its message names the rule
// and says what to do instead, so that a model can correct itself.
type Refusal struct {
	Rule    string // one of the Rule constants
	Command string // the command as it would have run, after expansion
	Reason  string
}

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
	// change anything inside it, but not delete it.
	Workspace string
	// Writable lists other directories commands may change: the private
	// temp directory.
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

func cleanDir(dir string) string {
	if !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.Clean(dir)
}

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

var (
	privilegeCmds = set("sudo", "su", "doas", "pkexec", "run0", "sudoedit", "runuser", "chroot",
		"nsenter", "gosu", "su-exec", "machinectl", "capsh", "setpriv", "iptables", "ip6tables",
		"nft", "visudo", "passwd", "chpasswd", "useradd", "userdel", "usermod", "groupadd",
		"groupdel", "adduser", "deluser")
	diskCmds = set("mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "mformat", "fdisk", "sfdisk",
		"cfdisk", "gdisk", "sgdisk", "cgdisk", "parted", "partprobe", "wipefs", "blkdiscard",
		"hdparm", "badblocks", "dmsetup", "cryptsetup", "losetup", "mdadm", "pvcreate", "pvremove",
		"vgcreate", "vgremove", "lvcreate", "lvremove", "zpool", "mount", "umount", "swapon",
		"swapoff", "debugfs", "fsck", "e2fsck", "tune2fs", "resize2fs", "xfs_repair", "flashrom",
		"nvme", "sg_format", "efibootmgr", "grub-install", "update-grub", "grub-mkconfig",
		"bootctl", "insmod", "rmmod", "modprobe", "kexec", "diskutil", "newfs", "format")
	powerCmds  = set("shutdown", "reboot", "halt", "poweroff", "init", "telinit")
	powerVerbs = set("poweroff", "reboot", "halt", "kexec", "suspend", "hibernate", "hybrid-sleep",
		"suspend-then-hibernate", "rescue", "emergency", "default", "isolate", "soft-reboot")
	detachCmds = set("setsid", "disown", "daemonize", "start-stop-daemon", "systemd-run",
		"tmux", "screen", "launchctl")
	// schedulers run commands later, from a daemon: outside the sandbox
	// and after the call. Their crontab-like front ends may list (-l).
	schedulers = set("at", "batch")
	crontabs   = set("crontab", "incrontab", "fcrontab")
	// Read-only verbs of the service managers: anything else asks systemd
	// (or init) to start, change or install units, which it then runs
	// itself, outside the sandbox.
	systemctlReadOnly = set("status", "show", "cat", "list-units", "list-unit-files", "list-sockets",
		"list-timers", "list-jobs", "list-dependencies", "list-automounts", "list-paths",
		"list-machines", "is-active", "is-enabled", "is-failed", "is-system-running", "get-default",
		"show-environment", "help")
	loginctlReadOnly = set("list-sessions", "session-status", "show-session", "list-users",
		"user-status", "show-user", "list-seats", "seat-status", "show-seat", "help")
	// D-Bus clients: a method call can ask any service on the bus
	// (systemd's StartTransientUnit, say) to run code outside the sandbox.
	dbusClients = set("busctl", "gdbus", "dbus-send", "qdbus", "qdbus6", "qdbus-qt5", "mdbus2",
		"dbus-update-activation-environment")
	busctlReadOnly = set("list", "status", "tree", "introspect", "get-property", "help")
	// deleteCmds remove their operands (the links themselves, not what
	// they point to).
	deleteCmds = set("rm", "unlink", "rmdir", "srm", "wipe", "trash", "trash-put")
	// shells whose -c string Hearth interprets itself; other shells run
	// for real.
	posixShells = set("sh", "bash", "dash", "ash", "rbash")
	otherShells = set("zsh", "ksh", "mksh", "yash", "posh", "ksh93", "oksh", "loksh")
	alienShells = set("fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh", "powershell")
)

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// check checks argv.
func (c *checker) check(argv []string) *Refusal {
	if len(argv) == 0 {
		return nil
	}
	if c.depth > maxDepth {
		return c.refuse(RuleUnchecked, "commands nested more than %d deep cannot be checked", maxDepth)
	}
	name := commandName(argv[0])
	args := argv[1:]
	switch {
	case privilegeCmds[name]:
		return c.refuse(RulePrivilege, "%s changes privileges or system accounts; Hearth never runs it. Do the task without it, or ask the user to run it", name)
	case diskCmds[name] || strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "fsck."):
		return c.refuse(RuleDisk, "%s writes disks, file systems or the kernel; Hearth never runs it", name)
	case powerCmds[name]:
		return c.refuse(RulePower, "%s stops or restarts the machine; Hearth never runs it", name)
	case name == "systemctl" || name == "loginctl":
		for _, a := range args {
			if powerVerbs[a] {
				return c.refuse(RulePower, "%s %s stops or restarts the machine; Hearth never runs it", name, a)
			}
		}
		return c.serviceManager(name, args)
	case name == "service":
		// service NAME VERB: only status.
		if ops := operands(args, optSpec{}).ops; len(ops) >= 2 && ops[1] != "status" {
			return c.refuse(RuleDaemon, "service %s %s asks init to act on a service, which then runs outside the sandbox; only `service NAME status` is allowed: ask the user to run it", ops[0], ops[1])
		}
		return nil
	case dbusClients[name]:
		return c.dbus(name, args)
	case name == "sysctl":
		for _, a := range args {
			if a == "-w" || a == "--write" || a == "-p" || a == "--load" || a == "--system" || strings.Contains(a, "=") {
				return c.refuse(RuleDisk, "sysctl would change kernel settings; Hearth never does")
			}
		}
		return nil
	case detachCmds[name]:
		return c.refuse(RuleDetach, "%s would start something that outlives the command (every process a command starts is stopped when it ends)", name)
	case schedulers[name]:
		return c.refuse(RuleDetach, "%s has the at daemon run commands later, outside the sandbox and after the call; run the command now instead (it is stopped at the timeout), or ask the user to schedule it", name)
	case crontabs[name]:
		if len(args) == 1 && args[0] == "-l" {
			return nil
		}
		return c.refuse(RuleDetach, "%s would have the cron daemon run commands later, outside the sandbox; only `%s -l` is allowed: ask the user to schedule it", name, name)
	case name == "killall5":
		return c.refuse(RuleKillAll, "killall5 signals every process on the machine")
	case name == "kill":
		return c.kill(args)
	case deleteCmds[name]:
		for _, op := range operands(args, optSpec{}).ops {
			if r := c.path(opDelete, op); r != nil {
				return r
			}
		}
		return nil
	case name == "shred":
		p := operands(args, optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}})
		for _, op := range p.ops {
			if r := c.path(opWrite, op); r != nil {
				return r
			}
			if p.has('u', "remove") {
				if r := c.path(opDelete, op); r != nil {
					return r
				}
			}
		}
		return nil
	case name == "touch", name == "mkdir", name == "mkfifo", name == "truncate", name == "tee",
		name == "setfacl", name == "chcon":
		spec := map[string]optSpec{
			"touch":    {short: "dtr", long: []string{"date", "reference", "time"}},
			"mkdir":    {short: "mZ", long: []string{"mode", "context"}},
			"mkfifo":   {short: "mZ", long: []string{"mode", "context"}},
			"truncate": {short: "sr", long: []string{"size", "reference"}},
			"tee":      {},
			"setfacl":  {short: "mMxX", long: []string{"modify", "modify-file", "remove", "remove-file", "set", "set-file"}},
			"chcon":    {short: "urtl", long: []string{"reference", "user", "role", "type", "range"}},
		}[name]
		return c.paths(opWrite, operands(args, spec).ops)
	case name == "mknod":
		if ops := operands(args, optSpec{short: "mZ", long: []string{"mode", "context"}}).ops; len(ops) > 0 {
			return c.path(opWrite, ops[0])
		}
		return nil
	case name == "chmod", name == "chown", name == "chgrp":
		return c.chmod(name, args)
	case name == "chattr":
		var files []string
		for _, a := range args {
			if a == "-R" || a == "-V" || a == "-f" {
				continue
			}
			if strings.HasPrefix(a, "+") || strings.HasPrefix(a, "-") || strings.HasPrefix(a, "=") {
				continue
			}
			files = append(files, a)
		}
		return c.paths(opWrite, files)
	case name == "cp", name == "install", name == "mv", name == "ln", name == "link":
		return c.copyMove(name, args)
	case name == "rsync", name == "scp":
		ops := operands(args, optSpec{short: "eBfTiPlocF", long: []string{"rsh", "rsync-path", "exclude", "include", "filter", "files-from", "temp-dir", "partial-dir", "log-file", "password-file", "chmod", "chown", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest"}}).ops
		if len(ops) >= 2 && !isRemote(ops[len(ops)-1]) {
			return c.path(opWrite, ops[len(ops)-1])
		}
		return nil
	case name == "dd":
		for _, a := range args {
			if of, ok := strings.CutPrefix(a, "of="); ok {
				if isDevice(c.abs(of)) && !harmlessDevice(c.abs(of)) {
					return c.refuse(RuleDisk, "dd writing to the device %s could destroy a disk; Hearth never does that", of)
				}
				if r := c.path(opWrite, of); r != nil {
					return r
				}
			}
		}
		return nil
	case name == "sed", name == "perl":
		return c.inPlace(name, args)
	case name == "sort":
		p := operands(args, optSpec{short: "kStTo", long: []string{"key", "buffer-size", "field-separator", "temporary-directory", "output", "files0-from", "parallel", "batch-size", "compress-program", "random-source", "sort"}})
		return c.paths(opWrite, append(p.values("o", "output"), p.values("T", "temporary-directory")...))
	case name == "uniq":
		if ops := operands(args, optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars", "group", "all-repeated"}}).ops; len(ops) >= 2 {
			return c.path(opWrite, ops[1])
		}
		return nil
	case name == "tar", name == "bsdtar":
		return c.tar(args)
	case name == "unzip":
		p := operands(args, optSpec{short: "dxP", long: nil})
		return c.paths(opWrite, p.values("d", ""))
	case name == "curl":
		p := operands(args, optSpec{short: "AbCcDdEeFHhKmoQrTtUuwXxYyz", long: []string{"output", "output-dir", "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "etag-save", "data", "header", "user", "url", "config", "cookie", "form", "request", "proxy", "user-agent", "referer", "upload-file", "max-time", "connect-timeout", "retry", "write-out", "cert", "key", "cacert", "resolve"}})
		var w []string
		for _, o := range []struct{ s, l string }{{"o", "output"}, {"D", "dump-header"}, {"c", "cookie-jar"}, {"", "output-dir"}, {"", "trace"}, {"", "trace-ascii"}, {"", "stderr"}, {"", "etag-save"}} {
			w = append(w, p.values(o.s, o.l)...)
		}
		return c.paths(opWrite, dropStdio(w))
	case name == "wget":
		p := operands(args, optSpec{short: "OPoaeiBUTtwQlARDIX", long: []string{"output-document", "directory-prefix", "output-file", "append-output", "execute", "input-file", "base", "user-agent", "timeout", "tries", "wait", "quota", "level", "accept", "reject", "domains", "include-directories", "exclude-directories", "header", "post-data", "user", "password"}})
		var w []string
		for _, o := range []struct{ s, l string }{{"O", "output-document"}, {"P", "directory-prefix"}, {"o", "output-file"}, {"a", "append-output"}} {
			w = append(w, p.values(o.s, o.l)...)
		}
		return c.paths(opWrite, dropStdio(w))
	case name == "find":
		return c.find(args)
	case name == "xargs", name == "parallel":
		return c.xargs(name, args)
	case posixShells[name] || otherShells[name] || alienShells[name]:
		return c.shell(name, args)
	case name == "busybox" || name == "toybox":
		return c.nested(args)
	case name == "eval":
		return c.script(strings.Join(args, " "), c.real)
	case name == "source" || name == ".":
		return nil // the interpreter reads the file through its checked handlers
	case name == "cd" || name == "pushd":
		return c.cd(name, args)
	case name == "exec":
		return c.nested(operands(args, optSpec{short: "a", stopAtOperand: true}).afterOpts)
	case name == "command":
		for _, a := range args {
			if a == "-v" || a == "-V" {
				return nil // a lookup: runs nothing
			}
		}
		return c.nested(operands(args, optSpec{stopAtOperand: true}).afterOpts)
	case name == "builtin":
		return c.nested(args)
	case name == "env":
		return c.env(args)
	case name == "docker" || name == "podman" || name == "nerdctl":
		return c.container(name, args)
	case name == "docker-compose" || name == "podman-compose":
		return c.compose(name, args)
	default:
		if w, ok := wrappers[name]; ok {
			return c.wrapper(name, w, args)
		}
	}
	return nil
}

// serviceManager allows systemctl and loginctl only their read-only verbs:
// any other asks systemd to start, stop, change or install units, which it
// runs itself, outside the sandbox and after the call.
func (c *checker) serviceManager(name string, args []string) *Refusal {
	p := operands(args, optSpec{short: "tpsHMnoP", long: []string{"type", "property", "signal", "host", "machine",
		"lines", "output", "state", "root", "image", "kill-whom", "kill-value", "what", "job-mode",
		"boot-loader-entry", "boot-loader-menu", "reboot-argument", "timestamp", "check-inhibitors",
		"preset-mode", "message", "drop-in", "when"}})
	if len(p.ops) == 0 {
		return nil // systemctl alone lists units; loginctl alone, sessions
	}
	verb := p.ops[0]
	readOnly := systemctlReadOnly
	if name == "loginctl" {
		readOnly = loginctlReadOnly
	}
	if readOnly[verb] {
		return nil
	}
	return c.refuse(RuleDaemon, "%s %s asks systemd to act for the command: what it starts runs outside the sandbox and outlives the call. "+
		"Only reading is allowed (%s status, show, cat, list-units, is-active, …); run the program directly instead, or ask the user to run this",
		name, verb, name)
}

// dbus allows the D-Bus clients only to list and introspect: a method call
// can ask any service on the bus to run code outside the sandbox (systemd's
// StartTransientUnit, a desktop's "run this"), and what it asks cannot be
// checked.
func (c *checker) dbus(name string, args []string) *Refusal {
	ops := operands(args, optSpec{short: "MH", long: []string{"address", "host", "machine", "dest", "object-path", "timeout", "expect-reply", "json", "match"}}).ops
	switch {
	case name == "busctl" && (len(ops) == 0 || busctlReadOnly[ops[0]]),
		name == "gdbus" && len(ops) > 0 && (ops[0] == "introspect" || ops[0] == "help"),
		strings.HasPrefix(name, "qdbus") && len(ops) <= 2: // listing services and objects
		return nil
	}
	return c.refuse(RuleUnchecked, "%s sends D-Bus calls, which can ask services outside the sandbox (systemd, the desktop) to run anything; Hearth cannot check them. Only listing and introspecting is allowed: ask the user to make the call", name)
}

// containerGlobals are the options of docker, podman and nerdctl (before
// the subcommand) that take a value.
var containerGlobals = optSpec{short: "cHl", long: []string{"config", "context", "host", "log-level",
	"tlscacert", "tlscert", "tlskey", "connection", "url", "identity", "root", "runroot",
	"storage-driver", "storage-opt", "cgroup-manager", "conmon", "events-backend", "hooks-dir",
	"network-cmd-path", "network-config-dir", "runtime", "runtime-flag", "tmpdir", "module",
	"ssh", "namespace", "address", "snapshotter", "cni-path", "cni-netconfpath", "data-root",
	"hosts-dir", "insecure-registry", "host-gateway-ip"}, stopAtOperand: true}

// composeReadOnly are the compose verbs that start nothing: they read
// state, or stop and remove what runs.
var composeReadOnly = set("ps", "ls", "logs", "config", "convert", "images", "top", "port",
	"version", "events", "stop", "down", "rm", "kill", "pause", "unpause", "pull", "push",
	"wait", "stats", "help")

// compose refuses compose verbs that create or start containers: the
// compose file says what they get (host directories, devices, privileges,
// the host's namespaces), and Hearth does not check it.
func (c *checker) compose(name string, args []string) *Refusal {
	p := operands(args, optSpec{short: "fp", long: []string{"file", "project-name", "project-directory",
		"profile", "env-file", "ansi", "progress", "parallel"}, stopAtOperand: true})
	if len(p.afterOpts) == 0 || composeReadOnly[p.afterOpts[0]] {
		return nil
	}
	return c.refuse(RuleUnchecked, "%s %s starts containers as the compose file says (host directories, devices, privileges) and the daemon runs them outside the sandbox; "+
		"Hearth does not check compose files. Run `docker run` with its options on the command line instead, or ask the user to start the services",
		name, p.afterOpts[0])
}

// hostNamespaces are the container options that, set to host, give the
// container one of the machine's namespaces.
var hostNamespaces = set("--pid", "--ipc", "--userns", "--network", "--net", "--uts", "--cgroupns")

// container refuses containers that would be given the host: privileged
// ones, ones given devices, capabilities, the machine's namespaces or a
// weaker security profile, and ones with a directory outside the workspace
// mounted into them (docker run -v /:/host gives the container the whole
// machine). The daemon (dockerd, podman's conmon) runs them, outside the
// sandbox: what the policy lets through here is all that stands between a
// command and the machine. Compose files, stacks and volumes with driver
// options cannot be checked, and are refused.
func (c *checker) container(name string, args []string) *Refusal {
	g := operands(args, containerGlobals)
	if len(g.afterOpts) > 0 {
		sub, rest := g.afterOpts[0], g.afterOpts[1:]
		if (sub == "container" || sub == "image") && len(rest) > 0 {
			sub, rest = rest[0], rest[1:] // docker container cp …
		}
		first := ""
		if ops := operands(rest, optSpec{stopAtOperand: true}).afterOpts; len(ops) > 0 {
			first = ops[0]
		}
		switch {
		case sub == "compose":
			return c.compose(name+" compose", rest)
		case sub == "stack" && (first == "deploy" || first == "up"):
			return c.refuse(RuleUnchecked, "%s stack deploy starts services as a compose file says, which Hearth does not check; ask the user to deploy it", name)
		case sub == "play" && first == "kube", sub == "kube" && first == "play":
			return c.refuse(RuleUnchecked, "%s kube play starts pods as a YAML file says (host paths, privileges), which Hearth does not check; run `%s run` with its options on the command line instead", name, name)
		case sub == "plugin" && (first == "install" || first == "enable" || first == "upgrade" || first == "create"):
			return c.refuse(RulePrivilege, "%s plugin %s: plugins run with the daemon's privileges, outside the sandbox; ask the user to install it", name, first)
		case sub == "volume" && first == "create":
			for _, a := range rest {
				if a == "-o" || a == "--opt" || strings.HasPrefix(a, "--opt=") || strings.HasPrefix(a, "-o") && len(a) > 2 {
					return c.refuse(RuleUnchecked, "%s volume create with driver options can bind any directory of the machine into a volume; create a plain volume, or mount a directory of the workspace with -v", name)
				}
			}
		case sub == "cp":
			// docker cp CONTAINER:SRC DEST writes DEST here.
			if ops := operands(rest, optSpec{}).ops; len(ops) == 2 && !isRemote(ops[1]) && ops[1] != "-" {
				if r := c.path(opWrite, ops[1]); r != nil {
					return r
				}
			}
		case name == "podman" && sub == "unshare":
			// Runs a command here, as root of the user namespace.
			return c.nested(operands(rest, optSpec{stopAtOperand: true}).afterOpts)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		opt, val, hasVal := strings.Cut(a, "=")
		value := func() string {
			if hasVal {
				return val
			}
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		}
		var src string
		switch {
		case opt == "--privileged":
			return c.refuse(RulePrivilege, "%s --privileged gives the container the machine", name)
		case hostNamespaces[opt] && value() == "host":
			what := map[string]string{"--pid": "processes", "--ipc": "shared memory", "--userns": "users (its root is the machine's)",
				"--network": "network (its services and abstract sockets)", "--net": "network (its services and abstract sockets)",
				"--uts": "host name", "--cgroupns": "control groups"}[opt]
			return c.refuse(RulePrivilege, "%s %s=host gives the container the machine's %s; leave the container its own (publish ports with -p)", name, opt, what)
		case opt == "--device" || opt == "--device-cgroup-rule":
			return c.refuse(RulePrivilege, "%s %s gives the container a device of the machine (a disk, say), outside the sandbox; Hearth never does. Work on files in the workspace instead", name, opt)
		case opt == "--cap-add":
			return c.refuse(RulePrivilege, "%s --cap-add %s gives the container more power over the machine than it has by default; run it without", name, value())
		case opt == "--security-opt":
			if v := value(); !strings.HasPrefix(v, "no-new-privileges") {
				return c.refuse(RulePrivilege, "%s --security-opt %s weakens the container's confinement (AppArmor, seccomp, SELinux); run it without (no-new-privileges is allowed)", name, v)
			}
		case opt == "--volumes-from":
			return c.refuse(RuleUnchecked, "%s --volumes-from gives the container the mounts of another container, which Hearth cannot check; mount a directory of the workspace with -v instead", name)
		case opt == "--allow":
			return c.refuse(RulePrivilege, "%s build --allow %s grants the build extra privileges (security.insecure, network.host); build without", name, value())
		}
		switch {
		case a == "-v" || a == "--volume" || a == "--mount":
			if i+1 < len(args) {
				i++
				src = args[i]
			}
		case strings.HasPrefix(a, "--volume=") || strings.HasPrefix(a, "--mount="):
			_, src, _ = strings.Cut(a, "=")
		case strings.HasPrefix(a, "-v") && len(a) > 2:
			src = a[2:]
		}
		if src == "" {
			continue
		}
		if strings.Contains(src, "volume-opt") || strings.Contains(src, "volume-driver") {
			return c.refuse(RuleUnchecked, "%s --mount with volume driver options can bind any directory of the machine; mount a directory of the workspace instead", name)
		}
		host := src
		if strings.Contains(src, "source=") || strings.Contains(src, "src=") {
			for _, kv := range strings.Split(src, ",") {
				k, v, _ := strings.Cut(kv, "=")
				if k == "source" || k == "src" {
					host = v
				}
			}
		} else {
			host, _, _ = strings.Cut(src, ":")
		}
		if !filepath.IsAbs(host) && !strings.HasPrefix(host, ".") && !strings.HasPrefix(host, "~") {
			continue // a named volume
		}
		if r := c.path(opWrite, host); r != nil {
			r.Reason = "mounting it into a container would let the container change it: " + r.Reason
			return r
		}
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

func (c *checker) paths(o op, ps []string) *Refusal {
	for _, p := range ps {
		if r := c.path(o, p); r != nil {
			return r
		}
	}
	return nil
}

func dropStdio(ps []string) []string {
	out := ps[:0:0]
	for _, p := range ps {
		if p != "-" && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// isRemote reports whether an rsync/scp operand names another host
// (host:path), not a local file.
func isRemote(p string) bool {
	i := strings.IndexByte(p, ':')
	return i > 0 && !strings.Contains(p[:i], "/")
}

func (c *checker) kill(args []string) *Refusal {
	sawSignal := false
	afterDashes := false
	for i, a := range args {
		if !afterDashes && a == "--" {
			afterDashes = true
			continue
		}
		if !afterDashes && (a == "-s" || a == "-n") && i+1 < len(args) {
			sawSignal = true
			continue
		}
		if !afterDashes && !sawSignal && strings.HasPrefix(a, "-") && a != "-1" {
			sawSignal = true // -9, -KILL, -l, …
			continue
		}
		pid := a
		if !afterDashes && !sawSignal && a == "-1" {
			// "kill -1 …" is signal 1 when more follows.
			if i+1 < len(args) {
				sawSignal = true
				continue
			}
		}
		if pid == "-1" || pid == "1" {
			return c.refuse(RuleKillAll, "kill %s signals every process (or init); name the processes to stop", pid)
		}
		if pid == strconv.Itoa(os.Getpid()) || pid == strconv.Itoa(os.Getppid()) || pid == "-"+strconv.Itoa(os.Getpid()) {
			return c.refuse(RuleKillAll, "process %s is Hearth itself (or what started it)", pid)
		}
	}
	return nil
}

func (c *checker) chmod(name string, args []string) *Refusal {
	var files []string
	modeSeen := false
	noDeref := false
	afterDashes := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case afterDashes || a == "-" || !strings.HasPrefix(a, "-"):
			files = append(files, a)
		case a == "--":
			afterDashes = true
		case strings.HasPrefix(a, "--"):
			n, _, hasVal := strings.Cut(a[2:], "=")
			if strings.HasPrefix("reference", n) || strings.HasPrefix("from", n) && name == "chown" {
				if strings.HasPrefix("reference", n) {
					modeSeen = true
				}
				if !hasVal {
					i++
				}
			}
			if strings.HasPrefix("no-dereference", n) && len(n) > 3 {
				noDeref = true
			}
		default:
			letters := a[1:]
			if name == "chmod" && strings.Trim(letters, "cfvR") != "" {
				modeSeen = true // chmod -w file: a mode, not options
				continue
			}
			if strings.ContainsRune(letters, 'h') {
				noDeref = true
			}
		}
	}
	if !modeSeen && len(files) > 0 {
		files = files[1:] // the mode or owner
	}
	if noDeref {
		return c.paths(opWriteNoFollow, files) // -h: the links themselves
	}
	return c.paths(opWrite, files)
}

func (c *checker) copyMove(name string, args []string) *Refusal {
	spec := optSpec{short: "St", long: []string{"target-directory", "suffix"}}
	if name == "install" {
		spec = optSpec{short: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}
	}
	p := operands(args, spec)
	ops := p.ops
	targets := p.values("t", "target-directory")
	if name == "install" && p.has('d', "directory") {
		return c.paths(opWrite, ops)
	}
	var sources []string
	switch {
	case len(targets) > 0:
		sources = ops
	case name == "ln" && len(ops) == 1:
		// ln TARGET: the link is made here, named after the target.
		sources, targets = ops, []string{filepath.Base(ops[0])}
	case len(ops) >= 2:
		sources, targets = ops[:len(ops)-1], ops[len(ops)-1:]
	default:
		return nil
	}
	if name == "mv" {
		for _, s := range sources {
			if r := c.path(opDelete, s); r != nil {
				return r
			}
		}
	}
	// A hard link shares the file: writing the link writes the original.
	hard := name == "link" || name == "ln" && !p.has('s', "symbolic") ||
		name == "cp" && (p.has('l', "link"))
	if hard {
		for _, s := range sources {
			if r := c.path(opWrite, s); r != nil {
				r.Reason = "a hard link to it would let writes in the workspace change it: " + r.Reason
				return r
			}
		}
	}
	return c.paths(opWrite, targets)
}

func (c *checker) inPlace(name string, args []string) *Refusal {
	inPlace := false
	script := false // the script came from an option
	var files []string
	afterDashes := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case afterDashes || a == "-" || !strings.HasPrefix(a, "-"):
			files = append(files, a)
		case a == "--":
			afterDashes = true
		case strings.HasPrefix(a, "--"):
			n, _, hasVal := strings.Cut(a[2:], "=")
			if strings.HasPrefix("in-place", n) && len(n) >= 2 {
				inPlace = true
			}
			if name == "sed" && (strings.HasPrefix("expression", n) || strings.HasPrefix("file", n)) && len(n) >= 1 {
				script = true
				if !hasVal {
					i++
				}
			}
		default:
			for j := 1; j < len(a); j++ {
				ch := a[j]
				if ch == 'i' {
					inPlace = true
					break // the rest is a backup suffix
				}
				valueLetters := "efl"
				if name == "perl" {
					valueLetters = "eEIlmMxC"
				}
				if strings.IndexByte(valueLetters, ch) >= 0 {
					if ch == 'e' || ch == 'f' || ch == 'E' {
						script = true
					}
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		}
	}
	if !inPlace {
		return nil
	}
	if !script && len(files) > 0 {
		files = files[1:]
	}
	return c.paths(opWrite, files)
}

func (c *checker) tar(args []string) *Refusal {
	extract, create, absolute := false, false, false
	var files, dirs []string
	valueLetters := "fCTXbgHKLNV"
	takeValues := func(letters string, i int) (int, []string) {
		var vals []string
		for _, ch := range letters {
			if strings.ContainsRune(valueLetters, ch) && i+1 < len(args) {
				i++
				vals = append(vals, string(ch)+args[i])
			}
		}
		return i, vals
	}
	record := func(vals []string) {
		for _, v := range vals {
			switch v[0] {
			case 'f', 'g':
				files = append(files, v[1:])
			case 'C':
				dirs = append(dirs, v[1:])
			}
		}
	}
	mode := func(letters string) {
		if strings.ContainsAny(letters, "x") {
			extract = true
		}
		if strings.ContainsAny(letters, "cruA") {
			create = true
		}
		if strings.ContainsRune(letters, 'P') {
			absolute = true
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case i == 0 && !strings.HasPrefix(a, "-"):
			// Old style: "xzf archive".
			mode(a)
			var vals []string
			i, vals = takeValues(a, i)
			record(vals)
		case strings.HasPrefix(a, "--"):
			n, v, hasVal := strings.Cut(a[2:], "=")
			switch {
			case n == "extract" || n == "get":
				extract = true
			case n == "create" || n == "append" || n == "update" || n == "catenate" || n == "concatenate":
				create = true
			case n == "absolute-names":
				absolute = true
			case n == "file" || n == "directory" || n == "listed-incremental":
				if !hasVal && i+1 < len(args) {
					i++
					v = args[i]
				}
				if n == "directory" {
					dirs = append(dirs, v)
				} else {
					files = append(files, v)
				}
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			letters := a[1:]
			// A value may be glued on: -farchive, -C/dir.
			for j, ch := range letters {
				if strings.ContainsRune(valueLetters, ch) {
					mode(letters[:j])
					val := letters[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					record([]string{string(ch) + val})
					letters = ""
					break
				}
			}
			mode(letters)
		}
	}
	if extract {
		if absolute {
			return c.refuse(RuleUnchecked, "tar -P extracts absolute paths, which cannot be checked before they are written; extract without -P")
		}
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		if r := c.paths(opWrite, dirs); r != nil {
			return r
		}
	}
	if create {
		// Without -C the archive path is relative to the start directory.
		if r := c.paths(opWrite, dropStdio(files)); r != nil {
			return r
		}
	}
	return nil
}

func (c *checker) find(args []string) *Refusal {
	follow := false
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "-H" || a == "-L" {
			follow = true
		} else if a != "-P" && !strings.HasPrefix(a, "-D") && !strings.HasPrefix(a, "-O") {
			break
		}
		if a == "-D" {
			i++
		}
		i++
	}
	var starts []string
	for i < len(args) {
		a := args[i]
		if strings.HasPrefix(a, "-") || a == "(" || a == "!" || a == "," || a == ")" {
			break
		}
		starts = append(starts, a)
		i++
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	expr := args[i:]
	for _, a := range expr {
		if a == "-follow" {
			follow = true
		}
	}
	for j := 0; j < len(expr); j++ {
		a := expr[j]
		switch a {
		case "-delete":
			if follow {
				return c.refuse(RuleUnchecked, "find -L/-follow with -delete follows symlinks out of the workspace; drop -L")
			}
			for _, s := range starts {
				if r := c.path(opDeleteUnder, s); r != nil {
					return r
				}
			}
		case "-fprint", "-fprint0", "-fls", "-fprintf":
			if j+1 < len(expr) {
				if r := c.path(opWrite, expr[j+1]); r != nil {
					return r
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(expr) && expr[k] != ";" && expr[k] != "+" {
				k++
			}
			inner := expr[j+1 : k]
			j = k
			if len(inner) == 0 {
				continue
			}
			if follow && changesFiles(commandName(inner[0])) {
				return c.refuse(RuleUnchecked, "find -L/-follow with -exec %s follows symlinks out of the workspace; drop -L", inner[0])
			}
			// {} stands for the files found: check it as a file under
			// each starting point.
			for _, s := range starts {
				stand := strings.TrimSuffix(s, "/") + "/{}"
				argv := make([]string, len(inner))
				for n, w := range inner {
					argv[n] = strings.ReplaceAll(w, "{}", stand)
				}
				if r := c.nested(argv); r != nil {
					return r
				}
			}
		}
	}
	return nil
}

// changesFiles reports whether the command named name deletes or writes the
// paths it is given, or runs code: run it only where its arguments are known.
func changesFiles(name string) bool {
	switch name {
	case "touch", "mkdir", "mkfifo", "mknod", "truncate", "tee", "chmod", "chown", "chgrp",
		"chattr", "setfacl", "chcon", "cp", "install", "mv", "ln", "link", "rsync", "dd", "sed",
		"perl", "shred", "tar", "unzip", "eval", "exec", "xargs", "find", "parallel", "env",
		"busybox", "toybox", "source", ".":
		return true
	}
	if _, ok := wrappers[name]; ok {
		return true
	}
	return deleteCmds[name] || posixShells[name] || otherShells[name] || alienShells[name]
}

func (c *checker) xargs(name string, args []string) *Refusal {
	p := operands(args, optSpec{short: "aEdILnPs", long: []string{"arg-file", "eof", "delimiter", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stopAtOperand: true})
	inner := p.afterOpts
	if name == "parallel" {
		// parallel CMD ::: args — the command ends at the first :::.
		for i, a := range inner {
			if strings.HasPrefix(a, ":::") {
				inner = inner[:i]
				break
			}
		}
	}
	if len(inner) == 0 {
		return nil // echo
	}
	if changesFiles(commandName(inner[0])) {
		return c.refuse(RuleUnchecked, "%s %s: the paths come from %s's input and cannot be checked before they run; name the files on the command line, or use find … -delete", name, inner[0], name)
	}
	return c.nested(inner)
}

func (c *checker) cd(name string, args []string) *Refusal {
	ops := operands(args, optSpec{}).ops
	if len(ops) == 0 {
		if c.p.Home == "" {
			return nil
		}
		ops = []string{c.p.Home}
	}
	if ops[0] == "-" || strings.HasPrefix(ops[0], "+") || (name == "pushd" && strings.HasPrefix(ops[0], "-")) {
		return nil // back to a directory already checked
	}
	return c.path(opChdir, ops[0])
}

func (c *checker) env(args []string) *Refusal {
	sub := *c
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-" || a == "-i" || a == "-0" || a == "-v" || a == "--ignore-environment" || a == "--null" || a == "--debug":
		case a == "-u" || a == "--unset":
			i++
		case strings.HasPrefix(a, "--unset=") || strings.HasPrefix(a, "-u"):
		case a == "-C" || a == "--chdir" || strings.HasPrefix(a, "--chdir=") || (strings.HasPrefix(a, "-C") && len(a) > 2):
			d := strings.TrimPrefix(strings.TrimPrefix(a, "--chdir="), "-C")
			if a == "-C" || a == "--chdir" {
				if i+1 >= len(args) {
					return nil
				}
				i++
				d = args[i]
			}
			if r := sub.path(opChdir, d); r != nil {
				return r
			}
			if real, err := sandbox.RealPath(sub.dir, d, true); err == nil && sub.dir != "" || filepath.IsAbs(d) {
				sub.dir = real
			}
		case a == "-S" || a == "--split-string" || strings.HasPrefix(a, "--split-string=") || (strings.HasPrefix(a, "-S") && len(a) > 2):
			s := strings.TrimPrefix(strings.TrimPrefix(a, "--split-string="), "-S")
			if a == "-S" || a == "--split-string" {
				if i+1 >= len(args) {
					return nil
				}
				i++
				s = args[i]
			}
			return sub.nested(append(strings.Fields(s), args[i+1:]...))
		case strings.HasPrefix(a, "--"):
			// --ignore-signal=…, --block-signal, …
		case strings.HasPrefix(a, "-"):
		case strings.Contains(a, "=") && !strings.HasPrefix(a, "="):
			// NAME=VALUE
		default:
			return sub.nested(args[i:])
		}
	}
	return nil
}

// wrapper describes a command that runs another: its options, and how many
// operands come before the command (timeout's duration, flock's file).
type wrapper struct {
	spec optSpec
	lead int
	// leadWrites: the lead operands are files it writes (flock).
	leadWrites bool
	// stringOpt names an option whose value is a shell command (flock -c).
	stringOpt string
	// joined: the remaining words are joined and run by sh -c (watch).
	joined bool
	// writes lists options whose values are files it writes.
	writes [][2]string
}

var wrappers = map[string]wrapper{
	"nice":       {spec: optSpec{short: "n", long: []string{"adjustment"}}},
	"nohup":      {},
	"time":       {spec: optSpec{short: "fo", long: []string{"format", "output"}}, writes: [][2]string{{"o", "output"}}},
	"timeout":    {spec: optSpec{short: "ks", long: []string{"kill-after", "signal"}}, lead: 1},
	"stdbuf":     {spec: optSpec{short: "ioe", long: []string{"input", "output", "error"}}},
	"ionice":     {spec: optSpec{short: "cnpPu", long: []string{"class", "classdata", "pid", "pgid", "uid"}}},
	"chrt":       {spec: optSpec{short: "T", long: []string{"sched-runtime", "sched-deadline", "sched-period"}}, lead: 1},
	"taskset":    {lead: 1},
	"flock":      {spec: optSpec{short: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}}, lead: 1, leadWrites: true, stringOpt: "c"},
	"watch":      {spec: optSpec{short: "nq", long: []string{"interval", "equexit"}}, joined: true},
	"strace":     {spec: optSpec{short: "abeEoOpPsSuUIX", long: []string{"output", "trace", "signal", "user"}}, writes: [][2]string{{"o", "output"}}},
	"ltrace":     {spec: optSpec{short: "aAeEFlnoOpsuwX", long: []string{"output"}}, writes: [][2]string{{"o", "output"}}},
	"unbuffer":   {},
	"caffeinate": {spec: optSpec{short: "tw"}},
	"nocache":    {},
	"catchsegv":  {},
	"valgrind":   {},
	"script":     {spec: optSpec{short: "cEIOTB", long: []string{"command", "echo", "log-in", "log-out", "log-timing", "log-io"}}, stringOpt: "c", writes: [][2]string{{"I", "log-in"}, {"O", "log-out"}, {"T", "log-timing"}, {"B", "log-io"}}},
}

func (c *checker) wrapper(name string, w wrapper, args []string) *Refusal {
	w.spec.stopAtOperand = true
	p := operands(args, w.spec)
	for _, o := range w.writes {
		if r := c.paths(opWrite, dropStdio(p.values(o[0], o[1]))); r != nil {
			return r
		}
	}
	if w.stringOpt != "" {
		// The command string may come after the operands (flock FILE -c CMD).
		all := operands(args, optSpec{short: w.stringOpt + w.spec.short, long: w.spec.long})
		for _, s := range all.values(w.stringOpt, "command") {
			sub := *c
			sub.depth++
			if r := sub.script(s, true); r != nil {
				return r
			}
		}
	}
	rest := p.afterOpts
	if name == "script" {
		return c.paths(opWrite, rest) // script [file]: the typescript it writes
	}
	if len(rest) < w.lead {
		return nil
	}
	if w.leadWrites {
		if r := c.paths(opWrite, rest[:w.lead]); r != nil {
			return r
		}
	}
	rest = rest[w.lead:]
	if w.joined {
		if len(rest) == 0 {
			return nil
		}
		sub := *c
		sub.depth++
		return sub.script(strings.Join(rest, " "), true)
	}
	return c.nested(rest)
}

// shell checks a shell started with args: its -c string, its script file,
// or its standard input (refused: it cannot be checked).
func (c *checker) shell(name string, args []string) *Refusal {
	hasC, stdin := false, false
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		if a == "-" {
			stdin = true
			i++
			break
		}
		if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			break
		}
		if strings.HasPrefix(a, "--") {
			if a == "--rcfile" || a == "--init-file" {
				i++
			}
			continue
		}
		for _, ch := range a[1:] {
			switch ch {
			case 'c':
				hasC = true
			case 's':
				stdin = true
			case 'o', 'O':
				i++
			}
		}
	}
	switch {
	case hasC:
		if i >= len(args) {
			return nil
		}
		if alienShells[name] {
			return c.refuse(RuleUnchecked, "only sh and bash command strings can be checked; write the commands for bash")
		}
		sub := *c
		sub.depth++
		// Hearth interprets sh and bash -c strings itself, checking each
		// command as it runs; strings run by a real shell must be fully
		// checkable beforehand.
		return sub.script(args[i], c.real || !posixShells[name])
	case stdin || i >= len(args):
		return c.refuse(RuleUnchecked, "a shell reading its commands from its input cannot be checked; pass them with %s -c '…'", name)
	}
	return nil // a script file: it runs under the OS sandbox
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

// op is what a command does to a path.
type op int

const (
	opWrite         op = iota // create or change (follows symlinks)
	opWriteNoFollow           // change the link itself (chown -h)
	opDelete                  // delete (the link itself, not its target)
	opDeleteUnder             // delete what is under it (find -delete)
	opChdir                   // make it the working directory
)

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
	for _, w := range append([]string{pol.Workspace}, pol.Writable...) {
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
// file) or the workspace's .hearth.
func protectedPath(ws, real string) bool {
	rel, err := filepath.Rel(ws, real)
	if err != nil || rel == "." {
		return false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if parts[0] == ".hearth" {
		return true
	}
	for _, part := range parts {
		if part == ".git" {
			return true
		}
	}
	return false
}

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

// optSpec says which options of a command take a value.
type optSpec struct {
	short string   // short options that take a value
	long  []string // long options that take a value (GNU prefixes accepted)
	// stopAtOperand: options end at the first operand (the command a
	// wrapper runs has its own options).
	stopAtOperand bool
}

type parsedArgs struct {
	ops       []string
	afterOpts []string // everything from the first operand (stopAtOperand)
	vals      map[string][]string
	flags     map[string]bool
}

func (p parsedArgs) values(short, long string) []string {
	var out []string
	if short != "" {
		out = append(out, p.vals["-"+short]...)
	}
	if long != "" {
		out = append(out, p.vals["--"+long]...)
	}
	return out
}

func (p parsedArgs) has(short byte, long string) bool {
	return p.flags["-"+string(short)] || long != "" && p.flags["--"+long]
}

// operands splits args into options and operands, GNU style: options may
// follow operands, "--" ends them, short options cluster.
func operands(args []string, s optSpec) parsedArgs {
	p := parsedArgs{vals: map[string][]string{}, flags: map[string]bool{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			p.ops = append(p.ops, args[i+1:]...)
			if s.stopAtOperand {
				p.afterOpts = args[i+1:]
			}
			return p
		case a == "-" || !strings.HasPrefix(a, "-"):
			if s.stopAtOperand {
				p.ops = append(p.ops, args[i:]...)
				p.afterOpts = args[i:]
				return p
			}
			p.ops = append(p.ops, a)
		case strings.HasPrefix(a, "--"):
			n, v, hasVal := strings.Cut(a[2:], "=")
			full := n
			takes := false
			for _, l := range s.long {
				if l == n || n != "" && strings.HasPrefix(l, n) {
					full, takes = l, true
					break
				}
			}
			p.flags["--"+full] = true
			if takes {
				if !hasVal && i+1 < len(args) {
					i++
					v = args[i]
				}
				p.vals["--"+full] = append(p.vals["--"+full], v)
			}
		default:
			for j := 1; j < len(a); j++ {
				ch := a[j]
				p.flags["-"+string(ch)] = true
				if strings.IndexByte(s.short, ch) >= 0 {
					v := a[j+1:]
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					p.vals["-"+string(ch)] = append(p.vals["-"+string(ch)], v)
					break
				}
			}
		}
	}
	return p
}
