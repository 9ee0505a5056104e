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
