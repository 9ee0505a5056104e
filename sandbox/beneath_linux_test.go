package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// OpenDirBeneath, and the component walk it falls back on without openat2,
// open directories below the root, never through a symlink, and make the
// missing ones below it too.
func TestOpenDirBeneath(t *testing.T) {
	walk := func(root, rel string, create bool) (*os.File, error) {
		rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		defer unix.Close(rfd)
		fd, err := walkDir(rfd, filepath.Clean(rel), create)
		if err != nil {
			return nil, beneathErr(err)
		}
		return os.NewFile(uintptr(fd), rel), nil
	}
	for name, open := range map[string]func(string, string, bool) (*os.File, error){"openat2": OpenDirBeneath, "walk": walk} {
		t.Run(name, func(t *testing.T) {
			base := t.TempDir()
			root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
			for _, d := range []string{filepath.Join(root, "a", "b"), outside} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			os.Symlink(outside, filepath.Join(root, "out"))
			os.Symlink("a", filepath.Join(root, "in"))
			os.WriteFile(filepath.Join(root, "file"), nil, 0o644)
			for _, tc := range []struct {
				rel    string
				create bool
				want   string // the directory opened, relative to root; "" when refused
				err    string
			}{
				{".", false, ".", ""},
				{"a/b", false, "a/b", ""},
				{"a/new/deeper", true, "a/new/deeper", ""},
				{"a/missing", false, "", "no such file"},
				{"out", false, "", "symbolic link"},
				{"out/x", true, "", "symbolic link"},
				{"in/b", false, "", "symbolic link"},
				{"file", false, "", "not a directory"},
				{"file/x", true, "", "not a directory"},
			} {
				f, err := open(root, tc.rel, tc.create)
				if tc.want == "" {
					if err == nil || !strings.Contains(err.Error(), tc.err) {
						t.Errorf("%s: got %v, want an error saying %q", tc.rel, err, tc.err)
					}
					if f != nil {
						f.Close()
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", tc.rel, err)
					continue
				}
				at, err := FilePath(f)
				f.Close()
				if err != nil || at != filepath.Join(root, tc.want) {
					t.Errorf("%s: opened %s (%v), want %s", tc.rel, at, err, filepath.Join(root, tc.want))
				}
			}
			if entries, _ := os.ReadDir(outside); len(entries) > 0 {
				t.Errorf("made %s outside the root", entries[0].Name())
			}
		})
	}
	for _, rel := range []string{"..", "../x", "/etc"} {
		if _, err := OpenDirBeneath(t.TempDir(), rel, true); err == nil {
			t.Errorf("%s: opened", rel)
		}
	}
}
