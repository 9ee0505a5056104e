package fs

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

// callCtx runs a tool with ctx, failing the test (rather than hanging the
// suite) when it has not returned 5 s after ctx's own end, or after 10 s.
func (k *kit) callCtx(t *testing.T, ctx context.Context, name string, args any) (string, error) {
	t.Helper()
	b, _ := json.Marshal(args)
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := k.tools[name].Run(ctx, tool.Call{ID: "c1", Args: b})
		done <- result{r.Output, err}
	}()
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	select {
	case r := <-done:
		return r.out, r.err
	case <-wait.Done():
		t.Fatalf("%s %s is still blocked after 10 s: %v", name, b, wait.Err())
	}
	return "", nil
}

// specials makes, in the kit's workspace, the files an attacker uses to
// hang or exhaust the tools: a named pipe nobody writes, a listening unix
// socket, a 4 GiB sparse file, and (as root) device nodes like /dev/zero
// and /dev/null. It returns the names made.
func specials(t *testing.T, k *kit) []string {
	t.Helper()
	names := []string{"pipe", "sock", "big"}
	pipe := filepath.Join(k.root, "pipe")
	if err := unix.Mkfifo(pipe, 0o666); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Release a reader stuck in open(2), should a test fail.
		if fd, err := unix.Open(pipe, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
			unix.Close(fd)
		}
	})
	l, err := net.Listen("unix", filepath.Join(k.root, "sock"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f, err := os.Create(filepath.Join(k.root, "big"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if os.Getuid() == 0 {
		for name, dev := range map[string]uint64{"zero": unix.Mkdev(1, 5), "null": unix.Mkdev(1, 3)} {
			if err := unix.Mknod(filepath.Join(k.root, name), unix.S_IFCHR|0o666, int(dev)); err != nil {
				t.Fatal(err)
			}
			names = append(names, name)
		}
	}
	return names
}

// Every file tool on every special file ends, quickly, with a clear
// answer; nothing is read whole. Before issue 11, write_file onto a named
// pipe blocked forever (cancelling did not end it), and write_file over a
// 4 GiB sparse file or a /dev/zero-like device read it into memory.
func TestSpecialFilesNeitherBlockNorExhaust(t *testing.T) {
	k := newKit(t, map[string]string{"a.txt": "needle\n", "sub/b.txt": "needle too\n"}, Limits{})
	made := specials(t, k)
	has := func(name string) bool {
		for _, n := range made {
			if n == name {
				return true
			}
		}
		return false
	}
	type tc struct {
		tool string
		args map[string]any
		want string // in the error, or in the output when ok
		ok   bool
	}
	var cases []tc
	for _, c := range []struct{ name, kind string }{
		{"pipe", "a named pipe (FIFO)"},
		{"sock", "a socket"},
		{"zero", "a character device"},
		{"null", "a character device"},
	} {
		if !has(c.name) {
			continue
		}
		cases = append(cases,
			tc{"read_file", map[string]any{"file_path": c.name}, c.name + " is " + c.kind + ", not a regular file", false},
			tc{"write_file", map[string]any{"file_path": c.name, "content": "x"}, c.name + " is " + c.kind + ", not a regular file: write_file only creates and replaces regular files", false},
			tc{"grep_search", map[string]any{"pattern": "x", "path": c.name}, c.kind, false},
			tc{"read_many_files", map[string]any{"paths": []string{c.name}}, c.kind, true},
		)
	}
	cases = append(cases,
		tc{"read_file", map[string]any{"file_path": "big"}, "big is 4.0 GiB (4294967296 bytes), over the 20.0 MiB limit", false},
		tc{"write_file", map[string]any{"file_path": "big", "content": "x"}, "big already exists and is 4.0 GiB, over the 20.0 MiB limit of the file tools: write_file does not replace a file this large", false},
		tc{"grep_search", map[string]any{"pattern": "x", "path": "big"}, "over the 20.0 MiB limit", false},
		tc{"grep_search", map[string]any{"pattern": "needle"}, "a.txt:1: needle\nsub/b.txt:1: needle too\n", true},
		tc{"grep_search", map[string]any{"pattern": "x*"}, "", true}, // matches every file it reads
		tc{"glob", map[string]any{"pattern": "**"}, "a.txt\n", true},
		tc{"read_many_files", map[string]any{"paths": []string{"*"}}, "--- a.txt ---\nneedle\n", true},
		tc{"list_directory", map[string]any{}, "pipe (a named pipe (FIFO), not read by the file tools)", true},
	)
	for _, c := range cases {
		t.Run(c.tool+" "+strings.Trim(string(must(json.Marshal(c.args))), "{}"), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			out, err := k.callCtx(t, context.Background(), c.tool, c.args)
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("%d MiB allocated", grew>>20)
			}
			if !c.ok {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("got %q, %v; want an error saying %q", out, err, c.want)
				}
				return
			}
			if err != nil || !strings.Contains(out, c.want) {
				t.Fatalf("got %q, %v; want output holding %q", out, err, c.want)
			}
			// What searches find of the special files: nothing.
			if c.tool == "glob" || c.tool == "grep_search" {
				for _, n := range made {
					if n == "big" {
						continue // a regular file, however large
					}
					if strings.Contains(out, n+"\n") || strings.Contains(out, n+":") {
						t.Errorf("%s listed %s:\n%s", c.tool, n, out)
					}
				}
			}
		})
	}
	// The special files are still what they were: nothing was written over
	// them.
	for _, n := range made {
		fi, err := os.Lstat(filepath.Join(k.root, n))
		if err != nil || (n == "big") != fi.Mode().IsRegular() || n == "big" && fi.Size() != 4<<30 {
			t.Errorf("%s was changed: %v %v", n, fi.Mode(), err)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// The tools end when their context does, and do nothing after.
func TestCancelledContext(t *testing.T) {
	k := newKit(t, project, Limits{})
	specials(t, k)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for name, args := range map[string]map[string]any{
		"grep_search":     {"pattern": "func"},
		"glob":            {"pattern": "**/*.go"},
		"read_many_files": {"paths": []string{"**/*.go"}},
		"write_file":      {"file_path": "new.txt", "content": "x"},
	} {
		_, err := k.callCtx(t, ctx, name, args)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: got %v, want context.Canceled", name, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(k.root, "new.txt")); err == nil {
		t.Error("write_file wrote after its context ended")
	}
}

// write_file's content is capped, like what the tools read.
func TestWriteFileContentCap(t *testing.T) {
	k := newKit(t, map[string]string{"small": "x\n", "large": strings.Repeat("y", 2000)}, Limits{MaxFileSize: 1024})
	for _, c := range []struct {
		path, content, want string
	}{
		{"new.txt", strings.Repeat("z", 1025), "content is 1.0 KiB, over the 1.0 KiB limit of write_file"},
		{"large", "x", "large already exists and is 2.0 KiB, over the 1.0 KiB limit"},
	} {
		if _, err := k.call(t, "write_file", map[string]any{"file_path": c.path, "content": c.content}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error saying %q", c.path, err, c.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(k.root, "large")); len(b) != 2000 {
		t.Error("the large file was replaced")
	}
	if _, err := k.call(t, "write_file", map[string]any{"file_path": "small", "content": strings.Repeat("z", 1024)}); err != nil {
		t.Errorf("content at the limit: %v", err)
	}
}

// Git's own files, at any depth, and .hearth are not written by
// write_file, whatever path leads there; reading them stays allowed.
func TestWriteFileGitAndHearth(t *testing.T) {
	k := newKit(t, map[string]string{
		".git/HEAD":           "ref: refs/heads/main\n",
		".git/config":         "[core]\n",
		"sub/.git/HEAD":       "ref: refs/heads/main\n",
		"vendor/lib/.git":     "gitdir: ../../.git/modules/lib\n",
		".hearth/config.toml": "approval_mode = \"default\"\n",
		"src/a.go":            "package a\n",
	}, Limits{})
	nogit := newKit(t, map[string]string{"src/a.go": "package a\n"}, Limits{})
	if err := os.Symlink(".git", filepath.Join(k.root, "gitlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(k.root, ".git", "config"), filepath.Join(k.root, "cfglink")); err != nil {
		t.Fatal(err)
	}
	const git, hearth = "git's own files", "Hearth's project config"
	for _, c := range []struct {
		k          *kit
		path, rule string
	}{
		{k, ".git/commondir", git}, // git would read another repository's config (core.fsmonitor…)
		{k, ".git/config", git},
		{k, ".git/hooks/pre-commit", git},
		{k, ".git/info/attributes", git},
		{k, "sub/.git/config", git},
		{k, "sub/.git/commondir", git},
		{k, "vendor/lib/.git", git},
		{k, "src/.git", git},
		{k, "new/dir/.git/config", git},
		{k, "gitlink/config", git},
		{k, "cfglink", git},
		{nogit, ".git", git}, // a .git file ("gitdir: …") where there is no repository
		{nogit, ".git/config", git},
		{k, ".hearth/config.toml", hearth},
		{k, ".hearth", hearth},
		{k, ".GIT/config", ""}, // another name on Linux
		{k, ".gitignore", ""},
		{k, "sub/.hearth/config.toml", hearth}, // a workspace inside this one (maybe trusted) has its own
	} {
		content := "[core]\n\tfsmonitor = /tmp/pwn\n"
		_, err := c.k.call(t, "write_file", map[string]any{"file_path": c.path, "content": content})
		if c.rule == "" {
			if err != nil {
				t.Errorf("%s: %v", c.path, err)
			}
			continue
		}
		var pe *sandbox.PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.rule) || !strings.Contains(err.Error(), "Ask the user") {
			t.Errorf("%s: got %v, want a refusal saying %q and to ask the user", c.path, err, c.rule)
		}
		if b, _ := os.ReadFile(filepath.Join(c.k.root, c.path)); strings.Contains(string(b), "fsmonitor") {
			t.Errorf("%s was written", c.path)
		}
	}
	for _, p := range []string{".git/config", "sub/.git/HEAD", "vendor/lib/.git", ".hearth/config.toml"} {
		if _, err := k.call(t, "read_file", map[string]any{"file_path": p}); err != nil {
			t.Errorf("read %s: %v", p, err)
		}
	}
}

// secretHome is a home directory holding credentials, with a workspace in
// it whose symlinks lead to them, and file tools whose workspace keeps the
// usual secret locations: rooted at the project (the home directory a
// read-only directory), or at the home directory itself.
func secretHome(t *testing.T) (home string, proj, atHome *kit) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(base, "home")
	for p, c := range map[string]string{
		".ssh/id_rsa":          "-----BEGIN PRIVATE KEY----- needle",
		".aws/credentials":     "aws_secret_access_key = needle",
		".netrc":               "machine x password needle",
		".config/gh/hosts.yml": "oauth_token: needle",
		"notes.txt":            "needle in the notes",
		"proj/a.go":            "package a // needle",
	} {
		full := filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"proj/key":    filepath.Join(home, ".ssh", "id_rsa"),
		"proj/ssh":    filepath.Join(home, ".ssh"),
		"proj/home":   home,
		"proj/netrc":  "../.netrc",
		"proj/aws.go": filepath.Join(home, ".aws", "credentials"),
	} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(root string, readOnly ...string) *kit {
		ws, err := sandbox.New(root, readOnly...)
		if err != nil {
			t.Fatal(err)
		}
		ws = ws.WithSecrets(sandbox.SecretLocations(home))
		k := &kit{root: ws.Root(), ws: ws, seen: tool.NewSeen(), tools: map[string]tool.Tool{}}
		for _, tl := range Tools(ws, k.seen, Limits{}) {
			k.tools[tl.Spec().Name] = tl
		}
		return k
	}
	return home, mk(filepath.Join(home, "proj"), home), mk(home)
}

// No file tool reads a secret location, by whatever path: a symlink in the
// workspace, a read-only directory holding the home directory, a workspace
// rooted at home, a glob or a search.
func TestSecretsKeptFromFileTools(t *testing.T) {
	home, proj, atHome := secretHome(t)
	const rule = "secret location the user has kept from tools"
	for _, c := range []struct {
		k    *kit
		tool string
		args map[string]any
	}{
		{proj, "read_file", map[string]any{"file_path": "key"}},
		{proj, "read_file", map[string]any{"file_path": "ssh/id_rsa"}},
		{proj, "read_file", map[string]any{"file_path": "netrc"}},
		{proj, "read_file", map[string]any{"file_path": "home/.aws/credentials"}},
		{proj, "read_file", map[string]any{"file_path": filepath.Join(home, ".ssh", "id_rsa")}},
		{proj, "read_file", map[string]any{"file_path": "../.config/gh/hosts.yml"}},
		{proj, "read_many_files", map[string]any{"paths": []string{"key"}}},
		{proj, "write_file", map[string]any{"file_path": "key", "content": "x"}},
		{proj, "write_file", map[string]any{"file_path": "ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker"}},
		{proj, "list_directory", map[string]any{"path": "ssh"}},
		{proj, "grep_search", map[string]any{"pattern": "needle", "path": "key"}},
		{proj, "grep_search", map[string]any{"pattern": "needle", "path": filepath.Join(home, ".aws")}},
		{proj, "glob", map[string]any{"pattern": "*", "path": filepath.Join(home, ".ssh")}},
		{atHome, "read_file", map[string]any{"file_path": ".ssh/id_rsa"}},
		{atHome, "write_file", map[string]any{"file_path": ".ssh/authorized_keys", "content": "ssh-ed25519 AAAA attacker"}},
		{atHome, "list_directory", map[string]any{"path": ".aws"}},
	} {
		out, err := c.k.callCtx(t, context.Background(), c.tool, c.args)
		var pe *sandbox.PathError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), rule) {
			t.Errorf("%s %v: got %q, %v; want a refusal saying %q", c.tool, c.args, out, err, rule)
		}
	}
	// Walks pass secret locations by: searching, globbing, reading by
	// pattern and listing the home directory (as the workspace, or as a
	// read-only directory) shows none of their content or files.
	for _, c := range []struct {
		k    *kit
		tool string
		args map[string]any
		want string
	}{
		{proj, "grep_search", map[string]any{"pattern": "needle"}, "a.go:1: package a // needle"},
		{proj, "grep_search", map[string]any{"pattern": "needle", "path": home}, "notes.txt:1: needle in the notes"},
		{atHome, "grep_search", map[string]any{"pattern": "needle"}, "notes.txt:1: needle in the notes"},
		{proj, "glob", map[string]any{"pattern": "**", "path": home}, "notes.txt"},
		{atHome, "glob", map[string]any{"pattern": "**"}, "notes.txt"},
		{atHome, "glob", map[string]any{"pattern": "**/*credentials*"}, "No files match"},
		{proj, "read_many_files", map[string]any{"paths": []string{"**"}}, "package a // needle"},
		{atHome, "read_many_files", map[string]any{"paths": []string{"**"}}, "needle in the notes"},
		{atHome, "list_directory", map[string]any{}, "(3 secret locations the user keeps from tools not shown)"},
		{proj, "list_directory", map[string]any{"path": home}, "secret locations the user keeps from tools not shown"},
		{atHome, "list_directory", map[string]any{"path": ".config"}, "(1 secret locations the user keeps from tools not shown)"},
	} {
		out, err := c.k.callCtx(t, context.Background(), c.tool, c.args)
		if err != nil || !strings.Contains(out, c.want) {
			t.Errorf("%s %v: got %q, %v; want output holding %q", c.tool, c.args, out, err, c.want)
			continue
		}
		if pat, ok := c.args["pattern"].(string); ok {
			out = strings.ReplaceAll(out, pat, "") // "No files match <pattern>"
		}
		for _, leak := range []string{"PRIVATE KEY", "aws_secret", "password", "oauth_token", "id_rsa", "credentials", ".ssh", ".aws", ".netrc", "hosts.yml"} {
			if strings.Contains(out, leak) {
				t.Errorf("%s %v shows %q:\n%s", c.tool, c.args, leak, out)
			}
		}
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".ssh", "authorized_keys")); len(b) > 0 {
		t.Error("authorized_keys was written")
	}
}
