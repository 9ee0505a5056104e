//go:build !linux

package sandbox

import "os/exec"

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
