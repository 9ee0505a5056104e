//go:build !unix

package mcp

import (
	"os"
	"syscall"
)

func procAttr() *syscall.SysProcAttr { return nil }

// signalGroup ends p (there are no process groups to signal here).
func signalGroup(p *os.Process, kill bool) { _ = p.Kill() }
