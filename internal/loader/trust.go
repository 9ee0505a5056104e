package loader

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/session"
)

// WorkspaceRoot is the workspace folder as Hearth keeps it: absolute, its
// symlinks resolved (the key of its record in the store).
func WorkspaceRoot(ws string) (string, error) {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", ws, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", ws, err)
	}
	return real, nil
}

// trustOf decides the workspace's trust, in this order: --trust
// (Options.Trust), for this run only; the level the user chose, as the
// store remembers it (hearth workspaces trust, a UI's question); the
// answer to Options.AskTrust, remembered; else untrusted, the default for
// a folder the user never trusted. Nothing in the workspace has a say.
func (l *Loaded) trustOf(ctx context.Context, o Options, root string) error {
	if o.Trust != "" {
		t, err := session.ParseTrust(o.Trust)
		if err != nil {
			return ConfigError{fmt.Errorf("--trust: %w", err)}
		}
		l.Trust, l.TrustSource, l.TrustChosen = t, o.TrustSource, true
		if l.TrustSource == "" {
			l.TrustSource = "--trust, for this run"
		}
		// --trust trusts the project's file as it is now; a level the
		// store gave (Agents) trusts the file it was given for.
		l.pin = config.AnyProjectFile
		if o.TrustPin != nil {
			l.pin = *o.TrustPin
		}
		return nil
	}
	l.Trust, l.TrustSource = session.TrustUntrusted, "the default for a folder you have not trusted"
	if l.Store == nil {
		return nil
	}
	w, err := l.Store.Workspace(ctx, root)
	switch {
	case errors.Is(err, session.ErrNotFound):
	case err != nil:
		return fmt.Errorf("the trust of workspace %s: %w", root, err)
	case w.TrustChosen:
		l.Trust, l.TrustSource, l.TrustChosen, l.pin = w.Trust, "as you chose it (hearth workspaces trust)", true, w.ConfigHash
		return nil
	}
	if o.AskTrust == nil {
		return nil
	}
	t, err := o.AskTrust(ctx, root)
	if err != nil {
		return err
	}
	// The answer is a level, read as --trust is: "" (or anything else)
	// would be a workspace without limits (hearth.Config.Trust "").
	if t, err = session.ParseTrust(string(t)); err != nil {
		return fmt.Errorf("the trust of workspace %s: %w", root, err)
	}
	// The project's file as the user trusted it: one that changes later
	// is read as an untrusted folder's (config.LoadTrusted).
	pin := config.ProjectHash(root)
	if _, err := l.Store.AddWorkspace(ctx, session.Workspace{Path: root, Trust: t, ConfigHash: pin}); err != nil {
		return fmt.Errorf("remember the trust of workspace %s: %w", root, err)
	}
	l.Trust, l.TrustSource, l.TrustChosen, l.pin = t, "as you chose it", true, pin
	return nil
}

// ShellQuote quotes a path for a command the user may copy.
func ShellQuote(p string) string { return shellQuote(p) }

// shellQuote quotes a path for a command the user may copy.
func shellQuote(p string) string {
	if p != "" && !strings.ContainsAny(p, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return p
	}
	return "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
}
