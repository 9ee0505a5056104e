// Package safefile opens the files the file tools read, so that what they
// read is what the workspace's rules allow, and so that no file can make
// them wait or fill memory.
//
// A path checked by sandbox.Workspace.Resolve and opened later by path can
// lead elsewhere in between (a directory swapped for a symlink into a
// secret location), and a file that is not a regular one can block a plain
// open or read forever (a named pipe with no writer), or never end (a
// device such as /dev/zero). Open therefore:
//
//   - opens the file's directory by file descriptor below the workspace root
//     (or the read-only directory that holds it), the kernel refusing any
//     symlink on the way (sandbox.OpenDirBeneath);
//   - checks the file's path as the kernel names that directory now against
//     the workspace's rules (Workspace.Readable: inside, not secret);
//   - looks at the file with fstatat, without following a symlink and
//     without opening it, and refuses anything but a regular file, saying
//     what it is (a named pipe, a socket, a device…);
//   - opens it O_NONBLOCK | O_NOFOLLOW | O_NOCTTY, so that a file replaced
//     by a named pipe meanwhile cannot block the open, and checks its type
//     again on the open descriptor.
//
// ReadAll then reads at most a given number of bytes.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hearth-agent/hearth/sandbox"
)

// NotRegularError is a path that is not a regular file (or, for OpenDir,
// not a directory).
type NotRegularError struct {
	Path string
	Mode fs.FileMode
	// WantDir: a directory was wanted (OpenDir).
	WantDir bool
}

func (e *NotRegularError) Error() string {
	if e.WantDir {
		return fmt.Sprintf("%s is %s, not a directory", e.Path, Kind(e.Mode))
	}
	return fmt.Sprintf("%s is %s, not a regular file", e.Path, Kind(e.Mode))
}

// IsDir reports whether the path is a directory.
func (e *NotRegularError) IsDir() bool { return e.Mode.IsDir() }

// Kind says in words what kind of file mode is: "a named pipe (FIFO)", "a
// directory", "a regular file"…
func Kind(mode fs.FileMode) string {
	switch t := mode.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file"
}

// TooLargeError is a file over the size a tool reads.
type TooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %s, over the %s limit", e.Path, Size(e.Size), Size(e.Max))
}

// Size formats a number of bytes for a message: "512 B", "3.2 KiB",
// "4.0 GiB".
func Size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// Open opens p for reading: an absolute path with symlinks resolved, as
// Workspace.Resolve returns it, inside the root or a read-only directory.
// It fails with a *NotRegularError for anything but a regular file (without
// opening it), an error satisfying errors.Is(err, fs.ErrNotExist) for a
// missing file, and a *sandbox.PathError when the file is not where the
// workspace's rules allow reading (no longer, or not at all). It never
// blocks.
func Open(ws *sandbox.Workspace, p string) (*os.File, fs.FileInfo, error) {
	return open(ws, p, false)
}

// OpenDir opens the directory p for listing (ReadDir), as Open opens a
// file: below the root or read-only directory holding it, through no
// symlink, checked where the kernel says it is.
func OpenDir(ws *sandbox.Workspace, p string) (*os.File, error) {
	f, _, err := open(ws, p, true)
	return f, err
}

// ReadAll reads the rest of f, at most max bytes; a file with more is not
// read on but refused with a *TooLargeError. size, when known (from
// Stat), sizes the buffer.
func ReadAll(f *os.File, size, max int64) ([]byte, error) {
	if size > max {
		return nil, &TooLargeError{Path: f.Name(), Size: size, Max: max}
	}
	var b bytes.Buffer
	if size > 0 {
		b.Grow(int(size) + 512)
	}
	if _, err := b.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, err
	}
	if int64(b.Len()) > max {
		return nil, &TooLargeError{Path: f.Name(), Size: int64(b.Len()), Max: max}
	}
	return b.Bytes(), nil
}

// ReadFile opens p with Open and reads it with ReadAll: its content if it
// is a regular file of at most max bytes.
func ReadFile(ws *sandbox.Workspace, p string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := Open(ws, p)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	data, err := ReadAll(f, fi.Size(), max)
	return data, fi, err
}

// outside is the error for a path no base of the workspace holds.
func outside(ws *sandbox.Workspace, p string) error {
	return &sandbox.PathError{Path: p, Access: sandbox.Read, Rule: "it is outside the workspace " + ws.Root()}
}

var errNotAbs = errors.New("not an absolute path")
