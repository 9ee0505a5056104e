//go:build unix

package checkpoint

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// openNonblock keeps an open from waiting on a named pipe swapped in for a
// file.
const openNonblock = syscall.O_NONBLOCK

// sysStat returns a file's change time (Unix ns) and inode.
func sysStat(fi fs.FileInfo) (ctime int64, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return ctimeOf(st), uint64(st.Ino)
}

// nlinkOf returns a file's number of hard links.
func nlinkOf(fi fs.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 1
	}
	return uint64(st.Nlink)
}

// lockFile takes an exclusive lock on f (flock), waiting for it.
func lockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX) }

// lockFileShared takes a shared lock on f (flock), waiting for it.
func lockFileShared(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_SH) }

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// syncDir flushes a directory's entries to disk.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
