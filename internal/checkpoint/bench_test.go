package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// benchWorkspace makes a workspace of 10,000 files (some 2 KB each, in 400
// folders) and an ignored node_modules of 20,000 more.
func benchWorkspace(b *testing.B) string {
	b.Helper()
	root := b.TempDir()
	body := make([]byte, 2048)
	for i := range body {
		body[i] = byte('a' + i%26)
	}
	for i := range 10000 {
		dir := filepath.Join(root, "src", fmt.Sprintf("pkg%02d", i%20), fmt.Sprintf("sub%02d", (i/20)%20))
		os.MkdirAll(dir, 0o755)
		copy(body, fmt.Sprintf("file %d\n", i))
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d.txt", i)), body, 0o644)
	}
	for i := range 20000 {
		dir := filepath.Join(root, "node_modules", fmt.Sprintf("dep%03d", i%200))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%05d.js", i)), body[:512], 0o644)
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("node_modules/\n"), 0o644)
	return root
}

func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// BenchmarkCheckpoint measures a checkpoint of a 10,000-file workspace
// with a large ignored node_modules: the first (every file stored), one
// after a single file changed, and one with nothing changed (the cost
// every tool call pays), with the disk each adds.
func BenchmarkCheckpoint(b *testing.B) {
	root := benchWorkspace(b)
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		var disk int64
		for b.Loop() {
			dir := StoreDir(b.TempDir(), root)
			s, err := Open(dir, root, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Snapshot(ctx, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			disk = dirSize(dir)
			os.RemoveAll(dir)
			b.StartTimer()
		}
		b.ReportMetric(float64(disk)/(1<<20), "MiB-stored")
	})
	dir := StoreDir(b.TempDir(), root)
	s, err := Open(dir, root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Snapshot(ctx, nil); err != nil {
		b.Fatal(err)
	}
	// A walk of everything with nothing changed: what a restore's
	// snapshot, and a process's first, cost (no file is read: the index
	// knows them).
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.SnapshotAll(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// After a walk, what inotify says changed: nothing.
	b.Run("unchanged", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Snapshot(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// After a command that changed one file.
	b.Run("one-file-changed", func(b *testing.B) {
		start := dirSize(dir)
		f := filepath.Join(root, "src", "pkg03", "sub07", "f00143.txt")
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			os.WriteFile(f, []byte(fmt.Sprintf("edit %d\n", i)), 0o644)
			b.StartTimer()
			if _, err := s.Snapshot(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(dirSize(dir)-start)/float64(i)/1024, "KiB-stored/op")
	})
	// After an edit tool's call: only the file it named is looked at.
	b.Run("after-an-edit", func(b *testing.B) {
		base, err := s.Snapshot(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		rel := "src/pkg05/sub02/f00045.txt"
		f := filepath.Join(root, rel)
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			os.WriteFile(f, []byte(fmt.Sprintf("edit %d\n", i)), 0o644)
			b.StartTimer()
			snap, err := s.SnapshotPaths(ctx, base.Tree, []string{rel}, nil)
			if err != nil {
				b.Fatal(err)
			}
			base = snap
		}
	})
	// The same walk as git's own: `git status` on the same workspace, for
	// a ratio that does not depend on the machine.
	b.Run("git-status", func(b *testing.B) {
		if _, err := exec.LookPath("git"); err != nil {
			b.Skip("no git")
		}
		git := func(args ...string) {
			cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@b", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@b", "GIT_CONFIG_GLOBAL=/dev/null")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
			b.StopTimer()
			git("init", "-q")
			git("add", "-A")
			git("commit", "-qm", "bench")
			b.StartTimer()
		}
		for b.Loop() {
			git("status", "--porcelain")
		}
	})
	b.Run("new-process-unchanged", func(b *testing.B) {
		for b.Loop() {
			s2, err := Open(dir, root, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s2.Snapshot(ctx, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
