//go:build unix

package mcp

import (
	"os"
	"syscall"
)

// procAttr starts a server in a process group of its own, so that it and
// whatever it starts (npx starts node) are signalled together, and the
// terminal's Ctrl-C does not reach it before Hearth has closed it.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals p's whole process group.
func signalGroup(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		_ = p.Signal(sig)
	}
}
