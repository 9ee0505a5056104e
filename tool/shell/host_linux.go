//go:build linux

package shell

import "golang.org/x/sys/unix"

// protectHost makes the shell host non-dumpable: the programs it runs (same
// user, same Landlock domain) cannot ptrace it or read its memory, so they
// cannot change what it checks or what it reports to Hearth. Programs it
// starts are dumpable again (exec resets it).
func protectHost() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
