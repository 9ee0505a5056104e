package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// tree describes a workspace for tests: path → content; a value starting
// with "->" is a symlink to the rest, "/" ending a key is an empty
// directory.
type layout map[string]string

func write(t *testing.T, root string, l layout) {
	t.Helper()
	for p, v := range l {
		full := filepath.Join(root, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(full)
		var err error
		if target, ok := strings.CutPrefix(v, "->"); ok {
			err = os.Symlink(target, full)
		} else {
			err = os.WriteFile(full, []byte(v), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// readState reads every path below root (but .git) as "kind mode content".
func readState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = "dir " + fi.Mode().Perm().String()
		default:
			data, _ := os.ReadFile(p)
			out[rel] = "file " + fi.Mode().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffStates(t *testing.T, want, got map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			t.Errorf("%s: want %q, got %q", k, want[k], got[k])
		}
	}
}

func newStore(t *testing.T, root string, opts Options) *Store {
	t.Helper()
	s, err := Open(StoreDir(t.TempDir(), root), root, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// restoreTo brings the whole workspace to tree, as a rewind does.
func restoreTo(t *testing.T, s *Store, tree string) Restored {
	t.Helper()
	ctx := context.Background()
	now, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.Files(now.Tree)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Files(tree)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range Diff(a, b) {
		paths = append(paths, c.Path)
	}
	r, err := s.Restore(ctx, tree, paths, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Done(r.Journal); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSnapshotAndRestoreEveryKindOfChange(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	write(t, outside, layout{"canary": "outside"})
	root := t.TempDir()
	write(t, root, layout{
		"a.txt":           "alpha\n",
		"run.sh":          "#!/bin/sh\necho hi\n",
		"src/main.go":     "package main\n",
		"src/deep/x.go":   "package deep\n",
		"link-in":         "->a.txt",
		"link-out":        "->" + filepath.Join(outside, "canary"),
		"empty/":          "",
		"dir-to-file/f":   "f\n",
		"file-to-dir":     "plain\n",
		"crlf.txt":        "one\r\ntwo\r\n",
		"binary.bin":      "\x00\x01\xff\xfe",
		"rename-me.txt":   "moved content\n",
		"secret-mode.txt": "private\n",
	})
	os.Chmod(filepath.Join(root, "run.sh"), 0o755)
	os.Chmod(filepath.Join(root, "secret-mode.txt"), 0o600)
	os.Chmod(filepath.Join(root, "src/deep"), 0o700)
	before := readState(t, root)
	s := newStore(t, root, Options{})
	snapA, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Everything a turn can do.
	write(t, root, layout{"a.txt": "changed\n", "new/created.txt": "new\n", "link-in": "->run.sh"})
	os.Remove(filepath.Join(root, "src/main.go"))
	os.Rename(filepath.Join(root, "rename-me.txt"), filepath.Join(root, "renamed.txt"))
	os.Chmod(filepath.Join(root, "run.sh"), 0o644)
	os.Chmod(filepath.Join(root, "secret-mode.txt"), 0o666)
	os.Chmod(filepath.Join(root, "src/deep"), 0o755)
	os.RemoveAll(filepath.Join(root, "dir-to-file"))
	write(t, root, layout{"dir-to-file": "now a file\n"})
	os.Remove(filepath.Join(root, "file-to-dir"))
	write(t, root, layout{"file-to-dir/inner": "inner\n"})
	os.Remove(filepath.Join(root, "binary.bin"))
	write(t, root, layout{"binary.bin": "->a.txt"})
	after := readState(t, root)
	snapB, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if snapA.Tree == snapB.Tree {
		t.Fatal("two different workspaces got the same snapshot")
	}

	r := restoreTo(t, s, snapA.Tree)
	if len(r.Failed) > 0 {
		t.Fatalf("failed: %+v", r.Failed)
	}
	diffStates(t, before, readState(t, root))

	restoreTo(t, s, snapB.Tree)
	diffStates(t, after, readState(t, root))

	if got, _ := os.ReadFile(filepath.Join(outside, "canary")); string(got) != "outside" {
		t.Fatalf("the file outside the workspace changed: %q", got)
	}
}

func TestSnapshotFollowsIgnoreFilesButKeepsForcedPaths(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{
		".gitignore":              "node_modules/\n*.log\n!keep.log\n",
		"node_modules/pkg/i.js":   "x",
		"app.log":                 "log",
		"keep.log":                "kept",
		"sub/.gitignore":          "gen/\n",
		"sub/gen/out.txt":         "generated",
		"sub/src.txt":             "src",
		"build/.hearthignore":     "*.o\n",
		"build/a.o":               "obj",
		"node_modules/pkg/edited": "the agent edited this",
	})
	s := newStore(t, root, Options{})
	snap, err := s.Snapshot(ctx, []string{"node_modules/pkg/edited", "app.log"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(snap.Tree)
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]bool{
		".gitignore": true, "keep.log": true, "sub/src.txt": true, "app.log": true,
		"node_modules/pkg/edited": true, "node_modules/pkg/i.js": false,
		"sub/gen/out.txt": false, "build/a.o": false,
	} {
		if _, got := files[p]; got != want {
			t.Errorf("%s kept: %v, want %v", p, got, want)
		}
	}
}

func TestIncrementalSnapshotHashesOnlyWhatChanged(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	l := layout{}
	for i := range 50 {
		l[filepath.ToSlash(filepath.Join("d", string(rune('a'+i%5)), hex.EncodeToString([]byte{byte(i)})+".txt"))] = strings.Repeat("x", i)
	}
	write(t, root, l)
	// Written a while ago: a file written within the racy margin before
	// a snapshot is read again by the next (its time may lag the clock).
	old := time.Now().Add(-time.Hour)
	for p := range l {
		os.Chtimes(filepath.Join(root, p), old, old)
	}
	dir := StoreDir(t.TempDir(), root)
	s, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.Hashed != 50 || first.Files != 50 {
		t.Fatalf("first snapshot: %+v", first)
	}
	// A new process (a new Store) reads the index the first one saved.
	s2, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s2.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if second.Tree != first.Tree {
		t.Fatal("an unchanged workspace got a new tree")
	}
	if second.Stored != 0 {
		t.Fatalf("an unchanged workspace stored %d bytes", second.Stored)
	}
	os.WriteFile(filepath.Join(root, "d/a/00.txt"), []byte("changed"), 0o644)
	third, err := s2.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if third.Hashed > 2 || third.Tree == second.Tree {
		t.Fatalf("after one change: %+v", third)
	}
}

func TestLargeFilesAreRecordedNotKept(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"big.bin": strings.Repeat("b", 100), "small": "s"})
	s := newStore(t, root, Options{MaxFileSize: 64})
	a, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.TooLarge) != 1 || a.TooLarge[0] != "big.bin" {
		t.Fatalf("too large: %v", a.TooLarge)
	}
	os.Remove(filepath.Join(root, "big.bin"))
	os.WriteFile(filepath.Join(root, "small"), []byte("t"), 0o644)
	r := restoreTo(t, s, a.Tree)
	if len(r.Failed) != 1 || r.Failed[0].Path != "big.bin" || !strings.Contains(r.Failed[0].Reason, "size cap") {
		t.Fatalf("failed: %+v", r.Failed)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "small")); string(got) != "s" {
		t.Fatalf("small: %q", got)
	}
}

// A restore never follows a symbolic link: a folder swapped for a link to
// a place outside the workspace (or to its .git) after the snapshot is
// replaced by the folder, and nothing is written where the link led.
func TestRestoreNeverWritesThroughALink(t *testing.T) {
	ctx := context.Background()
	outside := t.TempDir()
	write(t, outside, layout{"f": "outside"})
	root := t.TempDir()
	write(t, root, layout{"d/f": "inside", "e/g": "inside g", ".git/hooks/README": "hooks"})
	s := newStore(t, root, Options{})
	snap, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(root, "d"))
	os.Symlink(outside, filepath.Join(root, "d"))
	os.RemoveAll(filepath.Join(root, "e"))
	os.Symlink(filepath.Join(root, ".git/hooks"), filepath.Join(root, "e"))

	// Told to restore the files alone (not the links above them), the
	// restore refuses them.
	r, err := s.Restore(ctx, snap.Tree, []string{"d/f", "e/g"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 2 {
		t.Fatalf("restored through links: %+v", r)
	}
	s.Done(r.Journal)
	if got, _ := os.ReadFile(filepath.Join(outside, "f")); string(got) != "outside" {
		t.Fatalf("wrote outside the workspace: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, ".git/hooks/g")); err == nil {
		t.Fatal("wrote into .git")
	}
	// A whole restore replaces the links with the folders.
	r = restoreTo(t, s, snap.Tree)
	if len(r.Failed) > 0 {
		t.Fatalf("failed: %+v", r.Failed)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "d/f")); string(got) != "inside" {
		t.Fatalf("d/f: %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "f")); string(got) != "outside" {
		t.Fatalf("wrote outside the workspace: %q", got)
	}
	if _, err := os.Stat(filepath.Join(root, ".git/hooks/g")); err == nil {
		t.Fatal("wrote into .git")
	}
}

// hashTree hashes every file below dir, with its mode.
func hashTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := os.Lstat(p)
		data, _ := os.ReadFile(p)
		sum := sha256.Sum256(data)
		out[p] = fi.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

func TestGitRepositoryIsNeverTouched(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	ctx := context.Background()
	root := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	write(t, root, layout{"a.txt": "one\n", ".gitignore": "*.tmp\n"})
	git("add", ".")
	git("commit", "-qm", "first")
	write(t, root, layout{"a.txt": "staged\n"})
	git("add", "a.txt")
	gitBefore := hashTree(t, filepath.Join(root, ".git"))

	s := newStore(t, root, Options{})
	a, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, layout{"a.txt": "agent\n", "b.txt": "new\n"})
	if _, err := s.Snapshot(ctx, nil); err != nil {
		t.Fatal(err)
	}
	restoreTo(t, s, a.Tree)
	diffStates(t, gitBefore, hashTree(t, filepath.Join(root, ".git")))
	if got, _ := os.ReadFile(filepath.Join(root, "a.txt")); string(got) != "staged\n" {
		t.Fatalf("a.txt: %q", got)
	}
	files, _ := s.Files(a.Tree)
	for p := range files {
		if strings.HasPrefix(p, ".git/") || p == ".git" {
			t.Fatalf("the snapshot holds %s", p)
		}
	}
}

func TestSkippedPathsAreNeitherKeptNorRestored(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{".env": "TOKEN=1", ".hearth/config.toml": "x", "a": "a"})
	s := newStore(t, root, Options{Skip: func(p string) bool { return p == ".env" || p == ".hearth" }})
	snap, err := s.Snapshot(ctx, []string{".env"})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := s.Files(snap.Tree)
	if len(files) != 1 {
		t.Fatalf("kept: %v", files)
	}
	r, err := s.Restore(ctx, snap.Tree, []string{".env", ".hearth/config.toml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 2 {
		t.Fatalf("restored skipped paths: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(root, ".env")); err != nil {
		t.Fatal("the restore removed a path it does not keep")
	}
}

func TestStoreInsideTheWorkspaceIsRefused(t *testing.T) {
	root := t.TempDir()
	if _, err := Open(filepath.Join(root, "data", "cp"), root, Options{}); err == nil {
		t.Fatal("a store inside the workspace was opened")
	}
}

func TestDamagedObjectIsNeverRestored(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"a": "original"})
	s := newStore(t, root, Options{})
	snap, _ := s.Snapshot(ctx, nil)
	files, _ := s.Files(snap.Tree)
	os.WriteFile(s.objectPath(files["a"].Hash), []byte("tampered"), 0o600)
	os.WriteFile(filepath.Join(root, "a"), []byte("now"), 0o644)
	r, err := s.Restore(ctx, snap.Tree, []string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Failed) != 1 || !strings.Contains(r.Failed[0].Reason, "damaged") {
		t.Fatalf("restore of a damaged object: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "a")); string(got) != "now" {
		t.Fatalf("a: %q", got)
	}
}

// A snapshot that looks only at the paths an edit named is the same
// snapshot as a whole one, when nothing else changed.
func TestSnapshotPathsEqualsAWholeSnapshot(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"a.txt": "a", "src/b.go": "b", "src/deep/c.go": "c", "link": "->a.txt", "gone.txt": "bye", ".gitignore": "*.log\n"})
	s := newStore(t, root, Options{})
	base, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var forced []string
	for _, tc := range []struct {
		name   string
		change func()
		paths  []string
	}{
		{"edit", func() { write(t, root, layout{"src/b.go": "B"}) }, []string{"src/b.go"}},
		{"new file in new folders", func() { write(t, root, layout{"new/dir/x.txt": "x"}) }, []string{"new/dir/x.txt"}},
		{"removed file", func() { os.Remove(filepath.Join(root, "gone.txt")) }, []string{"gone.txt"}},
		{"ignored file named", func() { write(t, root, layout{"app.log": "log"}) }, []string{"app.log"}},
		{"chmod", func() { os.Chmod(filepath.Join(root, "a.txt"), 0o600) }, []string{"a.txt"}},
		{"a folder named (a whole snapshot instead)", func() { write(t, root, layout{"src/deep/d.go": "d"}) }, []string{"src/deep"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.change()
			forced = append(forced, tc.paths...) // as the Keeper keeps them
			part, err := s.SnapshotPaths(ctx, base.Tree, tc.paths, forced)
			if err != nil {
				t.Fatal(err)
			}
			whole, err := s.Snapshot(ctx, forced)
			if err != nil {
				t.Fatal(err)
			}
			if part.Tree != whole.Tree || part.Files != whole.Files || part.Bytes != whole.Bytes {
				pf, _ := s.Files(part.Tree)
				wf, _ := s.Files(whole.Tree)
				for _, c := range Diff(wf, pf) {
					t.Logf("%s: whole %+v, partial %+v", c.Path, c.From, c.To)
				}
				t.Fatalf("partial %+v, whole %+v", part, whole)
			}
			base = whole
		})
	}
}

func TestPruneRemovesWhatNoSnapshotReaches(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"keep.txt": "kept", "dir/x.txt": "x1"})
	s := newStore(t, root, Options{})
	a, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, root, layout{"dir/x.txt": "x2", "gone.txt": "only in b"})
	b, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Young objects are kept whatever reaches them.
	if p, err := s.Prune(ctx, []string{a.Tree}, time.Hour); err != nil || p.Objects != 0 {
		t.Fatalf("a prune within the grace removed %+v (%v)", p, err)
	}
	p, err := s.Prune(ctx, []string{a.Tree}, 0)
	if err != nil {
		t.Fatal(err)
	}
	// b's root tree, its dir tree, x2 and gone.txt's blob.
	if p.Objects != 4 || p.Kept == 0 {
		t.Fatalf("pruned %+v", p)
	}
	if _, err := s.Files(b.Tree); err == nil {
		t.Fatal("the pruned snapshot can still be read")
	}
	// a is whole: a restore to it works.
	os.Remove(filepath.Join(root, "gone.txt"))
	restoreTo(t, s, a.Tree)
	if got, _ := os.ReadFile(filepath.Join(root, "dir/x.txt")); string(got) != "x1" {
		t.Fatalf("x.txt: %q", got)
	}
	// The index forgot what went: a new snapshot stores x2 again.
	write(t, root, layout{"dir/x.txt": "x2"})
	c, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Files(c.Tree)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.readObject(files["dir/x.txt"].Hash); err != nil {
		t.Fatalf("a snapshot after the prune names a removed object: %v", err)
	}
}

// After a first walk, a snapshot reads again only what inotify says
// changed: it must be the same snapshot a walk of everything makes, and
// walk everything again only when the folders themselves changed.
func TestIncrementalSnapshotsMatchAWalk(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{
		".gitignore": "*.log\nbuild/\n", "a.txt": "a", "src/b.go": "b", "src/deep/c.go": "c",
		"build/out.bin": "o", "app.log": "l", "link": "->a.txt", "rm.txt": "rm",
	})
	s := newStore(t, root, Options{})
	defer s.Close()
	// The walks to compare with are another store's: the snapshots under
	// test follow one another without a walk between them.
	ref := newStore(t, root, Options{})
	defer ref.Close()
	force := []string{"build/kept.txt"}
	write(t, root, layout{"build/kept.txt": "k1"})
	if _, err := s.Snapshot(ctx, force); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func()
		walks  bool // whether a walk of everything is expected
	}{
		{"nothing", func() {}, false},
		{"edit", func() { write(t, root, layout{"src/b.go": "B"}) }, false},
		{"new file", func() { write(t, root, layout{"src/deep/new.go": "n"}) }, false},
		{"remove a file", func() { os.Remove(filepath.Join(root, "rm.txt")) }, false},
		{"rename a file", func() { os.Rename(filepath.Join(root, "src/b.go"), filepath.Join(root, "src/b2.go")) }, false},
		{"chmod a file", func() { os.Chmod(filepath.Join(root, "a.txt"), 0o600) }, false},
		{"chmod a folder", func() { os.Chmod(filepath.Join(root, "src/deep"), 0o700) }, false},
		{"retarget a link", func() { write(t, root, layout{"link": "->src"}) }, false},
		{"ignored file", func() { write(t, root, layout{"other.log": "x"}) }, false},
		{"forced file in an ignored folder", func() { write(t, root, layout{"build/kept.txt": "k2"}) }, false},
		{"new folder", func() { write(t, root, layout{"pkg/x.go": "x"}) }, true},
		{"ignore file", func() { write(t, root, layout{".gitignore": "*.log\n"}) }, true},
		{"removed folder", func() { os.RemoveAll(filepath.Join(root, "src/deep")) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			walks := s.walks
			tc.change()
			inc, err := s.Snapshot(ctx, force)
			if err != nil {
				t.Fatal(err)
			}
			if walked := s.walks > walks; walked != tc.walks {
				t.Errorf("walked everything: %v, want %v", walked, tc.walks)
			}
			all, err := ref.SnapshotAll(ctx, force)
			if err != nil {
				t.Fatal(err)
			}
			if inc.Tree != all.Tree || inc.Files != all.Files || inc.Bytes != all.Bytes {
				a, _ := ref.Files(all.Tree)
				i, _ := s.Files(inc.Tree)
				for _, c := range Diff(a, i) {
					t.Logf("%s: walk %+v, incremental %+v", c.Path, c.From, c.To)
				}
				t.Fatalf("incremental %+v, walk %+v", inc, all)
			}
		})
	}
}
