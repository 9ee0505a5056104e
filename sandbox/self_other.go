//go:build !linux

package sandbox

import (
	"encoding/json"
	"os"
	"os/exec"
)

func selfCommand(c *Confinement, cfg selfConfig, argv, env []string) (*exec.Cmd, error) {
	raw, err := jsonMarshal(cfg)
	if err != nil {
		return nil, err
	}
	return &exec.Cmd{Path: executable(), Args: argv, Env: append(env, selfEnv+"="+raw)}, nil
}

func withoutNamespaces(*exec.Cmd) bool { return false }

// confineSelf applies nothing outside Linux but says so.
func confineSelf(cfg selfConfig) (SelfReport, error) {
	return SelfReport{Problems: []string{"not confined: OS-level confinement needs Linux"}}, nil
}

// View is empty outside Linux: copies have no mounts of their own.
func (c *Confinement) View() string { return "" }

// InOwnPIDNamespace is false outside Linux.
func InOwnPIDNamespace(cmd *exec.Cmd) bool { return false }

func jsonMarshal(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// executable is this binary's path, for systems without /proc/self/exe.
func executable() string {
	p, err := os.Executable()
	if err != nil {
		return os.Args[0]
	}
	return p
}
