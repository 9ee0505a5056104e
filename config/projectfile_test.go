package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadProjectFile(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "id_ed25519")
	os.WriteFile(outside, []byte("PRIVATE KEY"), 0o600)
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, "docs"), 0o755)
	os.WriteFile(filepath.Join(ws, "docs", "notes.md"), []byte("inside"), 0o644)
	os.WriteFile(filepath.Join(ws, "big.md"), []byte(strings.Repeat("a", 100)), 0o644)
	os.Symlink(outside, filepath.Join(ws, "key.md"))                         // out
	os.Symlink("hop.md", filepath.Join(ws, "chain.md"))                      // chain.md → hop.md → …
	os.Symlink(filepath.Join("docs", "out.md"), filepath.Join(ws, "hop.md")) // … → docs/out.md → key
	os.Symlink(outside, filepath.Join(ws, "docs", "out.md"))
	os.Symlink(filepath.Join("docs", "notes.md"), filepath.Join(ws, "in.md")) // stays inside
	os.Symlink(filepath.Join(dir, "gone"), filepath.Join(ws, "dangling.md"))
	os.Symlink("/dev/zero", filepath.Join(ws, "zero.md"))
	fifo := mkfifo(filepath.Join(ws, "fifo.md"))

	tests := []struct {
		rel, want, err string
		cut            bool
	}{
		{rel: "docs/notes.md", want: "inside"},
		{rel: "in.md", want: "inside"},
		{rel: "big.md", want: strings.Repeat("a", 10), cut: true},
		{rel: "key.md", err: "outside the workspace"},
		{rel: "chain.md", err: "outside the workspace"},
		{rel: "dangling.md", err: "does not exist"},
		{rel: "zero.md", err: "outside the workspace"},
		{rel: "docs", err: "a directory"},
		{rel: "../id_ed25519", err: "outside the workspace"},
		{rel: "fifo.md", err: "named pipe"},
	}
	for _, tc := range tests {
		if tc.rel == "fifo.md" && fifo != nil {
			continue
		}
		done := make(chan struct{})
		var data []byte
		var cut bool
		var err error
		go func() {
			defer close(done)
			data, cut, err = ReadProjectFile(ws, tc.rel, 10)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the read blocked", tc.rel)
		}
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) || strings.Contains(string(data), "PRIVATE") {
				t.Errorf("%s: %q %v, want an error with %q", tc.rel, data, err, tc.err)
			}
		case err != nil || string(data) != tc.want || cut != tc.cut:
			t.Errorf("%s: %q cut=%v %v", tc.rel, data, cut, err)
		}
	}
	if _, _, err := ReadProjectFile(ws, "missing.md", 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
}
