package edit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory of the path swapped for a symlink between the edit tool's
// checks and its write (by a process left running in the workspace): the
// write must not follow it, out of the workspace or into a protected
// directory. Before the fix, the tool wrote by the path it had checked.
func TestEditSwappedDirectory(t *testing.T) {
	const content = "package x\n\nfunc f() int { return 1 }\n"
	for _, tc := range []struct {
		name   string
		args   func() map[string]any
		target func(h *harness, outside string) string
		victim string // relative to the target
	}{
		{"edit, outside", func() map[string]any { return edit("d/x.go", "return 1", "return 2") },
			func(h *harness, o string) string { return o }, "x.go"},
		{"create, outside", func() map[string]any { return edit("d/new.go", "", content) },
			func(h *harness, o string) string { return o }, "new.go"},
		{"create in a new directory, outside", func() map[string]any { return edit("d/sub/new.go", "", content) },
			func(h *harness, o string) string { return o }, "sub"},
		{"create, git hooks", func() map[string]any { return edit("d/pre-commit", "", "#!/bin/sh\n") },
			func(h *harness, o string) string { return filepath.Join(h.dir, ".git", "hooks") }, "pre-commit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Options{})
			h.write(t, "d/x.go", content, 0o644)
			h.write(t, ".git/hooks/README", "hooks\n", 0o644)
			h.seen.Record(filepath.Join(h.dir, "d/x.go"), []byte(content))
			outside := t.TempDir()
			// The same content outside, so that the tool's re-read
			// through the symlink sees nothing changed.
			if err := os.WriteFile(filepath.Join(outside, "x.go"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			target := tc.target(h, outside)
			testHookBeforeWrite = func(string) {
				d := filepath.Join(h.dir, "d")
				if err := os.Rename(d, d+".moved"); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(target, d); err != nil {
					t.Fatal(err)
				}
			}
			defer func() { testHookBeforeWrite = nil }()
			_, err := h.run(t, tc.args())
			if err == nil {
				t.Error("the edit was written through a directory swapped for a symlink")
			} else if !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("the error does not say why: %v", err)
			}
			if b, _ := os.ReadFile(filepath.Join(outside, "x.go")); string(b) != content {
				t.Errorf("the file outside was changed: %q", b)
			}
			if tc.victim != "x.go" {
				if _, err := os.Lstat(filepath.Join(target, tc.victim)); err == nil {
					t.Errorf("%s was written", filepath.Join(target, tc.victim))
				}
			}
		})
	}
}
