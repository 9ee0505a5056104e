//go:build linux

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
)

func open(ws *sandbox.Workspace, p string, wantDir bool) (*os.File, fs.FileInfo, error) {
	if !filepath.IsAbs(p) {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errNotAbs}
	}
	p = filepath.Clean(p)
	base := ws.Base(p)
	if base == "" {
		return nil, nil, outside(ws, p)
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return nil, nil, outside(ws, p)
	}
	if wantDir {
		return openDir(ws, p, base, rel)
	}
	if rel == "." {
		return nil, nil, &NotRegularError{Path: p, Mode: fs.ModeDir}
	}
	dir, err := sandbox.OpenDirBeneath(base, filepath.Dir(rel), false)
	if err != nil {
		return nil, nil, err
	}
	defer dir.Close()
	name := filepath.Base(rel)
	if err := ws.Readable(filepath.Join(kernelPath(dir, filepath.Join(base, filepath.Dir(rel))), name)); err != nil {
		return nil, nil, err
	}
	dfd := int(dir.Fd())
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if m := mode(st.Mode); !m.IsRegular() {
		return nil, nil, &NotRegularError{Path: p, Mode: m}
	}
	var fd int
	err = retry(func() (err error) {
		fd, err = unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		return err
	})
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			err = errors.New("it became a symbolic link after it was checked (is something changing the workspace?)")
		}
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(fd), p)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &NotRegularError{Path: p, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// openDir opens the directory rel below base.
func openDir(ws *sandbox.Workspace, p, base, rel string) (*os.File, fs.FileInfo, error) {
	dir, err := sandbox.OpenDirBeneath(base, rel, false)
	if err != nil {
		var st unix.Stat_t
		if errors.Is(err, unix.ENOTDIR) && unix.Lstat(p, &st) == nil {
			return nil, nil, &NotRegularError{Path: p, Mode: mode(st.Mode), WantDir: true}
		}
		return nil, nil, err
	}
	if err := ws.Readable(kernelPath(dir, p)); err != nil {
		dir.Close()
		return nil, nil, err
	}
	fi, err := dir.Stat()
	if err != nil {
		dir.Close()
		return nil, nil, err
	}
	return dir, fi, nil
}

// kernelPath is where the kernel says the open directory d is, or def when
// it cannot say (no /proc).
func kernelPath(d *os.File, def string) string {
	at, err := sandbox.FilePath(d)
	if err != nil || !filepath.IsAbs(at) {
		return def
	}
	return at
}

// ModeType turns a stat's st_mode into a FileMode's type bits (0 for a
// regular file).
func ModeType(m uint32) fs.FileMode { return mode(m) }

// mode turns a stat's st_mode into a FileMode's type bits.
func mode(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFREG:
		return 0
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return fs.ModeIrregular
}

// retry repeats a system call interrupted by a signal.
func retry(f func() error) error {
	for {
		if err := f(); !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}
