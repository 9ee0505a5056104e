//go:build unix

package shell

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/interp"

	"github.com/hearth-agent/hearth/sandbox"
)

// signalGroup signals p's whole process group.
func signalGroup(p *os.Process, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-p.Pid, sig)
}

// exitSignal returns the signal that ended a process, if one did.
func exitSignal(ps *os.ProcessState) (int, bool) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return int(ws.Signal()), true
	}
	return 0, false
}

func isETXTBSY(err error) bool { return errors.Is(err, syscall.ETXTBSY) }

// kill is the kill builtin: it signals processes started by this call.
func (rs *runState) kill(hc interp.HandlerContext, args []string) bool {
	sig := syscall.SIGTERM
	var pids []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pids = append(pids, args[i+1:]...)
			i = len(args)
		case a == "-s" || a == "-n":
			if i+1 >= len(args) {
				fmt.Fprintln(hc.Stderr, "kill: -s needs a signal")
				return false
			}
			i++
			s, ok := signalByName(args[i])
			if !ok {
				fmt.Fprintf(hc.Stderr, "kill: unknown signal %s\n", args[i])
				return false
			}
			sig = s
		case a == "-l" || a == "-L":
			fmt.Fprintln(hc.Stdout, "HUP INT QUIT KILL USR1 USR2 TERM CONT STOP")
			return true
		case strings.HasPrefix(a, "-") && len(pids) == 0:
			s, ok := signalByName(a[1:])
			if !ok {
				fmt.Fprintf(hc.Stderr, "kill: unknown signal %s\n", a)
				return false
			}
			sig = s
		default:
			pids = append(pids, a)
		}
	}
	if len(pids) == 0 {
		fmt.Fprintln(hc.Stderr, "kill: usage: kill [-s SIGNAL | -SIGNAL] PID…")
		return false
	}
	ok := true
	for _, p := range pids {
		pid, err := strconv.Atoi(p)
		if err != nil || pid <= 0 {
			fmt.Fprintf(hc.Stderr, "kill: %s: give a process id (job specs like %%1 are not supported)\n", p)
			ok = false
			continue
		}
		if !rs.owns(pid) {
			fmt.Fprintf(hc.Stderr, "kill: %d: not a process this command started; only those can be signalled\n", pid)
			ok = false
			continue
		}
		if err := rs.spawn(func() error { return syscall.Kill(pid, sig) }); err != nil {
			fmt.Fprintf(hc.Stderr, "kill: %d: %v\n", pid, err)
			ok = false
		}
	}
	return ok
}

// owns reports whether pid is a process of this call: in the shell host,
// one in the host's process group or carrying the call's tag (one that
// left the group); in a dry run, none.
func (rs *runState) owns(pid int) bool {
	if rs.execHook != nil {
		return false
	}
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == syscall.Getpgrp() {
		return true
	}
	return sandbox.SameGroup(pid)
}

var signals = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL,
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "TERM": syscall.SIGTERM, "CONT": syscall.SIGCONT,
	"STOP": syscall.SIGSTOP, "ALRM": syscall.SIGALRM,
}

func signalByName(s string) (syscall.Signal, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return syscall.Signal(n), n > 0 && n < 65
	}
	sig, ok := signals[strings.TrimPrefix(strings.ToUpper(s), "SIG")]
	return sig, ok
}
