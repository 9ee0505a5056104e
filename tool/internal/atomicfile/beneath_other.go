//go:build !linux

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
)

// writeBeneath, outside Linux, goes through os.Root: every step stays below
// root (by file descriptor where the system allows it), and the directory,
// once opened, is the one written in; symlinks that stay below root are
// followed, and check sees the path as the caller checked it.
func writeBeneath(root, path, dirRel, name string, data []byte, perm fs.FileMode, check func(string) error) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	if dirRel != "." {
		if err := r.MkdirAll(dirRel, 0o755); err != nil {
			return err
		}
	}
	d, err := r.OpenRoot(dirRel)
	if err != nil {
		return err
	}
	defer d.Close()
	if check != nil {
		if err := check(path); err != nil {
			return err
		}
	}
	if fi, err := d.Lstat(name); err == nil {
		if !fi.Mode().IsRegular() {
			return notRegular(path, fi.Mode())
		}
		perm = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var tmp string
	var f *os.File
	for i := 0; i < 16; i++ {
		tmp = tempName(name)
		f, err = d.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			d.Remove(tmp)
		}
	}()
	if err := fill(f, data, perm); err != nil {
		return err
	}
	if err := d.Rename(tmp, name); err != nil {
		return err
	}
	renamed = true
	if df, err := d.Open("."); err == nil {
		df.Sync()
		df.Close()
	}
	return nil
}

// hardLinked reports whether a file has more than one name (not known
// here: false).
func hardLinked(fs.FileInfo) bool { return false }
