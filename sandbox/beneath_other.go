//go:build !linux

package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// OpenBeneath opens rel, a path inside the directory root, through os.Root:
// no component may lead outside root (os.Root walks the path by file
// descriptor where the system allows it). Symlinks that stay below root are
// followed.
func OpenBeneath(root, rel string, flag int, perm os.FileMode) (*os.File, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(rel, flag, perm)
}

// OpenDirBeneath opens the directory rel below root ("." is root itself)
// through os.Root, making missing directories with create. Outside Linux,
// symlinks that stay below root are followed.
func OpenDirBeneath(root, rel string, create bool) (*os.File, error) {
	rel = filepath.Clean(rel)
	if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, &os.PathError{Op: "open", Path: rel, Err: errors.New("not a path below " + root)}
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if create && rel != "." {
		if err := r.MkdirAll(rel, 0o755); err != nil {
			return nil, err
		}
	}
	return r.Open(rel)
}

// FilePath is not known outside Linux.
func FilePath(f *os.File) (string, error) {
	return "", errors.ErrUnsupported
}
