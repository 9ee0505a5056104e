//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Opening files by file descriptor below a directory.
//
// A path checked by Workspace.Resolve (or the shell's policy) and opened
// later by path can lead somewhere else in between: a process that can write
// the workspace can swap a directory for a symlink, or exchange two
// directories (renameat2 RENAME_EXCHANGE). Hearth's own tools write from
// Hearth's process, which Landlock does not confine, so they open what they
// write relative to a descriptor of the root, and the kernel resolves every
// component below it (openat2 RESOLVE_BENEATH). Once a directory is open,
// its identity is fixed: what is written in it lands in it, wherever it is
// moved.

// OpenBeneath opens rel, a path inside the directory root, with the kernel
// refusing any resolution that would leave root (a symlink swapped in after
// a check, "..", a magic link such as /proc/self/root): the check and the
// open cannot disagree. Symlinks that stay below root are followed. On
// kernels without openat2 (before 5.6) it opens the path as is.
func OpenBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
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
	fd, err := openat2(dfd, rel, how)
	if errors.Is(err, unix.ENOSYS) {
		return os.OpenFile(filepath.Join(root, rel), flag, perm)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Join(root, rel), Err: beneathErr(err)}
	}
	return os.NewFile(uintptr(fd), filepath.Join(root, rel)), nil
}

// OpenDirBeneath opens the directory rel below root ("." is root itself)
// by file descriptor. The kernel resolves every component below root, and
// none may be a symbolic link (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS; rel must be a real path, as Workspace.Resolve
// returns): a directory swapped for a symlink after a check makes it fail
// rather than lead elsewhere. With create, missing directories are made
// (mode 0o755 less the umask), each relative to the descriptor of its
// parent, so they too are made below root. The directory is opened
// read-only (to be synced), or as an O_PATH descriptor when it cannot be
// read; either serves as the directory of openat, renameat and unlinkat.
//
// On kernels without openat2 (before 5.6) each component is opened in turn
// with O_NOFOLLOW, which gives the same guarantee.
func OpenDirBeneath(root, rel string, create bool) (*os.File, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, &os.PathError{Op: "open", Path: rel, Err: errors.New("not a path below " + root)}
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: root, Err: err}
	}
	name := filepath.Join(root, rel)
	fd, err := openDirAt(rfd, rel)
	if errors.Is(err, unix.ENOENT) && create || errors.Is(err, unix.ENOSYS) {
		fd, err = walkDir(rfd, rel, create)
	}
	unix.Close(rfd)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: beneathErr(err)}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// openDirAt opens the directory rel below dirfd with openat2, following no
// symlink: read-only, or O_PATH when it cannot be read.
func openDirAt(dirfd int, rel string) (int, error) {
	how := &unix.OpenHow{
		Flags:   unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := openat2(dirfd, rel, how)
	if errors.Is(err, unix.EACCES) {
		how.Flags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC
		fd, err = openat2(dirfd, rel, how)
	}
	return fd, err
}

// walkDir opens rel below dirfd one component at a time, each relative to
// the descriptor of the one before and never through a symlink, making
// missing ones with create.
func walkDir(dirfd int, rel string, create bool) (int, error) {
	cur, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	if rel == "." {
		return reopenDir(cur)
	}
	for _, c := range strings.Split(rel, "/") {
		fd, err := openComponent(cur, c)
		if errors.Is(err, unix.ENOENT) && create {
			if err := unix.Mkdirat(cur, c, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(cur)
				return -1, err
			}
			fd, err = openComponent(cur, c)
		}
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return reopenDir(cur)
}

// openComponent opens the directory named c (one path component) in the
// directory dirfd, as an O_PATH descriptor, without following a symlink.
func openComponent(dirfd int, c string) (int, error) {
	if c == "" || c == "." || c == ".." {
		return -1, unix.EXDEV
	}
	fd, err := unix.Openat(dirfd, c, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.ENOTDIR) {
		// O_DIRECTORY|O_NOFOLLOW on a symlink: say so, as openat2 does.
		var st unix.Stat_t
		if unix.Fstatat(dirfd, c, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = unix.ELOOP
		}
	}
	return fd, err
}

// reopenDir turns an O_PATH directory descriptor into a read-only one when
// it can (fsync needs one), and closes the original.
func reopenDir(fd int) (int, error) {
	r, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fd, nil // unreadable: the O_PATH descriptor still serves *at calls
	}
	unix.Close(fd)
	return r, nil
}

// openat2 retries on EINTR and EAGAIN (the kernel's answer to a rename
// racing the lookup under RESOLVE_BENEATH).
func openat2(dirfd int, path string, how *unix.OpenHow) (int, error) {
	for i := 0; ; i++ {
		fd, err := unix.Openat2(dirfd, path, how)
		if (errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN)) && i < 64 {
			continue
		}
		return fd, err
	}
}

// beneathErr says in words why a path could not be opened below a root.
func beneathErr(err error) error {
	switch {
	case errors.Is(err, unix.EXDEV):
		return errors.New("it leads outside the workspace")
	case errors.Is(err, unix.ELOOP):
		return errors.New("a symbolic link appeared in the path after it was checked (is something changing the workspace?)")
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("a component of the path is not a directory: %w", err)
	}
	return err
}

// FilePath returns where the kernel says an open file or directory is now
// (readlink of /proc/self/fd/N), which may differ from the path it was
// opened by if it has been moved since.
func FilePath(f *os.File) (string, error) {
	return os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
}
