package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/internal/acpagent"
	"github.com/hearth-agent/hearth/internal/buildinfo"
)

func (a *app) acpCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "acp",
		Short: "Be an editor's agent over the Agent Client Protocol, on standard input and output",
		Long: `Run Hearth as an Agent Client Protocol (ACP) agent: the program an editor
(Zed, a JetBrains IDE, Neovim through CodeCompanion or avante.nvim) starts
and talks to over standard input and output, one JSON-RPC message a line.
Standard output carries nothing but the protocol; logs go to standard error.

Each session works in the folder the editor opens it in, trusted as Hearth
trusts it everywhere (hearth workspaces trust; --trust applies to every
folder the editor opens): an untrusted folder offers the modes Ask and Plan
only. Approvals are asked in the editor; edits and reads go through the
editor's buffers when it offers them, every path checked against the
workspace as always. Sessions are Hearth's: they are stored, listed and
continued like any other (hearth sessions list).

The agent runs with the tui profile unless --profile names another. The
editor's settings for Zed and Neovim: docs/acp.md.`,
		Example: `  hearth acp -m qwen3:4b
  # Zed, in settings.json:
  #   "agent_servers": {"Hearth": {"command": "hearth", "args": ["acp", "-m", "qwen3:4b"]}}`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.acp(cmd.Context()) },
	}
}

// acp serves the editor on standard input and output until it closes them
// (or Ctrl-C).
func (a *app) acp(ctx context.Context) error {
	longRunning(a.getenv)
	o, err := a.appOptions("tui")
	if err != nil {
		return err
	}
	// Each session's folder is its workspace, as the editor names it.
	o.Workspace = ""
	ws := acpagent.NewWorkspaces(o)
	defer ws.Close()
	return acpagent.Serve(ctx, a.io.in, a.io.out, acpagent.Options{Workspaces: ws, Version: buildinfo.Version, Log: o.Log})
}
