package server

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/session"
)

// deletingStore removes a workspace while a PATCH of it runs: as it is
// read, or just before it is changed, as a DELETE of another client's
// landing in between would.
type deletingStore struct {
	session.Store
	mu     sync.Mutex
	target string
}

func (s *deletingStore) removeOnce(ctx context.Context, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if path == s.target {
		s.target = ""
		s.Store.RemoveWorkspace(ctx, path)
	}
}

func (s *deletingStore) Workspace(ctx context.Context, path string) (*session.Workspace, error) {
	w, err := s.Store.Workspace(ctx, path)
	s.removeOnce(ctx, path)
	return w, err
}

func (s *deletingStore) UpdateWorkspace(ctx context.Context, w session.Workspace) (session.Workspace, error) {
	s.removeOnce(ctx, w.Path)
	return s.Store.UpdateWorkspace(ctx, w)
}

// TestPatchWorkspaceDeletedMeanwhile: a PATCH of a workspace removed
// while it runs is a 404, and does not bring the workspace back (with the
// trust it sent).
func TestPatchWorkspaceDeletedMeanwhile(t *testing.T) {
	ds := &deletingStore{}
	f := newFixture(t, func(o *setup) {
		ds.Store = o.Config.Store
		o.Config.Store = ds
	})
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f.call("POST", "/v1/workspaces", map[string]any{"path": dir, "trust": "read-only"}, http.StatusCreated, nil)
	ds.mu.Lock()
	ds.target = dir
	ds.mu.Unlock()
	status, code, msg := f.errorCode(f.request("PATCH", wsQuery(dir), map[string]any{"trust": "trusted", "name": "back"}))
	if status != http.StatusNotFound || code != "workspace_not_found" || !strings.Contains(msg, dir) {
		t.Errorf("%d %s %s, want 404 workspace_not_found", status, code, msg)
	}
	if w := findWorkspace(f, dir); w != nil {
		t.Errorf("the PATCH brought the workspace back: %+v", w)
	}
	if _, err := f.store.Workspace(context.Background(), dir); err == nil {
		t.Error("the store has the workspace again")
	}
}

// TestPatchWorkspaceChangesOnlyWhatItSends: name alone, trust alone; the
// answer is the stored workspace, its sessions counted.
func TestPatchWorkspaceChangesOnlyWhatItSends(t *testing.T) {
	eachStore(t, func(t *testing.T, f *fixture) {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		f.call("POST", "/v1/workspaces", map[string]any{"path": dir, "name": "Mine", "trust": "read-only"}, http.StatusCreated, nil)
		se := &session.Session{Title: "here", Workspace: dir}
		if err := f.api.store.Create(context.Background(), se); err != nil {
			t.Fatal(err)
		}
		var ws session.Workspace
		f.call("PATCH", wsQuery(dir), map[string]any{"trust": "trusted"}, http.StatusOK, &ws)
		if ws.Name != "Mine" || ws.Trust != session.TrustTrusted || ws.Sessions != 1 || ws.Path != dir {
			t.Errorf("trust: %+v", ws)
		}
		f.call("PATCH", wsQuery(dir), map[string]any{"name": "Ours"}, http.StatusOK, &ws)
		if ws.Name != "Ours" || ws.Trust != session.TrustTrusted || ws.Sessions != 1 {
			t.Errorf("name: %+v", ws)
		}
		if got := findWorkspace(f, dir); got == nil || *got != ws {
			t.Errorf("listed %+v, answered %+v", got, ws)
		}
	})
}
