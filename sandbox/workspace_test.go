package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	ref := filepath.Join(base, "ref")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{root + "/src", ref, outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(root, "src/a.go"), []byte("a"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "link-out"))
	os.Symlink(outside, filepath.Join(root, "dir-out"))
	os.Symlink(filepath.Join(root, "src/a.go"), filepath.Join(root, "link-in"))
	os.Symlink(filepath.Join(base, "missing"), filepath.Join(root, "dangling"))
	ws, err := New(root, ref)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path   string
		access Access
		want   string // relative to root, or "" for refused
		rule   string
	}{
		{"src/a.go", Read, "src/a.go", ""},
		{"", Read, ".", ""},
		{".", Write, ".", ""},
		{"./src/../src/a.go", Read, "src/a.go", ""},
		{filepath.Join(root, "src/a.go"), Read, "src/a.go", ""},
		{"src/new/file.go", Write, "src/new/file.go", ""},
		{"link-in", Write, "src/a.go", ""},
		{"../outside/secret", Read, "", "outside the workspace"},
		{"src/../../outside/secret", Read, "", "outside the workspace"},
		{"/etc/passwd", Read, "", "outside the workspace"},
		{"/", Read, "", "outside the workspace"},
		{"link-out", Read, "", "resolves to"},
		{"dir-out/secret", Read, "", "resolves to"},
		{"dir-out/new", Write, "", "resolves to"},
		{"dangling", Write, "", "does not exist"},
		{"~/.ssh/id_rsa", Read, "", "~ is not expanded"},
		{"a\x00b", Read, "", "NUL"},
		{ref, Read, "ref", ""},
		{".hearth/config.toml", Write, "", "project config"},
		{".git/hooks/pre-commit", Write, "", "project config"},
		{".git/config", Write, "", "project config"},
		{".hearth/config.toml", Read, ".hearth/config.toml", ""},
		{".git/objects/ab", Write, ".git/objects/ab", ""},
		{filepath.Join(ref, "x"), Write, "", "read-only"},
	}
	for _, tc := range tests {
		got, err := ws.Resolve(tc.path, tc.access)
		if tc.want == "" {
			var pe *PathError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.rule) {
				t.Errorf("%q (%s): got %q, %v; want refusal %q", tc.path, tc.access, got, err, tc.rule)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.path, err)
			continue
		}
		want := filepath.Join(ws.Root(), tc.want)
		if tc.want == "ref" {
			want, _ = filepath.EvalSymlinks(ref)
		}
		if got != want {
			t.Errorf("%q: got %s, want %s", tc.path, got, want)
		}
	}
	if _, err := New(filepath.Join(base, "nope")); err == nil {
		t.Error("missing root accepted")
	}
}

func TestWritable(t *testing.T) {
	ws, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := ws.Root()
	for p, ok := range map[string]bool{
		filepath.Join(root, "a.go"):                      true,
		filepath.Join(root, "src", "x", "y.go"):          true,
		filepath.Join(root, ".gitignore"):                true,
		filepath.Join(root, ".git", "HEAD"):              true,
		root:                                             false,
		filepath.Dir(root):                               false,
		root + "-sibling/a.go":                           false,
		"relative/a.go":                                  false,
		filepath.Join(root, ".hearth", "config.toml"):    false,
		filepath.Join(root, ".git", "hooks", "pre-push"): false,
		filepath.Join(root, ".git", "config"):            false,
	} {
		err := ws.Writable(p)
		if (err == nil) != ok {
			t.Errorf("Writable(%s) = %v, want allowed %v", p, err, ok)
		}
		var pe *PathError
		if err != nil && !errors.As(err, &pe) {
			t.Errorf("Writable(%s): %T, want a *PathError", p, err)
		}
	}
}
