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

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// incremental snapshots the workspace from the last walk and what the
// watcher says changed since: the folders it names are read again, and
// the forced paths looked at; false when only a walk of everything can
// tell (no walk yet, no watcher, or changes it cannot follow). s.mu is
// held.
func (s *Store) incremental(ctx context.Context, force []string) (Snapshot, bool, error) {
	if s.last == nil || s.watch == nil {
		return Snapshot{}, false, nil
	}
	dirty, ok := s.watch.changes()
	if !ok {
		return Snapshot{}, false, nil
	}
	last := s.last
	forced := map[string]bool{}
	for _, f := range force {
		if f = cleanRel(f); f != "" {
			forced[f] = true
		}
	}
	// What inotify does not see: the repository's exclude file (in .git,
	// not watched), a path kept by the last walk that is no longer forced.
	if s.excludeStat() != last.exclude {
		return Snapshot{}, false, nil
	}
	for f := range last.forced {
		if !forced[f] {
			return Snapshot{}, false, nil
		}
	}
	if len(dirty) == 0 && !newForced(forced, last.files) && len(last.linked) == 0 {
		// Nothing changed that the watcher saw; forced paths in ignored
		// folders (not watched) are looked at below all the same.
		if !anyForcedUnwatched(forced, last) {
			return s.summary(last.tree, last.files, nil), true, nil
		}
	}
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return Snapshot{}, false, fmt.Errorf("checkpoints: opening the workspace: %w", err)
	}
	defer root.Close()
	old := s.loadIndex()
	next := &index{At: old.At, Files: make(map[string]stat, len(old.Files))}
	for p, st := range old.Files {
		next.Files[p] = st
	}
	files := make(Files, len(last.files))
	for p, e := range last.files {
		files[p] = e
	}
	w := &walker{s: s, ctx: ctx, root: root, old: old, next: next}
	dirs := make([]string, 0, len(dirty))
	for d := range dirty {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if err := ctx.Err(); err != nil {
			return Snapshot{}, false, err
		}
		ok, err := w.rescan(d, last.patterns[d], files, forced)
		if err != nil || !ok {
			return Snapshot{}, ok, err
		}
	}
	// Forced paths (in ignored folders, not watched), and files with
	// other hard links (changed through another name, no event here).
	for _, f := range append(sortedKeys(forced), last.linked...) {
		if ok, err := w.restat(f, files); err != nil || !ok {
			return Snapshot{}, ok, err
		}
	}
	changed := append([]string(nil), dirs...)
	for f := range forced {
		changed = append(changed, path.Dir(f))
	}
	for _, f := range last.linked {
		changed = append(changed, path.Dir(f))
	}
	tree, err := rebuildTree(files, changed, w.put)
	if err != nil {
		return Snapshot{}, false, err
	}
	if err := w.flush(); err != nil {
		return Snapshot{}, false, err
	}
	if w.dirty {
		// Saved by the next walk, or Close: a stale index on disk only
		// makes the next process read again the files that changed.
		s.indexDirty = true
	}
	next.At = old.At
	s.index = next
	next2 := *last
	next2.tree, next2.files, next2.forced = tree, files, forced
	s.last = &next2
	snap := s.summary(tree, files, w.snap.Unsupported)
	snap.Stored, snap.Hashed = w.snap.Stored, w.snap.Hashed
	return snap, true, nil
}

// newForced reports whether a forced path is not in the snapshot yet.
func newForced(forced map[string]bool, files Files) bool {
	for f := range forced {
		if _, ok := files[f]; !ok {
			return true
		}
	}
	return false
}

// anyForcedUnwatched reports whether a forced path lies in a folder the
// walk did not watch (an ignored one).
func anyForcedUnwatched(forced map[string]bool, last *lastWalk) bool {
	for f := range forced {
		d := path.Dir(f)
		if d == "." {
			d = ""
		}
		if _, ok := last.patterns[d]; !ok {
			return true
		}
	}
	return false
}

// summary counts a snapshot's files.
func (s *Store) summary(tree string, files Files, unsupported []string) Snapshot {
	snap := Snapshot{Tree: tree, Unsupported: unsupported}
	for p, e := range files {
		switch e.Kind {
		case Link:
			snap.Files++
		case File:
			snap.Files++
			snap.Bytes += e.Size
		case Large:
			snap.Files++
			snap.Bytes += e.Size
			snap.TooLarge = append(snap.TooLarge, p)
		}
	}
	sort.Strings(snap.TooLarge)
	return snap
}

// rescan reads the folder dir again into files: its files and links as
// they are now (by the index when unchanged), those gone removed, its
// folders' modes; false if its folders changed (a walk is needed).
func (w *walker) rescan(dir string, patterns []gitignore.Pattern, files Files, forced map[string]bool) (bool, error) {
	if _, known := w.s.last.patterns[dir]; !known {
		return false, nil
	}
	name := dir
	if name == "" {
		name = "."
	}
	f, err := w.root.Open(name)
	if err != nil {
		return false, nil
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return false, nil
	}
	var domain []string
	if dir != "" {
		domain = strings.Split(dir, "/")
	}
	matcher := gitignore.NewMatcher(patterns)
	seen := map[string]bool{}
	for _, d := range ents {
		n := d.Name()
		p := join(dir, n)
		if n == ".git" || (w.s.opts.Skip != nil && w.s.opts.Skip(p)) {
			continue
		}
		if d.IsDir() {
			e, ok := files[p]
			_, walked := w.s.last.patterns[p]
			ignored := matcher.Match(append(domain[:len(domain):len(domain)], n), true)
			if !ignored && (!ok || e.Kind != Dir || !walked) {
				return false, nil // a folder the last walk did not see
			}
			if ok && e.Kind == Dir {
				if fi, err := d.Info(); err == nil {
					e.Perm = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
					files[p] = e
				}
				seen[p] = true
			}
			continue
		}
		if matcher.Match(append(domain[:len(domain):len(domain)], n), false) && !forced[p] {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue
		}
		e, ok, err := w.entry(p, fi, patterns, false)
		if err != nil {
			return false, err
		}
		if ok {
			files[p] = e
			seen[p] = true
		}
	}
	for p, e := range files {
		parent := path.Dir(p)
		if parent == "." {
			parent = ""
		}
		if parent != dir || seen[p] {
			continue
		}
		if e.Kind == Dir {
			return false, nil // a folder went
		}
		delete(files, p)
		delete(w.next.Files, p)
		w.dirty = true
	}
	return true, nil
}

// restat looks at one forced path again; false if a walk is needed.
func (w *walker) restat(p string, files Files) (bool, error) {
	if w.s.skipped(p) {
		return true, nil
	}
	// Every folder on the way, as it is now: one that went, became a
	// link or changed mode is something a walk must see.
	for _, d := range parentDirs(p) {
		e, ok := files[d]
		fi, err := w.root.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) && !ok {
			delete(files, p)
			return true, nil
		}
		if err != nil || !fi.IsDir() {
			return false, nil
		}
		perm := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if ok && (e.Kind != Dir || e.Perm != perm) {
			return false, nil
		}
		if !ok {
			files[d] = Entry{Kind: Dir, Perm: perm}
		}
	}
	fi, err := w.root.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		delete(files, p)
		return true, nil
	case err != nil || fi.IsDir():
		return false, nil
	}
	e, ok, err := w.entry(p, fi, nil, true)
	if err != nil {
		return false, err
	}
	if ok {
		files[p] = e
	} else {
		delete(files, p)
	}
	return true, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
