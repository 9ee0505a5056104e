package fs

import (
	"crypto/sha256"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/atomicfile"
)

const roReason = "this workspace is read-only (its trust level): nothing in it may be changed; " +
	"the user can run `hearth workspaces trust /path trusted` to allow changes"

// newReadOnlyKit is newKit for a workspace whose root is read-only.
func newReadOnlyKit(t *testing.T, files map[string]string) *kit {
	t.Helper()
	k := newKit(t, files, Limits{})
	k.ws = k.ws.WithReadOnlyRoot(roReason)
	k.tools = map[string]tool.Tool{}
	for _, tl := range Tools(k.ws, k.seen, Limits{}) {
		k.tools[tl.Spec().Name] = tl
	}
	return k
}

// fingerprint is every file, directory and mode under root.
func fingerprint(t *testing.T, root string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(root, func(p string, d iofs.DirEntry, err error) error {
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

// In a read-only workspace write_file refuses every write, saying why, and
// leaves every file as it was, even one the model has read.
func TestWriteFileReadOnlyWorkspace(t *testing.T) {
	k := newReadOnlyKit(t, project)
	// The model read main.go: the refusal is not the "changed since you
	// read it" one.
	if _, err := k.call(t, "read_file", map[string]any{"file_path": "main.go"}); err != nil {
		t.Fatal(err)
	}
	before := fingerprint(t, k.root)
	for _, tc := range []struct{ name, path string }{
		{"overwrite", "main.go"},
		{"overwrite, absolute", filepath.Join(k.root, "main.go")},
		{"create", "new.go"},
		{"create in a new directory", "new/dir/f.go"},
		{"create in a directory", "lib/new.go"},
		{"a dotfile", ".gitignore"},
		{"git's files", ".git/config"},
		{"outside", "../escape.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := k.call(t, "write_file", map[string]any{"file_path": tc.path, "content": "pwned\n"})
			var pe *sandbox.PathError
			if !errors.As(err, &pe) || pe.Rule != roReason {
				t.Fatalf("got %v, want a refusal with the read-only reason", err)
			}
			if !strings.Contains(err.Error(), "hearth workspaces trust") {
				t.Errorf("the refusal does not say what the user can do: %v", err)
			}
		})
	}
	if after := fingerprint(t, k.root); after != before {
		t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(k.root), "escape.txt")); err == nil {
		t.Error("a file was written outside the workspace")
	}
}

// The last check before a write, made where the write really goes
// (atomicfile.WriteBeneath with Workspace.Writable), refuses too: a path
// that got past Resolve is still not written.
func TestWriteBeneathReadOnlyWorkspace(t *testing.T) {
	k := newReadOnlyKit(t, project)
	before := fingerprint(t, k.root)
	for _, p := range []string{filepath.Join(k.root, "main.go"), filepath.Join(k.root, "lib", "brand-new.go")} {
		err := atomicfile.WriteBeneath(k.root, p, []byte("pwned\n"), 0o644, k.ws.Writable)
		var pe *sandbox.PathError
		if !errors.As(err, &pe) || pe.Rule != roReason {
			t.Errorf("%s: got %v, want a refusal with the read-only reason", p, err)
		}
	}
	if after := fingerprint(t, k.root); after != before {
		t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// Reading is unchanged: every read tool works in a read-only workspace.
func TestReadToolsReadOnlyWorkspace(t *testing.T) {
	k := newReadOnlyKit(t, project)
	before := fingerprint(t, k.root)
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"file_path": "main.go"}, "println(\"hello\")"},
		{"read_many_files", map[string]any{"paths": []string{"lib/*.go"}}, "func Add"},
		{"list_directory", map[string]any{"path": "lib"}, "util.go"},
		{"glob", map[string]any{"pattern": "**/*.go"}, "lib/util.go"},
		{"grep_search", map[string]any{"pattern": "func Add"}, "lib/util.go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := k.call(t, tc.name, tc.args)
			if err != nil || !strings.Contains(out, tc.want) {
				t.Errorf("got %q, %v; want %q in it", out, err, tc.want)
			}
		})
	}
	if after := fingerprint(t, k.root); after != before {
		t.Errorf("reading changed the workspace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
