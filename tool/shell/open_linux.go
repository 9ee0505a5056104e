//go:build linux

package shell

import (
	"errors"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// openBeneath opens rel, a path inside the directory root, for writing,
// with the kernel refusing any resolution that would leave root (a symlink
// swapped in after the check, "..", a magic link): the check and the open
// cannot disagree.
func openBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	dfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	defer unix.Close(dfd)
	how := &unix.OpenHow{
		Flags:   uint64(flag) | unix.O_CLOEXEC,
		Mode:    uint64(perm.Perm()),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(dfd, rel, how)
	if errors.Is(err, unix.ENOSYS) {
		return os.OpenFile(filepath.Join(root, rel), flag, perm)
	}
	if err != nil {
		if errors.Is(err, unix.EXDEV) {
			err = errors.New("it leads outside the workspace")
		}
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
}
