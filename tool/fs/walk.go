package fs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// ignoreFiles are read in every directory, like git and ripgrep do.
var ignoreFiles = []string{".gitignore", ".ignore", ".hearthignore"}

// alwaysSkipped are directories no search wants.
var alwaysSkipped = map[string]bool{".git": true, ".hg": true, ".svn": true}

// maxIgnoreFile is the largest ignore file read; a larger one is not.
const maxIgnoreFile = 1 << 20

// entry is one file found by a walk.
type entry struct {
	path string // absolute
	rel  string // relative to the walk's root, with '/' separators
	// real is the file a symlink leads to (resolved and checked), to be
	// opened instead of path; "" when path is not a symlink.
	real string
	// dir is the directory holding the file, open; valid while visit
	// runs (Retain it to keep it). nil for a file found otherwise.
	dir *safefile.Dir
	d   fs.DirEntry
	fi  fs.FileInfo
}

// open opens the file for reading, as safefile.Open does: by its
// directory's descriptor when the walk found it, through the path a
// symlink leads to when it is one.
func (e *entry) open(ws *sandbox.Workspace) (*os.File, fs.FileInfo, error) {
	if e.dir != nil && e.real == "" {
		return e.dir.Open(filepath.Base(e.path))
	}
	return safefile.Open(ws, e.target())
}

// target is the path to open to read the file.
func (e *entry) target() string {
	if e.real != "" {
		return e.real
	}
	return e.path
}

// info returns the file's metadata, which costs a system call: only the
// entries a search keeps ask for it.
func (e *entry) info() fs.FileInfo {
	if e.fi == nil {
		fi, err := e.d.Info()
		if err != nil {
			return zeroInfo{}
		}
		e.fi = fi
	}
	return e.fi
}

// zeroInfo stands in for a file that vanished during the walk.
type zeroInfo struct{ fs.FileInfo }

func (zeroInfo) Size() int64 { return 0 }

// walker visits a tree in parallel, honouring ignore files. It visits
// regular files only (and symlinks that lead to one the workspace lets
// tools read): named pipes, sockets and devices are passed over without
// being opened, symlinked directories are not followed, and secret
// locations are neither entered nor visited.
type walker struct {
	ws *sandbox.Workspace
	// root is where the walk starts (absolute); top is the workspace root,
	// whose ignore files (and those between it and root) apply too.
	root, top string
	// noIgnore visits ignored files as well.
	noIgnore bool
}

type dirJob struct {
	path     string
	rel      string   // relative to the walk's root, "" for the root itself
	parts    []string // relative to the workspace root, for ignore matching
	patterns []gitignore.Pattern
}

// walk calls visit for every file (not directory) under w.root, from
// several goroutines at once; visit must be safe for concurrent use. It
// stops early when ctx is done or visit returns false.
func (w *walker) walk(ctx context.Context, visit func(e entry) bool) error {
	if w.top == "" {
		w.top = w.ws.Root()
	}
	base := w.inheritedPatterns()
	workers := max(4, runtime.GOMAXPROCS(0)*4)
	var (
		mu      sync.Mutex
		queue   = []dirJob{{path: w.root, parts: w.relParts(w.root), patterns: base}}
		pending = 1
		cond    = sync.NewCond(&mu)
		stopped bool
	)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && pending > 0 && !stopped {
					cond.Wait()
				}
				if stopped || (len(queue) == 0 && pending == 0) {
					mu.Unlock()
					return
				}
				job := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				mu.Unlock()

				subdirs, ok := w.readDir(ctx, job, visit)
				mu.Lock()
				queue = append(queue, subdirs...)
				pending += len(subdirs) - 1
				if !ok {
					stopped = true
				}
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// readDir lists one directory: files go to visit, directories come back.
func (w *walker) readDir(ctx context.Context, job dirJob, visit func(entry) bool) ([]dirJob, bool) {
	if ctx.Err() != nil {
		return nil, false
	}
	// The directory is opened below the workspace's root (or read-only
	// directory) through no symlink, and checked where the kernel says it
	// is; its files are opened by its descriptor.
	dir, err := safefile.OpenDir(w.ws, job.path)
	if err != nil {
		return nil, true // unreadable: skip, as ripgrep does
	}
	defer dir.Close()
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return nil, true
	}
	patterns := job.patterns
	relDir := job.parts
	if !w.noIgnore {
		var present []string
		for _, d := range ents {
			if slices.Contains(ignoreFiles, d.Name()) {
				present = append(present, d.Name())
			}
		}
		if len(present) > 0 {
			patterns = appendIgnores(patterns, dir, relDir, present...)
		}
	}
	// Only a directory that holds a secret location needs its entries
	// checked: the walk never enters one.
	secrets := w.ws.HoldsSecret(job.path)
	matcher := gitignore.NewMatcher(patterns)
	parts := append(relDir[:len(relDir):len(relDir)], "")
	var subdirs []dirJob
	for _, d := range ents {
		name := d.Name()
		isDir := d.IsDir()
		if isDir && alwaysSkipped[name] {
			continue
		}
		full := job.path + string(filepath.Separator) + name
		if secrets && w.ws.IsSecret(full) {
			continue
		}
		real := ""
		switch typ := d.Type(); {
		case typ&fs.ModeSymlink != 0:
			// Follow links only when they lead to a regular file tools
			// may read (inside the workspace or a read-only directory,
			// not secret): a linked directory could loop or leave the
			// tree.
			r, err := w.ws.Resolve(full, sandbox.Read)
			if err != nil {
				continue
			}
			fi, err := os.Lstat(r)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			real = r
		case isDir:
		case !typ.IsRegular():
			continue // a named pipe, a socket, a device: never opened
		}
		parts[len(parts)-1] = name
		if len(patterns) > 0 && matcher.Match(parts, isDir) {
			continue
		}
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		if isDir {
			subdirs = append(subdirs, dirJob{path: full, rel: rel, parts: append(relDir[:len(relDir):len(relDir)], name), patterns: patterns})
			continue
		}
		if !visit(entry{path: full, rel: rel, real: real, dir: dir, d: d}) {
			return subdirs, false
		}
	}
	return subdirs, true
}

// relParts is dir relative to the workspace root, split into components.
func (w *walker) relParts(dir string) []string {
	r, err := filepath.Rel(w.top, dir)
	if err != nil || r == "." || strings.HasPrefix(r, "..") {
		return nil
	}
	return strings.Split(filepath.ToSlash(r), "/")
}

// inheritedPatterns reads the ignore files from the workspace root down to
// the walk's root (exclusive).
func (w *walker) inheritedPatterns() []gitignore.Pattern {
	if w.noIgnore {
		return nil
	}
	var ps []gitignore.Pattern
	if !within(w.root, w.top) || w.root == w.top {
		return nil
	}
	rel, _ := filepath.Rel(w.top, w.root)
	dir := w.top
	parts := []string{}
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		if d, err := safefile.OpenDir(w.ws, dir); err == nil {
			ps = appendIgnores(ps, d, parts, ignoreFiles...)
			d.Close()
		}
		dir = filepath.Join(dir, c)
		parts = append(parts, c)
	}
	return ps
}

// appendIgnores adds the patterns of the ignore files in dir (those of
// ignoreFiles named in files, in ignoreFiles' order) to ps. Ignore files are
// read as every file is (safefile: regular files only, by the directory's
// descriptor), and not when larger than maxIgnoreFile.
func appendIgnores(ps []gitignore.Pattern, dir *safefile.Dir, domain []string, files ...string) []gitignore.Pattern {
	added := false
	for _, f := range ignoreFiles {
		if !slices.Contains(files, f) {
			continue
		}
		data, _, err := dir.ReadFile(f, maxIgnoreFile)
		if err != nil {
			continue
		}
		if !added {
			ps = ps[:len(ps):len(ps)] // copy on write: siblings share the parent's slice
			added = true
		}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimRight(line, "\r")
			if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
				continue
			}
			ps = append(ps, gitignore.ParsePattern(line, domain))
		}
	}
	return ps
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
