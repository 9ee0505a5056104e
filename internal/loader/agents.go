package loader

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
)

// Agents are the agents of a server that serves many workspaces (hearth
// serve): one per workspace, each built as Start builds one — from the
// user's configuration, the workspace's own config file as its trust allows
// — and all sharing the first one's session store. Each has its own
// workspace, so each session's file tools and commands are confined to its
// own folder (every command under its own Landlock ruleset). A workspace's
// agent is built on first use, and again when its trust changes in the
// store (hearth workspaces trust, the web UI's question) or another
// workspace is added (it is hidden from this one's tools); the one it
// replaces is closed once no turn runs in it (a turn running there ends as
// it began), or by Close.
type Agents struct {
	o       Options
	primary string // the first agent's workspace
	store   session.Store
	// flag is the first agent's trust when --trust gave it (""
	// otherwise), and stored the store's record of its workspace then: the
	// flag holds until the user chooses another trust there.
	flag   session.Trust
	stored *session.Workspace

	mu     sync.Mutex
	agents map[string]agentEntry // by workspace path
	old    []oldAgent            // replaced, not yet closed
	closed bool
}

// oldAgent is an agent replaced at a time: closed once no turn runs in it
// and a while has passed (a turn may have been given it just before).
type oldAgent struct {
	a    *hearth.Agent
	when time.Time
}

// oldGrace is how long a replaced agent is kept at least.
const oldGrace = time.Minute

type agentEntry struct {
	a     *hearth.Agent
	trust session.Trust
	hide  []string // the other workspaces, hidden from its tools
	l     *Loaded
}

// NewAgents returns the agents of a server whose first agent, a, was
// built by Start from o and l (it serves o's workspace, and stays the
// caller's to close). The others are built from o, their workspace and
// trust changed.
func NewAgents(ctx context.Context, o Options, a *hearth.Agent, l *Loaded) *Agents {
	p := &Agents{o: o, primary: a.Workspace(), store: l.Store, agents: map[string]agentEntry{}}
	p.o.AskTrust = nil // a server never asks on its terminal: the web UI does
	p.agents[p.primary] = agentEntry{a: a, trust: l.Trust}
	if o.Trust != "" {
		p.flag = l.Trust
		if w, err := l.Store.Workspace(ctx, p.primary); err == nil {
			p.stored = w
		}
	}
	return p
}

// Primary returns the first agent's workspace: where sessions go that name
// none.
func (p *Agents) Primary() string { return p.primary }

// Check says why a folder cannot be a workspace (nil when it can): the
// filesystem root and the home directory, or a parent of it, cannot.
func (p *Agents) Check(path string) error {
	if err := CheckWorkspace(path, p.o.Getenv); err != nil {
		return fmt.Errorf("%s cannot be a workspace: it is the filesystem root or your home directory (or holds it), where tools could change everything you own; add a project folder", path)
	}
	return nil
}

// Override returns the trust --trust gave the first agent's workspace
// while it is in force (until the user chooses another there), with where
// it came from; "" for any other workspace, or when it is not.
func (p *Agents) Override(ctx context.Context, path string) (session.Trust, string) {
	if path != p.primary {
		return "", ""
	}
	w, err := p.store.Workspace(ctx, path)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return "", ""
	}
	if err != nil {
		w = nil
	}
	// As Agent decides it (the user's choice seen here ends it too).
	if t, ok := p.flagHolds(w); ok {
		return t, "--trust"
	}
	return "", ""
}

// Agent returns the agent of the workspace path ("": the first agent's),
// as the workspace's trust in the store now says: the user's choice, else
// untrusted. A workspace the store does not know (never added, or removed)
// has none: an error wrapping session.ErrNotFound. A workspace whose
// configuration cannot be loaded gets a ConfigError.
func (p *Agents) Agent(ctx context.Context, path string) (*hearth.Agent, error) {
	if path == "" {
		path = p.primary
	}
	w, err := p.store.Workspace(ctx, path)
	switch {
	case errors.Is(err, session.ErrNotFound) && path == p.primary:
		w = nil
	case err != nil:
		return nil, fmt.Errorf("workspace %s: %w", path, err)
	}
	hide, err := p.others(ctx, path)
	if err != nil {
		return nil, err
	}
	trust, from := session.TrustUntrusted, "the default for a folder you have not trusted"
	if w != nil && w.TrustChosen {
		trust, from = w.Trust, "as you chose it"
	}
	if path == p.primary {
		if t, ok := p.flagHolds(w); ok {
			trust, from = t, "--trust, while the server runs"
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("the server is closing")
	}
	p.sweep()
	if e, ok := p.agents[path]; ok && e.trust == trust && slices.Equal(e.hide, hide) {
		return e.a, nil
	}
	o := p.o
	o.Workspace, o.Trust, o.TrustSource, o.Store = path, string(trust), from, p.store
	o.Hide = append(slices.Clone(o.Hide), hide...)
	if trust == session.TrustUntrusted {
		// --approval-mode above default was the user's for a workspace
		// they trust: here the profile's mode applies, capped (Load
		// says so).
		if m, err := agent.ParseMode(o.ApprovalMode); err == nil && m != agent.ModeDefault && m != agent.ModePlan {
			o.ApprovalMode = ""
		}
	}
	a, l, err := Start(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", path, err)
	}
	if e, ok := p.agents[path]; ok && e.l != nil {
		p.old = append(p.old, oldAgent{e.a, time.Now()}) // the first agent is the caller's
	}
	p.sweep()
	p.agents[path] = agentEntry{a: a, trust: trust, hide: hide, l: l}
	return a, nil
}

// others are the workspaces a session in path must not reach: every other
// one the store knows, and the first agent's, sorted — except those that
// hold path or lie inside it (a folder inside the workspace is the
// workspace's own; one that holds it, the user chose to work below).
func (p *Agents) others(ctx context.Context, path string) ([]string, error) {
	list, err := p.store.Workspaces(ctx)
	if err != nil {
		return nil, fmt.Errorf("the workspaces: %w", err)
	}
	paths := []string{p.primary}
	for _, w := range list {
		paths = append(paths, w.Path)
	}
	var out []string
	for _, o := range paths {
		if o == "" || !filepath.IsAbs(o) || sandbox.Within(path, o) || sandbox.Within(o, path) || slices.Contains(out, o) {
			continue
		}
		out = append(out, o)
	}
	slices.Sort(out)
	return out, nil
}

// flagHolds returns the trust --trust gave the first agent's workspace,
// while it holds: until the store's record w of that workspace says another
// choice than when the server started. From then on it never holds again:
// the user chose (choosing back what the record said at the start, too).
func (p *Agents) flagHolds(w *session.Workspace) (session.Trust, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.flag == "" {
		return "", false
	}
	if !sameTrust(w, p.stored) {
		p.flag = ""
		return "", false
	}
	return p.flag, true
}

// sweep closes the replaced agents that no turn uses any more. p.mu is
// held.
func (p *Agents) sweep() {
	keep := p.old[:0]
	for _, o := range p.old {
		if time.Since(o.when) < oldGrace || o.a.Busy() {
			keep = append(keep, o)
			continue
		}
		go o.a.Close()
	}
	p.old = keep
}

// sameTrust reports whether the store's record of a workspace still says
// what it said when the server started: no choice then or now (a record
// made by a session is none), or the same one.
func sameTrust(now, then *session.Workspace) bool {
	chosen := func(w *session.Workspace) session.Trust {
		if w == nil || !w.TrustChosen {
			return ""
		}
		return w.Trust
	}
	return chosen(now) == chosen(then)
}

// Close closes every agent it built (not the first). Close the server
// first: its Close ends the turns that run in them.
func (p *Agents) Close() error {
	p.mu.Lock()
	p.closed = true
	var all []*hearth.Agent
	for path, e := range p.agents {
		if path != p.primary || e.l != nil {
			all = append(all, e.a)
		}
	}
	for _, o := range p.old {
		all = append(all, o.a)
	}
	p.agents = map[string]agentEntry{}
	p.old = nil
	p.mu.Unlock()
	var errs []error
	for _, a := range all {
		errs = append(errs, a.Close())
	}
	return errors.Join(errs...)
}
