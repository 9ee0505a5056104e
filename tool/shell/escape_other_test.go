//go:build !linux

package shell

import "os"

// helperMain: the detaching helper of escape_linux_test.go is Linux only.
func helperMain(mode string, args []string) { os.Exit(2) }

// outerPid: no PID namespaces outside Linux.
func outerPid(inner int, dir string) int { return inner }
