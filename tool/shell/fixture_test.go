package shell

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/sandbox"
)

// TestMain lets the test binary act as the sandbox launcher, as hearth's
// main does (sandbox's init already does it; this documents it).
func TestMain(m *testing.M) {
	sandbox.MaybeRunLauncher()
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "hearth-test-") {
		helperMain(os.Args[1], os.Args[2:])
		return
	}
	os.Exit(m.Run())
}

// fixture is a throwaway machine for one test: a fake filesystem root
// holding a fake home directory holding the workspace, as on a real
// machine (/home/user/project), plus sentinel files everywhere outside the
// workspace. The policy is pointed at the fake root and home, so that real
// executions aimed at "the root" or "the home directory" hit these, never
// the real ones.
type fixture struct {
	base string // holds everything
	root string // stands in for /
	home string // stands in for ~ (root/home/user)
	ws   string // the workspace (home/project)
	out  string // a directory outside the workspace (root/tmp/outside)
	tool *Tool

	mu  sync.Mutex
	ran [][]string // programs the dry-run executor was asked to run
}

type fixtureOpt func(*Config)

// newFixture builds the fake machine and the tool. With dry, programs are
// never started: the executor records them and succeeds silently.
func newFixture(t *testing.T, dry bool, opts ...fixtureOpt) *fixture {
	t.Helper()
	// Not t.TempDir: its name comes from the test's, and hostile test
	// names hold shell syntax ("&&", "$HOME", "{home}").
	dir, err := os.MkdirTemp("", "hearth-shell-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{base: base, root: filepath.Join(base, "root")}
	f.home = filepath.Join(f.root, "home", "user")
	f.ws = filepath.Join(f.home, "project")
	f.out = filepath.Join(f.root, "tmp", "outside")
	files := map[string]string{
		"etc/passwd":                    "root:x:0:0::/root:/bin/sh\n",
		"etc/hosts":                     "127.0.0.1 localhost\n",
		"usr/bin/tool":                  "#!/bin/sh\n",
		"bin/sh":                        "binary\n",
		"dev/sda":                       "disk\n",
		"home/user/.bashrc":             "alias ll='ls -l'\n",
		"home/user/.ssh/id_rsa":         "PRIVATE KEY\n",
		"home/user/Documents/notes.txt": "notes\n",
		"home/user/project/a.txt":       "hello\n",
		"tmp/outside/victim":            "keep me\n",
	}
	for p, content := range files {
		full := filepath.Join(f.root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.New(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + f.home,
		"LANG=C.UTF-8",
		"OPENAI_API_KEY=sk-test-secret",
		"GITHUB_TOKEN=ghp_testsecret",
		"HEARTH_API_TOKEN=hearth-secret",
		"AWS_SECRET_ACCESS_KEY=aws-secret",
		"MY_SERVICE_PASSWORD=hunter2",
		"DATABASE_URL=postgres://user:pw@localhost/db",
		"INNOCENT=visible",
	}
	cfg := Config{
		Workspace: ws,
		// Generous: a loaded machine (the race stage, with the rest of
		// the suite) can take seconds to start a python; tests of the
		// timeout set their own.
		Timeout:   time.Minute,
		Env:       env,
		Home:      f.home,
		FSRoot:    f.root,
		TempRoot:  base,
		KillGrace: 500 * time.Millisecond,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, o := range opts {
		o(&cfg)
	}
	tl, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	if dry {
		tl.execHook = func(argv []string, dir string) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.ran = append(f.ran, append([]string(nil), argv...))
			return nil
		}
	}
	f.tool = tl
	return f
}

// expand replaces the placeholders {root}, {home}, {ws}, {out} in s.
func (f *fixture) expand(s string) string {
	return strings.NewReplacer("{root}", f.root, "{home}", f.home, "{ws}", f.ws, "{out}", f.out, "{tmp}", f.tool.tmp).Replace(s)
}

// run runs a command in the workspace root.
func (f *fixture) run(t *testing.T, cmd string) outcome {
	t.Helper()
	return f.tool.run(context.Background(), f.expand(cmd), f.ws, nil)
}

// snapshot fingerprints everything outside the workspace and the private
// temp directory: what no command may touch.
func (f *fixture) snapshot(t *testing.T) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(f.base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == f.ws || p == f.tool.tmp {
			return fs.SkipDir
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
		if info.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			line += " -> " + target
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

// setup runs a script of the test's own with /bin/sh, in the workspace,
// outside the tool: to build the symlinks and scripts a row needs. Setup
// scripts only ever create things inside the workspace.
func (f *fixture) setup(t *testing.T, script string) {
	t.Helper()
	if script == "" {
		return
	}
	cmd := exec.Command("/bin/sh", "-ec", f.expand(script))
	cmd.Dir = f.ws
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("setup %q: %v\n%s", script, err, out)
	}
}
