package fs

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// ignoreFiles are read in every directory, like git and ripgrep do.
var ignoreFiles = []string{".gitignore", ".ignore", ".hearthignore"}

// alwaysSkipped are directories no search wants.
var alwaysSkipped = map[string]bool{".git": true, ".hg": true, ".svn": true}

// entry is one file found by a walk.
type entry struct {
	path string // absolute
	rel  string // relative to the walk's root, with '/' separators
	d    fs.DirEntry
	fi   fs.FileInfo
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

// walker visits a tree in parallel, honouring ignore files.
type walker struct {
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
	ents, err := os.ReadDir(job.path)
	if err != nil {
		return nil, true // unreadable: skip, as ripgrep does
	}
	patterns := job.patterns
	relDir := job.parts
	if !w.noIgnore {
		patterns = appendIgnores(patterns, job.path, relDir)
	}
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
		if d.Type()&fs.ModeSymlink != 0 {
			// Follow links only when they stay inside the workspace and
			// are files: a linked directory could loop or leave the tree.
			real, err := filepath.EvalSymlinks(full)
			if err != nil || !within(real, w.top) {
				continue
			}
			fi, err := os.Stat(real)
			if err != nil || fi.IsDir() {
				continue
			}
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
		if !visit(entry{path: full, rel: rel, d: d}) {
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
		ps = appendIgnores(ps, dir, parts)
		dir = filepath.Join(dir, c)
		parts = append(parts, c)
	}
	return ps
}

func appendIgnores(ps []gitignore.Pattern, dir string, domain []string) []gitignore.Pattern {
	added := false
	for _, f := range ignoreFiles {
		data, err := os.ReadFile(filepath.Join(dir, f))
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
