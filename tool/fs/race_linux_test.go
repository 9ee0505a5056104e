package fs

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// swapForSymlink replaces the directory dir with a symlink to target, as a
// process racing the tool would between its check and its write.
func swapForSymlink(t *testing.T, dir, target string) {
	t.Helper()
	if err := os.Rename(dir, dir+".moved"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, dir); err != nil {
		t.Fatal(err)
	}
}

// A directory of the path swapped for a symlink after the check: the write
// must not follow it, whether it leads outside the workspace or into a
// protected directory inside it. (Before the fix, write_file wrote by the
// path checked and followed the symlink.)
func TestWriteFileSwappedDirectory(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		target     func(k *kit, outside string) string
		victim     func(k *kit, outside string) string
	}{
		{"outside", "d/pwned", func(k *kit, o string) string { return o }, func(k *kit, o string) string { return filepath.Join(o, "pwned") }},
		{"outside, new subdirectory", "d/sub/pwned", func(k *kit, o string) string { return o }, func(k *kit, o string) string { return filepath.Join(o, "sub") }},
		{"outside, existing file", "d/victim", func(k *kit, o string) string { return o }, nil},
		{"git hooks", "d/pre-commit", func(k *kit, o string) string { return filepath.Join(k.root, ".git", "hooks") },
			func(k *kit, o string) string { return filepath.Join(k.root, ".git", "hooks", "pre-commit") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t, map[string]string{"d/victim": "mine\n", ".git/hooks/README": "hooks\n"}, Limits{})
			outside := t.TempDir()
			if err := os.WriteFile(filepath.Join(outside, "victim"), []byte("keep me\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := k.call(t, "read_file", map[string]any{"file_path": "d/victim"}); err != nil {
				t.Fatal(err)
			}
			testHookBeforeWrite = func(string) { swapForSymlink(t, filepath.Join(k.root, "d"), tc.target(k, outside)) }
			defer func() { testHookBeforeWrite = nil }()
			_, err := k.call(t, "write_file", map[string]any{"file_path": tc.path, "content": "written by the model\n"})
			if err == nil {
				t.Error("write_file succeeded through a directory swapped for a symlink")
			} else if !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("the error does not say why: %v", err)
			}
			if tc.victim != nil {
				if _, err := os.Lstat(tc.victim(k, outside)); err == nil {
					t.Errorf("%s was written", tc.victim(k, outside))
				}
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "victim")); string(b) != "keep me\n" {
				t.Errorf("the file outside was overwritten: %q", b)
			}
			entries, _ := os.ReadDir(outside)
			if len(entries) != 1 {
				t.Errorf("the directory outside now holds %d entries", len(entries))
			}
		})
	}
}

// The real race: a process (here a goroutine) exchanges a directory of the
// workspace with a symlink to a directory outside it, as fast as it can,
// while write_file writes into it. Before the fix this escaped within
// 100 ms; now no write may land outside.
func TestWriteFileExchangeRace(t *testing.T) {
	k := newKit(t, map[string]string{"d/keep": "x\n"}, Limits{})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(k.root, "L")); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		d, l := filepath.Join(k.root, "d"), filepath.Join(k.root, "L")
		for !stop.Load() {
			_ = unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, l, unix.RENAME_EXCHANGE)
		}
	}()
	defer func() { stop.Store(true); <-done }()
	dur := 1500 * time.Millisecond
	if testing.Short() {
		dur = 300 * time.Millisecond
	}
	wrote := 0
	for start := time.Now(); time.Since(start) < dur; {
		if _, err := k.call(t, "write_file", map[string]any{"file_path": "d/pwned", "content": "written by the model\n"}); err == nil {
			wrote++
		}
		if entries, _ := os.ReadDir(outside); len(entries) > 0 {
			t.Fatalf("write_file wrote outside the workspace: %s", entries[0].Name())
		}
	}
	t.Logf("%d writes succeeded (inside the workspace) while the directory was being exchanged", wrote)
}
