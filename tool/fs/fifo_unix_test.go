//go:build unix

package fs

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNamedPipesDoNotHang: a FIFO in the workspace (mkfifo is allowed there)
// must not block a read or a search forever.
func TestNamedPipesDoNotHang(t *testing.T) {
	k := newKit(t, map[string]string{"a.txt": "needle\n"}, Limits{})
	if err := syscall.Mkfifo(filepath.Join(k.root, "pipe"), 0o644); err != nil {
		t.Skip("mkfifo:", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := k.call(t, "read_file", map[string]any{"file_path": "pipe"}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("read_file on a pipe: %v", err)
		}
		if out, err := k.call(t, "grep_search", map[string]any{"pattern": "needle"}); err != nil || !strings.Contains(out, "a.txt:1") {
			t.Errorf("grep_search: %q %v", out, err)
		}
		if out, _ := k.call(t, "read_many_files", map[string]any{"paths": []string{"*"}}); !strings.Contains(out, "needle") {
			t.Errorf("read_many_files: %q", out)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a named pipe blocked the file tools")
	}
}
