package checkpoint

import (
	"os"
	"syscall"

	"github.com/hearth-agent/hearth/sandbox"
)

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }

// dirPath is where the kernel says an open directory is now.
func dirPath(f *os.File) (string, error) { return sandbox.FilePath(f) }
