// Package checkpoint keeps snapshots of a workspace's files outside it, so
// that whatever the agent changes can be taken back: before every tool call
// that may change the workspace, Hearth snapshots it; undo, redo and rewind
// restore files from the snapshots.
//
// A Store holds one workspace's snapshots in a directory of Hearth's data
// directory (StoreDir), content-addressed as git does: each file's bytes once
// (a blob, named by its SHA-256), each directory as a tree object listing
// its entries, a snapshot as the hash of the root's tree. A snapshot walks
// the workspace by file descriptors below its root (os.Root), follows
// .gitignore (and .ignore, .hearthignore), never enters .git, and hashes
// only the files whose size, times or inode changed since the last
// snapshot (an index kept beside the objects), so that a checkpoint of a
// workspace whose files did not change costs the walk alone. The project's
// own .git — its index, refs, hooks and config — is never read or written.
//
// Restores are crash-safe: the intent (which paths, to which snapshot) is
// written to a journal first; every file is replaced atomically (a new
// file renamed over the old), so a reader sees the old or the new, never a
// torn file; and a restore interrupted by a crash is finished when the
// Store is next opened (Recover). Restores write by file descriptors below
// the workspace root and refuse to pass through a symbolic link, so a link
// the agent planted cannot lead a restore outside the workspace or into
// its .git.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
)

// DefaultMaxFileSize is the size over which a file's content is not kept
// (Options.MaxFileSize): it is listed as too large, and cannot be
// restored.
const DefaultMaxFileSize = 32 << 20

// Options adjust a Store.
type Options struct {
	// MaxFileSize caps the size of a file whose content is kept (0:
	// DefaultMaxFileSize). A larger file is recorded by size only.
	MaxFileSize int64
	// Skip, if set, names paths (slash-separated, relative to the root)
	// that are never snapshotted nor restored, with what is below them:
	// the workspace's protected and secret paths.
	Skip func(rel string) bool
	// Log receives what goes wrong that is not returned (nil: discarded).
	Log *slog.Logger
}

// Store keeps the snapshots of one workspace. It is safe for concurrent
// use, and several processes may share its directory.
type Store struct {
	dir  string
	root string
	opts Options
	log  *slog.Logger

	mu    sync.Mutex       // one snapshot at a time; guards what follows
	index *index           // what the last snapshot found, to skip hashing
	trees map[string]Files // flattened trees read (they never change)
	watch *watcher         // what changed since the last walk (Linux)
	last  *lastWalk        // what the last walk found
	walks int              // snapshots that walked everything (tests)
	gen   string           // the prune generation the caches are of

	indexDirty bool // the index in memory is newer than on disk

	objMu sync.Mutex
	have  map[string]bool // objects known to exist
}

// StoreDir returns the directory of the store for the workspace root under
// Hearth's data directory: checkpoints/ and a name made of the root's base
// name and a hash of its path.
func StoreDir(dataDir, root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	base := filepath.Base(root)
	if len(base) > 40 {
		base = base[:40]
	}
	return filepath.Join(dataDir, "checkpoints", base+"-"+hex.EncodeToString(sum[:8]))
}

// Open opens (making it if need be) the store in dir for the workspace
// root. It does not finish interrupted restores: Recover does.
func Open(dir, root string, opts Options) (*Store, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: workspace %s: %w", root, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if inside(dir, abs) {
		return nil, fmt.Errorf("checkpoints: the store %s is inside the workspace %s: choose a data directory outside it", dir, abs)
	}
	for _, d := range []string{dir, filepath.Join(dir, "objects"), filepath.Join(dir, "journal")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("checkpoints: making %s: %w", d, err)
		}
	}
	s := &Store{dir: dir, root: abs, opts: opts, log: log, have: map[string]bool{}, trees: map[string]Files{}}
	return s, nil
}

// Close releases what the store holds open (its inotify watches).
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.indexDirty && s.index != nil {
		s.saveIndex(s.index)
		s.indexDirty = false
	}
	s.watch.close()
	s.watch, s.last = nil, nil
	return nil
}

// Root returns the workspace root the store snapshots.
func (s *Store) Root() string { return s.root }

// MaxFileSize is the size over which a file's content is not kept.
func (s *Store) MaxFileSize() int64 { return s.opts.MaxFileSize }

// inside reports whether p is root or below it.
func inside(p, root string) bool {
	p, err := filepath.Abs(p)
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	} else if real, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		p = filepath.Join(real, filepath.Base(p))
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !filepath.IsAbs(rel) && (rel == "." || !hasDotDot(rel))
}

func hasDotDot(rel string) bool {
	return len(rel) >= 3 && rel[:3] == ".."+string(filepath.Separator)
}

func (s *Store) objectPath(h string) string {
	return filepath.Join(s.dir, "objects", h[:2], h[2:])
}

// hashBytes names content.
func hashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hasObject reports whether the object is stored.
func (s *Store) hasObject(h string) bool {
	s.objMu.Lock()
	known := s.have[h]
	s.objMu.Unlock()
	if known {
		return true
	}
	if _, err := os.Stat(s.objectPath(h)); err == nil {
		s.objMu.Lock()
		s.have[h] = true
		s.objMu.Unlock()
		return true
	}
	return false
}

// putObject stores data under its hash, unless it is there already, and
// returns the hash and whether it was written. It is written to a
// temporary file renamed into place: a reader never sees half an object.
func (s *Store) putObject(data []byte) (string, bool, error) {
	h := hashBytes(data)
	if s.hasObject(h) {
		return h, false, nil
	}
	p := s.objectPath(h)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return "", false, fmt.Errorf("checkpoints: storing an object: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return "", false, fmt.Errorf("checkpoints: storing an object: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return "", false, fmt.Errorf("checkpoints: storing an object: %w", err)
	}
	if err := os.Rename(f.Name(), p); err != nil {
		os.Remove(f.Name())
		return "", false, fmt.Errorf("checkpoints: storing an object: %w", err)
	}
	s.objMu.Lock()
	s.have[h] = true
	s.objMu.Unlock()
	return h, true, nil
}

// readObject returns the object's bytes, checked against its name: a
// damaged object is an error, never restored.
func (s *Store) readObject(h string) ([]byte, error) {
	if !validHash(h, false) {
		return nil, fmt.Errorf("checkpoints: %q is not an object name", h)
	}
	f, err := os.Open(s.objectPath(h))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("checkpoints: object %s is missing from %s (was the store cleaned, or made on another machine?)", h[:12], s.dir)
		}
		return nil, fmt.Errorf("checkpoints: reading object %s: %w", h[:12], err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("checkpoints: reading object %s: %w", h[:12], err)
	}
	if hashBytes(data) != h {
		// Dropped, so that a snapshot stores it again rather than name a
		// damaged copy (a power loss while it was written).
		os.Remove(s.objectPath(h))
		s.objMu.Lock()
		delete(s.have, h)
		s.objMu.Unlock()
		return nil, fmt.Errorf("checkpoints: object %s in %s is damaged (its content does not match its name): what needs it cannot be restored", h[:12], s.dir)
	}
	return data, nil
}

// Files returns the snapshot tree flattened: every path in it.
func (s *Store) Files(tree string) (Files, error) {
	s.mu.Lock()
	if f, ok := s.trees[tree]; ok {
		s.mu.Unlock()
		return f, nil
	}
	s.mu.Unlock()
	out := Files{}
	if err := s.flatten(tree, "", out, 0); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.trees) > 64 {
		clear(s.trees)
	}
	s.trees[tree] = out
	s.mu.Unlock()
	return out, nil
}

// maxDepth bounds the nesting of trees read (a damaged store cannot make a
// read recurse without end).
const maxDepth = 512

func (s *Store) flatten(tree, prefix string, out Files, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: nested too deep", errCorrupt)
	}
	data, err := s.readObject(tree)
	if err != nil {
		return err
	}
	entries, err := decodeTree(data)
	if err != nil {
		return fmt.Errorf("checkpoints: tree %s: %w", tree[:12], err)
	}
	for _, e := range entries {
		p := e.Name
		if prefix != "" {
			p = prefix + "/" + e.Name
		}
		out[p] = e.Entry
		if e.Kind == Dir {
			if err := s.flatten(e.Hash, p, out, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// relTo returns p relative to root, slash-separated ("" for root itself),
// and whether p is inside root.
func relTo(root, p string) (string, bool) {
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == ".." || filepath.IsAbs(rel) || hasDotDot(rel) {
		return "", false
	}
	if rel == "." {
		return "", true
	}
	return filepath.ToSlash(rel), true
}

func (s *Store) genPath() string { return filepath.Join(s.dir, "generation") }

// checkGeneration drops what the store remembers of its objects when a
// prune (of this process or another) removed some since; s.mu is held.
func (s *Store) checkGeneration() {
	data, _ := os.ReadFile(s.genPath())
	if string(data) == s.gen {
		return
	}
	s.gen = string(data)
	s.objMu.Lock()
	clear(s.have)
	s.objMu.Unlock()
	s.index, s.last = nil, nil
	clear(s.trees)
}

// Generation names the last prune of the store: a plan made before a
// prune may name objects it removed.
func (s *Store) Generation() string {
	data, _ := os.ReadFile(s.genPath())
	return string(data)
}

// lookup returns path p's entry in the snapshot tree, reading only the
// trees on the way to it.
func (s *Store) lookup(tree, p string) (Entry, bool, error) {
	h := tree
	comps := strings.Split(p, "/")
	for i, c := range comps {
		data, err := s.readObject(h)
		if err != nil {
			return Entry{}, false, err
		}
		entries, err := decodeTree(data)
		if err != nil {
			return Entry{}, false, fmt.Errorf("checkpoints: tree %s: %w", h[:12], err)
		}
		j := sort.Search(len(entries), func(k int) bool { return entries[k].Name >= c })
		if j == len(entries) || entries[j].Name != c {
			return Entry{}, false, nil
		}
		if i == len(comps)-1 {
			return entries[j].Entry, true, nil
		}
		if entries[j].Kind != Dir {
			return Entry{}, false, nil
		}
		h = entries[j].Hash
	}
	return Entry{}, false, nil
}
