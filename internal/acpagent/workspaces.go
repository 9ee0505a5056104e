package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/session"
)

// Workspaces builds the agents of the folders an editor opens sessions
// in: one per folder (and set of the editor's MCP servers), each loaded
// as every mode of Hearth loads its agent — the user's configuration, the
// folder's own config file as its trust allows, the trust decided as
// loader.Load decides it (--trust, else the user's choice in the store,
// else untrusted; never asked on the terminal, which is the editor's) —
// all sharing one session store. An agent is built again when the
// folder's trust changes (hearth workspaces trust while the editor is
// open); the one it replaces serves its sessions until Close.
type Workspaces struct {
	o loader.Options

	mu     sync.Mutex
	first  *loader.Loaded // the first one loaded: it opened the store
	store  session.Store
	agents map[string]builtAgent // by folder, trust and MCP servers
	all    []*hearth.Agent
	closed bool
}

type builtAgent struct {
	a *hearth.Agent
	l *loader.Loaded
}

// NewWorkspaces returns the agents that o describes, but for their
// workspace, which each session names. o.AskTrust is ignored.
func NewWorkspaces(o loader.Options) *Workspaces {
	o.AskTrust = nil
	return &Workspaces{o: o, agents: map[string]builtAgent{}}
}

// Agent returns the agent of the folder cwd with the editor's MCP servers
// (besides the user's configured ones), built on first use.
func (w *Workspaces) Agent(ctx context.Context, cwd string, servers []hearth.MCPServer, lit Literals) (*hearth.Agent, error) {
	root, err := loader.WorkspaceRoot(cwd)
	if err != nil {
		return nil, err
	}
	if err := loader.CheckWorkspace(root, w.o.Getenv); err != nil {
		return nil, fmt.Errorf("%s cannot be a workspace: it is the filesystem root or your home directory (or holds it), where tools could change everything you own; open a project folder in the editor", root)
	}
	// The servers with their literal values (a token in a header): a
	// session with another token gets another agent.
	key, err := json.Marshal([]any{servers, lit})
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("hearth acp is stopping")
	}
	trust := w.trust(ctx, root)
	k := root + "\x00" + string(trust) + "\x00" + string(key)
	if b, ok := w.agents[k]; ok {
		return b.a, nil
	}
	o := w.o
	o.Workspace, o.Store = root, w.store
	l, err := loader.Load(ctx, o)
	if err != nil {
		return nil, err
	}
	if w.store == nil {
		w.first, w.store = l, l.Store
	}
	c := l.Config
	// The user's servers keep their names: an editor's of the same name
	// gets another.
	used := map[string]bool{}
	for _, sc := range c.MCPServers {
		used[sc.Name] = true
	}
	for _, sc := range servers {
		if used[sc.Name] {
			sc.Name = uniqueName(sc.Name, used)
		}
		used[sc.Name] = true
		c.MCPServers = append(c.MCPServers, sc)
	}
	if len(lit) > 0 {
		getenv := c.Getenv
		c.Getenv = lit.Getenv(getenv)
	}
	a, err := hearth.New(c)
	if err != nil {
		if l != w.first {
			l.Close()
		}
		return nil, loader.ConfigError{Err: err}
	}
	if _, shell := a.ToolKind("run_shell_command"); shell && !a.Sandbox().Active {
		w.warn("Shell commands are not confined on this system (" + strings.TrimPrefix(a.Sandbox().Note, "not confined: ") + "): only Hearth's own checks stand between a command and your files; `hearth doctor` says more.")
	}
	// Kept under the trust Load decided: the first folder's was looked
	// up before the store was open.
	k = root + "\x00" + string(l.Trust) + "\x00" + string(key)
	w.agents[k] = builtAgent{a: a, l: l}
	w.all = append(w.all, a)
	return a, nil
}

// trust is the folder's trust as Load will decide it now, for the key of
// its agent: a change in the store gives the folder a new agent. w.mu is
// held.
func (w *Workspaces) trust(ctx context.Context, root string) session.Trust {
	if w.o.Trust != "" {
		return session.Trust(w.o.Trust)
	}
	if w.store == nil {
		return ""
	}
	ws, err := w.store.Workspace(ctx, root)
	if err != nil || !ws.TrustChosen {
		return session.TrustUntrusted
	}
	return ws.Trust
}

// warn says s on the log (standard error).
func (w *Workspaces) warn(s string) {
	switch {
	case w.o.Warn != nil:
		w.o.Warn(s)
	case w.o.Log != nil:
		w.o.Log.Warn(s)
	default:
		slog.Warn(s)
	}
}

// Store returns the session store the agents share (nil before the first
// agent is built).
func (w *Workspaces) Store() session.Store {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.store
}

// Close closes every agent, then the session store.
func (w *Workspaces) Close() error {
	w.mu.Lock()
	w.closed = true
	all, agents, first := w.all, w.agents, w.first
	w.all, w.agents, w.first = nil, map[string]builtAgent{}, nil
	w.mu.Unlock()
	var errs []error
	for _, a := range all {
		errs = append(errs, a.Close())
	}
	for _, b := range agents {
		if b.l != first {
			errs = append(errs, b.l.Close())
		}
	}
	if first != nil {
		errs = append(errs, first.Close())
	}
	return errors.Join(errs...)
}
