package fs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/tool"
)

// editorFiles is an editor's file system (tool.Files): buffers that differ
// from the disk, and a record of what it was asked.
type editorFiles struct {
	mu      sync.Mutex
	buffers map[string]string
	asked   []string
	writes  map[string]string
	// noRead and noWrite: the editor does not offer them.
	noRead, noWrite bool
}

func (f *editorFiles) ReadTextFile(_ context.Context, path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noRead {
		return "", errors.ErrUnsupported
	}
	f.asked = append(f.asked, "read "+path)
	if b, ok := f.buffers[path]; ok {
		return b, nil
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

func (f *editorFiles) WriteTextFile(_ context.Context, path, content string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noWrite {
		return errors.ErrUnsupported
	}
	f.asked = append(f.asked, "write "+path)
	if f.writes == nil {
		f.writes = map[string]string{}
	}
	f.writes[path] = content
	f.buffers[path] = content
	return nil
}

// callWith runs a tool with the editor's file system in its context.
func (k *kit) callWith(t *testing.T, files tool.Files, name string, args any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	r, err := k.tools[name].Run(tool.WithFiles(context.Background(), files), tool.Call{ID: "c1", Args: b})
	return r.Output, err
}

// TestFilesThroughTheEditor: with an editor's file system in the call's
// context, the file tools read its buffers and write through it, after
// every check of the path they make on their own.
func TestFilesThroughTheEditor(t *testing.T) {
	k := newKit(t, map[string]string{"notes.txt": "on disk\n", "sub/keep.txt": "x\n"}, Limits{})
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(k.root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(k.root, "out")); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(k.root, "notes.txt")
	ed := &editorFiles{buffers: map[string]string{notes: "in the editor, unsaved\n"}}

	out, err := k.callWith(t, ed, "read_file", map[string]any{"file_path": "notes.txt"})
	if err != nil || out != "in the editor, unsaved\n" {
		t.Fatalf("read_file: %q, %v", out, err)
	}
	out, err = k.callWith(t, ed, "read_many_files", map[string]any{"paths": []string{"notes.txt"}})
	if err != nil || !strings.Contains(out, "in the editor, unsaved") {
		t.Fatalf("read_many_files: %q, %v", out, err)
	}
	// What the model read is the buffer: a write over it is not stale.
	out, err = k.callWith(t, ed, "write_file", map[string]any{"file_path": "notes.txt", "content": "rewritten\n"})
	if err != nil || !strings.HasPrefix(out, "Overwrote notes.txt") {
		t.Fatalf("write_file: %q, %v", out, err)
	}
	out, err = k.callWith(t, ed, "write_file", map[string]any{"file_path": "new/dir/n.txt", "content": "new\n"})
	if err != nil || !strings.HasPrefix(out, "Created new/dir/n.txt") {
		t.Fatalf("write_file of a new file: %q, %v", out, err)
	}
	if ed.writes[notes] != "rewritten\n" || ed.writes[filepath.Join(k.root, "new/dir/n.txt")] != "new\n" {
		t.Errorf("the editor was given %v", ed.writes)
	}
	if b, _ := os.ReadFile(notes); string(b) != "on disk\n" {
		t.Errorf("the tool wrote the disk itself: %q", b)
	}

	// Refused before the editor is asked: out of the workspace, through
	// a symlink, a missing file, a directory.
	before := len(ed.asked)
	for _, c := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"file_path": "../" + filepath.Base(outside) + "/secret.txt"}, "outside"},
		{"read_file", map[string]any{"file_path": filepath.Join(outside, "secret.txt")}, "outside"},
		{"read_file", map[string]any{"file_path": "link.txt"}, ""},
		{"read_file", map[string]any{"file_path": "out/secret.txt"}, ""},
		{"read_file", map[string]any{"file_path": "missing.txt"}, "does not exist"},
		{"read_file", map[string]any{"file_path": "sub"}, "directory"},
		{"write_file", map[string]any{"file_path": "../escape.txt", "content": "x"}, "outside"},
		{"write_file", map[string]any{"file_path": "link.txt", "content": "x"}, ""},
		{"write_file", map[string]any{"file_path": "out/new.txt", "content": "x"}, ""},
		{"write_file", map[string]any{"file_path": ".git/config", "content": "x"}, ""},
		{"write_file", map[string]any{"file_path": "sub", "content": "x"}, "directory"},
	} {
		_, err := k.callWith(t, ed, c.name, c.args)
		if err == nil || (c.want != "" && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s %v: %v, want a refusal (%q)", c.name, c.args, err, c.want)
		}
	}
	if len(ed.asked) != before {
		t.Errorf("the editor was asked about refused paths: %v", ed.asked[before:])
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret\n" {
		t.Errorf("the file outside changed: %q", b)
	}
}

// TestFilesReadOnlyWorkspace: a read-only workspace refuses every write,
// whoever would make it.
func TestFilesReadOnlyWorkspace(t *testing.T) {
	k := newReadOnlyKit(t, map[string]string{"a.txt": "a\n"})
	ed := &editorFiles{buffers: map[string]string{}}
	if _, err := k.callWith(t, ed, "read_file", map[string]any{"file_path": "a.txt"}); err != nil {
		t.Fatal(err)
	}
	_, err := k.callWith(t, ed, "write_file", map[string]any{"file_path": "a.txt", "content": "b\n"})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write in a read-only workspace: %v", err)
	}
	for _, a := range ed.asked {
		if strings.HasPrefix(a, "write") {
			t.Errorf("the editor was asked to write: %v", ed.asked)
		}
	}
}

// TestFilesUnsupported: what the editor does not offer is done on disk.
func TestFilesUnsupported(t *testing.T) {
	k := newKit(t, map[string]string{"a.txt": "disk\n"}, Limits{})
	ed := &editorFiles{buffers: map[string]string{filepath.Join(k.root, "a.txt"): "buffer\n"}, noRead: true, noWrite: true}
	out, err := k.callWith(t, ed, "read_file", map[string]any{"file_path": "a.txt"})
	if err != nil || out != "disk\n" {
		t.Fatalf("read_file: %q, %v", out, err)
	}
	if _, err := k.callWith(t, ed, "write_file", map[string]any{"file_path": "a.txt", "content": "written\n"}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(k.root, "a.txt")); string(b) != "written\n" {
		t.Errorf("the disk has %q", b)
	}
	if len(ed.asked) != 0 {
		t.Errorf("asked: %v", ed.asked)
	}
}

// TestFilesSizeLimit: the editor's text is held to the tools' limit too.
func TestFilesSizeLimit(t *testing.T) {
	k := newKit(t, map[string]string{"a.txt": "small\n"}, Limits{MaxFileSize: 100})
	ed := &editorFiles{buffers: map[string]string{filepath.Join(k.root, "a.txt"): strings.Repeat("x", 200)}}
	if _, err := k.callWith(t, ed, "read_file", map[string]any{"file_path": "a.txt"}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("a buffer over the limit: %v", err)
	}
}

// swapping is an editor during whose read or write a hostile process
// swaps the file for a symlink out of the workspace.
type swapping struct {
	editorFiles
	target, outside string
}

func (s *swapping) swap() {
	os.Remove(s.target)
	os.Symlink(s.outside, s.target)
}

func (s *swapping) ReadTextFile(ctx context.Context, path string) (string, error) {
	s.swap()
	return s.editorFiles.ReadTextFile(ctx, path)
}

func (s *swapping) WriteTextFile(ctx context.Context, path, content string) error {
	s.swap()
	return s.editorFiles.WriteTextFile(ctx, path, content)
}

// TestFilesSwappedDuringTheEditorsCall: a file replaced while the editor
// reads or writes it by path fails the call.
func TestFilesSwappedDuringTheEditorsCall(t *testing.T) {
	for _, name := range []string{"read_file", "write_file"} {
		t.Run(name, func(t *testing.T) {
			k := newKit(t, map[string]string{"a.txt": "a\n"}, Limits{})
			outside := filepath.Join(t.TempDir(), "secret")
			os.WriteFile(outside, []byte("secret\n"), 0o644)
			ed := &swapping{editorFiles: editorFiles{buffers: map[string]string{}}, target: filepath.Join(k.root, "a.txt"), outside: outside}
			args := map[string]any{"file_path": "a.txt"}
			if name == "write_file" {
				args["content"] = "b\n"
			}
			out, err := k.callWith(t, ed, name, args)
			if err == nil || strings.Contains(out, "secret") {
				t.Errorf("%s of a file swapped meanwhile: %q, %v", name, out, err)
			}
		})
	}
}
