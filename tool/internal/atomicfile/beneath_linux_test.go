package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// exchange swaps two directories in one step (renameat2 RENAME_EXCHANGE),
// as a process racing the writer can.
func exchange(t *testing.T, a, b string) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Fatal(err)
	}
}

// The directory is checked where the kernel says it is once it is open,
// not where it was when the path was checked: one exchanged with git's
// hooks directory after the open is refused, and one moved there after the
// write has the file taken back out.
func TestWriteBeneathChecksTheOpenDirectory(t *testing.T) {
	for _, stage := range []string{"opened", "renamed"} {
		t.Run(stage, func(t *testing.T) {
			ws, root := workspace(t)
			d, hooks := filepath.Join(root, "d"), filepath.Join(root, ".git", "hooks")
			for _, dir := range []string{d, hooks} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			testHook = func(s string) {
				if s == stage {
					exchange(t, d, hooks)
				}
			}
			defer func() { testHook = nil }()
			err := WriteBeneath(root, filepath.Join(d, "pre-commit"), []byte("#!/bin/sh\n"), 0o755, ws.Writable)
			if err == nil || !strings.Contains(err.Error(), "not written by tools") {
				t.Errorf("got %v, want a refusal naming the protected path", err)
			}
			for _, dir := range []string{d, hooks} {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					t.Errorf("%s was left in %s", e.Name(), dir)
				}
			}
		})
	}
}

// The same for git's own directories wherever they are (a repository's
// .git, a nested one's) and .hearth: a directory exchanged with one of them
// after the open, or after the write, is seen where the kernel says it is.
func TestWriteBeneathExchangedWithGit(t *testing.T) {
	for _, protected := range []string{".git", filepath.Join("sub", ".git"), filepath.Join("a", "b", ".git", "modules", "x"), ".hearth"} {
		for _, stage := range []string{"opened", "renamed"} {
			t.Run(protected+" "+stage, func(t *testing.T) {
				ws, root := workspace(t)
				d, p := filepath.Join(root, "d"), filepath.Join(root, protected)
				for _, dir := range []string{d, p} {
					if err := os.MkdirAll(dir, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				testHook = func(s string) {
					if s == stage {
						exchange(t, d, p)
					}
				}
				defer func() { testHook = nil }()
				err := WriteBeneath(root, filepath.Join(d, "commondir"), []byte("/tmp/evil\n"), 0o644, ws.Writable)
				if err == nil || !strings.Contains(err.Error(), "not written by tools") {
					t.Errorf("got %v, want a refusal naming the protected path", err)
				}
				for _, dir := range []string{d, p} {
					entries, _ := os.ReadDir(dir)
					for _, e := range entries {
						t.Errorf("%s was left in %s", e.Name(), dir)
					}
				}
			})
		}
	}
}

// A directory moved out of the workspace while the file is written: the
// file is taken back out and the write reported as failed.
func TestWriteBeneathDirectoryMovedOut(t *testing.T) {
	ws, root := workspace(t)
	outside := t.TempDir()
	d := filepath.Join(root, "d")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	testHook = func(s string) {
		if s == "renamed" {
			if err := os.Rename(d, filepath.Join(outside, "d")); err != nil {
				t.Fatal(err)
			}
		}
	}
	defer func() { testHook = nil }()
	err := WriteBeneath(root, filepath.Join(d, "f"), []byte("x"), 0o644, ws.Writable)
	if err == nil || !strings.Contains(err.Error(), "moved") {
		t.Errorf("got %v, want an error saying the directory moved", err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "d", "f")); err == nil {
		t.Error("the file was left outside the workspace")
	}
}

// A directory that cannot be listed (write and search only) is still
// written in, through an O_PATH descriptor.
func TestWriteBeneathUnreadableDirectory(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads any directory")
	}
	ws, root := workspace(t)
	d := filepath.Join(root, "wx")
	if err := os.Mkdir(d, 0o300); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(d, 0o755)
	if err := WriteBeneath(root, filepath.Join(d, "f"), []byte("x"), 0o644, ws.Writable); err != nil {
		t.Fatal(err)
	}
}

// TestCheckBeneathHardLink: a file with another name (a hard link, maybe to
// a file outside the workspace) is not written through an editor that
// saves in place.
func TestCheckBeneathHardLink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim.txt")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "linked.txt")
	if err := os.Link(target, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := CheckBeneath(root, link, nil); err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("a hard-linked file: %v", err)
	}
	plain := filepath.Join(root, "plain.txt")
	os.WriteFile(plain, []byte("x"), 0o644)
	if err := CheckBeneath(root, plain, nil); err != nil {
		t.Errorf("a plain file: %v", err)
	}
}
