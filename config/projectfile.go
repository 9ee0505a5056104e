package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hearth-agent/hearth/sandbox"
)

// ReadProjectFile reads rel, a file of the workspace root, the way a file
// that comes with the code must be read:
//   - through the workspace's rules (sandbox.Workspace.Resolve): a path, or
//     a symlink, that leads outside the workspace is refused, so a project
//     cannot have a key or the user's config read as its own;
//   - only a regular file: a FIFO would block the read forever and a device
//     (/dev/zero) never end. The type is checked before opening, the open is
//     non-blocking, and the open file is checked again;
//   - opened below the root by descriptor (sandbox.OpenBeneath), so a
//     directory swapped for a symlink after the check leads nowhere;
//   - at most limit bytes: cut reports that the file holds more.
//
// A file that does not exist gives an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadProjectFile(root, rel string, limit int64) (data []byte, cut bool, err error) {
	ws, err := sandbox.New(root)
	if err != nil {
		return nil, false, err
	}
	p, err := ws.Resolve(rel, sandbox.Read)
	if err != nil {
		return nil, false, err
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return nil, false, err
	}
	if err := regular(rel, fi.Mode()); err != nil {
		return nil, false, err
	}
	r, err := filepath.Rel(ws.Root(), p)
	if err != nil {
		return nil, false, err
	}
	f, err := sandbox.OpenBeneath(ws.Root(), r, os.O_RDONLY|oNonblock, 0)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, false, err
	}
	if err := regular(rel, fi.Mode()); err != nil {
		return nil, false, err
	}
	data, err = io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, nil
}

// regular refuses what is not a regular file, in words.
func regular(rel string, m fs.FileMode) error {
	what := ""
	switch {
	case m.IsRegular():
		return nil
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeDevice != 0:
		what = "a device"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m.IsDir():
		what = "a directory"
	default:
		what = "something other than a file (" + m.Type().String() + ")"
	}
	return fmt.Errorf("%s is %s, not a plain file", rel, what)
}
