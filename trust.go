package hearth

import (
	"fmt"
	"slices"

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
	case tool.Delegator, *shell.Tool:
		return true
	}
	return t.Kind() == tool.ReadOnly
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
	return fmt.Sprintf("%s is not available: %s", name, readOnlyReason(a.ws.Root()))
}
