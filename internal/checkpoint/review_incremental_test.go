package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func compareIncWalk(t *testing.T, s, ref *Store, force []string) {
	t.Helper()
	ctx := context.Background()
	inc, err := s.Snapshot(ctx, force)
	if err != nil {
		t.Fatal(err)
	}
	all, err := ref.SnapshotAll(ctx, force)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Tree != all.Tree {
		a, _ := ref.Files(all.Tree)
		i, _ := s.Files(inc.Tree)
		for _, c := range Diff(a, i) {
			t.Logf("%s: walk %+v, incremental %+v", c.Path, c.From, c.To)
		}
		t.Errorf("incremental differs from a walk (walks=%d)", s.walks)
	}
}

func TestHardLinkInsideWorkspace(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{"a/f.txt": "one", "b/keep.txt": "k"})
	if err := os.Link(filepath.Join(root, "a/f.txt"), filepath.Join(root, "b/f.txt")); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	if _, err := s.Snapshot(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(root, "a/f.txt"), os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("two, edited in place")
	f.Close()
	compareIncWalk(t, s, ref, nil)
}

func TestHardLinkChmod(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{"a/f.sh": "x", "b/keep.txt": "k"})
	os.Link(filepath.Join(root, "a/f.sh"), filepath.Join(root, "b/f.sh"))
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), nil)
	os.Chmod(filepath.Join(root, "a/f.sh"), 0o755)
	compareIncWalk(t, s, ref, nil)
}

func TestGitInfoExclude(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{".git/info/exclude": "data/\n", "a.txt": "a", "data/x.csv": "1"})
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), nil)
	write(t, root, layout{".git/info/exclude": "\n"})
	compareIncWalk(t, s, ref, nil)
	write(t, root, layout{"data/x.csv": "2"})
	compareIncWalk(t, s, ref, nil)
}

func TestForcedIgnoredNestedFolderChmod(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{".gitignore": "build/\n", "build/sub/kept.txt": "k", "a.txt": "a"})
	force := []string{"build/sub/kept.txt"}
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), force)
	os.Chmod(filepath.Join(root, "build/sub"), 0o700)
	compareIncWalk(t, s, ref, force)
}

func TestForcedIgnoredFolderReplacedByLink(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{".gitignore": "build/\n", "build/sub/kept.txt": "k", "src/kept.txt": "SRC", "a.txt": "a"})
	force := []string{"build/sub/kept.txt"}
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), force)
	os.RemoveAll(filepath.Join(root, "build/sub"))
	os.Symlink("../src", filepath.Join(root, "build/sub"))
	compareIncWalk(t, s, ref, force)
}

func TestForcedIgnoredFolderRemoved(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{".gitignore": "build/\n", "build/sub/kept.txt": "k", "build/sub/other/x": "x", "a.txt": "a"})
	force := []string{"build/sub/kept.txt"}
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), force)
	os.RemoveAll(filepath.Join(root, "build/sub"))
	compareIncWalk(t, s, ref, force)
}

func TestForceListShrinks(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{".gitignore": "*.log\n", "src/app.log": "l", "src/a.go": "a"})
	s := newStore(t, root, Options{})
	defer s.Close()
	ref := newStore(t, root, Options{})
	defer ref.Close()
	s.Snapshot(context.Background(), []string{"src/app.log"})
	compareIncWalk(t, s, ref, nil)
}
