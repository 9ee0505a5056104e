//go:build linux

package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// testHook, when set (tests), runs at two stages: "opened" (the directory
// is open, nothing checked or written yet) and "renamed" (the file is in
// place, not checked again yet).
var testHook func(stage string)

func writeBeneath(root, path, dirRel, name string, data []byte, perm fs.FileMode, check func(string) error) error {
	dir, err := sandbox.OpenDirBeneath(root, dirRel, true)
	if err != nil {
		return err
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	if testHook != nil {
		testHook("opened")
	}
	// verify checks the file's path as the kernel names the open directory
	// now: not where it was when the caller checked, but where the write
	// goes.
	verify := func() error {
		if check == nil {
			return nil
		}
		at, err := sandbox.FilePath(dir)
		if err != nil || !filepath.IsAbs(at) {
			at = filepath.Dir(path) // no /proc: the path as the caller checked it
		}
		return check(filepath.Join(at, name))
	}
	if err := verify(); err != nil {
		return err
	}

	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil:
		if st.Mode&unix.S_IFMT != unix.S_IFREG {
			return notRegular(path, safefile.ModeType(st.Mode))
		}
		perm = fs.FileMode(st.Mode & 0o777)
	case errors.Is(err, unix.ENOENT):
	default:
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}

	var tmp string
	fd := -1
	for i := 0; i < 16; i++ {
		tmp = tempName(name)
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(filepath.Dir(path), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), filepath.Join(filepath.Dir(path), tmp))
	renamed := false
	defer func() {
		if !renamed {
			unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if err := fill(f, data, perm); err != nil {
		return err
	}
	if err := unix.Renameat(dfd, tmp, dfd, name); err != nil {
		return &os.LinkError{Op: "rename", Old: tmp, New: path, Err: err}
	}
	renamed = true
	if testHook != nil {
		testHook("renamed")
	}
	if err := verify(); err != nil {
		unix.Unlinkat(dfd, name, 0)
		return fmt.Errorf("%w: %v", errMoved, err)
	}
	_ = unix.Fsync(dfd) // EBADF for an O_PATH descriptor (an unreadable directory)
	return nil
}

// hardLinked reports whether a file has more than one name.
func hardLinked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
