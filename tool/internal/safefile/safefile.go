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
	"path/filepath"
	"strings"
	"sync/atomic"

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
	if !filepath.IsAbs(p) {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errNotAbs}
	}
	p = filepath.Clean(p)
	base := ws.Base(p)
	if base == "" {
		return nil, nil, outside(ws, p)
	}
	if p == base {
		return nil, nil, &NotRegularError{Path: p, Mode: fs.ModeDir}
	}
	d, err := OpenDir(ws, filepath.Dir(p))
	if err != nil {
		var nr *NotRegularError
		if errors.As(err, &nr) {
			// A component of the path is not a directory.
			return nil, nil, &fs.PathError{Op: "open", Path: p, Err: fmt.Errorf("%s is %s, not a directory", nr.Path, Kind(nr.Mode))}
		}
		return nil, nil, err
	}
	defer d.Close()
	return d.Open(filepath.Base(p))
}

// Dir is a directory opened by OpenDir: the files in it are opened by its
// descriptor, so that a directory of their path swapped meanwhile does not
// matter. It is safe for concurrent use.
type Dir struct {
	ws   *sandbox.Workspace
	f    *os.File
	name string // the path it was opened by
	at   string // its path as the kernel named it once open (checked)
	refs atomic.Int32
	sys  dirSys
}

// OpenDir opens the directory p (as Open takes a file) below the root or
// read-only directory holding it, through no symlink, and checks it where
// the kernel says it is (Workspace.Readable). Close it when done.
func OpenDir(ws *sandbox.Workspace, p string) (*Dir, error) {
	if !filepath.IsAbs(p) {
		return nil, &fs.PathError{Op: "open", Path: p, Err: errNotAbs}
	}
	p = filepath.Clean(p)
	base := ws.Base(p)
	if base == "" {
		return nil, outside(ws, p)
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return nil, outside(ws, p)
	}
	d, err := openDir(ws, p, base, rel)
	if err != nil {
		return nil, err
	}
	d.refs.Store(1)
	return d, nil
}

// Path is the directory's path, as it was opened.
func (d *Dir) Path() string { return d.name }

// ReadDir lists the directory, as os.File.ReadDir does (not sorted).
func (d *Dir) ReadDir(n int) ([]fs.DirEntry, error) { return d.f.ReadDir(n) }

// Retain adds a reference to d: it stays open until Close has been called
// once more.
func (d *Dir) Retain() *Dir {
	d.refs.Add(1)
	return d
}

// Close releases a reference to d, and closes it with the last.
func (d *Dir) Close() error {
	if d.refs.Add(-1) != 0 {
		return nil
	}
	d.sys.close()
	return d.f.Close()
}

// Open opens the file name (one path component) in d, as the package's Open
// opens a path: a regular file only, looked at before it is opened, never
// through a symlink, and not in a secret location.
func (d *Dir) Open(name string) (*os.File, fs.FileInfo, error) {
	p := filepath.Join(d.name, name)
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		return nil, nil, &fs.PathError{Op: "open", Path: p, Err: errors.New("not a name in the directory")}
	}
	if err := d.ws.Readable(filepath.Join(d.at, name)); err != nil {
		return nil, nil, err
	}
	return d.open(name, p)
}

// ReadFile reads the file name in d, as the package's ReadFile does.
func (d *Dir) ReadFile(name string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := d.Open(name)
	if err != nil {
		return nil, fi, err
	}
	defer f.Close()
	data, err := ReadAll(f, fi.Size(), max)
	return data, fi, err
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
