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
	"slices"
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

// Workspace is the directory tree tools may touch. It is not changed once
// made: WithSecrets and WithReadOnlyRoot return a copy.
type Workspace struct {
	root     string
	readOnly []string
	// rootReadOnly, when not "", makes the root itself read-only (the
	// user's trust level for it): no path may be written, and this says
	// why (WithReadOnlyRoot).
	rootReadOnly string
	// secrets are the locations tools may neither read nor write, as
	// given (absolute, clean); secretPaths are what IsSecret compares
	// with: each location as given and with its symlinks resolved.
	secrets     []string
	secretPaths []secretPath
}

// secretPath is one form of a secret location.
type secretPath struct {
	path string // compared with resolved paths
	name string // the location as the user gave it, for messages
	// holdsRoot: the workspace root is this location or lies inside it.
	// The user chose to work there, so it does not hide the workspace's
	// own files (it still hides the rest of the location).
	holdsRoot bool
}

// Git's own files, and Hearth's project config, are read but never written
// by tools: what they hold decides what runs later, outside any sandbox.
// Any path with a component named .git is protected (the repository's
// directory, a submodule's or nested repository's, and a .git file, which
// names the repository git uses: one written where there was none points
// git at a config of the writer's choosing, core.fsmonitor included), and
// any path with a component named .hearth (the project config decides what
// the next run may do, in a trusted workspace what it starts; one in a
// folder inside the workspace is another workspace's). Names are compared
// exactly: .GIT is another name on Linux.
const (
	gitName    = ".git"
	hearthName = ".hearth"
)

// IsProtected reports whether a resolved path inside the workspace is one
// tools may not write: it has a component named .git or .hearth (at any
// depth). The root itself is not protected.
func (w *Workspace) IsProtected(p string) bool {
	return w.protectedRule(p) != ""
}

// protectedRule says why p may not be written, or "" when it may.
func (w *Workspace) protectedRule(p string) string {
	rel, ok := w.relInside(p)
	if !ok {
		return ""
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for _, c := range parts {
		if c == gitName {
			return "git's own files (.git, the directory or a file, at any depth) are not written by tools: " +
				"what they hold (config, hooks, a gitdir or commondir link) decides what git runs for the user. " +
				"Ask the user to make this change"
		}
	}
	if slices.Contains(parts, hearthName) {
		return "Hearth's project config (.hearth, at any depth) is not written by tools: it decides what the next run may do. " +
			"Ask the user to make this change"
	}
	return ""
}

// relInside returns p relative to the root, when p (clean, absolute) lies
// strictly inside it.
func (w *Workspace) relInside(p string) (string, bool) {
	if p == w.root || !within(p, w.root) {
		return "", false
	}
	rel := strings.TrimPrefix(p[len(w.root):], string(filepath.Separator))
	return rel, rel != ""
}

// Writable returns nil if tools may write p, a clean absolute path as the
// kernel names it (a file about to be written, in a directory already
// opened): inside the root, not one of the protected paths, not in a
// secret location, and the root not read-only (WithReadOnlyRoot: every
// path is refused then). It is the last check before a write, made on the
// directory's descriptor after Resolve's check of the path (see
// atomicfile.WriteBeneath).
func (w *Workspace) Writable(p string) error {
	if w.rootReadOnly != "" {
		return &PathError{Path: p, Access: Write, Rule: w.rootReadOnly}
	}
	if !filepath.IsAbs(p) || !within(p, w.root) || p == w.root {
		return &PathError{Path: p, Access: Write, Rule: "it is outside the workspace " + w.root + " (was a directory moved or swapped while it was written?)"}
	}
	if rule := w.protectedRule(p); rule != "" {
		return &PathError{Path: p, Access: Write, Rule: rule}
	}
	if rule := w.secretRule(p); rule != "" {
		return &PathError{Path: p, Access: Write, Rule: rule}
	}
	return nil
}

// Readable returns nil if tools may read p, a clean absolute path as the
// kernel names a file or directory already opened: inside the root or a
// read-only directory, and not in a secret location. It is the last check
// before a read, made on the opened file's path, after Resolve's check of
// the path a tool was given (a directory swapped for a symlink in between
// is seen).
func (w *Workspace) Readable(p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return &PathError{Path: p, Access: Read, Rule: "not a clean absolute path"}
	}
	if rule := w.secretRule(p); rule != "" {
		return &PathError{Path: p, Access: Read, Rule: rule}
	}
	if w.Base(p) == "" {
		return &PathError{Path: p, Access: Read, Rule: "it is outside the workspace " + w.root + " (was a directory moved or swapped while it was read?)"}
	}
	return nil
}

// Base returns the directory a resolved path lies in that tools may read:
// the root, or the read-only directory holding it; "" when there is none.
// Files are opened below it (see sandbox.OpenDirBeneath).
func (w *Workspace) Base(p string) string {
	if within(p, w.root) {
		return w.root
	}
	for _, ro := range w.readOnly {
		if within(p, ro) {
			return ro
		}
	}
	return ""
}

// WithSecrets returns a copy of the workspace that also refuses to read or
// write any path lying in one of secrets (SecretLocations gives the usual
// ones): files and directories whose content the user keeps from tools.
// Paths are compared once symlinks are resolved, in the path and in the
// locations, so a workspace symlink to ~/.ssh/id_rsa is refused. A secret
// location that holds the workspace root does not hide the root's own
// files: the user chose to work there. Relative entries are made absolute
// (filepath.Abs); empty ones are dropped. A read-only root
// (WithReadOnlyRoot) stays read-only. w itself is not changed.
func (w *Workspace) WithSecrets(secrets []string) *Workspace {
	c := *w
	c.readOnly = append([]string(nil), w.readOnly...)
	c.secrets, c.secretPaths = nil, nil
	seen := map[string]bool{}
	for _, s := range secrets {
		if s == "" || strings.ContainsRune(s, 0) {
			continue
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			continue
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		c.secrets = append(c.secrets, abs)
		forms := []string{abs}
		if real, err := resolveExisting(abs); err == nil && real != abs {
			forms = append(forms, real)
		}
		for _, f := range forms {
			c.secretPaths = append(c.secretPaths, secretPath{path: f, name: abs, holdsRoot: within(c.root, f)})
		}
	}
	return &c
}

// defaultReadOnlyReason is the rule writes are refused by in a read-only
// root when WithReadOnlyRoot is given no reason of its own.
const defaultReadOnlyReason = "this workspace is read-only: nothing in it may be changed; ask the user to allow changes to it"

// WithReadOnlyRoot returns a copy of the workspace whose root is itself
// read-only, as the user's trust level for it says: tools may read what
// they read before (the root, the read-only directories, nothing in a
// secret location), but write nothing at all. Resolve for Write and
// Writable refuse every path with a *PathError whose Rule is reason, so
// reason should say why and what the user can do, e.g. "this workspace is
// read-only (its trust level): nothing in it may be changed; the user can
// run `hearth workspaces trust /path trusted` to allow changes". An empty
// reason gets a generic one. The copy keeps the secret locations, and
// WithSecrets keeps the read-only root. w itself is not changed.
func (w *Workspace) WithReadOnlyRoot(reason string) *Workspace {
	c := *w
	c.readOnly = append([]string(nil), w.readOnly...)
	c.secrets = append([]string(nil), w.secrets...)
	c.secretPaths = append([]secretPath(nil), w.secretPaths...)
	if strings.TrimSpace(reason) == "" {
		reason = defaultReadOnlyReason
	}
	c.rootReadOnly = reason
	return &c
}

// ReadOnlyRoot reports whether the workspace root is read-only
// (WithReadOnlyRoot), and the reason writes are refused by.
func (w *Workspace) ReadOnlyRoot() (reason string, ok bool) {
	return w.rootReadOnly, w.rootReadOnly != ""
}

// Secrets returns the secret locations (absolute, clean, as given to
// WithSecrets).
func (w *Workspace) Secrets() []string { return append([]string(nil), w.secrets...) }

// IsSecret reports whether p, an absolute path with symlinks resolved, lies
// in a secret location tools may not read or write (or is one).
func (w *Workspace) IsSecret(p string) bool { return w.secretRule(p) != "" }

// HoldsSecret reports whether a secret location lies strictly below the
// directory dir (absolute, symlinks resolved): a walk of dir must then check
// what it finds with IsSecret; other walks need not.
func (w *Workspace) HoldsSecret(dir string) bool {
	for _, s := range w.secretPaths {
		if s.path != dir && within(s.path, dir) {
			return true
		}
	}
	return false
}

// secretRule says why p lies in a secret location, or "" when it does not.
func (w *Workspace) secretRule(p string) string {
	for _, s := range w.secretPaths {
		if !within(p, s.path) || s.holdsRoot && within(p, w.root) {
			continue
		}
		what := "it lies in " + s.name
		if p == s.path {
			what = "it is " + s.name
		}
		return what + ", a secret location the user has kept from tools (keys, credentials): " +
			"no tool reads or writes it; ask the user if you need something from it"
	}
	return ""
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
// lies inside the workspace (or, for reading, a read-only directory), and
// outside every secret location (see WithSecrets). For writing, it also
// refuses the protected paths (see IsProtected). A path that does not exist
// yet (a file about to be written) is resolved through its deepest existing
// parent. A workspace whose root is read-only (WithReadOnlyRoot) refuses
// every path for writing, with the reason it was given.
//
// The path returned is checked, not opened: a tool that opens it later
// should open it below Base's descriptor (sandbox.OpenDirBeneath) and check
// the opened file's name again (Readable, Writable).
func (w *Workspace) Resolve(p string, a Access) (string, error) {
	if a == Write && w.rootReadOnly != "" {
		return "", &PathError{Path: p, Access: a, Rule: w.rootReadOnly}
	}
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
	if rule := w.secretRule(real); rule != "" {
		return "", &PathError{Path: p, Access: a, Rule: rule}
	}
	if within(real, w.root) {
		if a == Write {
			// The path as resolved, and as given: .git/config is git's
			// even where .git is a symlink to a directory of another
			// name.
			rule := w.protectedRule(real)
			if rule == "" {
				rule = w.protectedRule(abs)
			}
			if rule != "" {
				return "", &PathError{Path: p, Access: a, Rule: rule}
			}
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
