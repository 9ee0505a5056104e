package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/session"
)

// TestWorkspacesRmRemovedFolder: rm forgets a folder that is gone by the
// path the user knows, though a parent of it is a symlink (the store keeps
// the resolved path: the longest existing part is resolved, the rest
// appended); a path recorded as given is tried next; and when neither is
// known, the error names both and points at the list.
func TestWorkspacesRmRemovedFolder(t *testing.T) {
	home := t.TempDir()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(base, "real")
	for _, d := range []string{"proj", "other"} {
		if err := os.MkdirAll(filepath.Join(real, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HEARTH_HOME": home, "NO_COLOR": "1"}
	if code, _, e := runHearth(t, env, "workspaces", "add", filepath.Join(link, "proj", ".")); code != 0 {
		t.Fatal(e)
	}
	// Gone, and deeper than one level: real/proj/sub/deeper never was.
	if err := os.RemoveAll(filepath.Join(real, "proj")); err != nil {
		t.Fatal(err)
	}
	code, _, e := runHearth(t, env, "workspaces", "rm", filepath.Join(link, "proj"))
	if code != 0 || !strings.Contains(e, "Forgot "+filepath.Join(real, "proj")) {
		t.Fatalf("rm of a removed folder under a symlink: exit %d: %s", code, e)
	}

	// A path the store keeps unresolved (recorded as given): tried after
	// the resolved one.
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	asGiven := filepath.Join(link, "other")
	if _, err := st.AddWorkspace(ctx, session.Workspace{Path: asGiven}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := os.RemoveAll(filepath.Join(real, "other")); err != nil {
		t.Fatal(err)
	}
	if code, _, e := runHearth(t, env, "workspaces", "rm", asGiven); code != 0 || !strings.Contains(e, "Forgot "+asGiven) {
		t.Fatalf("rm of a path recorded as given: exit %d: %s", code, e)
	}

	// Neither known: both named, and where the exact paths are.
	code, _, e = runHearth(t, env, "workspaces", "rm", filepath.Join(link, "never", "was"))
	for _, want := range []string{`"` + filepath.Join(real, "never", "was") + `"`, `"` + filepath.Join(link, "never", "was") + `"`, "is not a known workspace", "hearth workspaces' lists the exact paths"} {
		if code != 2 || !strings.Contains(e, want) {
			t.Errorf("exit %d, the error lacks %q: %s", code, want, e)
		}
	}
	// An existing folder that is not known: its resolved path alone.
	code, _, e = runHearth(t, env, "workspaces", "rm", link)
	if code != 2 || !strings.Contains(e, `(tried "`+real+`")`) {
		t.Errorf("exit %d: %s", code, e)
	}
}
