package shell

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"

	"github.com/hearth-agent/hearth/sandbox"
)

// Probe runs one command (true) in a throwaway workspace, with the network
// denied, and returns what the shell host could apply on this machine:
// Landlock, the mount namespace (read-only .git, hidden secrets) and the
// network namespace. It is what `hearth doctor` reports.
func Probe(ctx context.Context) (sandbox.SelfReport, error) {
	dir, err := os.MkdirTemp("", "hearth-probe-")
	if err != nil {
		return sandbox.SelfReport{}, err
	}
	defer os.RemoveAll(dir)
	ws, err := sandbox.New(dir)
	if err != nil {
		return sandbox.SelfReport{}, err
	}
	t, err := New(Config{Workspace: ws, DenyNetwork: true, TempRoot: dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return sandbox.SelfReport{}, err
	}
	defer t.Close()
	o := t.run(ctx, "true", ws.Root(), nil)
	if o.err != nil {
		return sandbox.SelfReport{}, o.err
	}
	if o.exit != 0 {
		return sandbox.SelfReport{}, errors.New(o.output)
	}
	return t.hostStatus, nil
}
