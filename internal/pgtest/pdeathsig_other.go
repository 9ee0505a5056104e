//go:build unix && !linux

package pgtest

import "syscall"

// setPdeathsig does nothing: only Linux has a parent-death signal. A
// server whose test binary was killed, or did not call Main, is left
// running here.
func setPdeathsig(*syscall.SysProcAttr) {}
