package fs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/go-git/go-git/v5/plumbing/format/gitignore"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// ---- list_directory ----

type listDirArgs struct {
	Path   string   `json:"path,omitempty" jsonschema:"directory relative to the workspace root (default: the root)"`
	Ignore []string `json:"ignore,omitempty" jsonschema:"glob patterns of names to leave out"`
}

var listDirDef = tool.Def[listDirArgs]{Schema: json.RawMessage(listDirSchema), Name: "list_directory", Kind: tool.ReadOnly,
	Description: "List the files and subdirectories of a directory (names ending in / are directories)."}

func (e *env) listDir(ctx context.Context, _ tool.Call, a listDirArgs) (tool.Result, error) {
	p, err := e.ws.Resolve(a.Path, sandbox.Read)
	if err != nil {
		return tool.Result{}, err
	}
	dir, ents, err := e.readDir(a.Path, p)
	if err != nil {
		return tool.Result{}, err
	}
	defer dir.Close()
	w := &walker{ws: e.ws, root: p, top: e.ws.Root()}
	patterns := appendIgnores(w.inheritedPatterns(), dir, w.relParts(p), ignoreFiles...)
	m := gitignore.NewMatcher(patterns)
	rel := w.relParts(p)
	secrets := e.ws.HoldsSecret(p)
	var dirs, files []string
	ignored, hidden := 0, 0
	for _, d := range ents {
		name := d.Name()
		isDir := d.IsDir()
		if isDir && alwaysSkipped[name] {
			ignored++
			continue
		}
		if secrets && e.ws.IsSecret(filepath.Join(p, name)) {
			hidden++
			continue
		}
		skip := m.Match(append(rel[:len(rel):len(rel)], name), isDir)
		for _, ig := range a.Ignore {
			if ok, _ := doublestar.Match(ig, name); ok {
				skip = true
			}
		}
		if skip {
			ignored++
			continue
		}
		switch typ := d.Type(); {
		case isDir:
			dirs = append(dirs, name+"/")
		case typ.IsRegular() || typ&fs.ModeSymlink != 0:
			if info, err := d.Info(); err == nil {
				files = append(files, fmt.Sprintf("%s (%s)", name, size(info.Size())))
			}
		default:
			files = append(files, fmt.Sprintf("%s (%s, not read by the file tools)", name, safefile.Kind(typ)))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s:\n", dirLabel(e.ws.Rel(p)))
	for _, s := range append(dirs, files...) {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	if len(dirs)+len(files) == 0 {
		b.WriteString("(empty)\n")
	}
	if ignored > 0 {
		fmt.Fprintf(&b, "(%d ignored entries not shown)\n", ignored)
	}
	if hidden > 0 {
		fmt.Fprintf(&b, "(%d secret locations the user keeps from tools not shown)\n", hidden)
	}
	return tool.Result{Output: b.String()}, nil
}

// readDir opens and lists the directory p (resolved from arg), sorted by
// name. The caller closes the directory.
func (e *env) readDir(arg, p string) (*safefile.Dir, []fs.DirEntry, error) {
	d, err := safefile.OpenDir(e.ws, p)
	if err != nil {
		var nr *safefile.NotRegularError
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, nil, fmt.Errorf("%s does not exist: list its parent directory to see what is there", arg)
		case errors.As(err, &nr) && nr.Mode.IsRegular():
			return nil, nil, fmt.Errorf("%s is a file, not a directory: use read_file", arg)
		case errors.As(err, &nr):
			return nil, nil, fmt.Errorf("%s is %s, not a directory", arg, safefile.Kind(nr.Mode))
		}
		return nil, nil, fmt.Errorf("listing %s: %w", arg, err)
	}
	ents, err := d.ReadDir(-1)
	if err != nil {
		d.Close()
		return nil, nil, fmt.Errorf("listing %s: %w", arg, err)
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return d, ents, nil
}

func dirLabel(rel string) string {
	if rel == "." || rel == "" {
		return "./"
	}
	return rel + "/"
}

func size(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
}

// ---- glob ----

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"glob pattern such as **/*.go or src/*.ts"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search in (default: the workspace root)"`
}

var globDef = tool.Def[globArgs]{Schema: json.RawMessage(globSchema), Name: "glob", Kind: tool.ReadOnly,
	Description: "Find files whose path matches a glob pattern (** matches any directories). Newest files first."}

func (e *env) glob(ctx context.Context, _ tool.Call, a globArgs) (tool.Result, error) {
	matches, err := e.globFiles(ctx, a.Pattern, a.Path)
	if err != nil {
		return tool.Result{}, err
	}
	if len(matches) == 0 {
		return tool.Result{Output: fmt.Sprintf("No files match %q.", a.Pattern)}, nil
	}
	sort.Slice(matches, func(i, j int) bool {
		ti, tj := matches[i].info().ModTime(), matches[j].info().ModTime()
		if !ti.Equal(tj) {
			return ti.After(tj)
		}
		return matches[i].rel < matches[j].rel
	})
	var b strings.Builder
	n := min(len(matches), e.lim.MaxResults)
	for _, m := range matches[:n] {
		b.WriteString(e.ws.Rel(m.path))
		b.WriteByte('\n')
	}
	if len(matches) > n {
		fmt.Fprintf(&b, "[%d more files not shown: narrow the pattern]\n", len(matches)-n)
	}
	return tool.Result{Output: b.String()}, nil
}

// globFiles returns the files under dir (default the root) matching pattern,
// relative to dir, honouring ignore files.
func (e *env) globFiles(ctx context.Context, pattern, dir string) ([]entry, error) {
	if pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("bad glob pattern %q", pattern)
	}
	if filepath.IsAbs(pattern) {
		rel, err := filepath.Rel(e.ws.Root(), pattern)
		if err != nil || strings.HasPrefix(rel, "..") {
			return nil, &sandbox.PathError{Path: pattern, Access: sandbox.Read, Rule: "it is outside the workspace " + e.ws.Root()}
		}
		pattern = filepath.ToSlash(rel)
	}
	root, err := e.ws.Resolve(dir, sandbox.Read)
	if err != nil {
		return nil, err
	}
	w := &walker{ws: e.ws, root: root, top: e.ws.Root()}
	var mu sync.Mutex
	var out []entry
	err = w.walk(ctx, func(en entry) bool {
		if ok, _ := doublestar.Match(pattern, en.rel); ok {
			en.info()
			mu.Lock()
			out = append(out, en)
			mu.Unlock()
		}
		return true
	})
	return out, err
}

// ---- grep_search ----

type grepArgs struct {
	Pattern string `json:"pattern" jsonschema:"regular expression (RE2 syntax; (?i) for case-insensitive)"`
	Path    string `json:"path,omitempty" jsonschema:"directory or file to search (default: the workspace root)"`
	Include string `json:"include,omitempty" jsonschema:"only files matching this glob, e.g. *.go or src/**/*.ts"`
}

var grepDef = tool.Def[grepArgs]{Schema: json.RawMessage(grepSchema), Name: "grep_search", Kind: tool.ReadOnly,
	Description: "Search file contents for a regular expression. Returns matching lines as path:line: text.",
	Describe:    func(a grepArgs) string { return fmt.Sprintf("search for %q", a.Pattern) }}

type hit struct {
	rel  string
	line int
	text string
}

func (e *env) grep(ctx context.Context, _ tool.Call, a grepArgs) (tool.Result, error) {
	hits, total, err := e.search(ctx, a)
	if err != nil {
		return tool.Result{}, err
	}
	if total == 0 {
		return tool.Result{Output: fmt.Sprintf("No matches for %q.", a.Pattern)}, nil
	}
	var b strings.Builder
	for _, h := range hits {
		fmt.Fprintf(&b, "%s:%d: %s\n", h.rel, h.line, h.text)
	}
	if total > len(hits) {
		fmt.Fprintf(&b, "[%d more matches not shown: narrow the pattern, path or include]\n", total-len(hits))
	}
	return tool.Result{Output: b.String()}, nil
}

// matcher finds lines; a pattern with no regular-expression syntax is
// searched as plain bytes, which is much faster.
type matcher struct {
	re  *regexp.Regexp
	lit []byte
}

func newMatcher(pattern string) (*matcher, error) {
	if pattern == "" {
		return nil, errors.New("pattern is empty")
	}
	// Multi-line mode: ^ and $ match at line ends, as in grep, also when a
	// whole file is tested at once.
	re, err := regexp.Compile("(?m)" + pattern)
	if err != nil {
		return nil, fmt.Errorf("bad regular expression %q: %v (RE2 syntax; escape ( [ . * with \\)", pattern, err)
	}
	m := &matcher{re: re}
	if p, err := syntax.Parse(pattern, syntax.Perl); err == nil && p.Op == syntax.OpLiteral && p.Flags&syntax.FoldCase == 0 {
		m.lit = []byte(string(p.Rune))
	}
	return m, nil
}

func (m *matcher) find(data []byte) bool {
	if m.lit != nil {
		return bytes.Contains(data, m.lit)
	}
	return m.re.Match(data)
}

// search walks the tree and returns up to MaxResults hits, sorted by path
// and line, and the total number of matching lines.
func (e *env) search(ctx context.Context, a grepArgs) ([]hit, int, error) {
	m, err := newMatcher(a.Pattern)
	if err != nil {
		return nil, 0, err
	}
	if a.Include != "" && !doublestar.ValidatePattern(a.Include) {
		return nil, 0, fmt.Errorf("bad include pattern %q", a.Include)
	}
	root, err := e.ws.Resolve(a.Path, sandbox.Read)
	if err != nil {
		return nil, 0, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", a.Path, err)
	}
	if !fi.IsDir() {
		// One file: say why it cannot be searched rather than find
		// nothing in it.
		f, ofi, err := safefile.Open(e.ws, root)
		if err != nil {
			return nil, 0, e.readErr(a.Path, err)
		}
		f.Close()
		if ofi.Size() > e.lim.MaxFileSize {
			return nil, 0, e.readErr(a.Path, &safefile.TooLargeError{Path: root, Size: ofi.Size(), Max: e.lim.MaxFileSize})
		}
		fi = ofi
	}
	files := make(chan entry, 256)
	var (
		mu    sync.Mutex
		hits  []hit
		total int
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []hit
			var buf []byte
			n := 0
			for en := range files {
				if ctx.Err() != nil {
					en.release()
					continue // drain: the walk has stopped
				}
				var h []hit
				var c int
				h, c, buf = e.searchFile(en, m, e.lim.MaxResults, buf)
				en.release()
				local = append(local, h...)
				n += c
			}
			mu.Lock()
			hits = append(hits, local...)
			total += n
			mu.Unlock()
		}()
	}
	include := func(rel string) bool {
		if a.Include == "" {
			return true
		}
		if ok, _ := doublestar.Match(a.Include, rel); ok {
			return true
		}
		ok, _ := doublestar.Match(a.Include, filepath.Base(rel)) // *.go matches in every directory
		return ok
	}
	if !fi.IsDir() {
		files <- entry{path: root, rel: e.ws.Rel(root), fi: fi}
	} else {
		w := &walker{ws: e.ws, root: root, top: e.ws.Root()}
		err = w.walk(ctx, func(en entry) bool {
			if !include(en.rel) {
				return true
			}
			if en.dir != nil {
				en.dir.Retain() // the worker releases it
			}
			select {
			case files <- en:
				return true
			case <-ctx.Done():
				en.release()
				return false
			}
		})
	}
	close(files)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, 0, err
	}
	sort.Slice(hits, func(i, j int) bool {
		if hits[i].rel != hits[j].rel {
			return hits[i].rel < hits[j].rel
		}
		return hits[i].line < hits[j].line
	})
	if len(hits) > e.lim.MaxResults {
		hits = hits[:e.lim.MaxResults]
	}
	for i := range hits {
		hits[i].rel = e.ws.Rel(filepath.Join(root, hits[i].rel))
		if !fi.IsDir() {
			hits[i].rel = e.ws.Rel(root)
		}
	}
	return hits, total, nil
}

// searchFile returns the file's matching lines (at most limit) and how many
// lines matched. buf is reused between files (returned, maybe grown).
func (e *env) searchFile(en entry, m *matcher, limit int, buf []byte) ([]hit, int, []byte) {
	data, buf, err := readInto(&en, e.ws, buf, e.lim.MaxFileSize)
	if err != nil || !m.find(data) {
		return nil, 0, buf
	}
	if bytes.IndexByte(data[:min(len(data), 8192)], 0) >= 0 {
		return nil, 0, buf // binary
	}
	var hits []hit
	n := 0
	line := 1
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		var l []byte
		if i < 0 {
			l, data = data, nil
		} else {
			l, data = data[:i], data[i+1:]
		}
		if m.find(l) {
			n++
			if len(hits) < limit {
				text := strings.TrimRight(string(l), "\r")
				if len(text) > 300 {
					text = text[:300] + " …"
				}
				hits = append(hits, hit{rel: en.rel, line: line, text: text})
			}
		}
		line++
	}
	return hits, n, buf
}

// release lets go of the entry's directory, retained for a search worker.
func (e *entry) release() {
	if e.dir != nil {
		e.dir.Close()
		e.dir = nil
	}
}

// readInto reads a whole file into buf (grown as needed), refusing files
// over max bytes (without reading them when their size says so), and
// anything but a regular file that tools may read (see safefile.Open).
func readInto(en *entry, ws *sandbox.Workspace, buf []byte, max int64) ([]byte, []byte, error) {
	f, fi, err := en.open(ws)
	if err != nil {
		return nil, buf, err
	}
	defer f.Close()
	path := en.target()
	if fi.Size() > max {
		return nil, buf, &safefile.TooLargeError{Path: path, Size: fi.Size(), Max: max}
	}
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, buf, &safefile.TooLargeError{Path: path, Size: int64(len(buf)), Max: max}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return buf, buf, nil
			}
			return nil, buf, err
		}
	}
}
