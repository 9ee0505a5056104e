//go:build linux

package shell

import (
	"bytes"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// protectHost makes the shell host non-dumpable: the programs it runs (same
// user, same Landlock domain) cannot ptrace it or read its memory, so they
// cannot change what it checks or what it reports to Hearth. Programs it
// starts are dumpable again (exec resets it).
func protectHost() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// processExited reports whether pid, a child not yet reaped, has exited:
// it is a zombie, or gone.
func processExited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z' || b[i+2] == 'X'
}

// endNamespace, in the init of a PID namespace, kills every other process
// in it and reaps them all; it reports whether none is left. kill(-1)
// from a namespace's init reaches every process of the namespace but
// itself, and nothing outside it. It is sent from the spawner thread,
// whose Landlock domain the programs have (see newSpawner).
func endNamespace(onSpawner func(func())) bool {
	if os.Getpid() != 1 {
		return false
	}
	var err error
	onSpawner(func() { err = unix.Kill(-1, unix.SIGKILL) })
	if err != nil && err != unix.ESRCH {
		return false
	}
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		switch err {
		case nil, unix.EINTR:
			continue
		case unix.ECHILD:
			return true // every process in the namespace was a child: all reaped
		}
		return false
	}
}
