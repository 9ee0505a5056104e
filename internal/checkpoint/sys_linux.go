package checkpoint

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
)

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

// syncStore flushes what a snapshot wrote to the store's file system, in
// one call (syncfs) rather than one per object.
func syncStore(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}

// dirPath is where the kernel says an open directory is now.
func dirPath(f *os.File) (string, error) { return sandbox.FilePath(f) }
