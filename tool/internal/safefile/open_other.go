//go:build !linux

package safefile

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/hearth-agent/hearth/sandbox"
)

// dirSys holds, outside Linux, an os.Root of the directory: files are
// opened through it, below it.
type dirSys struct{ root *os.Root }

func (s dirSys) close() {
	if s.root != nil {
		s.root.Close()
	}
}

// openDir, outside Linux, goes through os.Root: every step stays below the
// base (by file descriptor where the system allows it), following symlinks
// that stay below it; the workspace's rules are checked on the path as
// resolved.
func openDir(ws *sandbox.Workspace, p, base, rel string) (*Dir, error) {
	if err := ws.Readable(p); err != nil {
		return nil, err
	}
	br, err := os.OpenRoot(base)
	if err != nil {
		return nil, err
	}
	defer br.Close()
	fi, err := br.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &NotRegularError{Path: p, Mode: fi.Mode(), WantDir: true}
	}
	r, err := br.OpenRoot(rel)
	if err != nil {
		return nil, err
	}
	f, err := r.Open(".")
	if err != nil {
		r.Close()
		return nil, err
	}
	return &Dir{ws: ws, f: f, name: p, at: p, sys: dirSys{root: r}}, nil
}

// open looks at name in d without following a symlink, and opens it only if
// it is a regular file, O_NONBLOCK; its type is checked again once open.
func (d *Dir) open(name, p string) (*os.File, fs.FileInfo, error) {
	fi, err := d.sys.root.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, &NotRegularError{Path: p, Mode: fi.Mode()}
	}
	f, err := d.sys.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	if fi, err = f.Stat(); err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: p, Mode: fi.Mode()}
	}
	return f, fi, nil
}
