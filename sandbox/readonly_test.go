package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

const roReason = "this workspace is read-only (its trust level): nothing in it may be changed; " +
	"the user can run `hearth workspaces trust /path trusted` to allow changes"

// A read-only root refuses every write, wherever it would go, with the
// reason it was given; reading is what it was.
func TestWithReadOnlyRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	ref := filepath.Join(base, "ref")
	for _, d := range []string{filepath.Join(root, "src"), filepath.Join(root, ".git"), ref} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "src", "a.go"), filepath.Join(ref, "r.txt"), filepath.Join(root, "key")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plain, err := New(root, ref)
	if err != nil {
		t.Fatal(err)
	}
	plain = plain.WithSecrets([]string{filepath.Join(root, "key")})
	ws := plain.WithReadOnlyRoot(roReason)
	r := ws.Root()

	if reason, ok := ws.ReadOnlyRoot(); !ok || reason != roReason {
		t.Errorf("ReadOnlyRoot() = %q, %v; want the reason, true", reason, ok)
	}
	if _, ok := plain.ReadOnlyRoot(); ok {
		t.Error("WithReadOnlyRoot changed the workspace it was called on")
	}
	if err := plain.Writable(filepath.Join(r, "src", "a.go")); err != nil {
		t.Errorf("the original workspace no longer writes: %v", err)
	}

	// Writing: refused, with the reason, for every path.
	for _, p := range []string{"src/a.go", "new.go", "src/new/dir/file.go", ".", "", filepath.Join(r, "src", "a.go"),
		".git/config", "../outside", "/etc/passwd", filepath.Join(ref, "r.txt"), "a\x00b", "~/x"} {
		_, err := ws.Resolve(p, Write)
		var pe *PathError
		if !errors.As(err, &pe) || pe.Rule != roReason || pe.Access != Write || pe.Path != p {
			t.Errorf("Resolve(%q, Write) = %v; want a *PathError with the read-only reason", p, err)
		}
	}
	for _, p := range []string{filepath.Join(r, "src", "a.go"), filepath.Join(r, "new.go"), r, filepath.Join(r, ".git", "HEAD"), "/etc/passwd", "relative"} {
		err := ws.Writable(p)
		var pe *PathError
		if !errors.As(err, &pe) || pe.Rule != roReason || pe.Access != Write {
			t.Errorf("Writable(%s) = %v; want a *PathError with the read-only reason", p, err)
		}
	}

	// Reading: as before, secrets and all.
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"src/a.go", true},
		{".", true},
		{".git/config", true},
		{filepath.Join(ref, "r.txt"), true},
		{"key", false},
		{"../outside", false},
	} {
		got, err := ws.Resolve(tc.path, Read)
		want, werr := plain.Resolve(tc.path, Read)
		if (err == nil) != tc.ok || got != want || (err == nil) != (werr == nil) {
			t.Errorf("Resolve(%q, Read) = %q, %v; want %q, %v (as without the read-only root)", tc.path, got, err, want, werr)
		}
	}
	if err := ws.Readable(filepath.Join(r, "src", "a.go")); err != nil {
		t.Errorf("Readable: %v", err)
	}
	if ws.Base(filepath.Join(r, "src", "a.go")) != r {
		t.Error("Base changed")
	}
}

// WithSecrets copies the workspace: the read-only root goes with it, and
// WithReadOnlyRoot keeps the secret locations.
func TestReadOnlyRootSurvivesWithSecrets(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "key"), []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := New(root)
	if err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string]*Workspace{
		"WithSecrets after":  ws.WithReadOnlyRoot(roReason).WithSecrets([]string{filepath.Join(root, "key")}),
		"WithSecrets before": ws.WithSecrets([]string{filepath.Join(root, "key")}).WithReadOnlyRoot(roReason),
	} {
		t.Run(name, func(t *testing.T) {
			if reason, ok := w.ReadOnlyRoot(); !ok || reason != roReason {
				t.Errorf("ReadOnlyRoot() = %q, %v", reason, ok)
			}
			if _, err := w.Resolve("a.go", Write); err == nil {
				t.Error("a write was allowed")
			}
			if _, err := w.Resolve("key", Read); err == nil {
				t.Error("the secret is readable")
			}
			if _, err := w.Resolve(".", Read); err != nil {
				t.Errorf("reading the root: %v", err)
			}
		})
	}
	// No reason: a generic one, still a refusal that says what to do.
	w := ws.WithReadOnlyRoot("")
	if reason, ok := w.ReadOnlyRoot(); !ok || reason == "" {
		t.Errorf("an empty reason: ReadOnlyRoot() = %q, %v", reason, ok)
	}
	if _, err := w.Resolve("a.go", Write); err == nil {
		t.Error("an empty reason: a write was allowed")
	}
}
