package fs

import (
	"fmt"
	"os"
	"syscall"
)

// openRegular opens a file for reading only if it is a regular file. It
// never blocks: a named pipe or a device in the workspace would make a plain
// open wait forever for a writer (O_NONBLOCK has no effect on regular files
// once open).
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, fi, errIsDir
		}
		return nil, fi, fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	return f, fi, nil
}

var errIsDir = fmt.Errorf("is a directory")
