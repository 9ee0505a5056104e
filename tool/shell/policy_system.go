package shell

import (
	"os"
	"strconv"
	"strings"
)

// The machine itself: privileges, disks, power, the service managers and
// D-Bus, kernel settings, schedulers and signals.

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
)

func refusePrivilege(c *checker, name string, _ []string) *Refusal {
	return c.refuse(RulePrivilege, "%s changes privileges or system accounts; Hearth never runs it. Do the task without it, or ask the user to run it", name)
}

func refuseDisk(c *checker, name string, _ []string) *Refusal {
	return c.refuse(RuleDisk, "%s writes disks, file systems or the kernel; Hearth never runs it", name)
}

func refusePower(c *checker, name string, _ []string) *Refusal {
	return c.refuse(RulePower, "%s stops or restarts the machine; Hearth never runs it", name)
}

func refuseDetach(c *checker, name string, _ []string) *Refusal {
	return c.refuse(RuleDetach, "%s would start something that outlives the command (every process a command starts is stopped when it ends)", name)
}

func refuseScheduler(c *checker, name string, _ []string) *Refusal {
	return c.refuse(RuleDetach, "%s has the at daemon run commands later, outside the sandbox and after the call; run the command now instead (it is stopped at the timeout), or ask the user to schedule it", name)
}

func refuseKillAll(c *checker, _ string, _ []string) *Refusal {
	return c.refuse(RuleKillAll, "killall5 signals every process on the machine")
}

// crontab allows the cron front ends only to list (-l).
func (c *checker) crontab(name string, args []string) *Refusal {
	if len(args) == 1 && args[0] == "-l" {
		return nil
	}
	return c.refuse(RuleDetach, "%s would have the cron daemon run commands later, outside the sandbox; only `%s -l` is allowed: ask the user to schedule it", name, name)
}

// systemctl checks systemctl and loginctl: a power verb anywhere among
// the words is refused (any word, not only the verb: the policy does not
// know every option that takes a value), then serviceManager decides.
func (c *checker) systemctl(name string, args []string) *Refusal {
	for _, a := range args {
		if powerVerbs[a] {
			return c.refuse(RulePower, "%s %s stops or restarts the machine; Hearth never runs it", name, a)
		}
	}
	return c.serviceManager(name, args)
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

// service NAME VERB: only status.
func (c *checker) service(_ string, args []string) *Refusal {
	if ops := operands(args, optSpec{}).ops; len(ops) >= 2 && ops[1] != "status" {
		return c.refuse(RuleDaemon, "service %s %s asks init to act on a service, which then runs outside the sandbox; only `service NAME status` is allowed: ask the user to run it", ops[0], ops[1])
	}
	return nil
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

// sysctlOptions are procps sysctl's. -p (and its alias -f) loads
// settings from a file, given glued on (-pFILE, --load=FILE).
var sysctlOptions = optSpec{short: "r", long: []string{"pattern"}, glued: "p", flags: []string{"write", "load", "system"}}

// sysctl may read kernel settings, never change them: no -w, -p, -f or
// --system, and no NAME=VALUE operand.
func (c *checker) sysctl(_ string, args []string) *Refusal {
	p := operands(args, sysctlOptions)
	changes := p.has('w', "write") || p.has('p', "load") || p.has('f', "") || p.has(0, "system")
	for _, op := range p.ops {
		if strings.Contains(op, "=") {
			changes = true
		}
	}
	if changes {
		return c.refuse(RuleDisk, "sysctl would change kernel settings; Hearth never does")
	}
	return nil
}

// killOptions: kill reads one option at most, before the processes: the
// signal (-9, -KILL, -s KILL, -n 9), or -l. After it, or after a process,
// a word that starts with a dash is a process group: kill -9 -1 and
// kill 123 -1 both signal every process.
var killOptions = optSpec{short: "sn", stopAtOperand: true, single: true}

// kill refuses signals to every process (-1), to init (1), and to Hearth
// itself or what started it.
func (c *checker) kill(_ string, args []string) *Refusal {
	pids := operands(args, killOptions).ops
	if len(args) == 1 && args[0] == "-1" {
		// Signal 1 to no process, or the default signal to every
		// process: ambiguous, and refused.
		pids = args
	}
	for _, pid := range pids {
		if pid == "-1" || pid == "1" {
			return c.refuse(RuleKillAll, "kill %s signals every process (or init); name the processes to stop", pid)
		}
		if pid == strconv.Itoa(os.Getpid()) || pid == strconv.Itoa(os.Getppid()) || pid == "-"+strconv.Itoa(os.Getpid()) {
			return c.refuse(RuleKillAll, "process %s is Hearth itself (or what started it)", pid)
		}
	}
	return nil
}
