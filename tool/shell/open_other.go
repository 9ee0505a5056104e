//go:build !linux

package shell

import (
	"os"
	"path/filepath"
)

// openBeneath opens rel inside root. Without openat2 the path was checked
// just before; a symlink swapped in between is not caught here.
func openBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(filepath.Join(root, rel), flag, perm)
}
