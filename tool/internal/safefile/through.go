package safefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// ReadThrough reads p as ReadFile does, but takes its text from files
// (tool.FilesOf the call's context) when there is one and p is inside the
// workspace root: the file is first looked at on disk as Open looks at it
// (a regular file, where the rules allow reading, reached through no
// symlink; a missing one is fs.ErrNotExist) and its size checked there,
// then its text is asked of files, and that text is held to max too. The
// FileInfo is the disk's. The file is looked at again after the editor's
// read: one replaced meanwhile fails the read. A Files that cannot read
// (errors.ErrUnsupported) leaves the reading to the disk.
func ReadThrough(ctx context.Context, ws *sandbox.Workspace, p string, max int64) ([]byte, fs.FileInfo, error) {
	files := tool.FilesOf(ctx)
	if files == nil || !sandbox.Within(p, ws.Root()) {
		return ReadFile(ws, p, max)
	}
	f, fi, err := Open(ws, p)
	if err != nil {
		return nil, fi, err
	}
	f.Close()
	if fi.Size() > max {
		return nil, fi, &TooLargeError{Path: p, Size: fi.Size(), Max: max}
	}
	text, err := files.ReadTextFile(ctx, p)
	if errors.Is(err, errors.ErrUnsupported) {
		return ReadFile(ws, p, max)
	}
	if err != nil {
		return nil, fi, fmt.Errorf("the editor could not read %s: %w", p, err)
	}
	if n := int64(len(text)); n > max {
		return nil, fi, &TooLargeError{Path: p, Size: n, Max: max}
	}
	// The editor read by path: the file must still be the one checked (not
	// swapped meanwhile for a symlink, or another file).
	f2, fi2, err := Open(ws, p)
	if err != nil {
		return nil, fi, fmt.Errorf("%s changed while the editor read it: %w", p, err)
	}
	f2.Close()
	if !os.SameFile(fi, fi2) {
		return nil, fi, fmt.Errorf("%s was replaced while the editor read it: read it again", p)
	}
	return []byte(text), fi, nil
}
