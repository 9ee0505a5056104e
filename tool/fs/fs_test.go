package fs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// tree writes files (path → content) under a new temp dir.
func tree(t *testing.T, files map[string]string) string {
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
	return root
}

type kit struct {
	root  string
	ws    *sandbox.Workspace
	seen  *tool.Seen
	tools map[string]tool.Tool
}

func newKit(t *testing.T, files map[string]string, lim Limits) *kit {
	t.Helper()
	root := tree(t, files)
	ws, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	k := &kit{root: ws.Root(), ws: ws, seen: tool.NewSeen(), tools: map[string]tool.Tool{}}
	for _, tl := range Tools(ws, k.seen, lim) {
		k.tools[tl.Spec().Name] = tl
	}
	return k
}

func (k *kit) call(t *testing.T, name string, args any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	reg, err := tool.NewRegistry(k.tools[name])
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Validate(name, b); err != nil {
		return "", err
	}
	r, err := k.tools[name].Run(context.Background(), tool.Call{ID: "c1", Args: b})
	return r.Output, err
}

var project = map[string]string{
	".gitignore":         "build/\n*.log\n!keep.log\n",
	"main.go":            "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n",
	"lib/util.go":        "package lib\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }\n",
	"lib/.gitignore":     "generated.go\n",
	"lib/generated.go":   "package lib // generated: func Add\n",
	"lib/deep/x_test.go": "package deep\n",
	"build/out.go":       "package build // func Add\n",
	"app.log":            "func Add in a log\n",
	"keep.log":           "func Add kept\n",
	".github/ci.yml":     "run: go test\n",
	"docs/README.md":     "# Docs\n",
}

func TestReadFile(t *testing.T) {
	lines := make([]string, 1200)
	for i := range lines {
		lines[i] = "line " + string(rune('a'+i%26))
	}
	k := newKit(t, map[string]string{
		"a.txt":    "one\ntwo\nthree\n",
		"big.txt":  strings.Join(lines, "\n") + "\n",
		"crlf.txt": "\ufeffx\r\ny\r\n",
		"empty":    "",
		"bin":      "ELF\x00\x01\x02",
		"img.png":  "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"dir/f":    "f",
	}, Limits{})
	tests := []struct {
		name   string
		args   map[string]any
		want   string
		errHas string
	}{
		{"whole", map[string]any{"file_path": "a.txt"}, "one\ntwo\nthree\n", ""},
		{"window", map[string]any{"file_path": "a.txt", "offset": 1, "limit": 1}, "[a.txt: lines 2-2 of 3; read on with offset=2]\ntwo\n", ""},
		{"default limit on big files", map[string]any{"file_path": "big.txt"}, "[big.txt: lines 1-500 of 1200; read on with offset=500]\n", ""},
		{"past the end", map[string]any{"file_path": "a.txt", "offset": 10}, "a.txt has 3 lines; offset 10 is past the end.", ""},
		{"bom dropped, crlf kept", map[string]any{"file_path": "crlf.txt"}, "x\r\ny\r\n", ""},
		{"empty", map[string]any{"file_path": "empty"}, "empty is empty.", ""},
		{"binary", map[string]any{"file_path": "bin"}, "bin is a binary file", ""},
		{"image", map[string]any{"file_path": "img.png"}, "img.png is an image (image/png)", ""},
		{"directory", map[string]any{"file_path": "dir"}, "", "is a directory: use list_directory"},
		{"missing", map[string]any{"file_path": "nope.txt"}, "", "does not exist"},
		{"outside", map[string]any{"file_path": "../../etc/passwd"}, "", "outside the workspace"},
		{"absolute outside", map[string]any{"file_path": "/etc/passwd"}, "", "outside the workspace"},
		{"negative offset", map[string]any{"file_path": "a.txt", "offset": -1}, "", "negative"},
		{"unknown argument", map[string]any{"file_path": "a.txt", "lines": 3}, "", "schema"},
		{"missing argument", map[string]any{}, "", "schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := k.call(t, "read_file", tc.args)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("want error %q, got %q, %v", tc.errHas, out, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, tc.want) {
				t.Fatalf("got %q, want prefix %q", out, tc.want)
			}
		})
	}
}

func TestReadFileSymlinkEscape(t *testing.T) {
	outside := tree(t, map[string]string{"secret": "s3cret"})
	k := newKit(t, map[string]string{"a": "a"}, Limits{})
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(k.root, "link"))
	os.Symlink(outside, filepath.Join(k.root, "dirlink"))
	for _, p := range []string{"link", "dirlink/secret"} {
		out, err := k.call(t, "read_file", map[string]any{"file_path": p})
		var pe *sandbox.PathError
		if !errors.As(err, &pe) || strings.Contains(out, "s3cret") {
			t.Errorf("%s: %q %v", p, out, err)
		}
	}
}

func TestWriteFile(t *testing.T) {
	k := newKit(t, map[string]string{"crlf.txt": "\ufeffa\r\nb\r\n", "plain.txt": "x\n"}, Limits{})
	if out, err := k.call(t, "write_file", map[string]any{"file_path": "new/dir/f.go", "content": "package f\n"}); err != nil || !strings.HasPrefix(out, "Created new/dir/f.go") {
		t.Fatalf("%q %v", out, err)
	}
	if b, _ := os.ReadFile(filepath.Join(k.root, "new/dir/f.go")); string(b) != "package f\n" {
		t.Errorf("content %q", b)
	}
	k.call(t, "write_file", map[string]any{"file_path": "crlf.txt", "content": "c\nd\n"})
	if b, _ := os.ReadFile(filepath.Join(k.root, "crlf.txt")); string(b) != "\ufeffc\r\nd\r\n" {
		t.Errorf("line endings and BOM not kept: %q", b)
	}
	// The model read plain.txt, then someone else changed it.
	k.call(t, "read_file", map[string]any{"file_path": "plain.txt"})
	os.WriteFile(filepath.Join(k.root, "plain.txt"), []byte("changed\n"), 0o644)
	if _, err := k.call(t, "write_file", map[string]any{"file_path": "plain.txt", "content": "mine\n"}); err == nil || !strings.Contains(err.Error(), "changed since you last read it") {
		t.Errorf("stale overwrite: %v", err)
	}
	if _, err := k.call(t, "write_file", map[string]any{"file_path": "../escape.txt", "content": "x"}); err == nil {
		t.Error("wrote outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(k.root), "escape.txt")); err == nil {
		t.Error("escape.txt exists outside the workspace")
	}
	entries, _ := os.ReadDir(k.root)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".hearth-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func TestListDirectory(t *testing.T) {
	k := newKit(t, project, Limits{})
	out, err := k.call(t, "list_directory", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"lib/\n", "docs/\n", ".github/\n", "main.go (", "keep.log ("} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"build/", "app.log", ".git/"} {
		if strings.Contains(out, not) {
			t.Errorf("ignored %q listed:\n%s", not, out)
		}
	}
	out, _ = k.call(t, "list_directory", map[string]any{"path": "lib", "ignore": []string{"deep"}})
	if !strings.Contains(out, "util.go") || strings.Contains(out, "generated.go") || strings.Contains(out, "deep") {
		t.Errorf("lib:\n%s", out)
	}
}

func TestGlob(t *testing.T) {
	k := newKit(t, project, Limits{})
	tests := []struct {
		pattern, path string
		want          []string
	}{
		{"**/*.go", "", []string{"main.go", "lib/util.go", "lib/deep/x_test.go"}},
		{"*.go", "", []string{"main.go"}},
		{"*.go", "lib", []string{"lib/util.go"}},
		{"**/*.log", "", []string{"keep.log"}},
		{"**/*.yml", "", []string{".github/ci.yml"}},
		{"nothing*", "", nil},
	}
	for _, tc := range tests {
		out, err := k.call(t, "glob", map[string]any{"pattern": tc.pattern, "path": tc.path})
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Fields(out)
		if len(tc.want) == 0 {
			if !strings.HasPrefix(out, "No files") {
				t.Errorf("%s: %q", tc.pattern, out)
			}
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s in %q: got %v, want %v", tc.pattern, tc.path, got, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w+"\n") {
				t.Errorf("%s: %s missing from %v", tc.pattern, w, got)
			}
		}
	}
	if _, err := k.call(t, "glob", map[string]any{"pattern": "[bad"}); err == nil {
		t.Error("bad pattern accepted")
	}
	if _, err := k.call(t, "glob", map[string]any{"pattern": "*", "path": "/etc"}); err == nil {
		t.Error("glob outside the workspace")
	}
}

func TestGrepSearch(t *testing.T) {
	k := newKit(t, project, Limits{MaxResults: 2})
	out, err := k.call(t, "grep_search", map[string]any{"pattern": "func Add"})
	if err != nil {
		t.Fatal(err)
	}
	if out != "keep.log:1: func Add kept\nlib/util.go:4: func Add(a, b int) int { return a + b }\n" {
		t.Errorf("literal:\n%s", out)
	}
	out, _ = k.call(t, "grep_search", map[string]any{"pattern": `(?i)^PACKAGE (main|lib)$`, "include": "*.go"})
	if out != "lib/util.go:1: package lib\nmain.go:1: package main\n" {
		t.Errorf("regexp:\n%s", out)
	}
	out, _ = k.call(t, "grep_search", map[string]any{"pattern": "package", "path": "lib/util.go"})
	if out != "lib/util.go:1: package lib\n" {
		t.Errorf("one file:\n%s", out)
	}
	out, _ = k.call(t, "grep_search", map[string]any{"pattern": "package"})
	if !strings.Contains(out, "more matches not shown") {
		t.Errorf("limit note missing:\n%s", out)
	}
	if _, err := k.call(t, "grep_search", map[string]any{"pattern": "func("}); err == nil || !strings.Contains(err.Error(), "bad regular expression") {
		t.Errorf("bad regexp: %v", err)
	}
	if out, _ := k.call(t, "grep_search", map[string]any{"pattern": "zzz"}); !strings.HasPrefix(out, "No matches") {
		t.Errorf("no match: %q", out)
	}
}

func TestReadManyFiles(t *testing.T) {
	k := newKit(t, project, Limits{})
	out, err := k.call(t, "read_many_files", map[string]any{"paths": []string{"lib/**/*.go", "main.go"}, "exclude": []string{"**/*_test.go"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "--- lib/util.go ---\npackage lib") || !strings.Contains(out, "--- main.go ---") ||
		strings.Contains(out, "generated") || strings.Contains(out, "x_test.go") {
		t.Errorf("got:\n%s", out)
	}
}

// TestKindsAndDescriptions: profiles select tools by kind ("@read-only" is
// what the api profile and sub-agents get), so a tool's kind decides who
// may call it without asking.
func TestKindsAndDescriptions(t *testing.T) {
	k := newKit(t, nil, Limits{})
	tests := []struct {
		name string
		kind tool.Kind
		args string
		// describe is the approval prompt's line.
		describe string
	}{
		{"read_file", tool.ReadOnly, `{"file_path":"a.go"}`, "read a.go"},
		{"read_many_files", tool.ReadOnly, `{"paths":["*.go"]}`, "read_many_files"},
		{"write_file", tool.Edit, `{"file_path":"a.go","content":"x\ny"}`, "write a.go (2 lines)"},
		{"list_directory", tool.ReadOnly, `{}`, "list_directory"},
		{"glob", tool.ReadOnly, `{"pattern":"**/*.go"}`, "glob"},
		{"grep_search", tool.ReadOnly, `{"pattern":"func main"}`, `search for "func main"`},
		{"write_file", tool.Edit, `{"file_path":`, "write_file (invalid arguments)"},
	}
	if len(k.tools) != 6 {
		t.Errorf("%d tools", len(k.tools))
	}
	for _, tc := range tests {
		tl, ok := k.tools[tc.name]
		if !ok {
			t.Errorf("no %s", tc.name)
			continue
		}
		if tl.Kind() != tc.kind {
			t.Errorf("%s is %v, want %v", tc.name, tl.Kind(), tc.kind)
		}
		d, ok := tl.(tool.Describer)
		if !ok {
			t.Errorf("%s is no Describer", tc.name)
		} else if got := d.Describe(json.RawMessage(tc.args)); got != tc.describe {
			t.Errorf("%s: Describe(%s) = %q, want %q", tc.name, tc.args, got, tc.describe)
		}
	}
}
