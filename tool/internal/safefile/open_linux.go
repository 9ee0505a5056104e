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

// dirSys is nothing more on Linux: the directory's descriptor serves.
type dirSys struct{}

func (dirSys) close() {}

// openDir opens the directory rel below base with sandbox.OpenDirBeneath
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or one component at a
// time with O_NOFOLLOW) and checks where the kernel says it is.
func openDir(ws *sandbox.Workspace, p, base, rel string) (*Dir, error) {
	f, err := sandbox.OpenDirBeneath(base, rel, false)
	if err != nil {
		var st unix.Stat_t
		if errors.Is(err, unix.ENOTDIR) && unix.Lstat(p, &st) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return nil, &NotRegularError{Path: p, Mode: mode(st.Mode), WantDir: true}
		}
		return nil, err
	}
	at, err := sandbox.FilePath(f)
	if err != nil || !filepath.IsAbs(at) {
		at = p // no /proc: the path as checked
	}
	if err := ws.Readable(at); err != nil {
		f.Close()
		return nil, err
	}
	return &Dir{ws: ws, f: f, name: p, at: at}, nil
}

// open looks at name in d without following a symlink or opening it, and
// opens it only if it is a regular file: O_NONBLOCK, so that one replaced
// by a named pipe in between cannot block the open, O_NOFOLLOW and
// O_NOCTTY; its type is checked again on the descriptor.
func (d *Dir) open(name, p string) (*os.File, fs.FileInfo, error) {
	dfd := int(d.f.Fd())
	var st unix.Stat_t
	if err := retry(func() error { return unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return nil, nil, &fs.PathError{Op: "stat", Path: p, Err: err}
	}
	if m := mode(st.Mode); !m.IsRegular() {
		return nil, nil, &NotRegularError{Path: p, Mode: m}
	}
	var fd int
	err := retry(func() (err error) {
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
