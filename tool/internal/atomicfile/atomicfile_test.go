package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
)

func workspace(t *testing.T) (*sandbox.Workspace, string) {
	t.Helper()
	ws, err := sandbox.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws, ws.Root()
}

func TestWriteBeneath(t *testing.T) {
	ws, root := workspace(t)
	// A new file, in directories that do not exist yet: made, with perm.
	p := filepath.Join(root, "a", "b", "new.txt")
	if err := WriteBeneath(root, p, []byte("one\n"), 0o640, ws.Writable); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("new file mode %v, want 0640", fi.Mode().Perm())
	}
	// An existing file keeps its mode.
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteBeneath(root, p, []byte("two\n"), 0o644, ws.Writable); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o755 {
		t.Errorf("rewritten file mode %v, want 0755 kept", fi.Mode().Perm())
	}
	if b, _ := os.ReadFile(p); string(b) != "two\n" {
		t.Errorf("content %q", b)
	}
	// A file at the root itself, and a very long name.
	long := strings.Repeat("n", 250)
	for _, name := range []string{"top.txt", long} {
		if err := WriteBeneath(root, filepath.Join(root, name), []byte("x"), 0o644, nil); err != nil {
			t.Errorf("%.20s: %v", name, err)
		}
	}
	// No temporary file is left behind.
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".hearth-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

func TestWriteBeneathRefuses(t *testing.T) {
	ws, root := workspace(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "target"), []byte("t"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("dir", filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(filepath.Join(root, "fifo")); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, tc := range []struct{ path, want string }{
		{filepath.Join(outside, "f"), "not a file inside"},
		{root, "not a file inside"},
		{filepath.Join(root, ".."), "not a file inside"},
		{filepath.Join(root, "dir"), "not a regular file"},
		{filepath.Join(root, "link"), "not a regular file"},
		{filepath.Join(root, "out", "f"), "symbolic link"},
		{filepath.Join(root, "dirlink", "f"), "symbolic link"},
		{filepath.Join(root, "target", "f"), "not a directory"},
		{filepath.Join(root, ".git", "hooks", "pre-commit"), "not written by tools"},
		{filepath.Join(root, ".hearth", "config.toml"), "not written by tools"},
		{filepath.Join(root, ".git"), "git's own files"}, // a .git file where there is no repository
		{filepath.Join(root, ".git", "commondir"), "git's own files"},
		{filepath.Join(root, "dir", ".git"), "git's own files"},
		{filepath.Join(root, "dir", ".git", "config"), "git's own files"},
		{filepath.Join(root, "fifo"), "is a named pipe (FIFO), not a regular file"},
	} {
		err := WriteBeneath(root, tc.path, []byte("x"), 0o644, ws.Writable)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error saying %q", tc.path, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("something was written outside: %s", entries[0].Name())
	}
	if b, _ := os.ReadFile(filepath.Join(root, "target")); string(b) != "t" {
		t.Errorf("the symlink's target was written: %q", b)
	}
}
