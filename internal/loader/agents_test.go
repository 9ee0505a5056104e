package loader

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// pool is a server's agents over a primary agent built by Start.
type pool struct {
	t       *testing.T
	o       Options
	primary *hearth.Agent
	l       *Loaded
	agents  *Agents
	root    string // the primary's workspace, real
}

// newPool builds the primary agent from o (after prepare has written the
// store's records) and the pool over it.
func newPool(t *testing.T, o Options, prepare func(ctx context.Context, st session.Store, root string)) *pool {
	t.Helper()
	ctx := context.Background()
	root := realPath(t, o.Workspace)
	if prepare != nil {
		withStore(t, o, func(ctx context.Context, st *session.SQLite) { prepare(ctx, st, root) })
	}
	a, l, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p := &pool{t: t, o: o, primary: a, l: l, root: root}
	p.agents = NewAgents(ctx, o, a, l)
	t.Cleanup(func() {
		p.agents.Close()
		a.Close()
		l.Close()
	})
	return p
}

func (p *pool) get(path string) *hearth.Agent {
	p.t.Helper()
	a, err := p.agents.Agent(context.Background(), path)
	if err != nil {
		p.t.Fatalf("Agent(%q): %v", path, err)
	}
	return a
}

func (p *pool) store() session.Store { return p.l.Store }

// agentOpen reports whether an agent is still open: a closed one gives its
// sessions no tools.
func agentOpen(a *hearth.Agent) bool {
	_, ok := a.Session("probe").Tool("read_file")
	return ok
}

// hidden reports whether dir is among the secret locations of a's
// workspace (hidden from its file tools and commands).
func hidden(a *hearth.Agent, dir string) bool {
	return slices.Contains(a.Files().Secrets(), dir)
}

// runShell runs a command with the session tool run_shell_command of a (no
// approval asked) and returns what the model would read.
func runShell(t *testing.T, a *hearth.Agent, command string) string {
	t.Helper()
	sh, ok := a.Session("shell").Tool("run_shell_command")
	if !ok {
		t.Fatalf("%s has no shell", a.Workspace())
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	res, err := sh.Run(context.Background(), tool.Call{ID: "c", Args: args})
	if err != nil {
		return err.Error()
	}
	return res.Output
}

func newWorkspace(t *testing.T) string {
	t.Helper()
	return realPath(t, t.TempDir())
}

// must returns a check of a store's write of a workspace.
func must(t *testing.T) func(session.Workspace, error) {
	return func(_ session.Workspace, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestAgentsPerWorkspace: the primary as it is while nothing changes; an
// unknown workspace has none; an agent per known workspace, kept while its
// trust and the other workspaces stay, built again when either changes,
// with the others hidden from it; Close closes what the pool built, never
// the primary.
func TestAgentsPerWorkspace(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	p := newPool(t, o, nil)
	st := p.store()

	if p.agents.Primary() != p.root {
		t.Errorf("primary %q, want %q", p.agents.Primary(), p.root)
	}
	for _, path := range []string{"", p.root} {
		if got := p.get(path); got != p.primary {
			t.Errorf("Agent(%q) is not the primary", path)
		}
	}

	ws2, ws3 := newWorkspace(t), newWorkspace(t)
	for _, path := range []string{ws2, filepath.Join(t.TempDir(), "never")} {
		if _, err := p.agents.Agent(ctx, path); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Agent(%q) of an unknown workspace: %v, want ErrNotFound", path, err)
		}
	}

	// A workspace a session made known (its trust not chosen): untrusted.
	must(t)(st.TouchWorkspace(ctx, ws2))
	b1 := p.get(ws2)
	if b1 == p.primary || b1.Workspace() != ws2 || b1.Trust() != session.TrustUntrusted {
		t.Fatalf("ws2's agent: workspace %q trust %q", b1.Workspace(), b1.Trust())
	}
	if !hidden(b1, p.root) || hidden(b1, ws2) {
		t.Errorf("ws2's agent hides %q", b1.Files().Secrets())
	}
	if p.get(ws2) != b1 {
		t.Error("ws2's agent was built again though nothing changed")
	}
	// The primary, now that another workspace is known, hides it.
	p1 := p.get("")
	if !hidden(p1, ws2) || p1.Workspace() != p.root {
		t.Errorf("the primary does not hide ws2: %q", p1.Files().Secrets())
	}
	// What hiding means: the other workspace's files are out of reach of
	// commands. The first agent, built before ws2 was known, reaches it
	// (which is why it no longer serves sessions).
	os.WriteFile(filepath.Join(ws2, "canary.txt"), []byte("WS2-CANARY"), 0o644)
	os.WriteFile(filepath.Join(p.root, "canary.txt"), []byte("PRIMARY-CANARY"), 0o644)
	for _, c := range []struct {
		a     *hearth.Agent
		file  string
		reach bool
	}{
		{b1, filepath.Join(p.root, "canary.txt"), false},
		{p1, filepath.Join(ws2, "canary.txt"), false},
		{p.primary, filepath.Join(ws2, "canary.txt"), true},
	} {
		out := runShell(t, c.a, "cat "+c.file)
		if got := strings.Contains(out, "CANARY"); got != c.reach {
			t.Errorf("%s: cat %s: %q", c.a.Workspace(), c.file, out)
		}
	}
	if p.get(p.root) != p1 {
		t.Error("the primary's agent was built again though nothing changed")
	}

	// The user makes ws2 read-only: a new agent, which writes nothing.
	must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: ws2, Trust: session.TrustReadOnly}))
	b2 := p.get(ws2)
	if b2 == b1 || b2.Trust() != session.TrustReadOnly {
		t.Fatalf("after the trust changed: same agent %v, trust %q", b2 == b1, b2.Trust())
	}
	if tools := b2.Tools(); slices.Contains(tools, "write_file") || slices.Contains(tools, "edit") || !slices.Contains(tools, "read_file") {
		t.Errorf("read-only ws2 offers %v", tools)
	}
	if !agentOpen(b1) {
		t.Error("the replaced agent was closed at once (a turn may still run in it)")
	}
	if p.get(ws2) != b2 {
		t.Error("ws2's agent was built again though nothing changed")
	}
	// The same trust again (a rename, say): the same agent.
	must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: ws2, Name: "two", Trust: session.TrustReadOnly}))
	if p.get(ws2) != b2 {
		t.Error("ws2's agent was built again for the same trust")
	}

	// Another workspace is added: hidden from ws2's agent, which is built
	// again.
	must(t)(st.AddWorkspace(ctx, session.Workspace{Path: ws3, Trust: session.TrustTrusted}))
	b3 := p.get(ws2)
	if b3 == b2 || !hidden(b3, ws3) || !hidden(b3, p.root) || b3.Trust() != session.TrustReadOnly {
		t.Fatalf("after ws3 was added: same %v, hides %q, trust %q", b3 == b2, b3.Files().Secrets(), b3.Trust())
	}
	c1 := p.get(ws3)
	if c1.Trust() != session.TrustTrusted || !hidden(c1, ws2) || !hidden(c1, p.root) {
		t.Errorf("ws3's agent: trust %q, hides %q", c1.Trust(), c1.Files().Secrets())
	}

	// A folder inside ws2 is ws2's own: not hidden from it, and no
	// reason to build it again.
	sub := filepath.Join(ws2, "sub")
	os.Mkdir(sub, 0o755)
	must(t)(st.AddWorkspace(ctx, session.Workspace{Path: sub}))
	if got := p.get(ws2); got != b3 || hidden(got, sub) {
		t.Errorf("a folder inside ws2: built again %v, hidden %v", got != b3, hidden(got, sub))
	}
	d1 := p.get(sub)
	if hidden(d1, ws2) || !hidden(d1, ws3) {
		t.Errorf("the folder inside ws2 hides %q", d1.Files().Secrets())
	}

	// ws3 is removed: it has no agent any more, and ws2's is built again
	// without it.
	if err := st.RemoveWorkspace(ctx, ws3); err != nil {
		t.Fatal(err)
	}
	if _, err := p.agents.Agent(ctx, ws3); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a removed workspace: %v", err)
	}
	b4 := p.get(ws2)
	if b4 == b3 || hidden(b4, ws3) {
		t.Errorf("after ws3 was removed: same %v, hides %q", b4 == b3, b4.Files().Secrets())
	}

	// Close: what the pool built, replaced or not, is closed; the primary
	// is the caller's.
	built := []*hearth.Agent{b1, b2, b3, b4, c1, d1, p1}
	if err := p.agents.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, a := range built {
		if agentOpen(a) {
			t.Errorf("built agent %d (%s) is still open", i, a.Workspace())
		}
	}
	if !agentOpen(p.primary) {
		t.Error("Close closed the primary")
	}
	if _, err := p.agents.Agent(ctx, ws2); err == nil {
		t.Error("Agent after Close succeeded")
	}
	if err := p.agents.Close(); err != nil {
		t.Errorf("Close again: %v", err)
	}
}

// TestAgentsTrustFlag: --trust holds for the primary workspace until the
// user chooses another trust there; once they have, their choice holds,
// whatever it is — the one they had when the server started included.
func TestAgentsTrustFlag(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	o.Trust = "trusted"
	p := newPool(t, o, func(ctx context.Context, st session.Store, root string) {
		must(t)(st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustReadOnly}))
	})
	st := p.store()
	if p.l.Trust != session.TrustTrusted || p.get("") != p.primary {
		t.Fatalf("trust %q", p.l.Trust)
	}
	steps := []struct {
		name string
		// set is the trust the user chooses ("": a use of the
		// workspace, which chooses nothing).
		set  session.Trust
		want session.Trust
		flag bool // the trust is --trust's (Override says so)
	}{
		{"a session there chooses nothing", "", session.TrustTrusted, true},
		{"the user chooses untrusted", session.TrustUntrusted, session.TrustUntrusted, false},
		{"the user chooses trusted", session.TrustTrusted, session.TrustTrusted, false},
		{"the user chooses read-only again, as when the server started", session.TrustReadOnly, session.TrustReadOnly, false},
		{"a session there still chooses nothing", "", session.TrustReadOnly, false},
	}
	if tr, from := p.agents.Override(ctx, p.root); tr != session.TrustTrusted || from == "" {
		t.Errorf("Override at the start: %q %q", tr, from)
	}
	for _, s := range steps {
		if s.set == "" {
			must(t)(st.TouchWorkspace(ctx, p.root))
		} else {
			must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: p.root, Trust: s.set}))
		}
		if got := p.get("").Trust(); got != s.want {
			t.Errorf("%s: trust %q, want %q", s.name, got, s.want)
		}
		// What the server tells the web UI agrees with what runs.
		tr, from := p.agents.Override(ctx, p.root)
		if (tr != "") != s.flag || (s.flag && (tr != s.want || !strings.Contains(from, "--trust"))) {
			t.Errorf("%s: Override %q %q, the agent runs %q (from --trust: %v)", s.name, tr, from, s.want, s.flag)
		}
		if tr, _ := p.agents.Override(ctx, ""); tr != "" {
			t.Errorf("%s: Override of \"\": %q", s.name, tr)
		}
	}
}

// TestAgentsTrustFlagWithoutRecord: --trust for a workspace the store
// never heard of holds until the user chooses there.
func TestAgentsTrustFlagWithoutRecord(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	o.Trust = "read-only"
	p := newPool(t, o, nil)
	st := p.store()
	if got := p.get(""); got != p.primary || got.Trust() != session.TrustReadOnly {
		t.Fatalf("trust %q, primary %v", got.Trust(), got == p.primary)
	}
	must(t)(st.TouchWorkspace(ctx, p.root))
	if got := p.get(""); got != p.primary {
		t.Errorf("a session's record replaced the primary (trust %q)", got.Trust())
	}
	must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: p.root, Trust: session.TrustTrusted}))
	got := p.get("")
	if got == p.primary || got.Trust() != session.TrustTrusted {
		t.Errorf("after the user chose trusted: trust %q", got.Trust())
	}
	if !agentOpen(p.primary) {
		t.Error("the primary was closed")
	}
}

// TestAgentsApprovalModeFlag: --approval-mode yolo is the user's for the
// primary workspace (trusted); an untrusted workspace's agent is built
// without it (not refused), a read-only or trusted one's with it.
func TestAgentsApprovalModeFlag(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	o.Trust, o.ApprovalMode = "trusted", "yolo"
	p := newPool(t, o, nil)
	st := p.store()
	if p.primary.Mode() != agent.ModeYolo {
		t.Fatalf("primary mode %q", p.primary.Mode())
	}
	ws2 := newWorkspace(t)
	must(t)(st.TouchWorkspace(ctx, ws2))
	for _, s := range []struct {
		trust session.Trust
		want  agent.Mode
	}{
		{"", agent.ModeDefault},
		{session.TrustReadOnly, agent.ModeYolo},
		{session.TrustTrusted, agent.ModeYolo},
		{session.TrustUntrusted, agent.ModeDefault},
	} {
		if s.trust != "" {
			must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: ws2, Trust: s.trust}))
		}
		a, err := p.agents.Agent(ctx, ws2)
		if err != nil {
			t.Fatalf("trust %q: %v", s.trust, err)
		}
		if a.Mode() != s.want {
			t.Errorf("trust %q: mode %q, want %q", s.trust, a.Mode(), s.want)
		}
	}
	// The primary, made untrusted by the user, loses yolo too.
	must(t)(st.AddWorkspace(ctx, session.Workspace{Path: p.root, Trust: session.TrustUntrusted}))
	a, err := p.agents.Agent(ctx, "")
	if err != nil || a.Mode() != agent.ModeDefault || a.Trust() != session.TrustUntrusted {
		t.Errorf("the primary, untrusted: %v", err)
	}
}

// TestAgentsConfigErrors: a workspace whose config cannot be loaded has no
// agent: an error that names it; the others are served.
func TestAgentsConfigErrors(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	p := newPool(t, o, nil)
	bad := newWorkspace(t)
	os.MkdirAll(filepath.Join(bad, ".hearth"), 0o755)
	os.WriteFile(filepath.Join(bad, ".hearth", "config.toml"), []byte("nonsense = \n"), 0o644)
	must(t)(p.store().AddWorkspace(ctx, session.Workspace{Path: bad, Trust: session.TrustTrusted}))
	_, err := p.agents.Agent(ctx, bad)
	var ce ConfigError
	if err == nil || !errors.As(err, &ce) || !strings.Contains(err.Error(), bad) {
		t.Errorf("a broken config: %v", err)
	}
	if _, err := p.agents.Agent(ctx, ""); err != nil {
		t.Errorf("the primary after another's failure: %v", err)
	}
}

// TestAgentsTrustFlagSeenByOverride: the user's choice ends --trust even
// when only the server's listing (Override, GET /v1/workspaces) saw it
// before they chose back the trust the store had at the start.
func TestAgentsTrustFlagSeenByOverride(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	o.Trust = "trusted"
	p := newPool(t, o, func(ctx context.Context, st session.Store, root string) {
		must(t)(st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustReadOnly}))
	})
	st := p.store()
	must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: p.root, Trust: session.TrustUntrusted}))
	if tr, _ := p.agents.Override(ctx, p.root); tr != "" {
		t.Errorf("Override after the user chose: %q", tr)
	}
	must(t)(st.UpdateWorkspace(ctx, session.Workspace{Path: p.root, Trust: session.TrustReadOnly}))
	tr, _ := p.agents.Override(ctx, p.root)
	if got := p.get("").Trust(); got != session.TrustReadOnly || tr != "" {
		t.Errorf("after the user chose read-only back: the agent runs %q, Override %q", got, tr)
	}
}
