package hearth

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/hearth-agent/hearth/agent"

	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/shell"
)

// allowedMode returns an error wrapping ErrNotTrusted when the trust level
// does not allow the approval mode: an untrusted workspace runs at most in
// ModeDefault (every edit and command asked for), so that nothing its
// files say can make the agent act unasked.
func allowedMode(t Trust, m Mode) error {
	if t != TrustUntrusted || m == ModeDefault || m == ModePlan || m == "" {
		return nil
	}
	return fmt.Errorf("approval mode %s in an untrusted workspace: %w; it runs in default at most (every edit and command is asked for). "+
		"If you trust this folder, run `hearth workspaces trust PATH trusted`, or pass --trust trusted for one run", m, ErrNotTrusted)
}

// AllowsMode returns nil when the workspace's trust allows the approval
// mode (Config.Trust), else an error wrapping ErrNotTrusted that says how to
// trust the folder: for a UI to refuse a switch before it is made.
func (a *Agent) AllowsMode(m Mode) error {
	m, err := agent.ParseMode(string(m))
	if err != nil {
		return err
	}
	if err := allowedMode(a.c.Trust, m); err != nil {
		return fmt.Errorf("hearth: %w", err)
	}
	return nil
}

// readOnlyReason is what a refused write in a read-only workspace says, to
// the model and, through the tool's result, to the user.
func readOnlyReason(root string) string {
	return fmt.Sprintf("this workspace is read-only (its trust level): nothing in it may be changed, whatever the approval mode. "+
		"Tell the user; they can allow changes with `hearth workspaces trust %s trusted`", root)
}

// trustAllows reports whether the workspace's trust lets the model have t:
// in a read-only workspace, the tools that only read, the shell (its
// commands run in a read-only sandbox, and its policy refuses writes) and
// the sub-agents (which choose among the tools offered here).
func (a *Agent) trustAllows(t tool.Tool) bool {
	if a.c.Trust != TrustReadOnly {
		return true
	}
	switch t.(type) {
	case tool.Delegator:
		return true
	case *shell.Tool:
		// Only where the kernel holds commands to reading (Landlock, and
		// the mount namespace for what Landlock does not cover: modes,
		// times): the policy alone cannot see what a program writes.
		return a.roShell == ""
	}
	return t.Kind() == tool.ReadOnly
}

// readOnlyShell says why commands cannot be held to reading in a read-only
// workspace on this system ("" when they can), by running one.
func readOnlyShell() string {
	rep, err := shell.Probe(context.Background())
	switch {
	case err != nil:
		return "commands could not be started in a sandbox: " + err.Error()
	case rep.Landlock == 0:
		return "this system has no Landlock to confine them"
	case !rep.Namespaced:
		return "this system gives them no mount namespace: " + strings.Join(rep.Problems, "; ")
	}
	return ""
}

// withheld says why the model cannot call the tool it named (for
// agent.Agent.Withheld): a tool this agent has but does not offer because
// the workspace is read-only.
func (a *Agent) withheld(name string) string {
	if a.c.Trust != TrustReadOnly || a.ws == nil {
		return ""
	}
	held := slices.Contains(a.withheldNames, name)
	if !held && a.mcp != nil {
		for _, t := range a.mcp.Tools() {
			if t.Spec().Name == name && !a.trustAllows(t) {
				held = true
			}
		}
	}
	if !held {
		return ""
	}
	if name == "run_shell_command" && a.roShell != "" {
		return fmt.Sprintf("run_shell_command is not available: this workspace is read-only, and commands cannot be held to reading here (%s). Read with the file tools; tell the user what you would run", a.roShell)
	}
	return fmt.Sprintf("%s is not available: %s", name, readOnlyReason(a.ws.Root()))
}
