package prompted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFileMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth", "tool-modes.json")
	at := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	a := NewFileMemory(path, "http://127.0.0.1:11434/")
	if _, ok := a.Refused("gemma3"); ok {
		t.Fatal("refused before anything was remembered")
	}
	if err := a.RememberRefused("gemma3", at); err != nil {
		t.Fatal(err)
	}
	// Another instance (another process) on the same file and server.
	b := NewFileMemory(path, "http://127.0.0.1:11434")
	if got, ok := b.Refused("gemma3"); !ok || !got.Equal(at) {
		t.Fatalf("Refused = %v, %v", got, ok)
	}
	if _, ok := b.Refused("qwen3"); ok {
		t.Fatal("another model refused")
	}
	// Another server keeps its own models.
	other := NewFileMemory(path, "http://gpu:8000/v1")
	if _, ok := other.Refused("gemma3"); ok {
		t.Fatal("refused on another server")
	}
	if err := other.RememberRefused("gemma3", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Refused("gemma3"); !got.Equal(at) {
		t.Fatalf("the other server's entry replaced this one's: %v", got)
	}
	raw, _ := os.ReadFile(path)
	var f memoryFile
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != fileVersion || len(f.Servers) != 2 {
		t.Fatalf("file %s: %v", raw, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", fi.Mode())
	}
}

func TestFileMemoryCorruptFileIsEmptyAndLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tool-modes.json")
	os.WriteFile(path, []byte(`{"version":1,"servers":{`), 0o600)
	var logs bytes.Buffer
	m := NewFileMemory(path, "s")
	m.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, ok := m.Refused("x"); ok {
		t.Fatal("a corrupt file said something")
	}
	if !strings.Contains(logs.String(), "not valid JSON") {
		t.Fatalf("not logged: %q", logs.String())
	}
	if err := m.RememberRefused("x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Refused("x"); !ok {
		t.Fatal("the corrupt file was not replaced")
	}
}

func TestFileMemorySeveralWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tool-modes.json")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := NewFileMemory(path, "s") // one per "process"
			for i := range 20 {
				if err := m.RememberRefused(fmt.Sprintf("m%d-%d", w, i), time.Now()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	// Readers never see a torn file.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if b, err := os.ReadFile(path); err == nil && !json.Valid(b) {
				t.Errorf("a torn file: %q", b)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	b, err := os.ReadFile(path)
	if err != nil || !json.Valid(b) {
		t.Fatalf("file %q: %v", b, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}
