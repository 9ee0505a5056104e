package session

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
)

func TestParseTrust(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Trust
	}{
		{"untrusted", TrustUntrusted},
		{"read-only", TrustReadOnly},
		{"readonly", TrustReadOnly},
		{"read_only", TrustReadOnly},
		{" Trusted\n", TrustTrusted},
		{"READ-ONLY", TrustReadOnly},
		{"", ""},
		{"yes", ""},
		{"read only", ""},
		{"trust", ""},
	} {
		got, err := ParseTrust(tc.in)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("ParseTrust(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "trusted, read-only or untrusted") {
			t.Errorf("ParseTrust(%q): the error does not say the values: %v", tc.in, err)
		}
	}
}

func TestDefaultName(t *testing.T) {
	for in, want := range map[string]string{"": "unknown", "/home/me/src/hearth": "hearth", "/": "/", "/srv/x/": "x"} {
		if got := defaultName(in); got != want {
			t.Errorf("defaultName(%q) = %q, want %q", in, got, want)
		}
	}
}

// pause lets the stores' clock (milliseconds) move on.
func pause() { time.Sleep(3 * time.Millisecond) }

func strp(s string) *string { return &s }

// TestWorkspaces: sessions make their workspaces known (the unknown one
// for those without); AddWorkspace creates one or changes only what it
// sets; TouchWorkspace records a use; RemoveWorkspace forgets one, not
// its sessions; List filters by workspace.
func TestWorkspaces(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if ws, err := s.Workspaces(ctx); err != nil || ws == nil || len(ws) != 0 {
			t.Fatalf("a new store: %+v %v", ws, err)
		}
		if _, err := s.Workspace(ctx, "/a"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "workspace /a is not known") {
			t.Errorf("unknown: %v", err)
		}
		create := func(se *Session) {
			t.Helper()
			if err := s.Create(ctx, se); err != nil {
				t.Fatal(err)
			}
			pause()
		}
		a1 := &Session{ID: "a1", Workspace: "/w/a"}
		create(a1)
		create(&Session{ID: "a1-kid", ParentID: "a1", Workspace: "/w/a"})
		create(&Session{ID: "a2", Workspace: "/w/a"})
		if err := s.SetArchived(ctx, "a2", true); err != nil {
			t.Fatal(err)
		}
		create(&Session{ID: "b1", Workspace: "/w/b"})
		create(&Session{ID: "none"})

		ws, err := s.Workspaces(ctx)
		if err != nil || len(ws) != 3 {
			t.Fatalf("%+v %v", ws, err)
		}
		for i, want := range []Workspace{
			{Path: "", Name: "unknown", Trust: TrustUntrusted, Sessions: 1},
			{Path: "/w/b", Name: "b", Trust: TrustUntrusted, Sessions: 1},
			// Top-level sessions, archived included.
			{Path: "/w/a", Name: "a", Trust: TrustUntrusted, Sessions: 2},
		} {
			got := ws[i]
			if got.Path != want.Path || got.Name != want.Name || got.Trust != want.Trust || got.Sessions != want.Sessions ||
				!utcMillis(got.CreatedAt) || !utcMillis(got.LastUsed) || got.LastUsed.Before(got.CreatedAt) {
				t.Errorf("workspace %d: %+v, want %+v", i, got, want)
			}
		}
		a, err := s.Workspace(ctx, "/w/a")
		if err != nil || !a.CreatedAt.Equal(a1.CreatedAt) || a.LastUsed.Before(a.CreatedAt.Add(3*time.Millisecond)) || *a != ws[2] {
			t.Fatalf("/w/a: %+v %v (first session created %v)", a, err, a1.CreatedAt)
		}

		// AddWorkspace: a new one, by default untrusted and named after
		// its folder.
		pause()
		c, err := s.AddWorkspace(ctx, Workspace{Path: "/w/c"})
		if err != nil || c.Path != "/w/c" || c.Name != "c" || c.Trust != TrustUntrusted || c.Sessions != 0 || !utcMillis(c.CreatedAt) || !c.LastUsed.Equal(c.CreatedAt) {
			t.Fatalf("add /w/c: %+v %v", c, err)
		}
		if got, err := s.Workspace(ctx, "/w/c"); err != nil || *got != c {
			t.Errorf("read back %+v %v, want %+v", got, err, c)
		}
		// An existing one: only what is set changes.
		for _, step := range []struct {
			set        Workspace
			name       string
			trust      Trust
			wantErrSub string
		}{
			{Workspace{Path: "/w/a", Trust: TrustTrusted}, "a", TrustTrusted, ""},
			{Workspace{Path: "/w/a", Name: "Project A"}, "Project A", TrustTrusted, ""},
			{Workspace{Path: "/w/a", Trust: "readonly"}, "Project A", TrustReadOnly, ""},
			{Workspace{Path: "/w/a", Trust: "sure", Name: "ignored"}, "Project A", TrustReadOnly, `unknown trust level "sure"`},
			{Workspace{Path: "/w/a", Trust: TrustTrusted, Name: "A", CreatedAt: time.Unix(1, 0), LastUsed: time.Unix(2, 0), Sessions: 99}, "A", TrustTrusted, ""},
		} {
			got, err := s.AddWorkspace(ctx, step.set)
			if step.wantErrSub != "" {
				if err == nil || !strings.Contains(err.Error(), step.wantErrSub) {
					t.Errorf("add %+v: %v, want an error about %q", step.set, err, step.wantErrSub)
				}
			} else if err != nil || got.Name != step.name || got.Trust != step.trust || !got.CreatedAt.Equal(a.CreatedAt) || !got.LastUsed.Equal(a.LastUsed) || got.Sessions != 2 {
				t.Errorf("add %+v: %+v %v", step.set, got, err)
			}
			if got, err := s.Workspace(ctx, "/w/a"); err != nil || got.Name != step.name || got.Trust != step.trust {
				t.Errorf("after add %+v: %+v %v", step.set, got, err)
			}
		}
		// A new one with a name and a trust.
		if d, err := s.AddWorkspace(ctx, Workspace{Path: "/w/d", Name: "Dee", Trust: TrustReadOnly}); err != nil || d.Name != "Dee" || d.Trust != TrustReadOnly {
			t.Errorf("add /w/d: %+v %v", d, err)
		}
		if _, err := s.AddWorkspace(ctx, Workspace{Path: "/w/e", Trust: "all"}); err == nil {
			t.Error("a new workspace with a bad trust was added")
		}
		if _, err := s.Workspace(ctx, "/w/e"); !errors.Is(err, ErrNotFound) {
			t.Errorf("/w/e: %v", err)
		}

		// TouchWorkspace: a use now; trust and name kept.
		pause()
		before := time.Now().Add(-time.Millisecond)
		got, err := s.TouchWorkspace(ctx, "/w/a")
		if err != nil || got.Trust != TrustTrusted || got.Name != "A" || !got.CreatedAt.Equal(a.CreatedAt) || got.LastUsed.Before(before) || got.Sessions != 2 {
			t.Errorf("touch /w/a: %+v %v", got, err)
		}
		if ws, _ := s.Workspaces(ctx); len(ws) != 5 || ws[0].Path != "/w/a" {
			t.Errorf("after a touch, /w/a first: %+v", ws)
		}
		// A new path: untrusted.
		if got, err := s.TouchWorkspace(ctx, "/w/new"); err != nil || got.Trust != TrustUntrusted || got.Name != "new" || got.Sessions != 0 || !got.CreatedAt.Equal(got.LastUsed) {
			t.Errorf("touch /w/new: %+v %v", got, err)
		}

		// List by workspace.
		for _, tc := range []struct {
			opts ListOptions
			want []string
		}{
			{ListOptions{Workspace: strp("/w/a")}, []string{"a1"}},
			{ListOptions{Workspace: strp("/w/a"), Archived: true}, []string{"a2"}},
			{ListOptions{Workspace: strp("/w/a"), ParentID: "a1"}, []string{"a1-kid"}},
			{ListOptions{Workspace: strp("")}, []string{"none"}},
			{ListOptions{Workspace: strp("/w/c")}, nil},
			{ListOptions{}, []string{"none", "b1", "a1"}},
		} {
			l, err := s.List(ctx, tc.opts)
			var ids []string
			for _, se := range l {
				ids = append(ids, se.ID)
			}
			if err != nil || fmt.Sprint(ids) != fmt.Sprint(tc.want) {
				t.Errorf("list %+v: %v %v, want %v", tc.opts, ids, err, tc.want)
			}
		}

		// RemoveWorkspace: the record goes, the sessions stay.
		if err := s.RemoveWorkspace(ctx, "/w/a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Workspace(ctx, "/w/a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("removed: %v", err)
		}
		if err := s.RemoveWorkspace(ctx, "/w/a"); !errors.Is(err, ErrNotFound) {
			t.Errorf("removed twice: %v", err)
		}
		if se, err := s.Get(ctx, "a1"); err != nil || se.Workspace != "/w/a" {
			t.Errorf("a session of a removed workspace: %+v %v", se, err)
		}
		if l, err := s.List(ctx, ListOptions{Workspace: strp("/w/a")}); err != nil || len(l) != 1 {
			t.Errorf("the sessions of a removed workspace: %+v %v", l, err)
		}
		// A fork in it makes it known again: untrusted, its old name and
		// trust forgotten.
		fork := &Session{}
		if err := s.Fork(ctx, "a1", 0, fork); err != nil || fork.Workspace != "/w/a" {
			t.Fatalf("fork %+v %v", fork, err)
		}
		if got, err := s.Workspace(ctx, "/w/a"); err != nil || got.Trust != TrustUntrusted || got.Name != "a" || got.Sessions != 3 ||
			!got.CreatedAt.Equal(fork.CreatedAt) {
			t.Errorf("after a fork: %+v %v", got, err)
		}
		// The unknown workspace can be removed, renamed, trusted.
		if err := s.RemoveWorkspace(ctx, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Workspace(ctx, ""); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "unknown workspace") {
			t.Errorf("the unknown workspace removed: %v", err)
		}
		if got, err := s.AddWorkspace(ctx, Workspace{}); err != nil || got.Path != "" || got.Name != "unknown" || got.Trust != TrustUntrusted || got.Sessions != 1 {
			t.Errorf("the unknown workspace added: %+v %v", got, err)
		}
		// A session is deleted: its workspace stays.
		if err := s.Delete(ctx, "b1"); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Workspace(ctx, "/w/b"); err != nil || got.Sessions != 0 {
			t.Errorf("/w/b without sessions: %+v %v", got, err)
		}
	})
}

// TestTouchWorkspaceConcurrently: processes (stores opened on one
// database) and goroutines that touch a new workspace at once make one,
// without error, and create sessions in it at once.
func TestTouchWorkspaceConcurrently(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var stores []Store
			if kind == "sqlite" {
				path := filepath.Join(t.TempDir(), "hearth.db")
				for range 3 {
					s, err := Open(ctx, path)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { s.Close() })
					stores = append(stores, s)
				}
			} else {
				url := pgtest.URL(t)
				for range 3 {
					stores = append(stores, openPostgres(t, url))
				}
			}
			for round := range 5 {
				path := fmt.Sprintf("/w/round-%d", round)
				var wg sync.WaitGroup
				errs := make(chan error, 100)
				for i := range 24 {
					s := stores[i%len(stores)]
					wg.Go(func() {
						var err error
						if i%2 == 0 {
							_, err = s.TouchWorkspace(ctx, path)
						} else {
							err = s.Create(ctx, &Session{Workspace: path})
						}
						errs <- err
					})
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					if err != nil {
						t.Errorf("round %d: %v", round, err)
					}
				}
				ws, err := stores[0].Workspaces(ctx)
				n := 0
				for _, w := range ws {
					if w.Path == path {
						n++
						if w.Sessions != 12 || w.Trust != TrustUntrusted {
							t.Errorf("round %d: %+v", round, w)
						}
					}
				}
				if err != nil || n != 1 {
					t.Errorf("round %d: %d workspaces %s: %+v %v", round, n, path, ws, err)
				}
			}
		})
	}
}
