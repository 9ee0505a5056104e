package checkpoint

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// Snapshot is what one snapshot of the workspace found.
type Snapshot struct {
	// Tree names the snapshot: restore to it with Restore.
	Tree string `json:"tree"`
	// Files counts the files and links kept.
	Files int `json:"files"`
	// Bytes sums their sizes.
	Bytes int64 `json:"bytes"`
	// Stored is what this snapshot added to the store, in bytes: the files
	// that changed since an earlier one (the rest is shared).
	Stored int64 `json:"stored"`
	// Hashed counts the files read and hashed (changed, or new to the
	// index); the others were known by their size, times and inode.
	Hashed int `json:"hashed"`
	// TooLarge lists the files over the size cap: recorded by size, not
	// kept, not restorable.
	TooLarge []string `json:"too_large,omitempty"`
	// Unsupported lists what is neither a file, a link nor a directory
	// (named pipes, sockets, devices), and what could not be read (no
	// permission): not kept.
	Unsupported []string `json:"unsupported,omitempty"`
}

// ignoreFiles are read in every directory, as git and ripgrep do.
var ignoreFiles = []string{".gitignore", ".ignore", ".hearthignore"}

// maxIgnoreFile is the largest ignore file read.
const maxIgnoreFile = 1 << 20

// index remembers what the last snapshot found of each file, so that an
// unchanged one is not read again.
type index struct {
	// At is when the snapshot that wrote it began (Unix ns): a file
	// modified at or after it may have changed again within the same
	// clock tick, and is hashed again.
	At    int64
	Files map[string]stat
}

type stat struct {
	Size, Mtime, Ctime int64
	Ino                uint64
	Mode               uint32
	Hash               string
}

func statOf(fi fs.FileInfo) stat {
	ctime, ino := sysStat(fi)
	return stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ctime: ctime, Ino: ino, Mode: uint32(fi.Mode())}
}

func (s *Store) indexPath() string { return filepath.Join(s.dir, "index") }

// loadIndex reads the index once per process; s.mu is held. A missing or
// damaged index is an empty one (every file is hashed).
func (s *Store) loadIndex() *index {
	if s.index != nil {
		return s.index
	}
	s.index = &index{Files: map[string]stat{}}
	data, err := os.ReadFile(s.indexPath())
	if err != nil {
		return s.index
	}
	ix, err := decodeIndex(data)
	if err != nil {
		s.log.Debug("checkpoint index unreadable: every file is hashed again", "error", err)
		return s.index
	}
	s.index = ix
	return s.index
}

// saveIndex writes the index (a cache: an error is logged, not returned);
// s.mu is held.
func (s *Store) saveIndex(ix *index) {
	f, err := os.CreateTemp(s.dir, ".index-*")
	if err != nil {
		s.log.Warn("saving the checkpoint index", "error", err)
		return
	}
	_, err = f.Write(encodeIndex(ix))
	err = errors.Join(err, f.Close())
	if err == nil {
		err = os.Rename(f.Name(), s.indexPath())
	}
	if err != nil {
		os.Remove(f.Name())
		s.log.Warn("saving the checkpoint index", "error", err)
	}
}

// The index file: "HIDX1\n", At (varint), then per file its path
// (uvarint length, bytes), size, mtime, ctime (varints), inode, mode
// (uvarints) and hash (64 hex bytes).
const indexMagic = "HIDX1\n"

func encodeIndex(ix *index) []byte {
	b := make([]byte, 0, len(indexMagic)+16+len(ix.Files)*120)
	b = append(b, indexMagic...)
	b = binary.AppendVarint(b, ix.At)
	for p, st := range ix.Files {
		if len(st.Hash) != 64 {
			continue
		}
		b = binary.AppendUvarint(b, uint64(len(p)))
		b = append(b, p...)
		b = binary.AppendVarint(b, st.Size)
		b = binary.AppendVarint(b, st.Mtime)
		b = binary.AppendVarint(b, st.Ctime)
		b = binary.AppendUvarint(b, st.Ino)
		b = binary.AppendUvarint(b, uint64(st.Mode))
		b = append(b, st.Hash...)
	}
	return b
}

func decodeIndex(data []byte) (*index, error) {
	bad := errors.New("damaged checkpoint index")
	if !bytes.HasPrefix(data, []byte(indexMagic)) {
		return nil, bad
	}
	data = data[len(indexMagic):]
	at, n := binary.Varint(data)
	if n <= 0 {
		return nil, bad
	}
	data = data[n:]
	ix := &index{At: at, Files: map[string]stat{}}
	for len(data) > 0 {
		l, n := binary.Uvarint(data)
		if n <= 0 || l > uint64(len(data)-n) || l > 1<<16 {
			return nil, bad
		}
		p := string(data[n : n+int(l)])
		data = data[n+int(l):]
		var st stat
		var vs [3]int64
		for i := range vs {
			v, n := binary.Varint(data)
			if n <= 0 {
				return nil, bad
			}
			vs[i], data = v, data[n:]
		}
		st.Size, st.Mtime, st.Ctime = vs[0], vs[1], vs[2]
		ino, n := binary.Uvarint(data)
		if n <= 0 {
			return nil, bad
		}
		data = data[n:]
		mode, n := binary.Uvarint(data)
		if n <= 0 || len(data)-n < 64 {
			return nil, bad
		}
		st.Ino, st.Mode = ino, uint32(mode)
		st.Hash = string(data[n : n+64])
		data = data[n+64:]
		if !validHash(st.Hash, false) {
			return nil, bad
		}
		ix.Files[p] = st
	}
	return ix, nil
}

// walker is one snapshot in progress.
type walker struct {
	s      *Store
	ctx    context.Context
	root   *os.Root
	old    *index
	next   *index
	force  map[string]bool // paths kept even when ignored
	under  map[string]bool // directories above a forced path
	ignore []gitignore.Pattern
	sem    chan struct{} // bounds the folders read at once
	watch  *watcher      // told of each folder walked (nil: none)

	mu       sync.Mutex // guards what follows
	snap     Snapshot
	wrote    []string // objects this snapshot added
	dirty    bool     // the index changed: a file was read, or one went
	files    Files    // every path kept, as the walk goes
	patterns map[string][]gitignore.Pattern
	linked   []string // files with other hard links (inotify reports a change through one name only)
}

// lastWalk is what the last snapshot found, kept so that the next one
// reads again only the folders the watcher says changed.
type lastWalk struct {
	tree  string
	files Files
	// patterns are the ignore patterns in force in each folder walked.
	patterns map[string][]gitignore.Pattern
	// forced are the paths the walk kept even if ignored.
	forced map[string]bool
	// linked are the files with other hard links: looked at every time.
	linked []string
	// exclude is the repository's exclude file as the walk read it.
	exclude stat
}

// maxLinked is how many hard-linked files an incremental snapshot looks
// at each time; with more, every snapshot walks.
const maxLinked = 256

// excludeStat is the stat of the repository's exclude file (zero when
// there is none).
func (s *Store) excludeStat() stat {
	fi, err := os.Lstat(filepath.Join(s.root, ".git", "info", "exclude"))
	if err != nil {
		return stat{}
	}
	return statOf(fi)
}

// walkers is how many folders a snapshot reads at once: the cost of a
// snapshot is its system calls, which overlap.
const walkers = 8

// racyMargin is how far a file's time may lag the clock a snapshot starts
// by (the kernel's coarse clock ticks every few milliseconds).
const racyMargin = 50 * time.Millisecond

func (w *walker) count(files int, bytes, stored int64, hashed int) {
	w.mu.Lock()
	w.snap.Files += files
	w.snap.Bytes += bytes
	w.snap.Stored += stored
	w.snap.Hashed += hashed
	w.dirty = w.dirty || hashed > 0
	w.mu.Unlock()
}

func (w *walker) unsupported(p string) {
	w.mu.Lock()
	w.snap.Unsupported = append(w.snap.Unsupported, p)
	w.mu.Unlock()
}

func (w *walker) tooLarge(p string, n int64) {
	w.mu.Lock()
	w.snap.TooLarge = append(w.snap.TooLarge, p)
	w.snap.Files++
	w.snap.Bytes += n
	w.mu.Unlock()
}

func (w *walker) indexed(p string, st stat) {
	w.mu.Lock()
	w.next.Files[p] = st
	w.mu.Unlock()
}

// put stores an object and notes whether it was new.
func (w *walker) put(data []byte) (string, bool, error) {
	h, wrote, err := w.s.putObject(data)
	if wrote {
		w.mu.Lock()
		w.wrote = append(w.wrote, h)
		w.mu.Unlock()
	}
	return h, wrote, err
}

// flush is where a snapshot would make what it added durable. It does
// not: an object is renamed into place whole, so a killed process leaves
// none torn, and an fsync per object would cost more than the rest of a
// checkpoint (tens of milliseconds on a virtual disk). After a power loss
// the newest objects may be missing or damaged: every object is checked
// against its name when it is read, so a restore that needs one says so
// (and the damaged object is dropped, to be stored again) rather than
// restore something else. The restore's own journal, and the files it
// writes, are synced.
func (w *walker) flush() error { return nil }

// Snapshot records the workspace's files as they are now and returns the
// snapshot. force names paths (relative to the root) kept even if an
// ignore file leaves them out: the files the agent itself changed. An
// error means no snapshot was made.
//
// On Linux, once a snapshot has walked the workspace, the next ones read
// again only the folders inotify says changed since (and the forced
// paths); SnapshotAll walks everything whatever it says.
func (s *Store) Snapshot(ctx context.Context, force []string) (Snapshot, error) {
	return s.snapshot(ctx, force, false)
}

// SnapshotAll is Snapshot walking the whole workspace: for the state a
// restore keeps and compares with, which must not rely on what inotify
// reports.
func (s *Store) SnapshotAll(ctx context.Context, force []string) (Snapshot, error) {
	return s.snapshot(ctx, force, true)
}

func (s *Store) snapshot(ctx context.Context, force []string, all bool) (Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checkGeneration()
	if !all {
		snap, ok, err := s.incremental(ctx, force)
		if ok || err != nil {
			return snap, err
		}
	}
	// File times come from a coarser clock than time.Now: a file written
	// just before the walk may bear a time after its start. Those within
	// the margin are read again next time (the index does not trust
	// them).
	start := time.Now().Add(-racyMargin).UnixNano()
	root, err := os.OpenRoot(s.root)
	if err != nil {
		return Snapshot{}, fmt.Errorf("checkpoints: opening the workspace: %w", err)
	}
	defer root.Close()
	s.last = nil
	s.watch = s.watch.reset()
	s.walks++
	w := &walker{s: s, ctx: ctx, root: root, old: s.loadIndex(), next: &index{At: start, Files: map[string]stat{}},
		force: map[string]bool{}, under: map[string]bool{}, sem: make(chan struct{}, walkers), watch: s.watch,
		files: Files{}, patterns: map[string][]gitignore.Pattern{}}
	for _, f := range force {
		f = cleanRel(f)
		if f == "" {
			continue
		}
		w.force[f] = true
		for _, d := range parentDirs(f) {
			w.under[d] = true
		}
	}
	w.ignore = w.rootIgnores()
	tree, err := w.dir("", nil, false)
	if err != nil {
		return Snapshot{}, err
	}
	if err := w.flush(); err != nil {
		return Snapshot{}, err
	}
	if w.dirty || s.indexDirty || len(w.next.Files) != len(w.old.Files) {
		s.saveIndex(w.next)
		s.indexDirty = false
	} else {
		// Unchanged: the index on disk stays, with the time of the
		// snapshot that wrote it (files modified since are read again).
		w.next.At = w.old.At
	}
	s.index = w.next
	if s.watch != nil && len(w.linked) <= maxLinked {
		s.last = &lastWalk{tree: tree, files: w.files, patterns: w.patterns, forced: w.force, linked: w.linked, exclude: s.excludeStat()}
	}
	w.snap.Tree = tree
	sort.Strings(w.snap.TooLarge)
	sort.Strings(w.snap.Unsupported)
	return w.snap, nil
}

// cleanRel makes a path relative to the root slash-separated and clean;
// "" for the root itself or a path outside it.
func cleanRel(p string) string {
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// rootIgnores reads the repository's own exclude file, when the workspace
// is a git repository (read only: nothing in .git is ever written).
func (w *walker) rootIgnores() []gitignore.Pattern {
	data := w.readSmall(".git/info/exclude")
	return appendPatterns(nil, data, nil)
}

func (w *walker) readSmall(rel string) []byte {
	f, err := w.root.Open(rel)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, _ := io.ReadAll(io.LimitReader(f, maxIgnoreFile))
	return data
}

func appendPatterns(ps []gitignore.Pattern, data []byte, domain []string) []gitignore.Pattern {
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// dir snapshots the directory rel ("" for the root) and returns its tree's
// hash. inherited are the ignore patterns of the directories above;
// onlyForced keeps only the forced paths below (an ignored directory
// entered for them).
func (w *walker) dir(rel string, inherited []gitignore.Pattern, onlyForced bool) (string, error) {
	if err := w.ctx.Err(); err != nil {
		return "", err
	}
	name := rel
	if name == "" {
		name = "."
	}
	if strings.Count(rel, "/") >= maxDepth-2 {
		// Deeper than a tree is read back: not kept, and said.
		w.unsupported(rel + "/")
		h, _, err := w.put(encodeTree(nil))
		return h, err
	}
	if !onlyForced {
		w.watch.add(w.s.root, rel)
	}
	f, err := w.root.Open(name)
	if err != nil && rel == "" {
		return "", fmt.Errorf("checkpoints: reading the workspace: %w", err)
	}
	var ents []fs.DirEntry
	if err == nil {
		ents, err = f.ReadDir(-1)
		f.Close()
	}
	if err != nil {
		// Unreadable (no permission), or gone: kept as an empty folder,
		// and said.
		w.s.log.Debug("checkpoint: a folder cannot be read", "path", name, "error", err)
		w.unsupported(rel + "/")
		ents = nil
	}
	var domain []string
	if rel != "" {
		domain = strings.Split(rel, "/")
	}
	patterns := inherited
	if rel == "" {
		patterns = w.ignore
	}
	if !onlyForced {
		for _, n := range ignoreFiles {
			for _, e := range ents {
				if e.Name() == n && e.Type().IsRegular() {
					patterns = appendPatterns(patterns[:len(patterns):len(patterns)], w.readSmall(join(rel, n)), domain)
				}
			}
		}
	}
	if !onlyForced {
		w.mu.Lock()
		w.patterns[rel] = patterns
		w.mu.Unlock()
	}
	matcher := gitignore.NewMatcher(patterns)
	entries := make([]treeEntry, len(ents))
	keep := make([]bool, len(ents))
	errs := make([]error, len(ents))
	var wg sync.WaitGroup
	for i, d := range ents {
		n := d.Name()
		if n == ".git" {
			continue // the project's repository: never Hearth's to keep
		}
		p := join(rel, n)
		if w.s.opts.Skip != nil && w.s.opts.Skip(p) {
			continue
		}
		isDir := d.IsDir()
		forced := w.force[p] || w.under[p]
		if onlyForced && !forced {
			continue
		}
		ignored := !onlyForced && matcher.Match(append(domain[:len(domain):len(domain)], n), isDir)
		if ignored && !forced {
			continue
		}
		fi, err := d.Info()
		if err != nil {
			continue // gone since the directory was read
		}
		visit := func() {
			e, ok, err := w.entry(p, fi, patterns, onlyForced || ignored)
			entries[i], keep[i], errs[i] = treeEntry{Name: n, Entry: e}, ok, err
		}
		if !fi.IsDir() {
			visit()
			continue
		}
		select {
		case w.sem <- struct{}{}:
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-w.sem }()
				visit()
			}()
		default:
			visit()
		}
	}
	wg.Wait()
	kept := entries[:0]
	for i := range entries {
		if errs[i] != nil {
			return "", errs[i]
		}
		if keep[i] {
			kept = append(kept, entries[i])
		}
	}
	if w.files != nil {
		w.mu.Lock()
		for _, e := range kept {
			w.files[join(rel, e.Name)] = e.Entry
		}
		w.mu.Unlock()
	}
	h, _, err := w.put(encodeTree(kept))
	if err != nil {
		return "", err
	}
	return h, nil
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// entry snapshots one path found in a directory; false when it is not kept.
func (w *walker) entry(p string, fi fs.FileInfo, patterns []gitignore.Pattern, onlyForced bool) (Entry, bool, error) {
	perm := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	switch {
	case fi.IsDir():
		h, err := w.dir(p, patterns, onlyForced)
		if err != nil {
			return Entry{}, false, err
		}
		return Entry{Kind: Dir, Perm: perm, Hash: h}, true, nil
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := w.root.Readlink(p)
		if err != nil {
			return Entry{}, false, nil // gone since the directory was read
		}
		h, _, err := w.put([]byte(target))
		if err != nil {
			return Entry{}, false, err
		}
		w.count(1, 0, 0, 0)
		return Entry{Kind: Link, Perm: perm, Size: int64(len(target)), Hash: h}, true, nil
	case fi.Mode().IsRegular():
		return w.file(p, fi, perm)
	default:
		w.unsupported(p)
		return Entry{}, false, nil
	}
}

// file snapshots a regular file: from the index when its size, times,
// inode and mode are as the last snapshot saw them, else by reading it.
func (w *walker) file(p string, fi fs.FileInfo, perm fs.FileMode) (Entry, bool, error) {
	st := statOf(fi)
	if w.files != nil && nlinkOf(fi) > 1 {
		w.mu.Lock()
		w.linked = append(w.linked, p)
		w.mu.Unlock()
	}
	if fi.Size() > w.s.opts.MaxFileSize {
		w.tooLarge(p, fi.Size())
		return Entry{Kind: Large, Perm: perm, Size: fi.Size()}, true, nil
	}
	// The index is read-only while the walk runs: no lock.
	if old, ok := w.old.Files[p]; ok && old.Hash != "" && old.Size == st.Size && old.Mtime == st.Mtime &&
		old.Ctime == st.Ctime && old.Ino == st.Ino && old.Mode == st.Mode && st.Mtime < w.old.At {
		st.Hash = old.Hash
		w.indexed(p, st)
		w.count(1, st.Size, 0, 0)
		return Entry{Kind: File, Perm: perm, Size: st.Size, Hash: st.Hash}, true, nil
	}
	f, err := w.root.OpenFile(p, os.O_RDONLY|openNonblock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Entry{}, false, nil
	}
	if err != nil {
		w.unsupported(p)
		return Entry{}, false, nil
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		w.unsupported(p)
		return Entry{}, false, nil
	}
	if !ofi.Mode().IsRegular() {
		// Swapped for something else since the directory was read.
		w.unsupported(p)
		return Entry{}, false, nil
	}
	var buf bytes.Buffer
	buf.Grow(int(min(ofi.Size(), w.s.opts.MaxFileSize)) + 1)
	n, err := buf.ReadFrom(io.LimitReader(f, w.s.opts.MaxFileSize+1))
	if err != nil {
		w.unsupported(p)
		return Entry{}, false, nil
	}
	if n > w.s.opts.MaxFileSize {
		w.tooLarge(p, n)
		return Entry{Kind: Large, Perm: perm, Size: n}, true, nil
	}
	h, wrote, err := w.put(buf.Bytes())
	if err != nil {
		return Entry{}, false, err
	}
	stored := int64(0)
	if wrote {
		stored = n
	}
	w.count(1, n, stored, 1)
	// The index keeps what was stat'ed before the read: were the file
	// changed meanwhile, its times differ next time and it is read again.
	st = statOf(ofi)
	if st.Size == n {
		st.Hash = h
		w.indexed(p, st)
	}
	return Entry{Kind: File, Perm: ofi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), Size: n, Hash: h}, true, nil
}

// ignoredInTree is ignoredIn for a snapshot named by its tree, reading
// only the ignore files on the way to p.
func (s *Store) ignoredInTree(tree, p string) bool {
	return s.ignoredBy(func(q string) (Entry, bool) {
		e, ok, err := s.lookup(tree, q)
		return e, ok && err == nil
	}, p)
}

// ignoredIn reports whether the snapshot files left p out by its ignore
// files: those on the way to p as the snapshot kept them, and the
// repository's exclude file.
func (s *Store) ignoredIn(files Files, p string) bool {
	return s.ignoredBy(func(q string) (Entry, bool) { e, ok := files[q]; return e, ok }, p)
}

func (s *Store) ignoredBy(entry func(string) (Entry, bool), p string) bool {
	var patterns []gitignore.Pattern
	if data, err := os.ReadFile(filepath.Join(s.root, ".git", "info", "exclude")); err == nil && len(data) <= maxIgnoreFile {
		patterns = appendPatterns(nil, data, nil)
	}
	comps := strings.Split(p, "/")
	for i := range comps {
		dir := strings.Join(comps[:i], "/")
		for _, n := range ignoreFiles {
			if e, ok := entry(join(dir, n)); ok && e.Kind == File && e.Size <= maxIgnoreFile {
				if data, err := s.readObject(e.Hash); err == nil {
					patterns = appendPatterns(patterns, data, comps[:i:i])
				}
			}
		}
		if gitignore.NewMatcher(patterns).Match(comps[:i+1], i < len(comps)-1) {
			return true
		}
	}
	return false
}
