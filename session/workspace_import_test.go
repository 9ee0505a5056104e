package session

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestUpdateWorkspace: UpdateWorkspace changes a known workspace's name
// or trust, what it sets only, and never creates one: a path unknown, or
// removed, is ErrNotFound and stays unknown.
func TestUpdateWorkspace(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		const path = "/home/me/app"
		if _, err := s.UpdateWorkspace(ctx, Workspace{Path: path, Trust: TrustTrusted}); !errors.Is(err, ErrNotFound) {
			t.Fatalf("an unknown path: %v", err)
		}
		if _, err := s.Workspace(ctx, path); !errors.Is(err, ErrNotFound) {
			t.Fatalf("UpdateWorkspace created %s: %v", path, err)
		}
		added, err := s.AddWorkspace(ctx, Workspace{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		se := &Session{Title: "x", Workspace: path}
		if err := s.Create(ctx, se); err != nil {
			t.Fatal(err)
		}
		got, err := s.UpdateWorkspace(ctx, Workspace{Path: path, Trust: TrustReadOnly})
		if err != nil || got.Trust != TrustReadOnly || got.Name != "app" || got.Sessions != 1 || !got.CreatedAt.Equal(added.CreatedAt) {
			t.Fatalf("trust: %+v %v", got, err)
		}
		got, err = s.UpdateWorkspace(ctx, Workspace{Path: path, Name: "My app"})
		if err != nil || got.Trust != TrustReadOnly || got.Name != "My app" {
			t.Fatalf("name: %+v %v", got, err)
		}
		if w, err := s.Workspace(ctx, path); err != nil || w.Name != "My app" || w.Trust != TrustReadOnly {
			t.Errorf("stored %+v %v", w, err)
		}
		// Nothing set: the workspace as it is.
		if got, err := s.UpdateWorkspace(ctx, Workspace{Path: path}); err != nil || got.Name != "My app" || got.Trust != TrustReadOnly {
			t.Errorf("nothing set: %+v %v", got, err)
		}
		if _, err := s.UpdateWorkspace(ctx, Workspace{Path: path, Trust: "root"}); err == nil {
			t.Error("an unknown trust level was accepted")
		}
		// Removed: never brought back.
		if err := s.RemoveWorkspace(ctx, path); err != nil {
			t.Fatal(err)
		}
		if _, err := s.UpdateWorkspace(ctx, Workspace{Path: path, Trust: TrustTrusted}); !errors.Is(err, ErrNotFound) {
			t.Errorf("a removed workspace: %v", err)
		}
		if _, err := s.Workspace(ctx, path); !errors.Is(err, ErrNotFound) {
			t.Errorf("UpdateWorkspace brought %s back: %v", path, err)
		}
	})
}

// TestUpdateWorkspaceRacesRemove: updates that run while the workspace is
// removed either change it (before) or find it gone (after): none brings
// it back.
func TestUpdateWorkspaceRacesRemove(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		const path = "/home/me/racy"
		for range 5 {
			if _, err := s.AddWorkspace(ctx, Workspace{Path: path}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := s.UpdateWorkspace(ctx, Workspace{Path: path, Trust: TrustTrusted}); err != nil && !errors.Is(err, ErrNotFound) {
						t.Error(err)
					}
				}()
			}
			if err := s.RemoveWorkspace(ctx, path); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if w, err := s.Workspace(ctx, path); !errors.Is(err, ErrNotFound) {
				t.Fatalf("brought back: %+v %v", w, err)
			}
		}
	})
}

// TestImportWorkspace: a record the store does not have arrives as it
// was (name, trust, first and last use; a default name stays the
// default); one it has keeps its name and trust, whether the record's is
// higher or lower, and only its times widen.
func TestImportWorkspace(t *testing.T) {
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		ctx := context.Background()
		t0 := time.Date(2025, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
		rec := Workspace{Path: "/home/me/new", Name: "New one", Trust: TrustReadOnly, CreatedAt: t0, LastUsed: t0.Add(time.Hour), Sessions: 7}
		got, added, err := s.ImportWorkspace(ctx, rec)
		if err != nil || !added {
			t.Fatalf("%+v %v %v", got, added, err)
		}
		want := rec
		want.Sessions = 0
		if got != want {
			t.Errorf("imported %+v, want %+v", got, want)
		}
		if w, err := s.Workspace(ctx, rec.Path); err != nil || *w != want {
			t.Errorf("stored %+v %v", w, err)
		}
		// A second import of it: known, nothing changes.
		if got, added, err := s.ImportWorkspace(ctx, rec); err != nil || added || got != want {
			t.Errorf("again: %+v %v %v", got, added, err)
		}

		// A default name stays the default; no trust is untrusted; the
		// unknown workspace "" is one as any.
		for _, r := range []Workspace{{Path: "/home/me/plain", Name: "plain", CreatedAt: t0, LastUsed: t0}, {Path: "", Name: UnknownWorkspace, Trust: TrustTrusted, CreatedAt: t0}} {
			got, added, err := s.ImportWorkspace(ctx, r)
			if err != nil || !added || got.Name != r.Name || !got.LastUsed.Equal(t0) {
				t.Errorf("%q: %+v %v %v", r.Path, got, added, err)
			}
		}
		if got, err := s.UpdateWorkspace(ctx, Workspace{Path: "/home/me/plain", Trust: TrustTrusted}); err != nil || got.Name != "plain" || got.Trust != TrustTrusted {
			t.Errorf("plain: %+v %v", got, err)
		}
		if w, err := s.Workspace(ctx, ""); err != nil || w.Trust != TrustTrusted || w.Name != UnknownWorkspace {
			t.Errorf("unknown: %+v %v", w, err)
		}

		// Known ones keep their name and trust, higher or lower.
		for _, tc := range []struct{ have, rec Trust }{{TrustTrusted, TrustUntrusted}, {TrustReadOnly, TrustTrusted}, {TrustUntrusted, TrustTrusted}} {
			path := "/home/me/known-" + string(tc.have)
			before, err := s.AddWorkspace(ctx, Workspace{Path: path, Name: "mine", Trust: tc.have})
			if err != nil {
				t.Fatal(err)
			}
			got, added, err := s.ImportWorkspace(ctx, Workspace{Path: path, Name: "theirs", Trust: tc.rec, CreatedAt: t0, LastUsed: t0})
			if err != nil || added || got.Name != "mine" || got.Trust != tc.have {
				t.Errorf("known %s, record %s: %+v %v %v", tc.have, tc.rec, got, added, err)
			}
			// The first use moved back to the record's; the last kept.
			if !got.CreatedAt.Equal(t0) || !got.LastUsed.Equal(before.LastUsed) {
				t.Errorf("times %v %v, want %v %v", got.CreatedAt, got.LastUsed, t0, before.LastUsed)
			}
		}
		// The last use moves on to a later record's.
		later := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
		if got, _, err := s.ImportWorkspace(ctx, Workspace{Path: "/home/me/known-trusted", CreatedAt: later, LastUsed: later}); err != nil || !got.LastUsed.Equal(later) || !got.CreatedAt.Equal(t0) {
			t.Errorf("later: %+v %v", got, err)
		}

		// A record without times is used now; a bad trust is refused.
		start := time.Now().Add(-time.Second)
		if got, _, err := s.ImportWorkspace(ctx, Workspace{Path: "/home/me/timeless"}); err != nil || got.CreatedAt.Before(start) || !got.LastUsed.Equal(got.CreatedAt) {
			t.Errorf("no times: %+v %v", got, err)
		}
		if _, _, err := s.ImportWorkspace(ctx, Workspace{Path: "/home/me/bad", Trust: "root"}); err == nil {
			t.Error("a bad trust was imported")
		}
		if _, err := s.Workspace(ctx, "/home/me/bad"); !errors.Is(err, ErrNotFound) {
			t.Errorf("the bad record was stored: %v", err)
		}
	})
}

// TestImportWorkspacesThenSessions: a whole store's workspaces, then its
// sessions (as hearth migrate copies them): the sessions' Import finds the
// workspaces known, and their names, trust, whether it was chosen and
// the hash of their project config then arrive.
func TestImportWorkspacesThenSessions(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src) // in /home/me/src
	if _, err := src.AddWorkspace(ctx, Workspace{Path: "/home/me/src", Name: "Source", Trust: TrustReadOnly}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddWorkspace(ctx, Workspace{Path: "/home/me/by-hand", Trust: TrustTrusted, ConfigHash: hashA}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.TouchWorkspace(ctx, "/home/me/headless"); err != nil {
		t.Fatal(err)
	}
	ws, err := src.Workspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	chosen := map[string]bool{}
	for _, w := range ws {
		chosen[w.Path] = w.TrustChosen
	}
	hashes := map[string]string{}
	for _, w := range ws {
		hashes[w.Path] = w.ConfigHash
	}
	if !chosen["/home/me/src"] || !chosen["/home/me/by-hand"] || chosen["/home/me/headless"] || hashes["/home/me/by-hand"] != hashA || hashes["/home/me/src"] != "" {
		t.Fatalf("the source's workspaces: %+v", ws)
	}
	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		for _, w := range ws {
			if _, added, err := s.ImportWorkspace(ctx, w); err != nil || !added {
				t.Fatalf("%+v: %v %v", w, added, err)
			}
		}
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		got, err := s.Workspaces(ctx)
		if err != nil || len(got) != len(ws) {
			t.Fatalf("%+v %v, want %+v", got, err, ws)
		}
		byPath := map[string]Workspace{}
		for _, w := range got {
			byPath[w.Path] = w
		}
		for _, w := range ws {
			g := byPath[w.Path]
			if g.Name != w.Name || g.Trust != w.Trust || g.TrustChosen != w.TrustChosen || g.ConfigHash != w.ConfigHash || g.Sessions != w.Sessions || !g.CreatedAt.Equal(w.CreatedAt) || g.LastUsed.Before(w.LastUsed) {
				t.Errorf("%q: %+v, was %+v", w.Path, g, w)
			}
		}
	})
}
