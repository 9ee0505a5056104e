// Package gitshadow measures the alternative to Hearth's checkpoint store
// that issue 18 names: a shadow git repository (go-git), its storage
// outside the workspace and the workspace as its work tree. It is its own
// module so that go-git's whole dependency tree stays out of Hearth's.
// Compare with internal/checkpoint's BenchmarkCheckpoint, on the same
// workspace shape, in the same run (docs/benchmarks.md).
package gitshadow

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
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

// BenchmarkGoGitShadow measures the alternative: a shadow git repository
// (go-git, its storage outside the workspace, the workspace as its work
// tree), committing everything after one file changed.
func BenchmarkGoGitShadow(b *testing.B) {
	root := benchWorkspace(b)
	shadow := b.TempDir()
	st := filesystem.NewStorage(osfs.New(shadow), cache.NewObjectLRUDefault())
	repo, err := git.Init(st, osfs.New(root))
	if err != nil {
		b.Fatal(err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		b.Fatal(err)
	}
	sig := &object.Signature{Name: "hearth", Email: "hearth@localhost", When: time.Unix(0, 0)}
	commit := func() {
		if err := wt.AddWithOptions(&git.AddOptions{All: true}); err != nil {
			b.Fatal(err)
		}
		if _, err := wt.Commit("checkpoint", &git.CommitOptions{Author: sig, AllowEmptyCommits: true}); err != nil {
			b.Fatal(err)
		}
	}
	commit()
	b.Run("one-file-changed", func(b *testing.B) {
		f := filepath.Join(root, "src", "pkg03", "sub07", "f00143.txt")
		i := 0
		for b.Loop() {
			b.StopTimer()
			i++
			os.WriteFile(f, []byte(fmt.Sprintf("edit %d\n", i)), 0o644)
			b.StartTimer()
			commit()
		}
	})
	// What the issue warned of: even with its storage elsewhere, go-git's
	// Init writes a .git file (a pointer to the storage) into the work
	// tree — the user's project.
	if fi, err := os.Lstat(filepath.Join(root, ".git")); err == nil {
		data, _ := os.ReadFile(filepath.Join(root, ".git"))
		b.Logf("go-git wrote .git into the work tree (%s, %q)", fi.Mode(), data)
	}
}
