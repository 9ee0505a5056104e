package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/session"
)

// TestMigrateWorkspaces: hearth migrate copies the workspaces' records
// (names, trust levels, first and last use), the folders added by hand
// without a session too; a workspace DST has keeps DST's name and trust,
// higher or lower than SRC's, and the output says which trust differs.
func TestMigrateWorkspaces(t *testing.T) {
	t.Run("sqlite to postgres", func(t *testing.T) {
		url := pgtest.URL(t)
		migrateWorkspacesTo(t, "postgres", map[string]string{"HEARTH_DATABASE_URL": url}, func() session.Store {
			st, err := session.OpenPostgres(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
	t.Run("sqlite to a file", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "dst.db")
		migrateWorkspacesTo(t, dst, nil, func() session.Store {
			st, err := session.Open(context.Background(), dst)
			if err != nil {
				t.Fatal(err)
			}
			return st
		})
	})
}

func migrateWorkspacesTo(t *testing.T, to string, env map[string]string, open func() session.Store) {
	ctx := context.Background()
	home := t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	env["HEARTH_HOME"] = home
	src, err := session.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	inApp := &session.Session{Title: "in app", Workspace: "/home/me/app"}
	if err := src.Create(ctx, inApp); err != nil {
		t.Fatal(err)
	}
	for _, w := range []session.Workspace{
		{Path: "/home/me/app", Name: "App", Trust: session.TrustTrusted},
		{Path: "/home/me/docs", Trust: session.TrustReadOnly}, // by hand, no session
		{Path: "/home/me/shared", Name: "theirs", Trust: session.TrustTrusted},
		{Path: "/home/me/ro", Trust: session.TrustTrusted},
	} {
		if _, err := src.AddWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	srcWS, err := src.Workspaces(ctx)
	if err != nil || len(srcWS) != 4 {
		t.Fatalf("%+v %v", srcWS, err)
	}
	dst := open()
	defer dst.Close()
	// DST knows two of them, with a lower and a higher trust.
	for _, w := range []session.Workspace{
		{Path: "/home/me/shared", Name: "Shared here", Trust: session.TrustUntrusted},
		{Path: "/home/me/ro", Trust: session.TrustReadOnly},
	} {
		if _, err := dst.AddWorkspace(ctx, w); err != nil {
			t.Fatal(err)
		}
	}

	sum, errOut := migrateJSON(t, env, "--from", "sqlite", "--to", to, "--dry-run")
	if sum.Workspaces != 4 || sum.WorkspacesAdded != 2 || sum.WorkspacesKept != 2 || sum.TrustKept != 2 ||
		!strings.Contains(errOut, "would add 2 workspaces (names, trust levels), keep 2 that") {
		t.Errorf("dry run: %+v\n%s", sum, errOut)
	}
	if ws, err := dst.Workspaces(ctx); err != nil || len(ws) != 2 {
		t.Errorf("the dry run wrote workspaces: %+v %v", ws, err)
	}

	sum, errOut = migrateJSON(t, env, "--from", "sqlite", "--to", to)
	if sum.Moved != 1 || sum.Workspaces != 4 || sum.WorkspacesAdded != 2 || sum.WorkspacesKept != 2 || sum.TrustKept != 2 {
		t.Errorf("migrate: %+v\n%s", sum, errOut)
	}
	for _, want := range []string{"added 2 workspaces (names, trust levels), kept 2 that",
		"/home/me/shared keeps its trust in", ": untrusted (in " + filepath.Join(home, "hearth.db") + ": trusted)",
		"/home/me/ro keeps its trust in", ": read-only (in ", "hearth workspaces trust PATH LEVEL"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the output lacks %q:\n%s", want, errOut)
		}
	}
	got, err := dst.Workspaces(ctx)
	if err != nil || len(got) != 4 {
		t.Fatalf("%+v %v", got, err)
	}
	byPath := map[string]session.Workspace{}
	for _, w := range got {
		byPath[w.Path] = w
	}
	for _, w := range srcWS {
		g := byPath[w.Path]
		switch w.Path {
		case "/home/me/shared":
			if g.Name != "Shared here" || g.Trust != session.TrustUntrusted {
				t.Errorf("DST's record did not win: %+v", g)
			}
		case "/home/me/ro":
			if g.Name != "ro" || g.Trust != session.TrustReadOnly {
				t.Errorf("DST's record did not win: %+v", g)
			}
		default:
			if g.Name != w.Name || g.Trust != w.Trust || g.Sessions != w.Sessions || !g.CreatedAt.Equal(w.CreatedAt) || !g.LastUsed.Equal(w.LastUsed) {
				t.Errorf("%s arrived as %+v, was %+v", w.Path, g, w)
			}
		}
	}

	// Again: nothing new; DST's trust still kept.
	sum, _ = migrateJSON(t, env, "--from", "sqlite", "--to", to)
	if sum.Skipped != 1 || sum.WorkspacesAdded != 0 || sum.WorkspacesKept != 4 || sum.TrustKept != 2 {
		t.Errorf("second run: %+v", sum)
	}
}
