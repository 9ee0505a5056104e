package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Whether the user chose a workspace's trust (Workspace.TrustChosen): a
// UI asks once per folder, and a folder a headless run made known
// (untrusted by default) was never asked about.

// TestTrustChosen: a trust given to AddWorkspace or UpdateWorkspace marks
// it chosen (untrusted included); nothing else does, nor unmarks it: a
// touch (a headless run), a session, a name, w.TrustChosen itself. A
// removed workspace made known again is not chosen.
func TestTrustChosen(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		touch := func(path string) func() (Workspace, error) {
			return func() (Workspace, error) { return s.TouchWorkspace(ctx, path) }
		}
		add := func(w Workspace) func() (Workspace, error) {
			return func() (Workspace, error) { return s.AddWorkspace(ctx, w) }
		}
		update := func(w Workspace) func() (Workspace, error) {
			return func() (Workspace, error) { return s.UpdateWorkspace(ctx, w) }
		}
		create := func(path string) func() (Workspace, error) {
			return func() (Workspace, error) {
				if err := s.Create(ctx, &Session{Workspace: path}); err != nil {
					return Workspace{}, err
				}
				w, err := s.Workspace(ctx, path)
				if err != nil {
					return Workspace{}, err
				}
				return *w, nil
			}
		}
		removeThenTouch := func(path string) func() (Workspace, error) {
			return func() (Workspace, error) {
				if err := s.RemoveWorkspace(ctx, path); err != nil {
					return Workspace{}, err
				}
				return s.TouchWorkspace(ctx, path)
			}
		}
		for _, step := range []struct {
			name    string
			do      func() (Workspace, error)
			path    string
			trust   Trust
			chosen  bool
			wantErr string
		}{
			{"touch a new folder (a headless run)", touch("/w/a"), "/w/a", TrustUntrusted, false, ""},
			{"touch it again", touch("/w/a"), "/w/a", TrustUntrusted, false, ""},
			{"add it without a trust (a name)", add(Workspace{Path: "/w/a", Name: "A"}), "/w/a", TrustUntrusted, false, ""},
			{"add it with TrustChosen and no trust (not read)", add(Workspace{Path: "/w/a", TrustChosen: true}), "/w/a", TrustUntrusted, false, ""},
			{"update it without a trust (a name)", update(Workspace{Path: "/w/a", Name: "AA"}), "/w/a", TrustUntrusted, false, ""},
			{"update it with TrustChosen and no trust (not read)", update(Workspace{Path: "/w/a", TrustChosen: true}), "/w/a", TrustUntrusted, false, ""},
			{"a bad trust changes nothing", add(Workspace{Path: "/w/a", Trust: "root"}), "/w/a", TrustUntrusted, false, `unknown trust level "root"`},
			{"add it with a trust", add(Workspace{Path: "/w/a", Trust: TrustReadOnly}), "/w/a", TrustReadOnly, true, ""},
			{"add it without a trust: still chosen", add(Workspace{Path: "/w/a", Name: "A"}), "/w/a", TrustReadOnly, true, ""},
			{"touch it: still chosen", touch("/w/a"), "/w/a", TrustReadOnly, true, ""},
			{"a session in it: still chosen", create("/w/a"), "/w/a", TrustReadOnly, true, ""},
			{"update it without a trust: still chosen", update(Workspace{Path: "/w/a", Name: "B"}), "/w/a", TrustReadOnly, true, ""},
			{"update it to untrusted: chosen", update(Workspace{Path: "/w/a", Trust: TrustUntrusted}), "/w/a", TrustUntrusted, true, ""},
			{"removed, then touched: not chosen", removeThenTouch("/w/a"), "/w/a", TrustUntrusted, false, ""},
			{"a session in a new folder", create("/w/b"), "/w/b", TrustUntrusted, false, ""},
			{"update it with a trust", update(Workspace{Path: "/w/b", Trust: TrustTrusted}), "/w/b", TrustTrusted, true, ""},
			{"add a new folder without a trust", add(Workspace{Path: "/w/c"}), "/w/c", TrustUntrusted, false, ""},
			{"add a new folder with trust untrusted", add(Workspace{Path: "/w/d", Trust: TrustUntrusted}), "/w/d", TrustUntrusted, true, ""},
			{"add a new folder with a trust", add(Workspace{Path: "/w/e", Trust: "readonly"}), "/w/e", TrustReadOnly, true, ""},
			{"the unknown workspace, touched", touch(""), "", TrustUntrusted, false, ""},
			{"the unknown workspace, trusted", update(Workspace{Path: "", Trust: TrustTrusted}), "", TrustTrusted, true, ""},
		} {
			got, err := step.do()
			switch {
			case step.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), step.wantErr) {
					t.Errorf("%s: %v, want an error about %q", step.name, err, step.wantErr)
				}
			case err != nil || got.Path != step.path || got.Trust != step.trust || got.TrustChosen != step.chosen:
				t.Errorf("%s: %+v %v; want trust %s, chosen %v", step.name, got, err, step.trust, step.chosen)
			}
			// As stored, read alone and in the list.
			w, err := s.Workspace(ctx, step.path)
			if err != nil || w.Trust != step.trust || w.TrustChosen != step.chosen {
				t.Errorf("%s: stored %+v %v; want trust %s, chosen %v", step.name, w, err, step.trust, step.chosen)
			}
			ws, err := s.Workspaces(ctx)
			found := false
			for _, l := range ws {
				if l.Path == step.path {
					found = true
					if l.TrustChosen != step.chosen {
						t.Errorf("%s: listed %+v, want chosen %v", step.name, l, step.chosen)
					}
				}
			}
			if err != nil || !found {
				t.Errorf("%s: %s not listed: %+v %v", step.name, step.path, ws, err)
			}
		}
	})
}

// TestImportTrustChosen: ImportWorkspace copies TrustChosen into a
// workspace the store does not know, as the record has it; one the store
// knows keeps its own (as it keeps its trust). A session's Import makes
// its workspace known not chosen.
func TestImportTrustChosen(t *testing.T) {
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		ctx := context.Background()
		t0 := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
		for i, tc := range []struct {
			name   string
			have   *Workspace // added first (with its trust: chosen); nil: touched; none when new
			new    bool
			rec    Workspace // Path set from i
			added  bool
			trust  Trust
			chosen bool
		}{
			{name: "new, chosen", new: true, rec: Workspace{Trust: TrustTrusted, TrustChosen: true}, added: true, trust: TrustTrusted, chosen: true},
			{name: "new, untrusted by default", new: true, rec: Workspace{Trust: TrustUntrusted}, added: true, trust: TrustUntrusted, chosen: false},
			{name: "new, untrusted chosen", new: true, rec: Workspace{Trust: TrustUntrusted, TrustChosen: true}, added: true, trust: TrustUntrusted, chosen: true},
			{name: "new, no trust (an old record)", new: true, rec: Workspace{}, added: true, trust: TrustUntrusted, chosen: false},
			{name: "new, a trust not marked chosen: copied as it is", new: true, rec: Workspace{Trust: TrustReadOnly}, added: true, trust: TrustReadOnly, chosen: false},
			{name: "known, touched: stays not chosen", rec: Workspace{Trust: TrustTrusted, TrustChosen: true}, trust: TrustUntrusted, chosen: false},
			{name: "known, chosen: stays chosen", have: &Workspace{Trust: TrustReadOnly}, rec: Workspace{Trust: TrustUntrusted}, trust: TrustReadOnly, chosen: true},
			{name: "known, chosen untrusted: stays", have: &Workspace{Trust: TrustUntrusted}, rec: Workspace{Trust: TrustTrusted, TrustChosen: true}, trust: TrustUntrusted, chosen: true},
		} {
			path := "/home/me/import-" + string(rune('a'+i))
			switch {
			case tc.new:
			case tc.have == nil:
				if _, err := s.TouchWorkspace(ctx, path); err != nil {
					t.Fatal(err)
				}
			default:
				h := *tc.have
				h.Path = path
				if _, err := s.AddWorkspace(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			rec := tc.rec
			rec.Path, rec.CreatedAt, rec.LastUsed = path, t0, t0
			got, added, err := s.ImportWorkspace(ctx, rec)
			if err != nil || added != tc.added || got.Trust != tc.trust || got.TrustChosen != tc.chosen {
				t.Errorf("%s: %+v %v %v; want added %v, trust %s, chosen %v", tc.name, got, added, err, tc.added, tc.trust, tc.chosen)
			}
			if w, err := s.Workspace(ctx, path); err != nil || w.Trust != tc.trust || w.TrustChosen != tc.chosen {
				t.Errorf("%s: stored %+v %v", tc.name, w, err)
			}
			// Imported again: nothing changes.
			if got, added, err := s.ImportWorkspace(ctx, rec); err != nil || added || got.Trust != tc.trust || got.TrustChosen != tc.chosen {
				t.Errorf("%s, again: %+v %v %v", tc.name, got, added, err)
			}
		}

		// A session's Import: its new workspace is untrusted, not chosen.
		a := &Archive{Session: Session{ID: "imported", Workspace: "/home/me/from-a-session", CreatedAt: t0, UpdatedAt: t0}}
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		if w, err := s.Workspace(ctx, "/home/me/from-a-session"); err != nil || w.Trust != TrustUntrusted || w.TrustChosen {
			t.Errorf("a session's workspace: %+v %v", w, err)
		}
	})
}

// TestWorkspaceJSON: TrustChosen is "trust_chosen"; a record written
// before it (without the field) reads as not chosen.
func TestWorkspaceJSON(t *testing.T) {
	b, err := json.Marshal(Workspace{Path: "/p", Trust: TrustTrusted, TrustChosen: true})
	if err != nil || !strings.Contains(string(b), `"trust_chosen":true`) {
		t.Errorf("%s %v", b, err)
	}
	for _, tc := range []struct {
		in     string
		chosen bool
	}{
		{`{"path":"/p","name":"p","trust":"trusted","created_at":"2025-01-02T03:04:05Z","last_used":"2025-01-02T03:04:05Z","sessions":1}`, false},
		{`{"path":"/p","trust":"trusted","trust_chosen":true}`, true},
		{`{"path":"/p","trust":"untrusted","trust_chosen":false}`, false},
	} {
		var w Workspace
		if err := json.Unmarshal([]byte(tc.in), &w); err != nil || w.TrustChosen != tc.chosen || w.Path != "/p" {
			t.Errorf("%s: %+v %v", tc.in, w, err)
		}
	}
	var w Workspace
	if err := json.Unmarshal([]byte(`{"path":"/p","trust_chosen":"yes"}`), &w); err == nil {
		t.Error("a trust_chosen that is not a boolean was read")
	}
}
