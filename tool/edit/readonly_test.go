package edit

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
)

const roReason = "this workspace is read-only (its trust level): nothing in it may be changed; " +
	"the user can run `hearth workspaces trust /path trusted` to allow changes"

// fingerprint is every file, directory and mode under root.
func fingerprint(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%s %v %d", p, info.Mode(), info.Size())
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// In a read-only workspace edit refuses every change, creating a file
// included, saying why, and leaves every file byte for byte as it was, even
// one the model has read and matches exactly.
func TestEditReadOnlyWorkspace(t *testing.T) {
	h := newHarness(t, Options{})
	main := h.write(t, "main.go", goFile, 0o644)
	h.write(t, "pkg/util.go", "package pkg\n\nfunc A() {}\n", 0o644)
	h.seen.Record(main, []byte(goFile))
	h.ws = h.ws.WithReadOnlyRoot(roReason)
	h.tool = New(h.ws, h.seen, Options{})
	before := fingerprint(t, h.dir)
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"an exact edit", edit("main.go", `fmt.Println("big")`, `fmt.Println("large")`)},
		{"an absolute path", edit(main, `fmt.Println("big")`, `fmt.Println("large")`)},
		{"every occurrence", map[string]any{"file_path": "main.go", "old_string": "fmt", "new_string": "xfmt", "expected_replacements": 2}},
		{"a file not read", edit("pkg/util.go", "func A() {}", "func B() {}")},
		{"a new file", edit("new.go", "", "package main\n")},
		{"a new file in a new directory", edit("a/b/new.go", "", "package b\n")},
		{"git's files", edit(".git/config", "", "[core]\n")},
		{"outside", edit("../outside.go", "", "package x\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.run(t, tc.args)
			var pe *sandbox.PathError
			if !errors.As(err, &pe) || pe.Rule != roReason {
				t.Fatalf("got %v, want a refusal with the read-only reason", err)
			}
			if !strings.Contains(err.Error(), "hearth workspaces trust") {
				t.Errorf("the refusal does not say what the user can do: %v", err)
			}
		})
	}
	if after := fingerprint(t, h.dir); after != before {
		t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if got := h.read(t, "main.go"); got != goFile {
		t.Error("main.go changed")
	}
	// An approval prompt still describes the call.
	if d := h.tool.Describe(mustJSON(t, edit("main.go", "a", "b"))); !strings.Contains(d, "main.go") {
		t.Errorf("Describe: %q", d)
	}
}

// The same edit in the same workspace, not read-only, goes through: the
// refusals above are the read-only root's, not another rule's.
func TestEditReadOnlyControl(t *testing.T) {
	h := newHarness(t, Options{})
	main := h.write(t, "main.go", goFile, 0o644)
	h.seen.Record(main, []byte(goFile))
	if _, err := h.run(t, edit("main.go", `fmt.Println("big")`, `fmt.Println("large")`)); err != nil {
		t.Fatal(err)
	}
	if h.read(t, "main.go") == goFile {
		t.Error("the edit did not change the file")
	}
}
