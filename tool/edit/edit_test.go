package edit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

type harness struct {
	dir  string
	ws   *sandbox.Workspace
	seen *tool.Seen
	tool *Tool
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	dir := t.TempDir()
	ws, err := sandbox.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := tool.NewSeen()
	return &harness{dir: ws.Root(), ws: ws, seen: seen, tool: New(ws, seen, opts)}
}

func (h *harness) write(t *testing.T, name, content string, perm os.FileMode) string {
	t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, perm); err != nil {
		t.Fatal(err)
	}
	return p
}

func (h *harness) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (h *harness) run(t *testing.T, args map[string]any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return h.tool.Run(context.Background(), tool.Call{ID: "call_1", Args: raw})
}

func edit(path, old, new string) map[string]any {
	return map[string]any{"file_path": path, "old_string": old, "new_string": new}
}

func TestEditExact(t *testing.T) {
	h := newHarness(t, Options{})
	p := h.write(t, "main.go", goFile, 0o644)
	h.seen.Record(p, []byte(goFile))
	res, err := h.run(t, edit("main.go", `fmt.Println("big")`, `fmt.Println("large")`))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(goFile, `"big"`, `"large"`, 1)
	if got := h.read(t, "main.go"); got != want {
		t.Fatalf("file:\n%s", got)
	}
	if !strings.HasPrefix(res.Output, "Edited main.go: replaced line 8, +1 -1 lines.") {
		t.Errorf("output: %s", res.Output)
	}
	for _, s := range []string{"--- main.go\n+++ main.go\n@@ -5,7 +5,7 @@\n", "-\t\tfmt.Println(\"big\")\n", "+\t\tfmt.Println(\"large\")\n"} {
		if !strings.Contains(res.Display, s) || !strings.Contains(res.Output, s) {
			t.Errorf("diff lacks %q:\n%s", s, res.Display)
		}
	}
	// What the model saw is now the new content.
	if err := h.seen.Check(p, []byte(want)); err != nil {
		t.Errorf("seen not updated: %v", err)
	}
}

func TestEditLineEndingsBOMAndMode(t *testing.T) {
	crlf := func(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
	cases := []struct {
		name          string
		content       string
		perm          os.FileMode
		old, new      string
		want          string
		wantStrategy  string
		outputMention string
	}{
		{
			name: "CRLF file, LF arguments", content: crlf(goFile), perm: 0o644,
			old: "\tif x > 3 {\n\t\tfmt.Println(\"big\")\n", new: "\tif x > 3 {\n\t\tfmt.Println(\"big\")\n\t\tfmt.Println(\"really\")\n",
			want: crlf(strings.Replace(goFile, "(\"big\")\n", "(\"big\")\n\t\tfmt.Println(\"really\")\n", 1)),
		},
		{
			name: "CRLF file, CRLF arguments", content: crlf(goFile), perm: 0o644,
			old: crlf("\tfmt.Println(x)\n"), new: crlf("\tfmt.Println(x, x)\n"),
			want: crlf(strings.Replace(goFile, "Println(x)", "Println(x, x)", 1)),
		},
		{
			name: "BOM kept, match at the start", content: utf8BOM + "package main\n\nfunc f() {}\n", perm: 0o644,
			old: "package main\n", new: "package other\n",
			want: utf8BOM + "package other\n\nfunc f() {}\n",
		},
		{
			name: "BOM and CRLF", content: utf8BOM + crlf("a\nb\nc\n"), perm: 0o600,
			old: "b\n", new: "B1\nB2\n",
			want: utf8BOM + crlf("a\nB1\nB2\nc\n"),
		},
		{
			name: "executable stays executable", content: "#!/bin/sh\necho hi\n", perm: 0o755,
			old: "echo hi", new: "echo hello",
			want: "#!/bin/sh\necho hello\n",
		},
		{
			name: "no final newline stays so", content: "a\nb", perm: 0o644,
			old: "b\n", new: "c\n",
			want: "a\nc",
		},
		{
			name: "mixed endings: each line keeps its own", content: "a\r\nb\r\nc\nd\n", perm: 0o644,
			old: "b\n", new: "b1\nb2\n",
			want: "a\r\nb1\r\nb2\r\nc\nd\n",
		},
		{
			name: "mixed endings: LF region", content: "a\r\nb\r\nc\nd\n", perm: 0o644,
			old: "c\nd", new: "c\nd\ne",
			want: "a\r\nb\r\nc\nd\ne\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			p := h.write(t, "f.txt", c.content, c.perm)
			if _, err := h.run(t, edit("f.txt", c.old, c.new)); err != nil {
				t.Fatal(err)
			}
			if got := h.read(t, "f.txt"); got != c.want {
				t.Errorf("file = %q\nwant   %q", got, c.want)
			}
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != c.perm {
				t.Errorf("mode = %v, want %v", fi.Mode().Perm(), c.perm)
			}
			// No temporary file is left behind.
			entries, _ := os.ReadDir(h.dir)
			if len(entries) != 1 {
				t.Errorf("directory holds %d entries", len(entries))
			}
		})
	}
}

func TestEditStrategiesReported(t *testing.T) {
	h := newHarness(t, Options{})
	h.write(t, "main.go", goFile, 0o644)
	res, err := h.run(t, edit("main.go", "    if x > 3 {\n        fmt.Println(\"big\")\n    }", "    if x > 3 {\n        fmt.Println(\"big!\")\n    }"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "re-indented") {
		t.Errorf("output: %s", res.Output)
	}
	if got := h.read(t, "main.go"); !strings.Contains(got, "\t\tfmt.Println(\"big!\")\n") {
		t.Errorf("file:\n%s", got)
	}
	res, err = h.run(t, edit("main.go", "     11\t}\n     12\t\n     13\tfunc compute(a, b int) int {", "}\n\n// compute adds.\nfunc compute(a, b int) int {"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Output, "line numbers removed") {
		t.Errorf("output: %s", res.Output)
	}
}

func TestEditStale(t *testing.T) {
	h := newHarness(t, Options{})
	p := h.write(t, "a.txt", "one\ntwo\n", 0o644)
	h.seen.Record(p, []byte("one\ntwo\n"))
	// Someone else changes the file.
	h.write(t, "a.txt", "one\ntwo\nthree\n", 0o644)
	_, err := h.run(t, edit("a.txt", "two", "2"))
	if err == nil || !strings.Contains(err.Error(), "changed since you last read it") || !strings.Contains(err.Error(), "read it again") {
		t.Fatalf("err = %v", err)
	}
	if got := h.read(t, "a.txt"); got != "one\ntwo\nthree\n" {
		t.Errorf("file changed: %q", got)
	}
	// After reading it again, the edit goes through.
	h.seen.Record(p, []byte("one\ntwo\nthree\n"))
	if _, err := h.run(t, edit("a.txt", "two", "2")); err != nil {
		t.Fatal(err)
	}
	// A file never read is edited on its own evidence.
	h.write(t, "b.txt", "x\n", 0o644)
	if _, err := h.run(t, edit("b.txt", "x", "y")); err != nil {
		t.Fatal(err)
	}
}

func TestEditRefusals(t *testing.T) {
	h := newHarness(t, Options{})
	h.write(t, "main.go", goFile, 0o644)
	h.write(t, "bin.dat", "ab\x00cd", 0o644)
	h.write(t, "empty.txt", "", 0o644)
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(h.dir, "escape")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"placeholder", edit("main.go", "func compute(a, b int) int {\n\treturn a + b\n}", "func compute(a, b int) int {\n\t// ... rest of the code unchanged\n}"),
			[]string{"placeholder", "// ... rest of the code unchanged", "Write out the complete code"}},
		{"ambiguous", edit("main.go", "fmt.Println", "log.Println"),
			[]string{"main.go: old_string matches 2 places (lines 8, 10)", "expected_replacements to 2"}},
		{"not found", edit("main.go", "func compute(x, y int) int64 {\n\treturn int64(x * y)\n}", "x"),
			[]string{"main.go: old_string was not found", "13\tfunc compute(a, b int) int {", "14\t\treturn a + b"}},
		{"same strings", edit("main.go", "x", "x"), []string{"the same"}},
		{"missing file", edit("nope.go", "x", "y"), []string{"nope.go does not exist", `old_string ""`}},
		{"create over a file", edit("main.go", "", "x"), []string{"already exists", "write_file"}},
		{"directory", edit(".", "x", "y"), []string{"is a directory"}},
		{"binary", edit("bin.dat", "ab", "x"), []string{"binary"}},
		{"outside by ..", edit("../x.go", "", "package x"), []string{"outside the workspace"}},
		{"outside, absolute", edit(filepath.Join(outside, "secret.txt"), "secret", "public"), []string{"outside the workspace"}},
		{"outside by symlink", edit("escape/secret.txt", "secret", "public"), []string{"outside the workspace"}},
		{"new file outside by symlink", edit("escape/new.txt", "", "x"), []string{"outside the workspace"}},
		{"empty path", edit("", "a", "b"), []string{"file_path is empty"}},
		{"bad count", map[string]any{"file_path": "main.go", "old_string": "a", "new_string": "b", "expected_replacements": -1}, []string{"1 or more"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := h.run(t, c.args)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range c.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error lacks %q:\n%v", s, err)
				}
			}
		})
	}
	if got := h.read(t, "main.go"); got != goFile {
		t.Errorf("main.go changed")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret\n" {
		t.Errorf("outside file changed")
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Errorf("file created outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.dir), "x.go")); err == nil {
		t.Errorf("file created outside the workspace")
	}
	// An empty file may be filled with old_string "".
	if _, err := h.run(t, edit("empty.txt", "", "now full\n")); err != nil {
		t.Fatal(err)
	}
	if got := h.read(t, "empty.txt"); got != "now full\n" {
		t.Errorf("empty.txt = %q", got)
	}
}

func TestEditExpectedReplacements(t *testing.T) {
	h := newHarness(t, Options{})
	h.write(t, "main.go", goFile, 0o644)
	args := edit("main.go", "fmt.Println", "log.Println")
	args["expected_replacements"] = 2
	res, err := h.run(t, args)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.read(t, "main.go"); got != strings.ReplaceAll(goFile, "fmt.Println", "log.Println") {
		t.Errorf("file:\n%s", got)
	}
	if !strings.Contains(res.Output, "replaced lines 8, 10 (2 places)") {
		t.Errorf("output: %s", res.Output)
	}
	args["expected_replacements"] = 3
	args["old_string"], args["new_string"] = "log.Println", "fmt.Println"
	if _, err := h.run(t, args); err == nil || !strings.Contains(err.Error(), "matches 2 places") {
		t.Errorf("err = %v", err)
	}
}

func TestEditCreate(t *testing.T) {
	h := newHarness(t, Options{})
	args := edit("pkg/sub/new.go", "", "package sub\n\nfunc F() {}\n")
	if d := h.tool.Describe(mustJSON(t, args)); d != "create pkg/sub/new.go (3 lines)" {
		t.Errorf("describe: %q", d)
	}
	res, err := h.run(t, args)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.read(t, "pkg/sub/new.go"); got != "package sub\n\nfunc F() {}\n" {
		t.Errorf("file = %q", got)
	}
	if res.Output != "Created pkg/sub/new.go (3 lines)." || !strings.Contains(res.Display, "+++ pkg/sub/new.go\n@@ -0,0 +1,3 @@\n+package sub\n") {
		t.Errorf("result: %+v", res)
	}
	p := filepath.Join(h.dir, "pkg/sub/new.go")
	if err := h.seen.Check(p, []byte("package sub\n\nfunc F() {}\n")); err != nil {
		t.Error(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
}

func TestDescribeAndSpec(t *testing.T) {
	h := newHarness(t, Options{})
	cases := map[string]string{
		`{"file_path":"src/a.go","old_string":"a\nb\nc","new_string":"x"}`:                             "edit src/a.go (replace 3 lines with 1)",
		`{"file_path":"a.go","old_string":"a","new_string":"b\nc","expected_replacements":4}`:          "edit a.go (replace 1 line with 2, in 4 places)",
		`{"file_path":"` + filepath.Join(h.dir, "abs.go") + `","old_string":"a\n","new_string":"b\n"}`: "edit abs.go (replace 1 line with 1)",
		`{"nope"`: "edit (invalid arguments)",
	}
	for args, want := range cases {
		if got := h.tool.Describe(json.RawMessage(args)); got != want {
			t.Errorf("Describe(%s) = %q, want %q", args, got, want)
		}
	}
	spec := h.tool.Spec()
	if spec.Name != "edit" || h.tool.Kind() != tool.Edit {
		t.Errorf("spec %+v kind %v", spec, h.tool.Kind())
	}
	if len(spec.Description) > 500 {
		t.Errorf("description is %d bytes", len(spec.Description))
	}
	if n := len(spec.Description) + len(spec.Parameters); n > 1100 {
		t.Errorf("spec is %d bytes", n)
	}
	// The registry accepts the schema and checks calls against it.
	r, err := tool.NewRegistry(h.tool)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate("edit", json.RawMessage(`{"file_path":"a","old_string":"b","new_string":"c","expected_replacements":2}`)); err != nil {
		t.Error(err)
	}
	for _, bad := range []string{`{"file_path":"a","old_string":"b"}`, `{"file_path":"a","old_string":"b","new_string":"c","expected_replacements":0}`} {
		if err := r.Validate("edit", json.RawMessage(bad)); err == nil {
			t.Errorf("Validate(%s) passed", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A model's old_string too far from the file for fuzzy matching, which a
// fixer model can still map onto the file.
const fixerFile = `def load(path):
    with open(path) as f:
        data = json.load(f)
    return data


def save(path, data):
    with open(path, "w") as f:
        json.dump(data, f, indent=2)
`

const fixerOld = "def save(p, d):\n    with open(p, 'w') as fh:\n        json.dump(d, fh)\n"
const fixerNew = "def save(path, data):\n    with open(path, \"w\") as f:\n        json.dump(data, f, indent=4)\n"

func fixerHarness(t *testing.T, answer string) (*harness, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat", llmtest.OllamaStream("fixer", llmtest.Text(answer)))
	p := ollama.New(ollama.Options{BaseURL: srv.OllamaURL(), NumCtx: 4096, MaxRetries: -1})
	h := newHarness(t, Options{Fixer: &ModelFixer{Provider: p, Model: "fixer", Think: &llm.Think{}}})
	h.write(t, "store.py", fixerFile, 0o644)
	return h, srv
}

func TestEditFixer(t *testing.T) {
	// Without a fixer the edit fails with the closest passage.
	plain := newHarness(t, Options{})
	plain.write(t, "store.py", fixerFile, 0o644)
	_, err := plain.run(t, edit("store.py", fixerOld, fixerNew))
	if err == nil || !strings.Contains(err.Error(), "7\tdef save(path, data):") {
		t.Fatalf("without a fixer: %v", err)
	}

	t.Run("corrected", func(t *testing.T) {
		answer := "Here it is:\n```python\ndef save(path, data):\n    with open(path, \"w\") as f:\n        json.dump(data, f, indent=2)\n```\n"
		h, srv := fixerHarness(t, answer)
		res, err := h.run(t, edit("store.py", fixerOld, fixerNew))
		if err != nil {
			t.Fatal(err)
		}
		if got := h.read(t, "store.py"); got != strings.Replace(fixerFile, "indent=2", "indent=4", 1) {
			t.Errorf("file:\n%s", got)
		}
		if !strings.Contains(res.Output, "the fixer model corrected it") {
			t.Errorf("output: %s", res.Output)
		}
		reqs := srv.RequestsTo("/api/chat")
		if len(reqs) != 1 {
			t.Fatalf("%d chat requests", len(reqs))
		}
		var body struct {
			Model    string `json:"model"`
			Think    *bool  `json:"think"`
			Messages []struct{ Role, Content string }
		}
		reqs[0].JSON(t, &body)
		if body.Model != "fixer" || body.Think == nil || *body.Think || len(body.Messages) != 2 ||
			!strings.Contains(body.Messages[1].Content, "json.dump(data, f, indent=2)") ||
			!strings.Contains(body.Messages[1].Content, fixerOld) {
			t.Errorf("request: %+v", body)
		}
	})
	for name, answer := range map[string]string{
		"garbage":            "I am not sure what you mean.",
		"none":               "NONE",
		"still wrong":        "```\ndef save(path, data):\n    with open(path, 'w') as f:\n```",
		"other place":        "```\ndef load(path):\n    with open(path) as f:\n```",
		"the old string":     "```\n" + fixerOld + "```",
		"empty":              "",
		"matches everywhere": "```\n    with open(path\n```",
	} {
		t.Run(name, func(t *testing.T) {
			h, srv := fixerHarness(t, answer)
			_, err := h.run(t, edit("store.py", fixerOld, fixerNew))
			if err == nil {
				t.Fatalf("accepted; file:\n%s", h.read(t, "store.py"))
			}
			if !strings.Contains(err.Error(), "old_string was not found") || !strings.Contains(err.Error(), "def save(path, data)") {
				t.Errorf("err = %v", err)
			}
			if got := h.read(t, "store.py"); got != fixerFile {
				t.Errorf("file changed")
			}
			if n := len(srv.RequestsTo("/api/chat")); n != 1 {
				t.Errorf("%d chat requests, want exactly 1", n)
			}
		})
	}
	t.Run("server down", func(t *testing.T) {
		p := ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:1", NumCtx: 4096, MaxRetries: -1})
		h := newHarness(t, Options{Fixer: &ModelFixer{Provider: p, Model: "fixer"}})
		h.write(t, "store.py", fixerFile, 0o644)
		if _, err := h.run(t, edit("store.py", fixerOld, fixerNew)); err == nil || !strings.Contains(err.Error(), "old_string was not found") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("not asked for ambiguity", func(t *testing.T) {
		called := false
		h := newHarness(t, Options{Fixer: FixerFunc(func(context.Context, FixRequest) (string, error) {
			called = true
			return "", nil
		})})
		h.write(t, "a.txt", "x\nx\n", 0o644)
		if _, err := h.run(t, edit("a.txt", "x", "y")); err == nil || called {
			t.Errorf("err = %v, called = %v", err, called)
		}
	})
}

// utf8BOM starts a file saved "with BOM".
const utf8BOM = "\ufeff"

// goFile is a small Go file to edit, the matching engine's own.
var goFile = func() string {
	b, err := os.ReadFile("internal/match/testdata/small.go.txt")
	if err != nil {
		panic(err)
	}
	return string(b)
}()
