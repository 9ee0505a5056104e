package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The hash of a workspace's project config when the user last chose its
// trust (Workspace.ConfigHash): a trusted workspace's .hearth/config.toml
// applies as the user's own only while it is unchanged. The caller
// computes it; the store keeps it.

// Two hashes, as config.ProjectHash gives them (SHA-256, hex).
const (
	hashA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	hashB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
)

// TestConfigHash: a trust given to AddWorkspace or UpdateWorkspace stores
// w.ConfigHash with it, "" included (which clears it); without a trust,
// the stored hash stays, whatever w.ConfigHash says: a touch, a session,
// a name. A new workspace made without a trust has none, and so has a
// removed one made known again.
func TestConfigHash(t *testing.T) {
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
			hash    string
			wantErr string
		}{
			{"touch a new folder (a headless run)", touch("/w/a"), "/w/a", TrustUntrusted, "", ""},
			{"add it with a hash and no trust (not read)", add(Workspace{Path: "/w/a", Name: "A", ConfigHash: hashA}), "/w/a", TrustUntrusted, "", ""},
			{"update it with a hash and no trust (not read)", update(Workspace{Path: "/w/a", Name: "AA", ConfigHash: hashA}), "/w/a", TrustUntrusted, "", ""},
			{"a bad trust changes nothing", add(Workspace{Path: "/w/a", Trust: "root", ConfigHash: hashA}), "/w/a", TrustUntrusted, "", `unknown trust level "root"`},
			{"a bad trust in an update changes nothing", update(Workspace{Path: "/w/a", Trust: "root", ConfigHash: hashA}), "/w/a", TrustUntrusted, "", `unknown trust level "root"`},
			{"add it with a trust and a hash", add(Workspace{Path: "/w/a", Trust: TrustTrusted, ConfigHash: hashA}), "/w/a", TrustTrusted, hashA, ""},
			{"add it without a trust: the hash stays", add(Workspace{Path: "/w/a", Name: "A"}), "/w/a", TrustTrusted, hashA, ""},
			{"add it with another hash and no trust: the hash stays", add(Workspace{Path: "/w/a", ConfigHash: hashB}), "/w/a", TrustTrusted, hashA, ""},
			{"touch it: the hash stays", touch("/w/a"), "/w/a", TrustTrusted, hashA, ""},
			{"a session in it: the hash stays", create("/w/a"), "/w/a", TrustTrusted, hashA, ""},
			{"update it without a trust: the hash stays", update(Workspace{Path: "/w/a", Name: "B"}), "/w/a", TrustTrusted, hashA, ""},
			{"update it with another hash and no trust: the hash stays", update(Workspace{Path: "/w/a", ConfigHash: hashB}), "/w/a", TrustTrusted, hashA, ""},
			{"update it with a trust and another hash", update(Workspace{Path: "/w/a", Trust: TrustTrusted, ConfigHash: hashB}), "/w/a", TrustTrusted, hashB, ""},
			{"update it with a trust and no hash: cleared", update(Workspace{Path: "/w/a", Trust: TrustTrusted}), "/w/a", TrustTrusted, "", ""},
			{"add it with a trust and a hash again", add(Workspace{Path: "/w/a", Trust: TrustReadOnly, ConfigHash: hashA}), "/w/a", TrustReadOnly, hashA, ""},
			{"add it with a trust and no hash: cleared", add(Workspace{Path: "/w/a", Trust: TrustUntrusted}), "/w/a", TrustUntrusted, "", ""},
			{"update it to untrusted with a hash: stored", update(Workspace{Path: "/w/a", Trust: TrustUntrusted, ConfigHash: hashB}), "/w/a", TrustUntrusted, hashB, ""},
			{"removed, then touched: no hash", removeThenTouch("/w/a"), "/w/a", TrustUntrusted, "", ""},
			{"a session in a new folder", create("/w/b"), "/w/b", TrustUntrusted, "", ""},
			{"update it with a trust and a hash", update(Workspace{Path: "/w/b", Trust: TrustTrusted, ConfigHash: hashA}), "/w/b", TrustTrusted, hashA, ""},
			{"update an unknown folder with a hash: not made", update(Workspace{Path: "/w/nowhere", Trust: TrustTrusted, ConfigHash: hashA}), "/w/b", TrustTrusted, hashA, "not known"},
			{"add a new folder with a hash and no trust", add(Workspace{Path: "/w/c", ConfigHash: hashA}), "/w/c", TrustUntrusted, "", ""},
			{"add a new folder with a trust and a hash", add(Workspace{Path: "/w/d", Trust: "readonly", ConfigHash: hashB}), "/w/d", TrustReadOnly, hashB, ""},
			{"add a new folder with a trust and no hash", add(Workspace{Path: "/w/e", Trust: TrustTrusted}), "/w/e", TrustTrusted, "", ""},
			{"the unknown workspace, touched", touch(""), "", TrustUntrusted, "", ""},
			{"the unknown workspace, trusted with a hash", update(Workspace{Path: "", Trust: TrustTrusted, ConfigHash: hashA}), "", TrustTrusted, hashA, ""},
		} {
			got, err := step.do()
			switch {
			case step.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), step.wantErr) {
					t.Errorf("%s: %v, want an error about %q", step.name, err, step.wantErr)
				}
			case err != nil || got.Path != step.path || got.Trust != step.trust || got.ConfigHash != step.hash:
				t.Errorf("%s: %+v %v; want trust %s, hash %q", step.name, got, err, step.trust, step.hash)
			}
			// As stored, read alone and in the list.
			w, err := s.Workspace(ctx, step.path)
			if err != nil || w.Trust != step.trust || w.ConfigHash != step.hash {
				t.Errorf("%s: stored %+v %v; want trust %s, hash %q", step.name, w, err, step.trust, step.hash)
			}
			ws, err := s.Workspaces(ctx)
			found := false
			for _, l := range ws {
				if l.Path == step.path {
					found = true
					if l.ConfigHash != step.hash {
						t.Errorf("%s: listed %+v, want hash %q", step.name, l, step.hash)
					}
				}
			}
			if err != nil || !found {
				t.Errorf("%s: %s not listed: %+v %v", step.name, step.path, ws, err)
			}
		}
		if _, err := s.Workspace(ctx, "/w/nowhere"); err == nil {
			t.Error("an update with a hash made a workspace")
		}
	})
}

// TestImportConfigHash: ImportWorkspace copies ConfigHash into a
// workspace the store does not know, as the record has it; one the store
// knows keeps its own (as it keeps its trust). A session's Import makes
// its workspace known without one.
func TestImportConfigHash(t *testing.T) {
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		ctx := context.Background()
		t0 := time.Date(2025, 6, 7, 8, 9, 10, 0, time.UTC)
		for i, tc := range []struct {
			name  string
			have  *Workspace // added first; nil: touched; none when new
			new   bool
			rec   Workspace // Path set from i
			added bool
			trust Trust
			hash  string
		}{
			{name: "new, trusted with a hash", new: true, rec: Workspace{Trust: TrustTrusted, TrustChosen: true, ConfigHash: hashA}, added: true, trust: TrustTrusted, hash: hashA},
			{name: "new, trusted without a hash", new: true, rec: Workspace{Trust: TrustTrusted, TrustChosen: true}, added: true, trust: TrustTrusted, hash: ""},
			{name: "new, no trust (an old record), a hash: copied as it is", new: true, rec: Workspace{ConfigHash: hashB}, added: true, trust: TrustUntrusted, hash: hashB},
			{name: "known, touched: stays without", rec: Workspace{Trust: TrustTrusted, TrustChosen: true, ConfigHash: hashA}, trust: TrustUntrusted, hash: ""},
			{name: "known, with a hash: keeps it", have: &Workspace{Trust: TrustTrusted, ConfigHash: hashA}, rec: Workspace{Trust: TrustTrusted, TrustChosen: true, ConfigHash: hashB}, trust: TrustTrusted, hash: hashA},
			{name: "known, with a hash, a record without: keeps it", have: &Workspace{Trust: TrustReadOnly, ConfigHash: hashA}, rec: Workspace{Trust: TrustReadOnly, TrustChosen: true}, trust: TrustReadOnly, hash: hashA},
			{name: "known, without a hash: stays without", have: &Workspace{Trust: TrustTrusted}, rec: Workspace{Trust: TrustTrusted, TrustChosen: true, ConfigHash: hashB}, trust: TrustTrusted, hash: ""},
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
			if err != nil || added != tc.added || got.Trust != tc.trust || got.ConfigHash != tc.hash {
				t.Errorf("%s: %+v %v %v; want added %v, trust %s, hash %q", tc.name, got, added, err, tc.added, tc.trust, tc.hash)
			}
			if w, err := s.Workspace(ctx, path); err != nil || w.Trust != tc.trust || w.ConfigHash != tc.hash {
				t.Errorf("%s: stored %+v %v", tc.name, w, err)
			}
			// Imported again, with another hash: nothing changes.
			rec.ConfigHash = "0000"
			if got, added, err := s.ImportWorkspace(ctx, rec); err != nil || added || got.Trust != tc.trust || got.ConfigHash != tc.hash {
				t.Errorf("%s, again: %+v %v %v", tc.name, got, added, err)
			}
		}

		// A session's Import: its new workspace has no hash, and a known
		// one keeps its own.
		a := &Archive{Session: Session{ID: "imported", Workspace: "/home/me/from-a-session", CreatedAt: t0, UpdatedAt: t0}}
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		if w, err := s.Workspace(ctx, "/home/me/from-a-session"); err != nil || w.ConfigHash != "" {
			t.Errorf("a session's workspace: %+v %v", w, err)
		}
		b := &Archive{Session: Session{ID: "imported-2", Workspace: "/home/me/import-e", CreatedAt: t0, UpdatedAt: t0}}
		if err := s.Import(ctx, b); err != nil {
			t.Fatal(err)
		}
		if w, err := s.Workspace(ctx, "/home/me/import-e"); err != nil || w.ConfigHash != hashA {
			t.Errorf("a known workspace, after a session's import: %+v %v", w, err)
		}
	})
}

// TestWorkspaceConfigHashJSON: ConfigHash is "config_hash", left out when
// "" (a record written before it reads as without one).
func TestWorkspaceConfigHashJSON(t *testing.T) {
	b, err := json.Marshal(Workspace{Path: "/p", Trust: TrustTrusted, TrustChosen: true, ConfigHash: hashA})
	if err != nil || !strings.Contains(string(b), `"config_hash":"`+hashA+`"`) {
		t.Errorf("%s %v", b, err)
	}
	b, err = json.Marshal(Workspace{Path: "/p", Trust: TrustTrusted, TrustChosen: true})
	if err != nil || strings.Contains(string(b), "config_hash") {
		t.Errorf("without a hash: %s %v", b, err)
	}
	for _, tc := range []struct {
		in   string
		hash string
	}{
		{`{"path":"/p","name":"p","trust":"trusted","trust_chosen":true,"created_at":"2025-01-02T03:04:05Z","last_used":"2025-01-02T03:04:05Z","sessions":1}`, ""},
		{`{"path":"/p","trust":"trusted","trust_chosen":true,"config_hash":"` + hashB + `"}`, hashB},
		{`{"path":"/p","trust":"trusted","config_hash":""}`, ""},
	} {
		var w Workspace
		if err := json.Unmarshal([]byte(tc.in), &w); err != nil || w.ConfigHash != tc.hash || w.Path != "/p" {
			t.Errorf("%s: %+v %v", tc.in, w, err)
		}
	}
}
