package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/session"
)

// eachStore runs test against a fixture on SQLite and on PostgreSQL (when
// it is installed).
func eachStore(t *testing.T, test func(t *testing.T, f *fixture)) {
	t.Run("sqlite", func(t *testing.T) { test(t, newFixture(t)) })
	t.Run("postgres", func(t *testing.T) { test(t, sharedFixtures(t, 1)[0]) })
}

func wsQuery(path string) string { return "/v1/workspaces?path=" + url.QueryEscape(path) }

// findWorkspace returns the workspace of path in GET /v1/workspaces.
func findWorkspace(f *fixture, path string) *session.Workspace {
	f.t.Helper()
	var list struct{ Workspaces []session.Workspace }
	f.call("GET", "/v1/workspaces", nil, http.StatusOK, &list)
	for _, w := range list.Workspaces {
		if w.Path == path {
			return &w
		}
	}
	return nil
}

func TestWorkspaces(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		dir := t.TempDir()
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "notes.txt")
		os.WriteFile(file, []byte("x"), 0o644)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}

		var ws session.Workspace
		f.call("POST", "/v1/workspaces", map[string]any{"path": dir}, http.StatusCreated, &ws)
		if ws.Path != real || ws.Name != filepath.Base(real) || ws.Trust != session.TrustUntrusted || ws.Sessions != 0 || ws.CreatedAt.IsZero() {
			t.Errorf("added %+v", ws)
		}
		// Through a symlink, with a name and a trust level: the same
		// folder, changed.
		f.call("POST", "/v1/workspaces", map[string]any{"path": link, "name": "Docs", "trust": "readonly"}, http.StatusOK, &ws)
		if ws.Path != real || ws.Name != "Docs" || ws.Trust != session.TrustReadOnly {
			t.Errorf("added again %+v", ws)
		}
		if got := findWorkspace(f, real); got == nil || got.Name != "Docs" || got.Trust != session.TrustReadOnly {
			t.Errorf("listed %+v", got)
		}
		f.call("PATCH", wsQuery(real), map[string]any{"trust": "trusted"}, http.StatusOK, &ws)
		if ws.Trust != session.TrustTrusted || ws.Name != "Docs" {
			t.Errorf("patched %+v", ws)
		}
		f.call("PATCH", wsQuery(real), map[string]any{"name": " Papers "}, http.StatusOK, &ws)
		if ws.Trust != session.TrustTrusted || ws.Name != "Papers" {
			t.Errorf("renamed %+v", ws)
		}

		// Sessions filtered by workspace; the count follows.
		ctx := context.Background()
		here := session.Session{Title: "here", Workspace: real}
		if err := f.api.store.Create(ctx, &here); err != nil {
			t.Fatal(err)
		}
		elsewhere := f.newSession()
		var list struct{ Sessions []sessionJSON }
		f.call("GET", "/v1/sessions?workspace="+url.QueryEscape(real), nil, http.StatusOK, &list)
		if len(list.Sessions) != 1 || list.Sessions[0].ID != here.ID {
			t.Errorf("sessions in %s: %+v", real, list.Sessions)
		}
		f.call("GET", "/v1/sessions", nil, http.StatusOK, &list)
		if len(list.Sessions) != 2 {
			t.Errorf("all sessions: %+v (the other %s)", list.Sessions, elsewhere)
		}
		if got := findWorkspace(f, real); got == nil || got.Sessions != 1 {
			t.Errorf("count %+v", got)
		}

		// Forgotten: its sessions stay.
		f.call("DELETE", wsQuery(real), nil, http.StatusNoContent, nil)
		if got := findWorkspace(f, real); got != nil {
			t.Errorf("still listed: %+v", got)
		}
		var d sessionDetail
		f.call("GET", "/v1/sessions/"+here.ID, nil, http.StatusOK, &d)
		if d.Workspace != real {
			t.Errorf("session after forgetting: %+v", d.Session)
		}

		errs := []struct {
			name, method, path string
			body               any
			status             int
			code, msg          string
		}{
			{"relative", "POST", "/v1/workspaces", map[string]any{"path": "project"}, 400, "path_not_absolute", "not an absolute path"},
			{"missing", "POST", "/v1/workspaces", map[string]any{"path": filepath.Join(dir, "nope")}, 400, "path_not_found", "does not exist"},
			{"file", "POST", "/v1/workspaces", map[string]any{"path": file}, 400, "not_a_directory", "not a folder"},
			{"no path", "POST", "/v1/workspaces", map[string]any{"name": "x"}, 400, "bad_request", "path is missing"},
			{"bad trust", "POST", "/v1/workspaces", map[string]any{"path": dir, "trust": "sure"}, 400, "bad_trust", "trusted, read-only or untrusted"},
			{"two-line name", "POST", "/v1/workspaces", map[string]any{"path": dir, "name": "a\nb"}, 400, "bad_request", "one line"},
			{"unknown field", "POST", "/v1/workspaces", map[string]any{"path": dir, "colour": "red"}, 400, "bad_request", "colour"},
			{"patch unknown", "PATCH", wsQuery(real), map[string]any{"trust": "trusted"}, 404, "workspace_not_found", real},
			{"patch without path", "PATCH", "/v1/workspaces", map[string]any{"trust": "trusted"}, 400, "bad_request", "?path="},
			{"patch nothing", "PATCH", wsQuery(real), map[string]any{}, 400, "bad_request", "nothing to change"},
			{"patch the path", "PATCH", wsQuery(real), map[string]any{"path": "/"}, 400, "bad_request", "cannot change"},
			{"delete unknown", "DELETE", wsQuery(real), nil, 404, "workspace_not_found", real},
			{"delete without path", "DELETE", "/v1/workspaces", nil, 400, "bad_request", "?path="},
		}
		for _, tt := range errs {
			t.Run(tt.name, func(t *testing.T) {
				status, code, msg := f.errorCode(f.request(tt.method, tt.path, tt.body))
				if status != tt.status || code != tt.code || !strings.Contains(msg, tt.msg) {
					t.Errorf("%d %s (%s), want %d %s (%s)", status, code, msg, tt.status, tt.code, tt.msg)
				}
			})
		}
	})
}

func ptr(n int64) *int64 { return &n }

func TestUsageCost(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		ctx := context.Background()
		st := f.api.store
		wsA, wsB := t.TempDir(), t.TempDir()
		a := session.Session{Title: "a", Model: "priced", Workspace: wsA}
		b := session.Session{Title: "b", Model: "free", Workspace: wsB}
		for _, s := range []*session.Session{&a, &b} {
			if err := st.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		now := time.Now()
		for _, u := range []session.Usage{
			{SessionID: a.ID, Model: "priced", InputTokens: 1000, OutputTokens: 100, CachedInputTokens: 400, Cost: ptr(1_500_000), At: now},
			{SessionID: a.ID, Model: "priced", InputTokens: 10, OutputTokens: 1, Cost: ptr(250_001), At: now},
			{SessionID: a.ID, Model: "local", InputTokens: 5, OutputTokens: 5, At: now},
			{SessionID: b.ID, Model: "local", InputTokens: 7, OutputTokens: 3, At: now},
		} {
			if err := st.RecordUsage(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		today := now.UTC().Format(time.DateOnly)
		type fig struct {
			calls    int
			cost     *int64
			unpriced int
		}
		of := func(u usageFigures) fig { return fig{u.Calls, u.Cost, u.Unpriced} }
		same := func(x, y fig) bool {
			return x.calls == y.calls && x.unpriced == y.unpriced && (x.cost == nil) == (y.cost == nil) && (x.cost == nil || *x.cost == *y.cost)
		}
		tests := []struct {
			name     string
			query    string
			total    fig
			groups   map[string]fig // by key, when by= is asked
			sessions []string
		}{
			{"all", "", fig{4, ptr(1_750_001), 2}, nil, []string{a.ID, b.ID}},
			{"by model", "?by=model", fig{4, ptr(1_750_001), 2},
				map[string]fig{"priced": {2, ptr(1_750_001), 0}, "local": {2, nil, 2}}, []string{a.ID, b.ID}},
			{"by session", "?by=session", fig{4, ptr(1_750_001), 2},
				map[string]fig{a.ID: {3, ptr(1_750_001), 1}, b.ID: {1, nil, 1}}, []string{a.ID, b.ID}},
			{"by workspace", "?by=workspace", fig{4, ptr(1_750_001), 2},
				map[string]fig{wsA: {3, ptr(1_750_001), 1}, wsB: {1, nil, 1}}, []string{a.ID, b.ID}},
			{"by day", "?by=day", fig{4, ptr(1_750_001), 2}, map[string]fig{today: {4, ptr(1_750_001), 2}}, []string{a.ID, b.ID}},
			{"one model", "?model=priced", fig{2, ptr(1_750_001), 0}, nil, []string{a.ID, b.ID}},
			{"one session", "?session=" + b.ID, fig{1, nil, 1}, nil, []string{b.ID}},
			{"one workspace", "?workspace=" + url.QueryEscape(wsB) + "&by=model", fig{1, nil, 1}, map[string]fig{"local": {1, nil, 1}}, []string{b.ID}},
			{"since today", "?since=" + today, fig{4, ptr(1_750_001), 2}, nil, []string{a.ID, b.ID}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var u usageJSON
				f.call("GET", "/v1/usage"+tt.query, nil, http.StatusOK, &u)
				if !same(of(u.Total), tt.total) {
					t.Errorf("total %+v, want %+v", u.Total, tt.total)
				}
				if last := u.Days[len(u.Days)-1]; last.Day != today || !same(of(last.usageFigures), tt.total) {
					t.Errorf("today %+v, want %+v", last, tt.total)
				}
				if len(u.Days) > 1 && u.Days[0].Cost != nil {
					t.Errorf("a day without calls has a cost: %+v", u.Days[0])
				}
				if tt.groups == nil {
					if u.Groups != nil {
						t.Errorf("groups without by: %+v", *u.Groups)
					}
				} else {
					if u.Groups == nil || len(*u.Groups) != len(tt.groups) {
						t.Fatalf("groups %+v, want %+v", u.Groups, tt.groups)
					}
					for _, g := range *u.Groups {
						if want, ok := tt.groups[g.Key]; !ok || !same(of(g.usageFigures), want) {
							t.Errorf("group %s %+v, want %+v", g.Key, g.usageFigures, want)
						}
					}
				}
				var ids []string
				for _, s := range u.Sessions {
					ids = append(ids, s.ID)
				}
				slices.Sort(ids)
				want := slices.Sorted(slices.Values(tt.sessions))
				if !slices.Equal(ids, want) {
					t.Errorf("sessions %v, want %v", ids, want)
				}
			})
		}
		if u := (usageJSON{}); true {
			f.call("GET", "/v1/usage?since="+today, nil, http.StatusOK, &u)
			if len(u.Days) != 1 || u.Since != today {
				t.Errorf("since today: %s, %d days", u.Since, len(u.Days))
			}
		}

		// The session shows its own cost; null when nothing was priced.
		var d sessionDetail
		f.call("GET", "/v1/sessions/"+a.ID, nil, http.StatusOK, &d)
		if d.Cost == nil || *d.Cost != 1_750_001 || d.Unpriced != 1 {
			t.Errorf("session a: cost %v unpriced %d", d.Cost, d.Unpriced)
		}
		var raw map[string]json.RawMessage
		f.call("GET", "/v1/sessions/"+b.ID, nil, http.StatusOK, &raw)
		if string(raw["cost"]) != "null" || string(raw["unpriced"]) != "1" {
			t.Errorf("session b: cost %s unpriced %s", raw["cost"], raw["unpriced"])
		}
		var list struct{ Sessions []sessionJSON }
		f.call("GET", "/v1/sessions", nil, http.StatusOK, &list)
		for _, s := range list.Sessions {
			if s.ID == a.ID && (s.Cost == nil || *s.Cost != 1_750_001) || s.ID == b.ID && (s.Cost != nil || s.Unpriced != 1) {
				t.Errorf("listed %s: cost %v unpriced %d", s.ID, s.Cost, s.Unpriced)
			}
		}

		tomorrow := now.UTC().AddDate(0, 0, 1).Format(time.DateOnly)
		for _, q := range []string{"?by=week", "?since=yesterday", "?since=" + tomorrow, "?since=1990-01-01", "?days=x"} {
			if status, code, msg := f.errorCode(f.request("GET", "/v1/usage"+q, nil)); status != 400 || code != "bad_request" {
				t.Errorf("%s: %d %s %s", q, status, code, msg)
			}
		}
	})
}
