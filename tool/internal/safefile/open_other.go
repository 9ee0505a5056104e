//go:build !linux

package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/hearth-agent/hearth/sandbox"
)

// open, outside Linux, goes through os.Root: every step stays below the
// base (by file descriptor where the system allows it), following symlinks
// that stay below it; the workspace's rules are checked on the path as
// resolved.
func open(ws *sandbox.Workspace, p string, wantDir bool) (*os.File, fs.FileInfo, error) {
	if !filepath.IsAbs(p) {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errNotAbs}
	}
	p = filepath.Clean(p)
	base := ws.Base(p)
	if base == "" {
		return nil, nil, outside(ws, p)
	}
	if err := ws.Readable(p); err != nil {
		return nil, nil, err
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return nil, nil, outside(ws, p)
	}
	r, err := os.OpenRoot(base)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	fi, err := r.Lstat(rel)
	if err != nil {
		return nil, nil, err
	}
	if !ok(fi.Mode(), wantDir) {
		return nil, nil, &NotRegularError{Path: p, Mode: fi.Mode(), WantDir: wantDir}
	}
	f, err := r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !ok(fi.Mode(), wantDir) {
		f.Close()
		return nil, nil, &NotRegularError{Path: p, Mode: fi.Mode(), WantDir: wantDir}
	}
	return f, fi, nil
}

func ok(m fs.FileMode, wantDir bool) bool {
	if wantDir {
		return m.IsDir()
	}
	return m.IsRegular()
}
