package server

import (
	"context"
	"errors"
	"fmt"
	"github.com/hearth-agent/hearth/config"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// fakeWorkspaces serves fixed agents by workspace, as loader.Agents
// would; it records what it was asked.
type fakeWorkspaces struct {
	mu      sync.Mutex
	primary *hearth.Agent
	agents  map[string]*hearth.Agent
	broken  map[string]error  // Agent fails so for these
	refuse  map[string]string // Check refuses these, saying so
	flag    session.Trust     // Override's for the primary ("": none)
	asked   []string          // Agent's paths
	checked []string          // Check's paths
	changed []string          // TrustChanged's paths
}

func (w *fakeWorkspaces) Agent(ctx context.Context, path string) (*hearth.Agent, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked = append(w.asked, path)
	if err := w.broken[path]; err != nil {
		return nil, err
	}
	if path == "" {
		return w.primary, nil
	}
	if a, ok := w.agents[path]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("workspace %s: %w", path, session.ErrNotFound)
}

func (w *fakeWorkspaces) Check(path string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.checked = append(w.checked, path)
	if why, ok := w.refuse[path]; ok {
		return errors.New(why)
	}
	return nil
}

func (w *fakeWorkspaces) Override(ctx context.Context, path string) (session.Trust, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.flag == "" || w.primary == nil || path != w.primary.Workspace() {
		return "", ""
	}
	return w.flag, "--trust"
}

// TrustChanged ends the flag for the primary, as loader.Agents does; the
// paths told are recorded.
func (w *fakeWorkspaces) TrustChanged(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.changed = append(w.changed, path)
	if w.primary != nil && path == w.primary.Workspace() {
		w.flag = ""
	}
}

func (w *fakeWorkspaces) wasAsked(path string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Contains(w.asked, path)
}

func (w *fakeWorkspaces) forget(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.agents, path)
}

// multi is a fixture whose server serves two workspaces: its own (f.ws,
// model m) and ws2 (model m2), each with its own agent, checkpoints and a
// note.txt of its own.
type multi struct {
	*fixture
	ws2 string
	a2  *hearth.Agent
	wss *fakeWorkspaces
}

func newMulti(t *testing.T) *multi {
	t.Helper()
	m := &multi{ws2: t.TempDir(), wss: &fakeWorkspaces{agents: map[string]*hearth.Agent{}, broken: map[string]error{}, refuse: map[string]string{}}}
	m.fixture = newFixture(t, fileTools(t), func(o *setup) {
		c := o.Config
		c.Workspace, c.Model, c.Checkpoints = m.ws2, "m2", t.TempDir()
		a2, err := hearth.New(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a2.Close() })
		m.a2 = a2
		o.Workspaces = m.wss
	})
	m.fake.AddModel(llmtest.Model{Name: "m2", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	m.wss.primary = m.api.agent
	m.wss.agents[m.api.agent.Workspace()] = m.api.agent
	m.wss.agents[m.a2.Workspace()] = m.a2
	os.WriteFile(filepath.Join(m.ws, "note.txt"), []byte("the primary's note"), 0o644)
	os.WriteFile(filepath.Join(m.ws2, "note.txt"), []byte("the second's note"), 0o644)
	return m
}

func (m *multi) create(body any) sessionJSON {
	m.t.Helper()
	var se sessionJSON
	m.call("POST", "/v1/sessions", body, http.StatusCreated, &se)
	return se
}

// readTurn runs a turn whose model reads note.txt (a relative path) and
// returns the tool's output and the model the turn's requests named.
func (m *multi) readTurn(id string) (output, model string) {
	m.t.Helper()
	before := len(m.fake.RequestsTo("/api/chat"))
	m.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("r", "read_file", `{"file_path":"note.txt"}`)),
		llmtest.OllamaStream("m", llmtest.Text("read")))
	for _, fr := range m.turn(id, map[string]any{"message": "read the note"}).rest() {
		if fr.Type == "tool_result" {
			output = fr.str("output") + fr.str("error")
		}
	}
	reqs := m.fake.RequestsTo("/api/chat")
	if len(reqs) <= before {
		m.t.Fatal("the turn asked no model")
	}
	var body struct{ Model string }
	reqs[before].JSON(m.t, &body)
	return output, body.Model
}

// TestMultiWorkspaceTurns: sessions made in each workspace run in their
// own workspace's agent: a relative path is read from their own folder,
// their own model answers, what they write lands in their own folder, and
// undo, checkpoints, fork and title use their own agent.
func TestMultiWorkspaceTurns(t *testing.T) {
	m := newMulti(t)
	primary, ws2 := m.api.agent.Workspace(), m.a2.Workspace()

	a := m.create(nil)
	b := m.create(map[string]any{"workspace": ws2, "title": "second"})
	same := m.create(map[string]any{"workspace": primary})
	if a.Workspace != primary || same.Workspace != primary || b.Workspace != ws2 || b.Title != "second" || b.Model != "m2" || a.Model != "m" {
		t.Fatalf("sessions: %+v / %+v / %+v", a.Session, b.Session, same.Session)
	}

	tests := []struct {
		id, note, model string
	}{
		{a.ID, "the primary's note", "m"},
		{b.ID, "the second's note", "m2"},
		{same.ID, "the primary's note", "m"},
		{b.ID, "the second's note", "m2"}, // again: the same agent
	}
	for _, tc := range tests {
		out, model := m.readTurn(tc.id)
		if !strings.Contains(out, tc.note) || model != tc.model {
			t.Errorf("session %s: read %q with model %q, want %q with %q", tc.id, out, model, tc.note, tc.model)
		}
	}

	// Writes land in the session's own folder; undo there takes them back.
	m.writeTurn(b.ID, "write out", "out.txt", "2\\n", "written")
	if got, err := os.ReadFile(filepath.Join(ws2, "out.txt")); err != nil || string(got) != "2\n" {
		t.Fatalf("ws2/out.txt: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(primary, "out.txt")); err == nil {
		t.Fatal("the write landed in the primary workspace")
	}
	var cps struct{ Checkpoints []session.Checkpoint }
	m.call("GET", "/v1/sessions/"+b.ID+"/checkpoints", nil, http.StatusOK, &cps)
	if len(cps.Checkpoints) == 0 || cps.Checkpoints[0].SessionID != b.ID {
		t.Errorf("ws2's checkpoints: %+v", cps.Checkpoints)
	}
	var res restoreAnswerJSON
	m.call("POST", "/v1/sessions/"+b.ID+"/undo", map[string]any{"dry_run": true}, http.StatusOK, &res)
	if !slices.Equal(res.changes(), []string{"delete out.txt"}) {
		t.Errorf("undo preview: %+v", res)
	}
	m.call("POST", "/v1/sessions/"+b.ID+"/undo", nil, http.StatusOK, &res)
	if _, err := os.Stat(filepath.Join(ws2, "out.txt")); err == nil {
		t.Error("undo left ws2/out.txt")
	}
	m.call("POST", "/v1/sessions/"+b.ID+"/redo", nil, http.StatusOK, &res)
	if _, err := os.Stat(filepath.Join(ws2, "out.txt")); err != nil {
		t.Error("redo did not bring ws2/out.txt back")
	}
	// The primary's session has nothing to undo (its agent's checkpoints
	// are its own).
	if status, code, _ := m.errorCode(m.request("POST", "/v1/sessions/"+a.ID+"/undo", nil)); status != http.StatusConflict || code != "nothing_to_undo" {
		t.Errorf("undo in the primary's session: %d %s", status, code)
	}

	// A fork of b with its files: made in ws2, run in ws2's agent.
	var detail sessionDetail
	m.call("GET", "/v1/sessions/"+b.ID, nil, http.StatusOK, &detail)
	last := detail.Messages[len(detail.Messages)-1].Seq
	var fork forkJSON
	m.call("POST", "/v1/sessions/"+b.ID+"/fork", map[string]any{"files": true, "through": last}, http.StatusCreated, &fork)
	if fork.Workspace != ws2 {
		t.Errorf("the fork's workspace %q", fork.Workspace)
	}
	if out, model := m.readTurn(fork.ID); !strings.Contains(out, "the second's note") || model != "m2" {
		t.Errorf("the fork's turn read %q with %q", out, model)
	}

	// The title is asked of the session's own model (of a session whose
	// title is still its first prompt's).
	c := m.create(map[string]any{"workspace": ws2})
	m.readTurn(c.ID)
	before := len(m.fake.RequestsTo("/api/chat"))
	m.fake.Enqueue("/api/chat", llmtest.OllamaWhole("m2", llmtest.Text("Second notes")))
	var titled sessionJSON
	m.call("POST", "/v1/sessions/"+c.ID+"/title", nil, http.StatusOK, &titled)
	if reqs := m.fake.RequestsTo("/api/chat"); len(reqs) != before+1 {
		t.Errorf("title: %d model requests", len(reqs)-before)
	} else {
		var body struct{ Model string }
		reqs[before].JSON(t, &body)
		if body.Model != "m2" || titled.Title != "Second notes" {
			t.Errorf("the title %q was asked of %q", titled.Title, body.Model)
		}
	}
	if n := m.fake.Pending(); n != 0 {
		t.Fatalf("%d model answers left unasked", n)
	}

	// A session another process made in ws2 (not seen by this server):
	// its turn runs in ws2's agent too.
	other := session.Session{Title: "elsewhere", Workspace: ws2, Model: "m2"}
	if err := m.api.store.Create(context.Background(), &other); err != nil {
		t.Fatal(err)
	}
	if out, model := m.readTurn(other.ID); !strings.Contains(out, "the second's note") || model != "m2" {
		t.Errorf("another process's session read %q with %q", out, model)
	}

	// Deleting b releases it in ws2's agent.
	m.call("DELETE", "/v1/sessions/"+b.ID, nil, http.StatusNoContent, nil)
	if !m.wss.wasAsked(ws2) {
		t.Error("ws2's agent was never asked for")
	}
}

// TestMultiWorkspaceErrors: a workspace the server does not know is a 409
// for a new session and for a session's routes; another failure of the
// workspace's agent is a 409 too; POST /v1/workspaces runs Check; GET
// /v1/workspaces says where sessions go by default and that others may be
// chosen.
func TestMultiWorkspaceErrors(t *testing.T) {
	m := newMulti(t)
	primary, ws2 := m.api.agent.Workspace(), m.a2.Workspace()
	unknown := t.TempDir()

	type listing struct {
		Default      string
		Multiple     bool
		DefaultTrust *struct{ Trust, Source string } `json:"default_trust"`
	}
	var list listing
	m.call("GET", "/v1/workspaces", nil, http.StatusOK, &list)
	if list.Default != primary || !list.Multiple || list.DefaultTrust != nil {
		t.Errorf("GET /v1/workspaces: %+v", list)
	}
	// --trust for the server's own workspace: said, for the UI not to ask.
	m.wss.mu.Lock()
	m.wss.flag = session.TrustReadOnly
	m.wss.mu.Unlock()
	list = listing{}
	m.call("GET", "/v1/workspaces", nil, http.StatusOK, &list)
	if d := list.DefaultTrust; d == nil || d.Trust != "read-only" || d.Source != "--trust" {
		t.Errorf("GET /v1/workspaces with --trust: %+v", d)
	}

	b := m.create(map[string]any{"workspace": ws2})
	// ws2 is removed (or its config broken) after b was made.
	base := "/v1/sessions/" + b.ID
	routes := []struct {
		method, path string
		body         any
	}{
		{"POST", base + "/turns", map[string]any{"message": "hi"}},
		{"POST", base + "/undo", nil},
		{"POST", base + "/redo", nil},
		{"POST", base + "/rewind", map[string]any{"start": true}},
		{"POST", base + "/fork", nil},
		{"GET", base + "/checkpoints", nil},
		{"POST", base + "/title", nil},
	}
	for _, state := range []struct {
		name    string
		breakIt func()
		code    string
	}{
		{"broken", func() { m.wss.mu.Lock(); m.wss.broken[ws2] = errors.New("bad config"); m.wss.mu.Unlock() }, "workspace_unavailable"},
		{"removed", func() {
			m.wss.mu.Lock()
			delete(m.wss.broken, ws2)
			m.wss.mu.Unlock()
			m.wss.forget(ws2)
		}, "workspace_not_known"},
	} {
		state.breakIt()
		for _, rt := range routes {
			t.Run(state.name+" "+rt.method+" "+strings.TrimPrefix(rt.path, base), func(t *testing.T) {
				status, code, msg := m.errorCode(m.request(rt.method, rt.path, rt.body))
				if status != http.StatusConflict || code != state.code || !strings.Contains(msg, ws2) {
					t.Errorf("%d %s %s, want 409 %s naming %s", status, code, msg, state.code, ws2)
				}
			})
		}
	}
	if m.fake.Pending() != 0 || len(m.fake.RequestsTo("/api/chat")) != 0 {
		t.Errorf("a model was asked: %d requests", len(m.fake.RequestsTo("/api/chat")))
	}
	// The session itself is still there, and can be deleted.
	var d sessionDetail
	m.call("GET", base, nil, http.StatusOK, &d)
	m.call("DELETE", base, nil, http.StatusNoContent, nil)

	creates := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"an unknown workspace", map[string]any{"workspace": unknown}, http.StatusConflict, "workspace_not_known"},
		{"a removed workspace", map[string]any{"workspace": ws2}, http.StatusConflict, "workspace_not_known"},
		{"an empty workspace", map[string]any{"workspace": ""}, http.StatusBadRequest, "bad_workspace"},
		{"a blank workspace", map[string]any{"workspace": "  "}, http.StatusBadRequest, "bad_workspace"},
		{"a workspace that is not a string", map[string]any{"workspace": 3}, http.StatusBadRequest, "bad_request"},
	}
	for _, tc := range creates {
		t.Run("create in "+tc.name, func(t *testing.T) {
			status, code, msg := m.errorCode(m.request("POST", "/v1/sessions", tc.body))
			if status != tc.status || code != tc.code {
				t.Errorf("%d %s %s, want %d %s", status, code, msg, tc.status, tc.code)
			}
		})
	}
	var all struct{ Sessions []sessionJSON }
	m.call("GET", "/v1/sessions", nil, http.StatusOK, &all)
	if len(all.Sessions) != 0 {
		t.Errorf("refused creates made sessions: %+v", all.Sessions)
	}

	// POST /v1/workspaces asks Check about the folder, symlinks resolved.
	refused := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	os.Symlink(refused, link)
	m.wss.mu.Lock()
	m.wss.refuse[refused] = "the workspace would be your home directory"
	m.wss.mu.Unlock()
	for _, p := range []string{refused, link} {
		status, code, msg := m.errorCode(m.request("POST", "/v1/workspaces", map[string]any{"path": p}))
		if status != http.StatusBadRequest || code != "bad_workspace" || !strings.Contains(msg, "home directory") {
			t.Errorf("POST /v1/workspaces %s: %d %s %s", p, status, code, msg)
		}
	}
	if w := findWorkspace(m.fixture, refused); w != nil {
		t.Errorf("a refused folder was added: %+v", w)
	}
	var added session.Workspace
	m.call("POST", "/v1/workspaces", map[string]any{"path": unknown}, http.StatusCreated, &added)
	m.wss.mu.Lock()
	checked := slices.Clone(m.wss.checked)
	m.wss.mu.Unlock()
	if !slices.Equal(checked, []string{refused, refused, unknown}) {
		t.Errorf("checked %q", checked)
	}
}

// TestSingleWorkspaceServer: without Options.Workspaces, sessions are
// made in the server's own workspace only, and GET /v1/workspaces says so.
func TestSingleWorkspaceServer(t *testing.T) {
	f := newFixture(t)
	own := f.api.agent.Workspace()
	var list struct {
		Default  string
		Multiple bool
	}
	f.call("GET", "/v1/workspaces", nil, http.StatusOK, &list)
	if list.Default != own || list.Multiple {
		t.Errorf("GET /v1/workspaces: %+v", list)
	}
	var se sessionJSON
	f.call("POST", "/v1/sessions", map[string]any{"workspace": own}, http.StatusCreated, &se)
	if se.Workspace != own {
		t.Errorf("session in %q", se.Workspace)
	}
	for _, ws := range []string{t.TempDir(), "", "relative"} {
		status, code, msg := f.errorCode(f.request("POST", "/v1/sessions", map[string]any{"workspace": ws}))
		if status != http.StatusBadRequest || code != "bad_workspace" || !strings.Contains(msg, own) {
			t.Errorf("workspace %q: %d %s %s", ws, status, code, msg)
		}
	}
	// Adding a folder needs no Check.
	var added session.Workspace
	f.call("POST", "/v1/workspaces", map[string]any{"path": t.TempDir()}, http.StatusCreated, &added)
}

// TestTrustChoicePinsTheProjectFile: a trust chosen through the API is
// given for the project's .hearth/config.toml as it is then (its hash
// stored), the server's agents are told (--trust ends there), and a trusted
// workspace whose file changes since is listed as config_changed, for the
// web UI to ask again.
func TestTrustChoicePinsTheProjectFile(t *testing.T) {
	m := newMulti(t)
	cfg := filepath.Join(m.ws2, ".hearth", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(cfg, []byte("[profiles.api]\nmax_turns = 3\n"), 0o644)
	var got session.Workspace
	m.call("POST", "/v1/workspaces", map[string]any{"path": m.ws2, "trust": "trusted"}, http.StatusCreated, &got)
	if got.ConfigHash == "" || got.ConfigHash != config.ProjectHash(m.ws2) || !got.TrustChosen {
		t.Errorf("stored %+v, want the file's hash %s", got, config.ProjectHash(m.ws2))
	}
	m.wss.mu.Lock()
	told := slices.Contains(m.wss.changed, m.ws2)
	m.wss.mu.Unlock()
	if !told {
		t.Error("the agents were not told of the choice")
	}
	list := func() map[string]bool {
		var l struct {
			Workspaces []struct {
				Path          string `json:"path"`
				ConfigChanged bool   `json:"config_changed"`
			} `json:"workspaces"`
		}
		m.call("GET", "/v1/workspaces", nil, http.StatusOK, &l)
		out := map[string]bool{}
		for _, w := range l.Workspaces {
			out[w.Path] = w.ConfigChanged
		}
		return out
	}
	if changed, ok := list()[m.ws2]; !ok || changed {
		t.Errorf("listed: %v", list())
	}
	os.WriteFile(cfg, []byte("[mcp_servers.x]\ncommand = \"sh\"\n"), 0o644)
	if !list()[m.ws2] {
		t.Errorf("a changed file is not config_changed: %v", list())
	}
	// Trusted again: the new file.
	m.call("PATCH", "/v1/workspaces?path="+url.QueryEscape(m.ws2), map[string]any{"trust": "trusted"}, http.StatusOK, &got)
	if got.ConfigHash != config.ProjectHash(m.ws2) || list()[m.ws2] {
		t.Errorf("after trusting again: %+v %v", got, list())
	}
}
