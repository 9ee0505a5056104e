package tool

import "context"

// Files is a file system the built-in file tools (read_file,
// read_many_files, write_file, edit) read and write text files through,
// instead of the disk: an editor's own, whose unsaved buffers are what the
// user sees and where edits should land (Hearth's ACP agent gives the
// editor's fs/read_text_file and fs/write_text_file). A turn's tools get it
// from their context (WithFiles).
//
// It changes where the text comes from and goes to, nothing else: every
// path is resolved and checked against the workspace's rules first (inside
// the workspace, not secret, writable, no symlink on the way), and Files is
// only asked about absolute, checked paths inside the workspace root, for a
// regular file that exists on disk (a read) or that the tool may write
// there (a write). Paths outside the root (the read-only directories) are
// read from the disk, and so is a file whose read or write returns an
// error wrapping errors.ErrUnsupported (an editor that offers only one of
// the two).
type Files interface {
	// ReadTextFile returns the whole text of the file at path.
	ReadTextFile(ctx context.Context, path string) (string, error)
	// WriteTextFile replaces the text of the file at path, creating it
	// (and the directories on its way) when it does not exist.
	WriteTextFile(ctx context.Context, path, content string) error
}

type filesKey struct{}

// WithFiles returns a context whose file tools read and write through f
// (nil: the disk).
func WithFiles(ctx context.Context, f Files) context.Context {
	return context.WithValue(ctx, filesKey{}, f)
}

// FilesOf returns the Files a context carries (WithFiles), or nil: the
// disk.
func FilesOf(ctx context.Context) Files {
	f, _ := ctx.Value(filesKey{}).(Files)
	return f
}
