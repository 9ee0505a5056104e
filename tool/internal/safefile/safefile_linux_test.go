package safefile

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
)

// unblockFIFO opens the writing end of a named pipe without blocking, so
// that a reader stuck in open(2) (a failing test) is released.
func unblockFIFO(p string) {
	if fd, err := unix.Open(p, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	}
}

// Special files in the workspace, as an attacker (or a stray command)
// leaves them: each is refused with what it is, without being opened, and
// nothing blocks.
func TestOpenSpecialFiles(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "hello\n", "dir/b.txt": "b\n"})
	root := ws.Root()
	fifo := filepath.Join(root, "fifo")
	if err := unix.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unblockFIFO(fifo) })
	// A socket with a listener: opening it would fail (ENXIO), but it is
	// not even tried.
	sock := filepath.Join(root, "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := os.Symlink("a.txt", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name, path string
		want       string // "" for success; else what the error says
	}
	cases := []tc{
		{"regular", "a.txt", ""},
		{"nested", "dir/b.txt", ""},
		{"fifo", "fifo", "a named pipe (FIFO), not a regular file"},
		{"socket", "sock", "a socket, not a regular file"},
		{"directory", "dir", "a directory"},
		{"root", ".", "a directory"},
		{"symlink", "link", "a symbolic link"}, // Open is given resolved paths: a symlink is one swapped in
		{"missing", "nope", "no such file"},
		{"missing dir", "nodir/x", "no such file"},
		{"under a file", "a.txt/x", "not a directory"},
	}
	if os.Getuid() == 0 {
		// Device nodes, as root can make them: one like /dev/zero
		// (endless) and one like /dev/null; and a block device.
		for name, dev := range map[string]struct {
			mode uint32
			dev  uint64
		}{
			"zero":  {unix.S_IFCHR | 0o666, unix.Mkdev(1, 5)},
			"null":  {unix.S_IFCHR | 0o666, unix.Mkdev(1, 3)},
			"block": {unix.S_IFBLK | 0o600, unix.Mkdev(7, 0)},
		} {
			if err := unix.Mknod(filepath.Join(root, name), dev.mode, int(dev.dev)); err != nil {
				t.Fatalf("mknod %s: %v", name, err)
			}
		}
		cases = append(cases,
			tc{"char device like /dev/zero", "zero", "a character device, not a regular file"},
			tc{"char device like /dev/null", "null", "a character device, not a regular file"},
			tc{"block device", "block", "a block device, not a regular file"})
	} else {
		t.Log("not root: device nodes not tested")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(root, c.path)
			var data []byte
			var err error
			noHang(t, "ReadFile "+c.path, func() { data, _, err = ReadFile(ws, p, 1<<20) })
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(data) == 0 {
					t.Error("nothing read")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %q, %v; want an error saying %q", data, err, c.want)
			}
			if c.name == "missing" && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%v is not fs.ErrNotExist", err)
			}
		})
	}
	// OpenDir: directories only.
	for path, want := range map[string]string{".": "", "dir": "", "a.txt": "a regular file, not a directory", "fifo": "not a directory", "nope": "no such file"} {
		var f *Dir
		var err error
		noHang(t, "OpenDir "+path, func() { f, err = OpenDir(ws, filepath.Join(root, path)) })
		if want == "" {
			if err != nil {
				t.Errorf("OpenDir(%s): %v", path, err)
				continue
			}
			if _, err := f.ReadDir(-1); err != nil {
				t.Errorf("OpenDir(%s): ReadDir: %v", path, err)
			}
			f.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenDir(%s): got %v, want an error saying %q", path, err, want)
		}
	}
}

// A path checked by Resolve, then a directory of it swapped for a symlink
// (to a secret location inside the workspace, or outside it) before the
// open: the open does not follow it.
func TestOpenSwappedDirectory(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	outside := filepath.Join(base, "outside")
	for p, c := range map[string]string{
		"home/.ssh/id_rsa": "PRIVATE KEY",
		"home/d/id_rsa":    "harmless",
		"home/d/x":         "x",
		"outside/id_rsa":   "OUTSIDE",
	} {
		full := filepath.Join(base, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"secret": filepath.Join(home, ".ssh"), "outside": outside} {
		t.Run(name, func(t *testing.T) {
			ws, err := sandbox.New(home)
			if err != nil {
				t.Fatal(err)
			}
			ws = ws.WithSecrets(sandbox.SecretLocations(home))
			p, err := ws.Resolve("d/id_rsa", sandbox.Read)
			if err != nil {
				t.Fatal(err)
			}
			d := filepath.Join(home, "d")
			if err := os.Rename(d, d+"."+name); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, d); err != nil {
				t.Fatal(err)
			}
			defer func() {
				os.Remove(d)
				os.Rename(d+"."+name, d)
			}()
			data, _, err := ReadFile(ws, p, 1<<20)
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("got %q, %v; want a refusal saying a symbolic link appeared", data, err)
			}
			if _, err := OpenDir(ws, d); err == nil {
				t.Error("OpenDir followed the swapped-in symlink")
			}
		})
	}
	// Without a swap, the kernel's name of the directory is checked too:
	// a secret location and a path outside are refused.
	ws, _ := sandbox.New(home)
	ws = ws.WithSecrets(sandbox.SecretLocations(home))
	for p, want := range map[string]string{
		filepath.Join(home, ".ssh", "id_rsa"): "secret location",
		filepath.Join(home, ".ssh"):           "secret location",
		filepath.Join(outside, "id_rsa"):      "outside the workspace",
		"relative":                            "not an absolute path",
	} {
		if _, _, err := ReadFile(ws, p, 1<<20); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%s): %v, want an error saying %q", p, err, want)
		}
	}
	if _, err := OpenDir(ws, filepath.Join(home, ".ssh")); err == nil || !strings.Contains(err.Error(), "secret location") {
		t.Errorf("OpenDir(.ssh): %v", err)
	}
}

// A Dir opens files by its descriptor: names only (no path, no ".."), not
// secret ones, and in the directory it opened even once that has been
// swapped for a symlink to a secret location. It stays open while a
// reference is held.
func TestDir(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(base, "home")
	for p, c := range map[string]string{".netrc": "password", "notes": "notes", "d/f": "mine", ".ssh/f": "PRIVATE"} {
		full := filepath.Join(home, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.New(home)
	if err != nil {
		t.Fatal(err)
	}
	ws = ws.WithSecrets(sandbox.SecretLocations(home))
	d, err := OpenDir(ws, home)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"notes":       "",
		".netrc":      "secret location",
		"..":          "not a name in the directory",
		"d/f":         "not a name in the directory",
		"":            "not a name in the directory",
		".ssh":        "secret location",
		"d":           "a directory, not a regular file",
		"missing":     "no such file",
		"../home/d/f": "not a name in the directory",
	} {
		data, _, err := d.ReadFile(name, 1<<20)
		if want == "" {
			if err != nil || string(data) != "notes" {
				t.Errorf("ReadFile(%q) = %q, %v", name, data, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadFile(%q): got %q, %v; want an error saying %q", name, data, err, want)
		}
	}
	d.Close()

	sub, err := OpenDir(ws, filepath.Join(home, "d"))
	if err != nil {
		t.Fatal(err)
	}
	sub.Retain()
	sub.Close() // one reference left
	// Swap the directory for a symlink to the secret location: the open
	// Dir still reads its own directory.
	if err := os.Rename(filepath.Join(home, "d"), filepath.Join(home, "d.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "d")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := sub.ReadFile("f", 1<<20); err != nil || string(data) != "mine" {
		t.Errorf("after the swap: %q, %v; want the opened directory's file", data, err)
	}
	sub.Close()
	if _, err := sub.ReadDir(-1); err == nil {
		t.Error("the directory is still open after its last Close")
	}
}
