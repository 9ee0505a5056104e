package safefile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/sandbox"
)

// noHang runs f and fails the test, rather than hang the suite, when it has
// not returned within a few seconds.
func noHang(t *testing.T, what string, f func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatalf("%s: still blocked after 5s (%v)", what, ctx.Err())
	}
}

func TestKindAndSize(t *testing.T) {
	for m, want := range map[fs.FileMode]string{
		0:                                 "a regular file",
		0o644:                             "a regular file",
		fs.ModeDir | 0o755:                "a directory",
		fs.ModeSymlink:                    "a symbolic link",
		fs.ModeNamedPipe:                  "a named pipe (FIFO)",
		fs.ModeSocket:                     "a socket",
		fs.ModeDevice | fs.ModeCharDevice: "a character device",
		fs.ModeDevice:                     "a block device",
		fs.ModeIrregular:                  "a special file",
	} {
		if got := Kind(m); got != want {
			t.Errorf("Kind(%v) = %q, want %q", m, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 20 << 20: "20.0 MiB", 4 << 30: "4.0 GiB", 3 << 50: "3.0 PiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}

// ReadAll stops at the limit whatever the size said: a file that grew
// after it was looked at, or one whose size says nothing (a pipe).
func TestReadAllBounded(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write([]byte(strings.Repeat("x", 100)))
		w.Close()
	}()
	_, err = ReadAll(r, 0, 10)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Max != 10 || tl.Size != 11 {
		t.Errorf("got %v, want a TooLargeError at 11 of 10 bytes", err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := ReadAll(f, 1<<40, 1<<20); !errors.As(err, &tl) {
		t.Errorf("a size over the limit was read: %v", err)
	}
}

func workspace(t *testing.T, files map[string]string) *sandbox.Workspace {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// A 4 GiB sparse file is refused from its size, without reading it (and
// without allocating for it).
func TestReadFileSparse(t *testing.T) {
	ws := workspace(t, nil)
	p := filepath.Join(ws.Root(), "sparse")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		f.Close()
		t.Skip("no sparse files here:", err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var data []byte
	noHang(t, "reading a 4 GiB sparse file", func() { data, _, err = ReadFile(ws, p, 20<<20) })
	runtime.ReadMemStats(&after)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Size != 4<<30 || data != nil {
		t.Errorf("got %d bytes, %v; want a TooLargeError of 4 GiB", len(data), err)
	}
	if !strings.Contains(err.Error(), "4.0 GiB, over the 20.0 MiB limit") {
		t.Errorf("message: %v", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
		t.Errorf("%d bytes allocated to refuse the file", grew)
	}
}
