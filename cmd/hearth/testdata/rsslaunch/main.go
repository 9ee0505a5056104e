// Command rsslaunch runs the command in its arguments and reports on
// stderr the command's wall time and peak resident memory, for
// BenchmarkColdRun.
//
// Why a process of its own: Go starts a child with vfork semantics
// (CLONE_VM), and Linux folds the high-water RSS of the memory the child
// had before exec — its parent's — into the child's ru_maxrss. A command
// started by the benchmark itself reports at least the test binary's RSS
// (about 30 MB), whatever it uses itself; started by this small program, it
// reports its own.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rsslaunch COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Fprintf(os.Stderr, "\nrsslaunch: wall-us %d maxrss-kib %d\n", wall.Microseconds(),
		cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss)
	os.Exit(cmd.ProcessState.ExitCode())
}
