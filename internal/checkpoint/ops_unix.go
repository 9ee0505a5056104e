//go:build unix

package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
)

// ops changes the workspace for a restore, by file descriptors: each
// path's directory is opened below the root with no symbolic link on the
// way (sandbox.OpenDirBeneath), and the change is made relative to it.
type ops struct {
	s *Store
}

func (s *Store) openOps() (*ops, error) { return &ops{s: s}, nil }

func (o *ops) close() {}

// dir opens the directory holding p, making missing ones with create, and
// checks where the kernel says it is: inside the root, in no path Hearth
// never restores.
func (o *ops) dir(p string, create bool) (*os.File, error) {
	d := path.Dir(p)
	f, err := sandbox.OpenDirBeneath(o.s.root, d, create)
	if err != nil {
		if bad := o.badParent(p); bad != "" {
			return nil, &parentError{path: p, parent: bad}
		}
		return nil, err
	}
	if real, err := dirPath(f); err == nil && real != "" {
		rel, ok := relTo(o.s.root, real)
		if !ok || (rel != "" && o.s.skipped(rel+"/x")) {
			f.Close()
			return nil, fmt.Errorf("the folder of %s moved to %s: not restored there", p, real)
		}
	}
	return f, nil
}

// parentError says a folder on the way to a path is a symbolic link or not
// a folder: the path is not there (as far as a restore goes), and nothing
// is written through it.
type parentError struct{ path, parent string }

func (e *parentError) Error() string {
	return fmt.Sprintf("%s is a symbolic link or not a folder: %s is not restored through it", e.parent, e.path)
}

func (e *parentError) Unwrap() error { return fs.ErrNotExist }

// badParent returns the first folder on the way to p that is a symbolic
// link or not a folder ("" if none is): to say why p cannot be reached.
func (o *ops) badParent(p string) string {
	for _, d := range parentDirs(p) {
		fi, err := os.Lstat(filepath.Join(o.s.root, filepath.FromSlash(d)))
		if err != nil {
			return ""
		}
		if !fi.IsDir() {
			return d
		}
	}
	return ""
}

func (o *ops) lstat(p string) (fs.FileInfo, error) {
	f, err := o.dir(p, false)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstatat(int(f.Fd()), path.Base(p), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	return statInfo{st: st, name: path.Base(p)}, nil
}

func (o *ops) remove(p string, isDir bool) error {
	f, err := o.dir(p, false)
	if err != nil {
		return err
	}
	defer f.Close()
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	if err := unix.Unlinkat(int(f.Fd()), path.Base(p), flags); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "remove", Path: p, Err: err}
	}
	return f.Sync()
}

// mkdir makes the folder p (owner-writable, so that what goes in it can
// be written; chmod gives it its mode once its files are there).
func (o *ops) mkdir(p string) error {
	f, err := o.dir(p, true)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.Mkdirat(int(f.Fd()), path.Base(p), 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return &os.PathError{Op: "mkdir", Path: p, Err: err}
	}
	return nil
}

// chmod gives the folder p its mode.
func (o *ops) chmod(p string, perm fs.FileMode) error {
	f, err := o.dir(p, false)
	if err != nil {
		return err
	}
	defer f.Close()
	name := path.Base(p)
	fd, err := unix.Openat(int(f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, unixMode(perm)); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}

// writeFile replaces p with data and mode perm: written to a new file in
// the same directory, synced, and renamed over p, so that p is the old
// file or the new one, never a part of either.
func (o *ops) writeFile(p string, data []byte, perm fs.FileMode) error {
	f, err := o.dir(p, true)
	if err != nil {
		return err
	}
	defer f.Close()
	dfd := int(f.Fd())
	tmp := tempName(path.Base(p))
	fd, err := unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &os.PathError{Op: "create", Path: p, Err: err}
	}
	nf := os.NewFile(uintptr(fd), tmp)
	_, werr := nf.Write(data)
	merr := unix.Fchmod(fd, unixMode(perm))
	serr := nf.Sync()
	cerr := nf.Close()
	if err := errors.Join(werr, merr, serr, cerr); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return fmt.Errorf("writing %s: %w", p, err)
	}
	if err := unix.Renameat(dfd, tmp, dfd, path.Base(p)); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return &os.PathError{Op: "rename", Path: p, Err: err}
	}
	return f.Sync()
}

// symlink makes p a symbolic link to target, atomically as writeFile does.
func (o *ops) symlink(p, target string) error {
	f, err := o.dir(p, true)
	if err != nil {
		return err
	}
	defer f.Close()
	dfd := int(f.Fd())
	tmp := tempName(path.Base(p))
	if err := unix.Symlinkat(target, dfd, tmp); err != nil {
		return &os.PathError{Op: "symlink", Path: p, Err: err}
	}
	if err := unix.Renameat(dfd, tmp, dfd, path.Base(p)); err != nil {
		unix.Unlinkat(dfd, tmp, 0)
		return &os.PathError{Op: "rename", Path: p, Err: err}
	}
	return f.Sync()
}

func unixMode(perm fs.FileMode) uint32 {
	m := uint32(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		m |= unix.S_ISUID
	}
	if perm&fs.ModeSetgid != 0 {
		m |= unix.S_ISGID
	}
	if perm&fs.ModeSticky != 0 {
		m |= unix.S_ISVTX
	}
	return m
}

// tempName returns a hidden name for a new file beside name.
func tempName(name string) string {
	var b [6]byte
	rand.Read(b[:])
	return tempPrefix(name) + hex.EncodeToString(b[:])
}

// tempPrefix is how the temporary files beside name begin.
func tempPrefix(name string) string {
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + ".hearth-restore-"
}

// statInfo is an fs.FileInfo of a unix.Stat_t.
type statInfo struct {
	st   unix.Stat_t
	name string
}

func (s statInfo) Name() string { return s.name }
func (s statInfo) Size() int64  { return s.st.Size }
func (s statInfo) Mode() fs.FileMode {
	m := fs.FileMode(s.st.Mode & 0o777)
	switch s.st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFREG:
	default:
		m |= fs.ModeIrregular
	}
	return m
}
func (s statInfo) ModTime() time.Time { return time.Time{} }
func (s statInfo) IsDir() bool        { return s.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (s statInfo) Sys() any           { return &s.st }
