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

// journal is the record of a restore, written before it changes anything,
// and again, Applied, once it has: a restore interrupted before is
// applied again by Recover; one interrupted after (before the caller
// recorded it) is only recorded, never applied over what came since.
type journal struct {
	ID    string   `json:"id"`
	Tree  string   `json:"tree"`
	Paths []string `json:"-"`
	// RawPaths are Paths as bytes: JSON strings would mangle a name that
	// is not UTF-8.
	RawPaths [][]byte        `json:"paths"`
	Note     json.RawMessage `json:"note,omitempty"`
	Applied  bool            `json:"applied,omitempty"`
	Done     []string        `json:"done,omitempty"`
	Failed   []Problem       `json:"failed,omitempty"`
}

// Pending is a restore that was interrupted (the process died) and that
// Recover finished.
type Pending struct {
	// Note is what the caller gave Restore.
	Note json.RawMessage
	// Reapplied says the restore was applied again (it had not finished);
	// otherwise it had, and only its record was missing.
	Reapplied bool
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
// Once it has begun changing files it finishes, whatever ctx says: a
// restore is not left half-made.
//
// The caller holds Lock, and keeps it until it has recorded the restore
// and called Done.
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
	if err := ctx.Err(); err != nil {
		return Restored{}, err
	}
	var id [8]byte
	rand.Read(id[:])
	j := journal{ID: hex.EncodeToString(id[:]), Tree: tree, Paths: append([]string(nil), paths...), Note: note}
	if err := s.writeJournal(j); err != nil {
		return Restored{}, err
	}
	r := s.apply(context.WithoutCancel(ctx), target, j.Paths)
	r.Journal = j.ID
	j.Applied, j.Done, j.Failed = true, r.Done, r.Failed
	if err := s.writeJournal(j); err != nil {
		s.log.Warn("checkpoints: marking a restore applied", "error", err)
	}
	return r, nil
}

// Lock takes the store for a restore (or a prune), across processes:
// snapshots wait for it, and so do other restores.
func (s *Store) Lock() (unlock func(), err error) { return s.lock() }

// Done forgets a finished restore's journal: the caller has recorded it.
func (s *Store) Done(journalID string) error {
	if journalID == "" || strings.ContainsAny(journalID, `/\.`) {
		return nil
	}
	err := os.Remove(filepath.Join(s.dir, "journal", journalID+".json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("checkpoints: removing a restore's journal: %w", err)
	}
	return syncDir(filepath.Join(s.dir, "journal"))
}

// Recover finishes the restores that a process began and did not finish
// (it died): one that had not finished is applied again — each path
// brought to its state in the snapshot, which is harmless for those it had
// done — and one that had is only handed back, to be recorded. recorded,
// if set, says whether the caller has recorded a restore already (its
// journal is then just removed). The caller records each, then calls Done.
func (s *Store) Recover(ctx context.Context, recorded func(note json.RawMessage, journalID string) bool) ([]Pending, error) {
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
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
			s.log.Warn("a restore journal cannot be read: left as it is", "file", filepath.Join(dir, e.Name()), "error", err)
			continue
		}
		var j journal
		err = json.Unmarshal(data, &j)
		for _, p := range j.RawPaths {
			j.Paths = append(j.Paths, string(p))
		}
		if err != nil || j.ID+".json" != e.Name() || !validHash(j.Tree, false) {
			// A journal is renamed into place whole: this one is not
			// Hearth's, or damaged. It is left for a person to look at.
			s.log.Warn("a restore journal cannot be read: left as it is", "file", filepath.Join(dir, e.Name()), "error", err)
			continue
		}
		if recorded != nil && recorded(j.Note, j.ID) {
			if err := s.Done(j.ID); err != nil {
				return out, err
			}
			continue
		}
		if j.Applied {
			out = append(out, Pending{Note: j.Note, Restored: Restored{Journal: j.ID, Done: j.Done, Failed: j.Failed}})
			continue
		}
		target, err := s.Files(j.Tree)
		if err != nil {
			// Its snapshot cannot be read: the restore cannot be finished,
			// and Hearth must still start. Left for a person to look at.
			s.log.Warn("an interrupted restore cannot be finished: its snapshot cannot be read", "journal", j.ID, "error", err)
			continue
		}
		r := s.apply(ctx, target, j.Paths)
		s.removeTemps(j.Paths)
		r.Journal = j.ID
		j.Applied, j.Done, j.Failed = true, r.Done, r.Failed
		if err := s.writeJournal(j); err != nil {
			s.log.Warn("checkpoints: marking a restore applied", "error", err)
		}
		out = append(out, Pending{Note: j.Note, Reapplied: true, Restored: r})
	}
	return out, nil
}

// removeTemps removes the temporary files a restore killed while it wrote
// them left beside the paths.
func (s *Store) removeTemps(paths []string) {
	byDir := map[string][]string{}
	for _, p := range paths {
		d := path.Dir(p)
		byDir[d] = append(byDir[d], tempPrefix(path.Base(p)))
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
	j.RawPaths = make([][]byte, len(j.Paths))
	for i, p := range j.Paths {
		j.RawPaths[i] = []byte(p)
	}
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

// lock takes the store for one restore (or prune) at a time, across
// processes; shared, it lets snapshots run together, and keeps restores
// and prunes out.
func (s *Store) lock(shared ...bool) (func(), error) {
	f, err := os.OpenFile(filepath.Join(s.dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: locking the store: %w", err)
	}
	take := lockFile
	if len(shared) > 0 && shared[0] {
		take = lockFileShared
	}
	if err := take(f); err != nil {
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
	// What the snapshot has, parents first; the folders' modes last,
	// deepest first (a read-only folder gets its files first).
	var chmods []string
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
			err = fo.mkdir(p)
			if err == nil {
				chmods = append(chmods, p)
			}
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
	for i := len(chmods) - 1; i >= 0; i-- {
		p := chmods[i]
		if err := fo.chmod(p, target[p].Perm); err != nil {
			fail(p, err.Error())
		}
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
