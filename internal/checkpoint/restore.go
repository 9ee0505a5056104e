package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Restored is what a restore did.
type Restored struct {
	// Journal names the restore's journal entry, to pass to Done once the
	// caller has recorded the restore.
	Journal string `json:"-"`
	// Done lists the paths brought to their state in the snapshot.
	Done []string `json:"done"`
	// Failed lists the paths that could not be, and why.
	Failed []Problem `json:"failed,omitempty"`
}

// Problem is a path a restore could not bring back, and why.
type Problem struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// journal is the record of a restore, written before it changes anything.
type journal struct {
	ID    string          `json:"id"`
	Tree  string          `json:"tree"`
	Paths []string        `json:"paths"`
	Note  json.RawMessage `json:"note,omitempty"`
}

// Pending is a restore that was interrupted (the process died) and that
// Recover finished.
type Pending struct {
	// Note is what the caller gave Restore.
	Note json.RawMessage
	Restored
}

// testHookRestored, when set (tests), runs after each path a restore
// brings back.
var testHookRestored func(rel string)

// Restore brings each of paths (relative to the root) to its state in the
// snapshot tree: a file or link absent from it is removed, one present is
// written back byte for byte with its mode, a directory is made or
// removed (when empty). note is kept in the restore's journal and handed
// back by Recover should the process die before Done. Paths over the size
// cap, and paths Options.Skip names, are not restored (Failed says so).
func (s *Store) Restore(ctx context.Context, tree string, paths []string, note json.RawMessage) (Restored, error) {
	target, err := s.Files(tree)
	if err != nil {
		return Restored{}, err
	}
	// Every object needed is there before anything is changed.
	for _, p := range paths {
		if e, ok := target[p]; ok && (e.Kind == File || e.Kind == Link) {
			if !s.hasObject(e.Hash) {
				return Restored{}, fmt.Errorf("checkpoints: the content of %s is missing from %s: nothing was restored", p, s.dir)
			}
		}
	}
	unlock, err := s.lock()
	if err != nil {
		return Restored{}, err
	}
	defer unlock()
	var id [8]byte
	rand.Read(id[:])
	j := journal{ID: hex.EncodeToString(id[:]), Tree: tree, Paths: append([]string(nil), paths...), Note: note}
	if err := s.writeJournal(j); err != nil {
		return Restored{}, err
	}
	r := s.apply(ctx, target, j.Paths)
	r.Journal = j.ID
	return r, nil
}

// Done forgets a finished restore's journal: the caller has recorded it.
func (s *Store) Done(journalID string) error {
	if journalID == "" || strings.ContainsAny(journalID, `/\.`) {
		return nil
	}
	err := os.Remove(filepath.Join(s.dir, "journal", journalID+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoints: removing a restore's journal: %w", err)
	}
	return nil
}

// Recover finishes the restores that a process began and did not finish
// (it died): each path is brought to its state in the snapshot again,
// which is harmless for those it had done. The caller records each, then
// calls Done.
func (s *Store) Recover(ctx context.Context) ([]Pending, error) {
	dir := filepath.Join(s.dir, "journal")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: reading the restore journal: %w", err)
	}
	var out []Pending
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return out, fmt.Errorf("checkpoints: reading the restore journal: %w", err)
		}
		var j journal
		if err := json.Unmarshal(data, &j); err != nil || j.ID+".json" != e.Name() || !validHash(j.Tree, false) {
			// A journal is renamed into place whole: this one is not
			// Hearth's, or damaged. It is left for a person to look at.
			s.log.Warn("a restore journal cannot be read: left as it is", "file", filepath.Join(dir, e.Name()), "error", err)
			continue
		}
		target, err := s.Files(j.Tree)
		if err != nil {
			return out, fmt.Errorf("checkpoints: finishing an interrupted restore: %w", err)
		}
		unlock, err := s.lock()
		if err != nil {
			return out, err
		}
		r := s.apply(ctx, target, j.Paths)
		s.removeTemps(j.Paths)
		unlock()
		r.Journal = j.ID
		out = append(out, Pending{Note: j.Note, Restored: r})
	}
	return out, nil
}

// removeTemps removes the temporary files a restore killed while it wrote
// them left beside the paths.
func (s *Store) removeTemps(paths []string) {
	byDir := map[string][]string{}
	for _, p := range paths {
		d := path.Dir(p)
		byDir[d] = append(byDir[d], "."+path.Base(p)+".hearth-restore-")
	}
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return
	}
	defer root.Close()
	fo, err := s.openOps()
	if err != nil {
		return
	}
	defer fo.close()
	for d, prefixes := range byDir {
		f, err := root.Open(d)
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			for _, pre := range prefixes {
				if strings.HasPrefix(n, pre) && len(n) == len(pre)+12 {
					dir := d
					if dir == "." {
						dir = ""
					}
					if err := fo.remove(join(dir, n), false); err != nil {
						s.log.Warn("removing a restore's temporary file", "error", err)
					}
				}
			}
		}
	}
}

func (s *Store) writeJournal(j journal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	dir := filepath.Join(s.dir, "journal")
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoints: writing the restore journal: %w", err)
	}
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoints: writing the restore journal: %w", err)
	}
	if err := os.Rename(f.Name(), filepath.Join(dir, j.ID+".json")); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("checkpoints: writing the restore journal: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("checkpoints: writing the restore journal: %w", err)
	}
	return nil
}

// lock takes the store for one restore at a time, across processes.
func (s *Store) lock() (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: locking the store: %w", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoints: locking the store: %w", err)
	}
	return func() {
		unlockFile(f)
		f.Close()
	}, nil
}

// apply brings each path to its state in target. Removals go first,
// deepest paths first (a directory is emptied before it is removed, a
// file that became a directory is removed before the directory is made);
// then what target has, parents first.
func (s *Store) apply(ctx context.Context, target Files, paths []string) Restored {
	var r Restored
	paths = append([]string(nil), paths...)
	sort.Strings(paths)
	failed := map[string]bool{}
	fail := func(p, why string) {
		if !failed[p] {
			failed[p] = true
			r.Failed = append(r.Failed, Problem{Path: p, Reason: why})
		}
	}
	fo, err := s.openOps()
	if err != nil {
		for _, p := range paths {
			fail(p, err.Error())
		}
		return r
	}
	defer fo.close()
	// Removals, deepest first.
	for i := len(paths) - 1; i >= 0; i-- {
		p := paths[i]
		if cleanRel(p) != p || s.skipped(p) {
			fail(p, "not a path Hearth restores")
			continue
		}
		cur, err := fo.lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			fail(p, err.Error())
			continue
		}
		want, keep := target[p]
		isDir := cur.IsDir()
		switch {
		case keep && want.Kind == Dir && isDir:
			continue
		case keep && want.Kind == Large:
			continue
		case keep && want.Kind != Dir && !isDir:
			continue // replaced in place below
		}
		if err := fo.remove(p, isDir); err != nil {
			fail(p, removeReason(err, isDir))
		}
	}
	// What the snapshot has, parents first.
	for _, p := range paths {
		if failed[p] {
			continue
		}
		if err := ctx.Err(); err != nil {
			fail(p, "not restored: "+err.Error())
			continue
		}
		want, keep := target[p]
		if !keep {
			r.Done = append(r.Done, p)
			s.restoredHook(p)
			continue
		}
		var err error
		switch want.Kind {
		case Large:
			fail(p, fmt.Sprintf("not kept: it was %s, over the checkpoint size cap of %s", size(want.Size), size(s.opts.MaxFileSize)))
			continue
		case Dir:
			err = fo.mkdir(p, want.Perm)
		case File, Link:
			var data []byte
			data, err = s.readObject(want.Hash)
			if err == nil && want.Kind == File {
				err = fo.writeFile(p, data, want.Perm)
			} else if err == nil {
				err = fo.symlink(p, string(data))
			}
		}
		if err != nil {
			fail(p, err.Error())
			continue
		}
		r.Done = append(r.Done, p)
		s.restoredHook(p)
	}
	return r
}

func (s *Store) restoredHook(p string) {
	if testHookRestored != nil {
		testHookRestored(p)
	}
}

func (s *Store) skipped(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == ".git" {
			return true
		}
	}
	if s.opts.Skip == nil {
		return false
	}
	if s.opts.Skip(p) {
		return true
	}
	for _, d := range parentDirs(p) {
		if s.opts.Skip(d) {
			return true
		}
	}
	return false
}

func removeReason(err error, dir bool) string {
	if dir && (errors.Is(err, fs.ErrExist) || strings.Contains(err.Error(), "not empty")) {
		return "the folder holds files no checkpoint kept (ignored ones): left as it is"
	}
	return err.Error()
}

// size formats a byte count for a person.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
