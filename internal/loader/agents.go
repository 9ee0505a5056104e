package loader

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool/shell"
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
	// building holds a lock per workspace: one request at a time reads a
	// workspace's record and builds its agent (others wait for that one,
	// not for every workspace's).
	building map[string]*sync.Mutex

	// hides is whether commands here run in a mount namespace, where the
	// other workspaces are hidden from them (probed once: probed).
	probe  sync.Once
	hides  bool
	hidErr string
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
	pin   string   // the project file's hash its trust was given for
	hide  []string // the other workspaces, hidden from its tools
	l     *Loaded
}

// NewAgents returns the agents of a server whose first agent, a, was
// built by Start from o and l (it serves o's workspace, and stays the
// caller's to close). The others are built from o, their workspace and
// trust changed.
func NewAgents(ctx context.Context, o Options, a *hearth.Agent, l *Loaded) *Agents {
	p := &Agents{o: o, primary: a.Workspace(), store: l.Store, agents: map[string]agentEntry{}, building: map[string]*sync.Mutex{}}
	p.o.AskTrust = nil // a server never asks on its terminal: the web UI does
	p.agents[p.primary] = agentEntry{a: a, trust: l.Trust, pin: l.pin}
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
	// One request at a time per workspace reads its record and builds:
	// a request that read the record before a change cannot build after
	// one that read it after.
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("the server is closing")
	}
	p.sweep()
	b := p.building[path]
	if b == nil {
		b = &sync.Mutex{}
		p.building[path] = b
	}
	p.mu.Unlock()
	b.Lock()
	defer b.Unlock()

	w, err := p.store.Workspace(ctx, path)
	switch {
	case errors.Is(err, session.ErrNotFound) && path == p.primary:
		w = nil
	case errors.Is(err, session.ErrNotFound):
		p.retire(path) // removed: its agent (and its MCP servers) go
		return nil, fmt.Errorf("workspace %s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("workspace %s: %w", path, err)
	}
	// The record is the folder's as it was added: a folder since swapped
	// for a symlink would lend its trust to wherever the link points.
	if real, err := WorkspaceRoot(path); err != nil || real != path {
		p.retire(path)
		if err != nil {
			return nil, fmt.Errorf("workspace %s cannot be opened: %w", path, err)
		}
		return nil, fmt.Errorf("workspace %s is now a link to %s: its trust is not that folder's; add %s as a workspace of its own, or put the folder back", path, real, real)
	}
	hide, err := p.others(ctx, path)
	if err != nil {
		return nil, err
	}
	trust, from, pin := session.TrustUntrusted, "the default for a folder you have not trusted", ""
	if w != nil && w.TrustChosen {
		trust, from, pin = w.Trust, "as you chose it", w.ConfigHash
	}
	pinned, want := &pin, pin
	if path == p.primary {
		if t, ok := p.flagHolds(w); ok {
			trust, from, pinned, want = t, "--trust, while the server runs", nil, config.AnyProjectFile
		}
	}
	p.mu.Lock()
	e, ok := p.agents[path]
	p.mu.Unlock()
	if ok && e.trust == trust && slices.Equal(e.hide, hide) && (trust != session.TrustTrusted || e.pin == want) {
		return e.a, nil
	}
	o := p.o
	o.Workspace, o.Trust, o.TrustSource, o.TrustPin, o.Store = path, string(trust), from, pinned, p.store
	o.Hide = append(slices.Clone(o.Hide), hide...)
	if len(hide) > 0 && !p.hidden(ctx) {
		// Only a mount namespace hides a folder from commands: without
		// one they could read the other workspaces.
		o.NoShell = "commands are not offered in this workspace: this system cannot hide the other workspaces from them (" + p.hidErr + "); serve one workspace per hearth serve to have them"
	}
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
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		go a.Close()
		return nil, errors.New("the server is closing")
	}
	if e, ok := p.agents[path]; ok && e.l != nil {
		p.old = append(p.old, oldAgent{e.a, time.Now()}) // the first agent is the caller's
	}
	p.agents[path] = agentEntry{a: a, trust: trust, pin: l.pin, hide: hide, l: l}
	return a, nil
}

// retire drops the agent of a workspace that is gone (removed from the
// store, or no longer the folder it was): closed once no turn runs in it.
func (p *Agents) retire(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.agents[path]; ok && e.l != nil {
		p.old = append(p.old, oldAgent{e.a, time.Now()})
		delete(p.agents, path)
	}
}

// TrustChanged tells the agents that the user chose a trust for path (the
// HTTP API's POST and PATCH): --trust no longer holds there, whatever was
// chosen.
func (p *Agents) TrustChanged(path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if path == p.primary {
		p.flag = ""
	}
}

// hidden reports whether commands on this system run in a mount namespace
// (where secret locations, and the other workspaces, are hidden from
// them), probing once.
func (p *Agents) hidden(ctx context.Context) bool {
	p.probe.Do(func() {
		rep, err := shell.Probe(ctx)
		switch {
		case err != nil:
			p.hidErr = err.Error()
		case !rep.Namespaced:
			p.hidErr = "no mount namespace: " + strings.Join(rep.Problems, "; ")
		default:
			p.hides = true
		}
	})
	return p.hides
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
