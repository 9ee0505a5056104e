package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	wr "github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/tool"
)

// Desktop is what the page may ask of the desktop app, beyond the HTTP API
// (window.go.main.Desktop in the page; the web UI's desktop.ts). Every
// exported method is callable from the page: keep it to these.
type Desktop struct{ a *app }

// WorkspaceInfo describes the open workspace and how far the agent may act
// in it.
type WorkspaceInfo struct {
	// Path is the folder; Name its last element.
	Path string `json:"path"`
	Name string `json:"name"`
	// Commands says whether the agent may run commands there: "ask"
	// (each needs the user's approval), "allowed" (the approval mode lets
	// them run), or "never" (the profile has no shell).
	Commands string `json:"commands"`
	// Edits says the same of file edits: "ask", "allowed" or "never".
	Edits string `json:"edits"`
	// Mode is the approval mode.
	Mode string `json:"mode"`
	// Confined says the operating system confines commands to the
	// folder; Sandbox says how, in words.
	Confined bool   `json:"confined"`
	Sandbox  string `json:"sandbox"`
	// Trust is how far the folder is trusted: "trusted", "read-only" or
	// "untrusted" (the web UI asks once, for a folder never trusted).
	Trust string `json:"trust"`
	// Problem is why no workspace is open ("" when one is).
	Problem string `json:"problem,omitempty"`
}

// Workspace describes the open workspace.
func (d *Desktop) Workspace() WorkspaceInfo { return d.a.info() }

// ChooseWorkspace shows the system's folder dialog and opens the folder
// chosen; it returns nil when the dialog is cancelled. A running turn must
// end first.
func (d *Desktop) ChooseWorkspace() (*WorkspaceInfo, error) {
	return d.a.chooseWorkspace()
}

// Notify shows a desktop notification (the page sends one when an
// approval waits and the window is not focused).
func (d *Desktop) Notify(title, body string) error {
	ctx := d.a.ctxOrBackground()
	if d.a.notes == nil {
		return errors.New("notifications are not ready yet")
	}
	if err := d.a.notes.Send(ctx, clip(title, 120), clip(body, 400)); err != nil {
		d.a.log.Warn("could not show a notification", "error", err)
		return err
	}
	return nil
}

// KeyInfo says which API key the window's setting is for, and whether
// one is stored.
type KeyInfo struct {
	// Provider is the keychain entry's name (a configured provider, or
	// the dialect: "openai").
	Provider string `json:"provider"`
	// Stored is true when the keychain (or the fallback file) holds one.
	Stored bool `json:"stored"`
	// FromEnv names the environment variable that gives the key instead,
	// when one does (it wins over the keychain).
	FromEnv string `json:"from_env,omitempty"`
}

// APIKey says which key the settings set and whether it is stored.
func (d *Desktop) APIKey() KeyInfo {
	name := d.a.keyName()
	_, err := d.a.secrets().Get(name)
	info := KeyInfo{Provider: name, Stored: err == nil}
	for _, v := range []string{"HEARTH_API_KEY", "OPENAI_API_KEY"} {
		if d.a.getenv(v) != "" {
			info.FromEnv = v
		}
	}
	return info
}

// SetAPIKey stores the provider's API key in the system keychain (else in
// a file only the user can read, which it says), then opens the workspace
// again so that the key is used. An empty key removes the stored one.
func (d *Desktop) SetAPIKey(key string) (string, error) {
	key = strings.TrimSpace(key)
	name := d.a.keyName()
	if d.a.running() > 0 {
		return "", errors.New("a turn is running: set the key when it has finished")
	}
	s := d.a.secrets()
	where := "removed"
	if key == "" {
		if err := s.Delete(name); err != nil {
			return "", err
		}
	} else {
		w, err := s.Set(name, key)
		if err != nil {
			return "", err
		}
		where = w
	}
	if w := d.a.current(); w != nil {
		// The same folder again, with the key: a new runtime, the same
		// sessions (the page keeps its token).
		if err := d.a.reopen(d.a.ctxOrBackground(), w); err != nil {
			return where, err
		}
	}
	return where, nil
}

// Version is the app's version.
func (d *Desktop) Version() string { return versionString() }

// info describes the open workspace.
func (a *app) info() WorkspaceInfo {
	a.mu.Lock()
	w, failed := a.ws, a.failed
	a.mu.Unlock()
	if w == nil {
		p := "no workspace is open"
		if failed != nil {
			p = failed.Error()
		}
		return WorkspaceInfo{Problem: p}
	}
	// The agent the next turn runs in: the workspace's trust may have
	// changed since it opened (the window's question).
	cur := w.agent
	trust := w.loaded.Trust
	if a, err := w.agents.Agent(context.Background(), w.dir); err == nil {
		cur, trust = a, a.Trust()
	}
	mode := cur.Mode()
	if mode == "" {
		mode = agent.ModeDefault
	}
	var shell, edit bool
	for _, t := range cur.Tools() {
		switch k, _ := cur.ToolKind(t); k {
		case tool.Execute:
			shell = true
		case tool.Edit:
			edit = true
		}
	}
	if mode == agent.ModePlan {
		shell, edit = false, false
	}
	st := cur.Sandbox()
	info := WorkspaceInfo{
		Path:     w.dir,
		Name:     filepath.Base(w.dir),
		Trust:    string(trust),
		Mode:     string(mode),
		Confined: st.Active,
		Sandbox:  st.Note,
		Commands: permission(shell, mode == agent.ModeYolo),
		Edits:    permission(edit, mode == agent.ModeYolo || mode == agent.ModeAutoEdit),
	}
	if failed != nil {
		info.Problem = failed.Error()
	}
	return info
}

func permission(offered, free bool) string {
	switch {
	case !offered:
		return "never"
	case free:
		return "allowed"
	}
	return "ask"
}

// chooseWorkspace shows the folder dialog and opens what is chosen.
func (a *app) chooseWorkspace() (*WorkspaceInfo, error) {
	ctx := a.wctx()
	if ctx == nil {
		return nil, errors.New("the window is not ready yet")
	}
	if a.running() > 0 {
		return nil, errors.New("a turn is running in this workspace: wait for it, or stop it, before opening another folder")
	}
	start := ""
	if w := a.current(); w != nil {
		start = filepath.Dir(w.dir)
	}
	dir, err := wr.OpenDirectoryDialog(ctx, wr.OpenDialogOptions{
		Title:                "Open a folder as Hearth's workspace",
		DefaultDirectory:     start,
		CanCreateDirectories: true,
	})
	if err != nil {
		return nil, err
	}
	if dir == "" {
		return nil, nil
	}
	dir, err = absDir(dir, "/")
	if err != nil {
		return nil, err
	}
	return a.switchTo(ctx, dir)
}

// clip cuts s to n runes.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
