package edit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/tool"
)

// buffers is an editor's file system (tool.Files) whose text differs from
// the disk's.
type buffers struct {
	text   map[string]string
	writes []string
}

func (b *buffers) ReadTextFile(_ context.Context, path string) (string, error) {
	if s, ok := b.text[path]; ok {
		return s, nil
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

func (b *buffers) WriteTextFile(_ context.Context, path, content string) error {
	b.writes = append(b.writes, path)
	b.text[path] = content
	return nil
}

// TestEditThroughTheEditor: the edit is made on the editor's buffer, and
// the editor writes it; a path out of the workspace never reaches it.
func TestEditThroughTheEditor(t *testing.T) {
	h := newHarness(t, Options{})
	p := h.write(t, "main.go", "package main\n\nfunc main() {}\n", 0o644)
	ed := &buffers{text: map[string]string{p: "package main\n\nfunc main() { println(\"unsaved\") }\n"}}
	run := func(args map[string]any) (tool.Result, error) {
		raw, _ := json.Marshal(args)
		return h.tool.Run(tool.WithFiles(context.Background(), ed), tool.Call{ID: "c1", Args: raw})
	}
	res, err := run(edit("main.go", `println("unsaved")`, `println("edited")`))
	if err != nil {
		t.Fatal(err)
	}
	if got := ed.text[p]; got != "package main\n\nfunc main() { println(\"edited\") }\n" {
		t.Errorf("the editor's buffer: %q", got)
	}
	if h.read(t, "main.go") != "package main\n\nfunc main() {}\n" {
		t.Error("the tool wrote the disk itself")
	}
	if !strings.Contains(res.Display, `+func main() { println("edited") }`) {
		t.Errorf("diff: %s", res.Display)
	}
	if _, err := run(edit("new.go", "", "package n\n")); err != nil {
		t.Fatal(err)
	}
	if ed.text[filepath.Join(h.dir, "new.go")] != "package n\n" {
		t.Errorf("a new file: %v", ed.writes)
	}
	n := len(ed.writes)
	outside := filepath.Join(t.TempDir(), "x.go")
	os.WriteFile(outside, []byte("package x\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(h.dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"../x.go", outside, "link.go"} {
		if _, err := run(edit(path, "package x", "package y")); err == nil {
			t.Errorf("edit of %s was not refused", path)
		}
	}
	if len(ed.writes) != n {
		t.Errorf("the editor was asked to write %v", ed.writes[n:])
	}
}
