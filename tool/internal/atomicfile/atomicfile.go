// Package atomicfile writes files so that a reader (or a crash) sees either
// the old content or the new, never half of it, and so that the file lands
// where it was checked to go.
//
// The file tools check a path (sandbox.Workspace.Resolve) and write it from
// Hearth's own process, which the OS sandbox does not confine. Between the
// check and the write, a process that can change the workspace (one left
// running by a shell command, a file watcher) could swap a directory of the
// path for a symlink to somewhere outside. WriteBeneath therefore does not
// write by path: it opens the file's directory by file descriptor below the
// workspace root (openat2 RESOLVE_BENEATH on Linux, see
// sandbox.OpenDirBeneath) and does everything else relative to that
// descriptor.
package atomicfile

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/safefile"
)

// WriteBeneath replaces the file at path with data. path must be absolute,
// free of symlinks and inside root (as sandbox.Workspace.Resolve returns
// it). It works by file descriptors:
//
//   - the file's directory is opened below root, each component resolved by
//     the kernel beneath root's descriptor and none of them a symlink;
//     missing directories are made on the way, each in its parent's
//     descriptor (sandbox.OpenDirBeneath);
//   - check, when not nil, is given the file's path as the kernel names the
//     opened directory now (so a directory exchanged for another after the
//     caller's check is seen), and its error refuses the write;
//   - a temporary file is made in that directory (openat O_CREAT|O_EXCL),
//     written, given its mode, synced, and renamed over the file (renameat,
//     within the directory), then the directory is synced;
//   - check is asked again after the rename; should the directory have been
//     moved where the file may not be (out of root, or into a protected
//     directory), the new file is removed and an error returned.
//
// An existing file keeps its permission bits; a new one gets perm. A path
// whose final component is not a regular file (a symlink, a directory) is
// refused.
//
// On Linux, the kernel's path for the directory comes from /proc/self/fd;
// where it cannot be read, and outside Linux, check is given path as the
// caller checked it. Outside Linux, the directory is opened through
// os.Root, which keeps every step below root but follows symlinks that stay
// below it.
func WriteBeneath(root, path string, data []byte, perm fs.FileMode, check func(path string) error) error {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is not a file inside %s", path, root)
	}
	return writeBeneath(root, path, filepath.Dir(rel), filepath.Base(rel), data, perm, check)
}

// tempName returns a name for the temporary file beside name: hidden,
// random, and short enough for any file system however long name is.
func tempName(name string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	if len(name) > 200 {
		name = name[:200]
	}
	return "." + name + ".hearth-" + hex.EncodeToString(b[:])
}

// notRegular is the error for a path that is not a regular file: it says
// what the file is (a directory, a symbolic link, a named pipe…).
func notRegular(path string, mode fs.FileMode) error {
	return &safefile.NotRegularError{Path: path, Mode: mode}
}

var errMoved = errors.New("the directory was moved while the file was written; the new file was removed")

// fill writes data to the new temporary file f, gives it perm, syncs it and
// closes it, so that the rename that follows publishes whole content.
func fill(f *os.File, data []byte, perm fs.FileMode) error {
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteThrough writes data as WriteBeneath does, unless the call's context
// carries a tool.Files (an editor's file system, over ACP): the path is
// then checked as WriteBeneath checks it before it writes (CheckBeneath),
// and the text handed to files, which writes it by path (or, when it
// cannot write: errors.ErrUnsupported, WriteBeneath writes it). perm
// applies to a file WriteBeneath creates; the editor keeps its own.
func WriteThrough(ctx context.Context, root, path string, data []byte, perm fs.FileMode, check func(path string) error) error {
	files := tool.FilesOf(ctx)
	if files == nil {
		return WriteBeneath(root, path, data, perm, check)
	}
	if err := CheckBeneath(root, path, check); err != nil {
		return err
	}
	err := files.WriteTextFile(ctx, filepath.Clean(path), string(data))
	if errors.Is(err, errors.ErrUnsupported) {
		return WriteBeneath(root, path, data, perm, check)
	}
	if err != nil {
		return fmt.Errorf("the editor could not write %s: %w", path, err)
	}
	// What the editor wrote must be where it was checked to go.
	if err := CheckBeneath(root, path, check); err != nil {
		return fmt.Errorf("after the editor wrote %s: %w", path, err)
	}
	return nil
}

// CheckBeneath checks that path may be written as WriteBeneath would write
// it, without writing: its directory is opened below root by file
// descriptors, through no symlink (missing directories are made), check
// is given the file's path as the kernel names that directory now, which
// must be where the caller resolved it, and the file, if it exists, must be
// a regular file. It is for a write that another program makes by path
// (WriteThrough): what it checked can still change before that write,
// which a process running in the workspace would have to race for.
func CheckBeneath(root, path string, check func(path string) error) error {
	root, path = filepath.Clean(root), filepath.Clean(path)
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return fmt.Errorf("%s is not a file inside %s", path, root)
	}
	dir, err := sandbox.OpenDirBeneath(root, filepath.Dir(rel), true)
	if err != nil {
		return err
	}
	defer dir.Close()
	at, err := sandbox.FilePath(dir)
	if err != nil || !filepath.IsAbs(at) {
		at = filepath.Dir(path) // no /proc: the path as the caller checked it
	}
	if at != filepath.Dir(path) {
		return fmt.Errorf("%s: %w", path, errMoved)
	}
	target := filepath.Join(at, filepath.Base(path))
	if check != nil {
		if err := check(target); err != nil {
			return err
		}
	}
	fi, err := os.Lstat(target)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		return notRegular(path, fi.Mode())
	case err == nil && hardLinked(fi):
		// An editor that saves in place writes through every link: one
		// to a file outside the workspace would change that file.
		return fmt.Errorf("%s has other hard links (one may lead outside the workspace): it is not written through the editor", path)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return nil
}
