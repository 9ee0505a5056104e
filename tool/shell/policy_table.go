package shell

import (
	"strings"
	"sync"
)

// checkFn checks the command named name (commandName of its argv[0]), run
// with args. It returns a *Refusal, or nil.
type checkFn func(c *checker, name string, args []string) *Refusal

// checkers returns the policy: what checks a command, by the command's
// name. A command not in it is not looked into (the OS sandbox still
// confines it). The table is built once, on first use, and never written
// after.
//
// It is neither an initialised variable (its checkers check the commands
// they run through it, which Go sees as an initialisation cycle) nor built
// by an init function: host.go's init runs the shell host, which checks
// commands, before the init of a file named after it would have run.
func checkers() map[string]checkFn {
	checkersOnce.Do(func() { checkerTable = newCheckers() })
	return checkerTable
}

var (
	checkersOnce sync.Once
	checkerTable map[string]checkFn // written once, by checkers
)

// newCheckers builds the table, family by family. A name is in one family
// only: a second checker for it is a mistake, and panics.
func newCheckers() map[string]checkFn {
	t := make(map[string]checkFn)
	add := func(f checkFn, names ...string) {
		for _, n := range names {
			if _, dup := t[n]; dup {
				panic("shell: two checkers for " + n)
			}
			t[n] = f
		}
	}
	addSet := func(f checkFn, names map[string]bool) {
		for n := range names {
			add(f, n)
		}
	}

	// The machine: refused whatever their arguments, or allowed only to
	// read (policy_system.go).
	addSet(refusePrivilege, privilegeCmds)
	addSet(refuseDisk, diskCmds) // and mkfs.*, fsck.*: see checkerFor
	addSet(refusePower, powerCmds)
	add((*checker).systemctl, "systemctl", "loginctl")
	add((*checker).service, "service")
	addSet((*checker).dbus, dbusClients)
	add((*checker).sysctl, "sysctl")
	addSet(refuseDetach, detachCmds)
	addSet(refuseScheduler, schedulers)
	addSet((*checker).crontab, crontabs)
	add(refuseKillAll, "killall5")
	add((*checker).kill, "kill")

	// Deleting, writing, copying and moving files (policy_files.go).
	addSet((*checker).delete, deleteCmds)
	add((*checker).shred, "shred")
	for n := range createSpecs {
		add((*checker).create, n)
	}
	add((*checker).mknod, "mknod")
	add((*checker).chmod, "chmod", "chown", "chgrp")
	add((*checker).chattr, "chattr")
	add((*checker).copyMove, "cp", "install", "mv", "ln", "link")
	add((*checker).rsync, "rsync", "scp")
	add((*checker).dd, "dd")

	// Writing files named by options: editors, sorters, archivers,
	// downloaders (policy_archive.go).
	add((*checker).inPlace, "sed", "perl")
	add((*checker).sort, "sort")
	add((*checker).uniq, "uniq")
	add((*checker).tar, "tar", "bsdtar")
	add((*checker).unzip, "unzip")
	add((*checker).curl, "curl")
	add((*checker).wget, "wget")

	// Running commands on what they find or read (policy_find.go).
	add((*checker).find, "find")
	add((*checker).xargs, "xargs", "parallel")

	// Shells, and builtins that run code (policy_shells.go).
	addSet((*checker).shell, posixShells)
	addSet((*checker).shell, otherShells)
	addSet((*checker).shell, alienShells)
	add((*checker).multicall, "busybox", "toybox")
	add((*checker).eval, "eval")
	add(allow, "source", ".") // the interpreter reads the file through its checked handlers

	// Commands that run another, and the working directory
	// (policy_exec.go).
	add((*checker).cd, "cd", "pushd")
	add((*checker).exec, "exec")
	add((*checker).command, "command")
	add((*checker).builtin, "builtin")
	add((*checker).env, "env")
	for n := range wrappers {
		add((*checker).wrapper, n)
	}

	// Daemons that run what they are asked to (policy_container.go).
	add((*checker).container, "docker", "podman", "nerdctl")
	add((*checker).compose, "docker-compose", "podman-compose")
	return t
}

// checkerFor returns what checks the command named name, or nil.
func checkerFor(name string) checkFn {
	if f, ok := checkers()[name]; ok {
		return f
	}
	if strings.HasPrefix(name, "mkfs.") || strings.HasPrefix(name, "fsck.") {
		return refuseDisk
	}
	return nil
}

// allow checks nothing: a command in the table for what its entry says.
func allow(*checker, string, []string) *Refusal { return nil }

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
