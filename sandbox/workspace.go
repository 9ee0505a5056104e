// Package sandbox keeps a model's tools inside the user's workspace: every
// path a tool touches is resolved (symlinks included) and refused outside the
// workspace root, and child processes are confined by the operating system
// (Landlock on Linux) to write only inside it.
package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Access is what a tool wants to do with a path.
type Access int

// Kinds of access.
const (
	Read Access = iota
	Write
)

func (a Access) String() string {
	if a == Write {
		return "write"
	}
	return "read"
}

// PathError is a path refused by the workspace rules. Its message names the
// rule, so that a model (or a person) knows what to do instead.
type PathError struct {
	Path   string
	Access Access
	Rule   string
}

func (e *PathError) Error() string {
	return fmt.Sprintf("refused to %s %s: %s", e.Access, e.Path, e.Rule)
}

// Workspace is the directory tree tools may touch.
type Workspace struct {
	root     string
	readOnly []string
}

// protected are paths inside every workspace that tools may read but never
// write: Hearth's own project config (writing it could raise the approval
// mode of the next run) and what git runs by itself (hooks, config), which
// would execute later, outside any sandbox.
var protected = []string{".hearth", filepath.Join(".git", "hooks"), filepath.Join(".git", "config")}

// IsProtected reports whether a resolved path inside the workspace is one
// tools may not write.
func (w *Workspace) IsProtected(p string) bool {
	for _, rel := range protected {
		if within(p, filepath.Join(w.root, rel)) {
			return true
		}
	}
	return false
}

// protectedRule is why a protected path is refused.
const protectedRule = "Hearth's project config (.hearth) and git's hooks and config are not written by tools: ask the user to change them"

// Writable returns nil if tools may write p, a clean absolute path as the
// kernel names it (a file about to be written, in a directory already
// opened): inside the root, and not one of the protected paths. It is the
// last check before a write, made on the directory's descriptor after
// Resolve's check of the path (see atomicfile.WriteBeneath).
func (w *Workspace) Writable(p string) error {
	if !filepath.IsAbs(p) || !within(p, w.root) || p == w.root {
		return &PathError{Path: p, Access: Write, Rule: "it is outside the workspace " + w.root + " (was a directory moved or swapped while it was written?)"}
	}
	if w.IsProtected(p) {
		return &PathError{Path: p, Access: Write, Rule: protectedRule}
	}
	return nil
}

// New returns a workspace rooted at root (made absolute, symlinks resolved).
// readOnly names further directories tools may read but not write (a
// profile's reference trees).
func New(root string, readOnly ...string) (*Workspace, error) {
	r, err := realDir(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root: %w", err)
	}
	w := &Workspace{root: r}
	for _, d := range readOnly {
		rd, err := realDir(d)
		if err != nil {
			return nil, fmt.Errorf("read-only directory: %w", err)
		}
		w.readOnly = append(w.readOnly, rd)
	}
	return w, nil
}

func realDir(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s is not a directory", d)
	}
	return real, nil
}

// Root returns the workspace root: absolute, symlinks resolved.
func (w *Workspace) Root() string { return w.root }

// ReadOnly returns the extra read-only directories.
func (w *Workspace) ReadOnly() []string { return append([]string(nil), w.readOnly...) }

// Resolve turns a tool's path argument (relative to the root, or absolute)
// into an absolute path with every symlink resolved, and refuses it unless it
// lies inside the workspace (or, for reading, a read-only directory). A path
// that does not exist yet (a file about to be written) is resolved through
// its deepest existing parent.
func (w *Workspace) Resolve(p string, a Access) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", &PathError{Path: p, Access: a, Rule: "the path holds a NUL byte"}
	}
	if p == "" {
		p = "."
	}
	if strings.HasPrefix(p, "~") {
		return "", &PathError{Path: p, Access: a, Rule: "~ is not expanded: give a path inside the workspace " + w.root}
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(w.root, abs)
	}
	abs = filepath.Clean(abs)
	real, err := resolveExisting(abs)
	if err != nil {
		return "", &PathError{Path: p, Access: a, Rule: err.Error()}
	}
	if within(real, w.root) {
		if a == Write && w.IsProtected(real) {
			return "", &PathError{Path: p, Access: a, Rule: protectedRule}
		}
		return real, nil
	}
	for _, ro := range w.readOnly {
		if within(real, ro) {
			if a == Write {
				return "", &PathError{Path: p, Access: a, Rule: ro + " is read-only"}
			}
			return real, nil
		}
	}
	rule := "it is outside the workspace " + w.root
	if real != abs {
		rule = fmt.Sprintf("it resolves to %s, outside the workspace %s", real, w.root)
	}
	return "", &PathError{Path: p, Access: a, Rule: rule}
}

// Rel returns p (a resolved path) relative to the root, for messages.
func (w *Workspace) Rel(p string) string {
	if r, err := filepath.Rel(w.root, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// resolveExisting evaluates symlinks in the longest existing prefix of abs
// and appends the rest.
func resolveExisting(abs string) (string, error) {
	rest := ""
	cur := abs
	for i := 0; i < 255; i++ {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if rest == "" {
				return real, nil
			}
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("cannot resolve: %v", err)
		}
		// A dangling symlink: refuse, it could point anywhere later.
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(cur)
			return "", fmt.Errorf("it is a symlink to %s, which does not exist", target)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
	return "", errors.New("path too deep")
}

// within reports whether p is dir or inside it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return true
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
