//go:build unix

package main

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// pipeReady reports whether a piped standard input has something to read
// (data, or its end) within wait. A parent that keeps the pipe open without
// writing (a script's subprocess with stdin=PIPE) would otherwise hang a run
// that already has its prompt.
func pipeReady(f *os.File, wait time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(f.Fd()), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(wait.Milliseconds()))
		if err == unix.EINTR {
			continue
		}
		return err == nil && n > 0
	}
}
