package shell

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// roReason is what the caller says about a read-only workspace.
const roReason = "this workspace is read-only (its trust level): nothing in it may be changed; " +
	"the user can run `hearth workspaces trust /path trusted` to allow changes"

// readOnlyWorkspace makes the fixture's workspace read-only.
func readOnlyWorkspace(c *Config) { c.Workspace = c.Workspace.WithReadOnlyRoot(roReason) }

// treeSnapshot fingerprints everything under dir: names, kinds, modes,
// sizes, contents and link targets.
func treeSnapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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

// The policy of a read-only workspace: every change inside it refused, by
// its own rule and with the reason; reading, and working there, allowed;
// $TMPDIR writable; the rest as before.
func TestPolicyReadOnlyWorkspace(t *testing.T) {
	p, ws := testPolicy(t)
	tmp := p.Writable[0]
	p.ReadOnlyWorkspace = roReason
	for _, tc := range []struct {
		argv []string
		dir  string
		rule string
	}{
		{[]string{"rm", "README"}, ws, RuleReadOnly},
		{[]string{"rm", "-rf", "src"}, ws, RuleReadOnly},
		{[]string{"rm", "-rf", "."}, ws, RuleReadOnly},
		{[]string{"rm", "-rf", ws}, "/", RuleReadOnly},
		{[]string{"rmdir", "src"}, ws, RuleReadOnly},
		{[]string{"mv", "a", "b"}, ws, RuleReadOnly},
		{[]string{"mv", "a", tmp}, ws, RuleReadOnly}, // the source goes
		{[]string{"cp", "a", "b"}, ws, RuleReadOnly},
		{[]string{"cp", "/etc/hosts", "."}, ws, RuleReadOnly},
		{[]string{"cp", "-t", "src", "a"}, ws, RuleReadOnly},
		{[]string{"install", "a", "src/b"}, ws, RuleReadOnly},
		{[]string{"ln", "-s", "a", "b"}, ws, RuleReadOnly},
		{[]string{"touch", "n"}, ws, RuleReadOnly},
		{[]string{"touch", "n"}, filepath.Join(ws, "src"), RuleReadOnly},
		{[]string{"mkdir", "-p", "d/e"}, ws, RuleReadOnly},
		{[]string{"truncate", "-s", "0", "a"}, ws, RuleReadOnly},
		{[]string{"tee", "f.txt"}, ws, RuleReadOnly},
		{[]string{"tee", "-a", filepath.Join(ws, "f.txt")}, "/", RuleReadOnly},
		{[]string{"chmod", "644", "a"}, ws, RuleReadOnly},
		{[]string{"sed", "-i", "s/a/b/", "a"}, ws, RuleReadOnly},
		{[]string{"perl", "-pi", "-e", "s/a/b/", "a"}, ws, RuleReadOnly},
		{[]string{"sort", "-o", "a", "a"}, ws, RuleReadOnly},
		{[]string{"dd", "if=/dev/zero", "of=disk.img"}, ws, RuleReadOnly},
		{[]string{"tar", "xf", "a.tar", "-C", "src"}, ws, RuleReadOnly},
		{[]string{"unzip", "a.zip", "-d", "src"}, ws, RuleReadOnly},
		{[]string{"curl", "-o", "page.html", "u"}, ws, RuleReadOnly},
		{[]string{"find", ".", "-delete"}, ws, RuleReadOnly},
		{[]string{"bash", "-c", "echo x > f"}, ws, RuleReadOnly},
		{[]string{"env", "rm", "a"}, ws, RuleReadOnly},
		{[]string{"timeout", "5", "mv", "a", "b"}, ws, RuleReadOnly},
		// Reading, and working anywhere in the workspace.
		{[]string{"cat", "a"}, ws, ""},
		{[]string{"ls", "-la"}, ws, ""},
		{[]string{"grep", "-r", "x", "."}, ws, ""},
		{[]string{"sed", "s/a/b/", "a"}, ws, ""},
		{[]string{"find", ".", "-name", "*.go"}, ws, ""},
		{[]string{"cd", "src"}, ws, ""},
		{[]string{"cd", ws}, "/", ""},
		{[]string{"git", "log"}, ws, ""},
		// $TMPDIR stays writable.
		{[]string{"cp", "a", tmp}, ws, ""},
		{[]string{"touch", filepath.Join(tmp, "x")}, ws, ""},
		{[]string{"rm", "-rf", filepath.Join(tmp, "x")}, ws, ""},
		{[]string{"rm", "-rf", tmp}, ws, RuleWorkspace},
		// Elsewhere, the rules as before.
		{[]string{"rm", "-rf", "/"}, ws, RuleRoot},
		{[]string{"cp", "a", "/usr/bin"}, ws, RuleSystem},
		{[]string{"touch", "../x"}, ws, RuleHome},
		{[]string{"touch", "/srv2/x"}, ws, RuleOutside},
	} {
		err := p.Check(tc.argv, tc.dir)
		got := ""
		var r *Refusal
		if errors.As(err, &r) {
			got = r.Rule
		} else if err != nil {
			t.Errorf("%q: not a *Refusal: %v", tc.argv, err)
		}
		if got != tc.rule {
			t.Errorf("%q in %q: rule %q, want %q (%v)", tc.argv, tc.dir, got, tc.rule, err)
		}
		if got == RuleReadOnly && !strings.Contains(err.Error(), strings.TrimSuffix(roReason, ".")) {
			t.Errorf("%q: the refusal does not give the reason: %v", tc.argv, err)
		}
		if got != "" && got != RuleReadOnly && !strings.Contains(err.Error(), "$TMPDIR") {
			t.Errorf("%q: the refusal does not say where writing is allowed: %v", tc.argv, err)
		}
	}
	for _, w := range []struct {
		path, rule string
	}{
		{"f.txt", RuleReadOnly},
		{filepath.Join(ws, "src", "f.txt"), RuleReadOnly},
		{filepath.Join(tmp, "f.txt"), ""},
		{"/dev/null", ""},
	} {
		err := p.CheckWrite(w.path, ws)
		var r *Refusal
		got := ""
		if errors.As(err, &r) {
			got = r.Rule
		}
		if got != w.rule {
			t.Errorf("> %s: rule %q, want %q (%v)", w.path, got, w.rule, err)
		}
	}
	// The same policy, not read-only: the workspace is writable (the
	// rows above fail for the read-only rule, not for another).
	p.ReadOnlyWorkspace = ""
	if err := p.Check([]string{"rm", "README"}, ws); err != nil {
		t.Errorf("without ReadOnly: %v", err)
	}
}

// Through the tool: changes refused by the policy, with the reason, and
// nothing changed anywhere; reading works, and so does $TMPDIR.
func TestReadOnlyWorkspaceRun(t *testing.T) {
	f := newFixture(t, false, readOnlyWorkspace)
	f.setup(t, "mkdir -p sub && echo sub > sub/s.txt && echo readme > README")
	before, beforeOut := treeSnapshot(t, f.ws), f.snapshot(t)
	for _, cmd := range []string{
		"echo x > f.txt",
		"echo x >> a.txt",
		"echo x > sub/new.txt",
		"cd sub && echo x > new.txt",
		"rm README",
		"rm -rf sub",
		"mv a.txt b.txt",
		"cp a.txt c.txt",
		"touch n",
		"mkdir d",
		"ln -s a.txt l",
		"sed -i s/hello/pwned/ a.txt",
		"echo x | tee f.txt",
		"sh -c 'echo x > f.txt'",
		"bash -c 'rm a.txt'",
		"f=a.txt; rm $f",
		"echo ok > $TMPDIR/ok; cp $TMPDIR/ok a.txt",
		"find . -name a.txt -delete",
	} {
		t.Run(cmd, func(t *testing.T) {
			_, err := f.tool.Run(context.Background(), call(cmd))
			var r *Refusal
			if !errors.As(err, &r) && (err == nil || !strings.Contains(err.Error(), "rule "+RuleReadOnly)) {
				t.Fatalf("not refused by the policy: %v", err)
			}
			if !strings.Contains(err.Error(), "refused (rule "+RuleReadOnly+")") || !strings.Contains(err.Error(), strings.TrimSuffix(roReason, ".")) {
				t.Errorf("the refusal does not give the rule and the reason:\n%v", err)
			}
		})
	}
	if after := treeSnapshot(t, f.ws); after != before {
		t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if after := f.snapshot(t); after != beforeOut {
		t.Errorf("something outside the workspace changed:\nbefore:\n%s\nafter:\n%s", beforeOut, after)
	}

	// Reading works, in any directory of the workspace, and $TMPDIR is
	// writable.
	for _, tc := range []struct{ cmd, dir, want string }{
		{"cat a.txt", "", "hello\n"},
		{"ls", "", "README\na.txt\nsub\n"},
		{"grep -r hello .", "", "./a.txt:hello\n"},
		{"grep -rl sub", "", "sub/s.txt\n"},
		{"cat s.txt && pwd", "sub", "sub\n" + filepath.Join(f.ws, "sub") + "\n"},
		{"cd sub && cat s.txt", "", "sub\n"},
		{"wc -l < a.txt", "", "1\n"},
		{"echo ok > $TMPDIR/t && cat a.txt >> $TMPDIR/t && cat $TMPDIR/t", "", "ok\nhello\n"},
		{"cp a.txt $TMPDIR/copy && sed -i s/hello/bye/ $TMPDIR/copy && cat $TMPDIR/copy", "", "bye\n"},
	} {
		b, _ := json.Marshal(Args{Command: tc.cmd, Directory: tc.dir})
		res, err := f.tool.Run(context.Background(), tool.Call{Args: b})
		if err != nil || res.Output != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.cmd, res.Output, err, tc.want)
		}
	}
	if after := treeSnapshot(t, f.ws); after != before {
		t.Errorf("reading changed the read-only workspace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// A directory outside the workspace is refused, as before.
	for _, d := range []string{"../..", "/etc"} {
		b, _ := json.Marshal(Args{Command: "ls", Directory: d})
		if _, err := f.tool.Run(context.Background(), tool.Call{Args: b}); err == nil || !strings.Contains(err.Error(), "workspace") {
			t.Errorf("directory %s: %v", d, err)
		}
	}
}

// The dry run: a refusal comes before anything runs.
func TestReadOnlyWorkspaceRefusedFirst(t *testing.T) {
	f := newFixture(t, true, readOnlyWorkspace)
	for _, cmd := range []string{"echo x > f.txt", "rm a.txt", "mv a.txt b", "touch n", "mkdir d", "cp a.txt b"} {
		f.ran = nil
		o := f.run(t, cmd)
		if o.refusal == nil || o.refusal.Rule != RuleReadOnly {
			t.Errorf("%s: refusal %v, want rule %s", cmd, o.refusal, RuleReadOnly)
		}
		if len(f.ran) > 0 || o.output != "" {
			t.Errorf("%s: something ran before the refusal: %q %q", cmd, f.ran, o.output)
		}
	}
}

// Read-only means the private temp directory is the only place commands
// write: the workspace and the configured writable directories are left
// out of the policy and of the confinement, and the status and the tool's
// description say so.
func TestReadOnlyWorkspaceConfinement(t *testing.T) {
	extra := t.TempDir()
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("read-only=%v", readOnly), func(t *testing.T) {
			opts := []fixtureOpt{func(c *Config) { c.Writable = []string{extra} }}
			if readOnly {
				opts = append(opts, readOnlyWorkspace)
			}
			f := newFixture(t, true, opts...)
			realExtra, err := filepath.EvalSymlinks(extra)
			if err != nil {
				t.Fatal(err)
			}
			// Before the first command, and after it (with the temp
			// directory).
			if w := f.tool.conf.Writable; slices.Contains(w, f.ws) == readOnly || slices.Contains(w, realExtra) == readOnly {
				t.Errorf("before a command, the confinement writes %v", w)
			}
			f.run(t, "true")
			pol, conf, _ := f.tool.state()
			want := []string{f.ws, f.tool.tmp, realExtra}
			if readOnly {
				want = []string{f.tool.tmp}
			}
			if !slices.Equal(conf.Writable, want) {
				t.Errorf("the confinement writes %v, want %v", conf.Writable, want)
			}
			wantPol := []string{f.tool.tmp, realExtra}
			if readOnly {
				wantPol = []string{f.tool.tmp}
			}
			if !slices.Equal(pol.Writable, wantPol) || (pol.ReadOnlyWorkspace != "") != readOnly {
				t.Errorf("the policy writes %v (read-only %q), want %v", pol.Writable, pol.ReadOnlyWorkspace, wantPol)
			}
			note := f.tool.Sandbox().Note
			if strings.Contains(note, "read-only") != readOnly || readOnly && !strings.Contains(note, roReason) {
				t.Errorf("the status note: %s", note)
			}
			if readOnly && f.tool.Sandbox().Active && strings.Contains(note, "["+f.ws) {
				t.Errorf("the status note shows the workspace writable: %s", note)
			}
			desc := f.tool.Spec().Description
			if strings.Contains(desc, "read-only") != readOnly {
				t.Errorf("the description: %s", desc)
			}
			if n := len(desc); n > 600 {
				t.Errorf("description is %d bytes; keep it under 600 for small models", n)
			}
		})
	}
}

// A secret location holding a read-only workspace does not hide the
// workspace from commands (as it does not when the workspace is
// writable); other secret locations stay hidden.
func TestReadOnlyWorkspaceInsideASecretLocation(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	holder := filepath.Join(base, "holder")
	root := filepath.Join(holder, "ws")
	other := filepath.Join(base, "other")
	for _, d := range []string{root, other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		w := ws
		if ro {
			w = ws.WithReadOnlyRoot(roReason)
		}
		tl, err := New(Config{Workspace: w, Secrets: []string{holder, other}, TempRoot: base,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		hidden := tl.conf.Hidden
		tl.Close()
		if !slices.Contains(hidden, other) {
			t.Errorf("read-only=%v: the other secret location is not hidden: %v", ro, hidden)
		}
		if ro && slices.Contains(hidden, holder) {
			t.Errorf("read-only: the secret location holding the workspace would hide it: %v", hidden)
		}
	}
}
