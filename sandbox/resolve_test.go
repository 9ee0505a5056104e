package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRealPath(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(base, "ws")
	out := filepath.Join(base, "out", "deep")
	for _, d := range []string{ws, out, filepath.Join(ws, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(out, filepath.Join(ws, "esc")))
	must(os.Symlink("sub", filepath.Join(ws, "rel")))
	must(os.Symlink("/", filepath.Join(ws, "root")))
	must(os.Symlink("loop2", filepath.Join(ws, "loop1")))
	must(os.Symlink("loop1", filepath.Join(ws, "loop2")))
	must(os.Symlink(filepath.Join(out, "missing"), filepath.Join(ws, "dangling")))

	for _, tc := range []struct {
		p      string
		follow bool
		want   string
	}{
		{"a.txt", true, filepath.Join(ws, "a.txt")},
		{"sub/../a", true, filepath.Join(ws, "a")},
		{"esc", true, out},
		{"esc", false, filepath.Join(ws, "esc")},
		{"esc/", false, out},
		{"esc/x/y", true, filepath.Join(out, "x", "y")},
		// ".." after a symlink is the parent of its target, as the kernel
		// sees it, not the directory holding the link.
		{"esc/..", true, filepath.Dir(out)},
		{"esc/../..", true, base},
		{"rel/../a", true, filepath.Join(ws, "a")},
		{"root", true, "/"},
		{"root/etc", true, "/etc"},
		{"dangling", true, filepath.Join(out, "missing")},
		{"dangling", false, filepath.Join(ws, "dangling")},
		{"../../../../../../..", true, "/"},
		{"/", true, "/"},
		{"missing/../esc", true, out},
	} {
		got, err := RealPath(ws, tc.p, tc.follow)
		if err != nil || got != tc.want {
			t.Errorf("RealPath(%q, follow=%v) = %q, %v; want %q", tc.p, tc.follow, got, err, tc.want)
		}
	}
	if _, err := RealPath(ws, "loop1", true); err == nil {
		t.Error("a symlink loop resolved")
	}
	if _, err := RealPath(ws, "a\x00b", true); err == nil {
		t.Error("a NUL byte was accepted")
	}
	if _, err := RealPath("relative", "x", true); err == nil {
		t.Error("a relative directory was accepted")
	}
}
