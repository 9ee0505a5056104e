//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// Status reports how c is enforced on this machine: not at all, outside
// Linux.
func (c *Confinement) Status() Status {
	return Status{Note: "not confined: OS-level confinement (Landlock) needs Linux; on " + runtime.GOOS + " commands can write anywhere the user can"}
}

// launcherCommand runs the program directly: there is nothing to apply.
func launcherCommand(cfg launchConfig, argv, env []string) (*exec.Cmd, error) {
	return &exec.Cmd{Path: cfg.Path, Args: argv, Env: stripLaunchEnv(env)}, nil
}

func launch(cfg launchConfig, argv, env []string) {
	launcherFail(errStartedElsewhere)
}

var errStartedElsewhere = errorString("the sandbox launcher only runs on Linux")

type errorString string

func (e errorString) Error() string { return string(e) }
