package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// errFullWalk says a partial snapshot cannot stand for the workspace: the
// caller takes a whole one.
var errFullWalk = errors.New("a whole snapshot is needed")

// SnapshotPaths snapshots the workspace knowing that, since the snapshot
// base, only the given paths (relative to the root) may have changed — as
// after a call of an edit tool, which changes the files it names and
// nothing else. Only those paths are looked at, so it costs a few system
// calls where Snapshot walks every folder. Where the paths do not allow it
// (a folder, a link on the way, a base not in the store), it takes a whole
// snapshot instead.
func (s *Store) SnapshotPaths(ctx context.Context, base string, paths, force []string) (Snapshot, error) {
	if base == "" || len(paths) == 0 {
		return s.Snapshot(ctx, force)
	}
	prev, err := s.Files(base)
	if err != nil {
		return s.Snapshot(ctx, force)
	}
	snap, err := s.snapshotPaths(ctx, prev, paths)
	if errors.Is(err, errFullWalk) {
		return s.Snapshot(ctx, force)
	}
	return snap, err
}

func (s *Store) snapshotPaths(ctx context.Context, prev Files, paths []string) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, _ := os.ReadFile(s.genPath()); string(data) != s.gen {
		return Snapshot{}, errFullWalk // pruned since: what base names may be gone
	}
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoints: opening the workspace: %w", err)
	}
	defer root.Close()
	next := make(Files, len(prev)+len(paths))
	for p, e := range prev {
		next[p] = e
	}
	w := &walker{s: s, ctx: ctx, root: root, old: s.loadIndex(), next: &index{Files: map[string]stat{}}}
	for _, p := range paths {
		p = cleanRel(p)
		if p == "" || s.skipped(p) {
			continue
		}
		// Every folder on the way is a real folder, known or new.
		for _, d := range parentDirs(p) {
			if e, ok := next[d]; ok {
				if e.Kind != Dir {
					return Snapshot{}, errFullWalk
				}
				continue
			}
			fi, err := root.Lstat(d)
			if err != nil || !fi.IsDir() {
				return Snapshot{}, errFullWalk
			}
			next[d] = Entry{Kind: Dir, Perm: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		}
		fi, err := root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if e, ok := next[p]; ok && e.Kind == Dir {
				return Snapshot{}, errFullWalk
			}
			delete(next, p)
			continue
		case err != nil, fi.IsDir(), fi.Mode()&fs.ModeSymlink != 0:
			// A link: the edit went where it leads, which may be any
			// file of the workspace.
			return Snapshot{}, errFullWalk
		}
		e, ok, err := w.entry(p, fi, nil, true)
		if err != nil {
			return Snapshot{}, err
		}
		if ok {
			next[p] = e
		} else {
			delete(next, p)
		}
	}
	var dirs []string
	for _, p := range paths {
		if p = cleanRel(p); p != "" {
			dirs = append(dirs, path.Dir(p))
		}
	}
	tree, err := rebuildTree(next, dirs, w.put)
	if err != nil {
		return Snapshot{}, err
	}
	if err := w.flush(); err != nil {
		return Snapshot{}, err
	}
	snap := s.summary(tree, next, w.snap.Unsupported)
	snap.Stored, snap.Hashed = w.snap.Stored, w.snap.Hashed
	if len(s.trees) > 64 {
		clear(s.trees)
	}
	s.trees[tree] = next
	return snap, nil
}

// buildTree stores the tree objects of a flattened snapshot with put and
// returns its root's hash: every folder's tree is encoded.
func buildTree(files Files, put func([]byte) (string, bool, error)) (string, error) {
	var dirs []string
	for p, e := range files {
		if e.Kind == Dir {
			dirs = append(dirs, p)
		}
	}
	return rebuildTree(files, dirs, put)
}

// treeOf stores the tree objects of a flattened snapshot whose files are
// all in the store (a state a restore made) and returns its root's hash.
func (s *Store) treeOf(files Files) (string, error) {
	own := make(Files, len(files))
	for p, e := range files {
		own[p] = e
	}
	return buildTree(own, s.putObject)
}

// rebuildTree is buildTree for a snapshot that differs from the last in
// the folders dirs (and the folders above them) alone: only those trees
// are encoded again; the others keep the hashes files has for them.
func rebuildTree(files Files, dirs []string, put func([]byte) (string, bool, error)) (string, error) {
	redo := map[string]bool{"": true}
	for _, d := range dirs {
		if d == "." {
			d = ""
		}
		if d != "" {
			redo[d] = true
		}
		for _, p := range parentDirs(d + "/x") {
			redo[p] = true
		}
	}
	children := make(map[string][]treeEntry, len(redo))
	for d := range redo {
		children[d] = nil
	}
	for p, e := range files {
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		if redo[parent] {
			children[parent] = append(children[parent], treeEntry{Name: path.Base(p), Entry: e})
		}
	}
	order := make([]string, 0, len(redo))
	for d := range redo {
		if e, ok := files[d]; d != "" && (!ok || e.Kind != Dir) {
			continue // gone, or not a folder: its parent is rebuilt without it
		}
		order = append(order, d)
	}
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	sort.Slice(order, func(i, j int) bool { return depth(order[i]) > depth(order[j]) })
	hashes := map[string]string{}
	for _, d := range order {
		entries := children[d]
		for i := range entries {
			if entries[i].Kind != Dir {
				continue
			}
			child := join(d, entries[i].Name)
			if h, ok := hashes[child]; ok {
				entries[i].Hash = h
			} else if !validHash(entries[i].Hash, false) {
				// A folder whose tree is not known: encode them all.
				if allDirs(files, redo) {
					return "", fmt.Errorf("checkpoints: folder %s has no tree", child)
				}
				return buildTree(files, put)
			}
		}
		h, _, err := put(encodeTree(entries))
		if err != nil {
			return "", err
		}
		hashes[d] = h
		if d != "" {
			e := files[d]
			e.Hash = h
			files[d] = e
		}
	}
	return hashes[""], nil
}

// allDirs reports whether every folder of files is in redo (so rebuilding
// cannot be widened any further).
func allDirs(files Files, redo map[string]bool) bool {
	for p, e := range files {
		if e.Kind == Dir && !redo[p] {
			return false
		}
	}
	return true
}
