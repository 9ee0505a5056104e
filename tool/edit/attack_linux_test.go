package edit

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// runCtx runs the tool with ctx, failing the test (rather than hanging the
// suite) when it has not returned within 10 s.
func (h *harness) runCtx(t *testing.T, ctx context.Context, args map[string]any) (tool.Result, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   tool.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.tool.Run(ctx, tool.Call{ID: "call_1", Args: raw})
		done <- result{r, err}
	}()
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	select {
	case r := <-done:
		return r.r, r.err
	case <-wait.Done():
		t.Fatalf("edit %s is still blocked after 10 s: %v", raw, wait.Err())
	}
	return tool.Result{}, nil
}

// Special files in the workspace: the edit tool says what they are and
// leaves them alone, without blocking (a named pipe nobody writes) or
// reading them whole (a 4 GiB sparse file, a device like /dev/zero).
func TestEditSpecialFiles(t *testing.T) {
	h := newHarness(t, Options{})
	pipe := filepath.Join(h.dir, "pipe")
	if err := unix.Mkfifo(pipe, 0o666); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if fd, err := unix.Open(pipe, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		}
	})
	l, err := net.Listen("unix", filepath.Join(h.dir, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := os.Create(filepath.Join(h.dir, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cases := map[string]string{
		"pipe": "pipe is a named pipe (FIFO), not a regular file: the edit tool changes regular text files only",
		"sock": "sock is a socket, not a regular file",
		"big":  "big is 4.0 GiB, larger than the 32.0 MiB the edit tool handles: it is not read, and not changed",
	}
	if os.Getuid() == 0 {
		for name, dev := range map[string]uint64{"zero": unix.Mkdev(1, 5), "null": unix.Mkdev(1, 3)} {
			if err := unix.Mknod(filepath.Join(h.dir, name), unix.S_IFCHR|0o666, int(dev)); err != nil {
				t.Fatal(err)
			}
			cases[name] = name + " is a character device, not a regular file"
		}
	}
	for name, want := range cases {
		for _, old := range []string{"x", ""} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := h.runCtx(t, context.Background(), edit(name, old, "y"))
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s (old_string %q): got %v, want an error saying %q", name, old, err, want)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("%s: %d MiB allocated", name, grew>>20)
			}
		}
		fi, err := os.Lstat(filepath.Join(h.dir, name))
		if err != nil || (name == "big") != fi.Mode().IsRegular() {
			t.Errorf("%s was replaced: %v %v", name, fi.Mode(), err)
		}
	}
}

// The arguments, and the file an edit makes, are capped.
func TestEditCaps(t *testing.T) {
	h := newHarness(t, Options{MaxFileSize: 1024})
	p := h.write(t, "a.txt", "x\nx\nx\nx\n", 0o644)
	h.seen.Record(p, []byte("x\nx\nx\nx\n"))
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{edit("a.txt", "x", strings.Repeat("y", 1025)), "new_string is 1.0 KiB, over the 1.0 KiB the edit tool handles"},
		{edit("a.txt", strings.Repeat("x", 1025), "y"), "old_string is 1.0 KiB, over the 1.0 KiB"},
		{edit("new.txt", "", strings.Repeat("y", 1025)), "new_string is 1.0 KiB"},
		{map[string]any{"file_path": "a.txt", "old_string": "x", "new_string": strings.Repeat("y", 300), "expected_replacements": 4},
			"a.txt would be 1.2 KiB after the edit, over the 1.0 KiB the edit tool handles: it was not changed"},
	} {
		if _, err := h.run(t, c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want an error saying %q", err, c.want)
		}
	}
	if got := h.read(t, "a.txt"); got != "x\nx\nx\nx\n" {
		t.Errorf("a.txt was changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(h.dir, "new.txt")); err == nil {
		t.Error("new.txt was made")
	}
}

// An edit whose context has ended writes nothing.
func TestEditCancelled(t *testing.T) {
	h := newHarness(t, Options{})
	h.write(t, "a.go", "package a\n", 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, args := range []map[string]any{edit("a.go", "package a", "package b"), edit("new.go", "", "package n\n")} {
		if _, err := h.runCtx(t, ctx, args); !errors.Is(err, context.Canceled) {
			t.Errorf("%v: got %v, want context.Canceled", args, err)
		}
	}
	if h.read(t, "a.go") != "package a\n" {
		t.Error("a.go was edited")
	}
	if _, err := os.Lstat(filepath.Join(h.dir, "new.go")); err == nil {
		t.Error("new.go was made")
	}
}

// Git's own files (at any depth, directory or file) and .hearth are not
// edited, by whatever path; .GIT is another name on Linux.
func TestEditGitAndHearth(t *testing.T) {
	h := newHarness(t, Options{})
	files := map[string]string{
		".git/config":         "[core]\n\tbare = false\n",
		"sub/.git/config":     "[core]\n\tbare = false\n",
		"vendor/lib/.git":     "gitdir: ../../.git/modules/lib\n",
		".hearth/config.toml": "approval_mode = \"default\"\n",
		".GIT/config":         "[core]\n\tbare = false\n",
	}
	for name, c := range files {
		p := h.write(t, name, c, 0o644)
		h.seen.Record(p, []byte(c))
	}
	if err := os.Symlink(".git/config", filepath.Join(h.dir, "cfglink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/.git", filepath.Join(h.dir, "gitdir")); err != nil {
		t.Fatal(err)
	}
	nogit := newHarness(t, Options{})
	const git, hearth = "git's own files", "Hearth's project config"
	for _, c := range []struct {
		h          *harness
		args       map[string]any
		rule, file string
	}{
		{h, edit(".git/config", "bare = false", "fsmonitor = /tmp/pwn"), git, ".git/config"},
		{h, edit(".git/commondir", "", "/tmp/evil\n"), git, ".git/commondir"},
		{h, edit(".git/hooks/pre-commit", "", "#!/bin/sh\n"), git, ".git/hooks/pre-commit"},
		{h, edit("sub/.git/config", "bare = false", "fsmonitor = /tmp/pwn"), git, "sub/.git/config"},
		{h, edit("vendor/lib/.git", "../../.git/modules/lib", "/tmp/evil"), git, "vendor/lib/.git"},
		{h, edit("cfglink", "bare = false", "fsmonitor = /tmp/pwn"), git, ".git/config"},
		{h, edit("gitdir/commondir", "", "/tmp/evil\n"), git, "sub/.git/commondir"},
		{nogit, edit(".git", "", "gitdir: /tmp/evil\n"), git, ".git"},
		{nogit, edit("src/.git", "", "gitdir: /tmp/evil\n"), git, "src/.git"},
		{h, edit(".hearth/config.toml", "default", "yolo"), hearth, ".hearth/config.toml"},
		{h, edit(".hearth/new.toml", "", "approval_mode = \"yolo\"\n"), hearth, ".hearth/new.toml"},
	} {
		_, err := c.h.run(t, c.args)
		var pe *sandbox.PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.rule) || !strings.Contains(err.Error(), "Ask the user") {
			t.Errorf("%v: got %v, want a refusal saying %q and to ask the user", c.args, err, c.rule)
		}
		if b, _ := os.ReadFile(filepath.Join(c.h.dir, c.file)); strings.Contains(string(b), "evil") || strings.Contains(string(b), "pwn") || strings.Contains(string(b), "yolo") {
			t.Errorf("%s was written: %q", c.file, b)
		}
	}
	if _, err := h.run(t, edit(".GIT/config", "bare = false", "bare = true")); err != nil {
		t.Errorf(".GIT/config: %v", err)
	}
}

// A symlink in the workspace to a secret location: the edit tool neither
// reads nor writes through it.
func TestEditSecrets(t *testing.T) {
	home, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_rsa")
	if err := os.MkdirAll(filepath.Dir(key), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, []byte("PRIVATE KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, "proj")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"key": key, "ssh": filepath.Dir(key)} {
		if err := os.Symlink(target, filepath.Join(proj, link)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.New(proj)
	if err != nil {
		t.Fatal(err)
	}
	ws = ws.WithSecrets(sandbox.SecretLocations(home))
	h := &harness{dir: ws.Root(), ws: ws, seen: tool.NewSeen()}
	h.tool = New(ws, h.seen, Options{})
	for _, args := range []map[string]any{
		edit("key", "PRIVATE KEY", "x"),
		edit("ssh/id_rsa", "PRIVATE KEY", "x"),
		edit("ssh/authorized_keys", "", "ssh-ed25519 AAAA attacker\n"),
		edit(filepath.Join(home, "proj", "..", ".ssh", "config"), "", "Host *\n"),
	} {
		_, err := h.run(t, args)
		if err == nil || !strings.Contains(err.Error(), "secret location the user has kept from tools") {
			t.Errorf("%v: got %v, want a refusal naming the secret location", args, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(key))
	if len(entries) != 1 {
		t.Errorf("the secret directory holds %d entries", len(entries))
	}
	if b, _ := os.ReadFile(key); string(b) != "PRIVATE KEY\n" {
		t.Errorf("the key was changed: %q", b)
	}
}
