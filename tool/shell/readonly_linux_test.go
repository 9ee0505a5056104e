//go:build linux

package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A read-only workspace is refused by the process that would change it, not
// only by the policy. These tests take the policy out of the way
// (bypassPolicy: the policy then lets commands write the workspace), so
// that the shell host's own redirections and the programs it starts meet
// the kernel alone: Landlock, which lets them write only the private temp
// directory, and, where the host has a mount namespace, the read-only
// mounts.

// bypassPolicy makes f's commands run with a policy that does not know the
// workspace is read-only: everything it would refuse in the workspace gets
// to the shell host, confined as before. The confinement is not touched.
func bypassPolicy(t *testing.T, f *fixture) {
	t.Helper()
	f.run(t, "true") // makes the temp directory, the policy with it
	f.tool.tmpMu.Lock()
	p := *f.tool.policy
	p.ReadOnlyWorkspace = ""
	f.tool.policy = &p
	f.tool.tmpMu.Unlock()
	if err := f.tool.Policy().CheckWrite("canary", f.ws); err != nil {
		t.Fatalf("the policy was not taken out of the way: %v", err)
	}
	for _, w := range f.tool.conf.Writable {
		if w != f.tool.tmp {
			t.Fatalf("the confinement writes %s, not only the temp directory", w)
		}
	}
}

// roAttacks are programs and redirections that would each change the
// workspace: the shell host's own (redirections), real programs, and
// programs the policy cannot see into.
var roAttacks = []string{
	"echo pwned > canary",
	"echo pwned >> canary",
	"echo pwned > sub/new",
	"env sh -c 'echo pwned > canary'",
	"env sh -c 'echo pwned > made-by-sh'",
	`awk 'BEGIN { print "pwned" > "canary" }'`,
	"rm -f canary",
	"rm -rf sub",
	"mv canary moved",
	"cp canary copy",
	"touch newfile",
	"mkdir newdir",
	"ln -s canary symlink",
	"ln canary hardlink",
	"truncate -s 0 canary",
	"sed -i s/keep/pwned/ canary",
}

// attackPy tries each change with Python and prints what the kernel said:
// "NAME done", or "NAME ERRNO". With an argument, it also tries the
// metadata changes Landlock has no right for (a read-only mount refuses
// them).
const attackPy = `import errno, os, sys
def attempt(name, f):
    try:
        f()
        print(name, "done")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno, e.errno))
attempt("open-w", lambda: open("canary", "w").write("pwned"))
attempt("open-a", lambda: open("canary", "a").write("pwned"))
attempt("create", lambda: open("py-new", "x").close())
attempt("remove", lambda: os.remove("canary"))
attempt("rename", lambda: os.rename("canary", "py-moved"))
attempt("mkdir", lambda: os.mkdir("py-dir"))
attempt("rmdir", lambda: os.rmdir("sub/empty"))
attempt("symlink", lambda: os.symlink("canary", "py-link"))
attempt("link", lambda: os.link("canary", "py-hard"))
attempt("truncate", lambda: os.truncate("canary", 0))
attempt("mkfifo", lambda: os.mkfifo("py-fifo"))
if len(sys.argv) > 1:
    attempt("chmod", lambda: os.chmod("canary", 0o777))
    attempt("utime", lambda: os.utime("canary", (1, 1)))
`

// roSetup makes the workspace the attacks aim at (before it is read-only
// to anything: the test writes it itself).
func roSetup(t *testing.T, f *fixture) {
	t.Helper()
	writeFile(t, filepath.Join(f.ws, "canary"), "keep me\n")
	writeFile(t, filepath.Join(f.ws, "sub", "inner"), "inner keep\n")
	writeFile(t, filepath.Join(f.ws, "attack.py"), attackPy)
	if err := os.MkdirAll(filepath.Join(f.ws, "sub", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// pyResults reads attackPy's lines: what each attempt got.
func pyResults(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		name, res, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && (strings.HasPrefix(res, "E") || res == "done") {
			got[name] = res
		}
	}
	return got
}

func TestReadOnlyWorkspaceRefusedByTheKernel(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	for _, ns := range []bool{true, false} {
		name := "namespaces"
		if !ns {
			name = "Landlock alone"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, false, readOnlyWorkspace)
			if !f.tool.Sandbox().Active {
				t.Skipf("no Landlock on this kernel: %s", f.tool.Sandbox().Note)
			}
			if ns {
				needNamespaces(t, f)
			} else {
				f.tool.conf.DisableNamespaces()
			}
			roSetup(t, f)
			bypassPolicy(t, f)
			before, beforeOut := treeSnapshot(t, f.ws), f.snapshot(t)

			// One command line, each attack's exit status after it: the
			// policy, out of the way, refuses none of them.
			var script strings.Builder
			for i, a := range roAttacks {
				fmt.Fprintf(&script, "%s; echo \"attack %d: exit $?\"\n", a, i)
			}
			o := f.run(t, script.String())
			if o.refusal != nil {
				t.Fatalf("refused by the policy, which should be out of the way: %v", o.refusal)
			}
			for i, a := range roAttacks {
				if !strings.Contains(o.output, fmt.Sprintf("attack %d: exit ", i)) || strings.Contains(o.output, fmt.Sprintf("attack %d: exit 0\n", i)) {
					t.Errorf("%s: not refused:\n%s", a, o.output)
				}
			}
			if got := readFile(t, filepath.Join(f.ws, "canary")); got != "keep me\n" {
				t.Fatalf("the canary changed: %q\n%s", got, o.output)
			}
			// The model is told why: by the host's own redirection, and
			// by a program.
			for _, a := range []string{"echo pwned > canary", `python3 -c "open('canary', 'w').write('pwned')"`} {
				res, err := f.tool.Run(context.Background(), call(a))
				if err != nil || !strings.Contains(res.Output, "[the system refuses changes here: "+roReason+"]") {
					t.Errorf("%s: the result does not say why the change was refused:\n%s%v", a, res.Output, err)
				}
			}
			// Each of Python's attempts: refused by the kernel, with
			// the errno of a refusal (EACCES from Landlock, EROFS from
			// a read-only mount, EPERM).
			py := "python3 attack.py"
			if ns {
				py += " metadata"
			}
			o = f.run(t, py)
			got := pyResults(o.output)
			want := 11
			if ns {
				want += 2
			}
			if len(got) != want {
				t.Errorf("Python tried %d changes, want %d:\n%s", len(got), want, o.output)
			}
			for op, res := range got {
				if res != "EACCES" && res != "EPERM" && res != "EROFS" {
					t.Errorf("python %s: %s, want EACCES, EPERM or EROFS", op, res)
				}
			}

			if after := treeSnapshot(t, f.ws); after != before {
				t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			if after := f.snapshot(t); after != beforeOut {
				t.Errorf("something outside the workspace changed:\nbefore:\n%s\nafter:\n%s", beforeOut, after)
			}

			// Reading works, and writing $TMPDIR, by the host and by
			// programs.
			o = f.run(t, `cat canary; grep -r keep . | sort; ls; echo tmp-ok > $TMPDIR/t && cat $TMPDIR/t; `+
				`python3 -c 'import os; print(open("sub/inner").read().strip()); open(os.environ["TMPDIR"] + "/p", "w").write("py-tmp-ok\n")' && cat $TMPDIR/p; `+
				`env sh -c "echo sh-tmp-ok > $TMPDIR/s" && cat $TMPDIR/s`)
			for _, want := range []string{"keep me\n", "./canary:keep me\n", "./sub/inner:inner keep\n", "attack.py\ncanary\nsub\n", "inner keep\n", "tmp-ok\n", "py-tmp-ok\n", "sh-tmp-ok\n"} {
				if !strings.Contains(o.output, want) {
					t.Errorf("reading the workspace or writing $TMPDIR: %q missing from\n%s", want, o.output)
				}
			}
			if o.exit != 0 || o.err != nil || o.refusal != nil {
				t.Errorf("reading failed: exit %d, %v, %v\n%s", o.exit, o.err, o.refusal, o.output)
			}
		})
	}
}

// The control: the same attacks in a workspace that is not read-only do
// change it (so the test above fails if the confinement lets them).
func TestReadOnlyAttacksChangeAWritableWorkspace(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	f := newFixture(t, false)
	roSetup(t, f)
	before := treeSnapshot(t, f.ws)
	o := f.run(t, roAttacks[0])
	if got := readFile(t, filepath.Join(f.ws, "canary")); got != "pwned\n" || o.exit != 0 {
		t.Fatalf("%s did not write the canary of a writable workspace: %q\n%s", roAttacks[0], got, o.output)
	}
	o = f.run(t, "python3 attack.py")
	if got := pyResults(o.output); got["open-w"] != "done" || got["mkdir"] != "done" {
		t.Errorf("python did not write a writable workspace:\n%s", o.output)
	}
	if treeSnapshot(t, f.ws) == before {
		t.Error("nothing changed")
	}
}

// Through the tool, with its policy: programs the policy cannot see into,
// and git, are refused by the kernel, and the result says why; git's
// reading commands work.
func TestReadOnlyWorkspaceExplained(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git")
	}
	f := newFixture(t, false, readOnlyWorkspace)
	if !f.tool.Sandbox().Active {
		t.Skipf("no Landlock on this kernel: %s", f.tool.Sandbox().Note)
	}
	f.setup(t, "mkdir sub && "+git+" init -q && "+git+" add a.txt && "+git+" -c user.name=a -c user.email=a@b commit -qm first")
	before := treeSnapshot(t, f.ws)
	for _, tc := range []struct {
		cmd  string
		fail bool
	}{
		{"git log --oneline | grep -c first", false},
		{"git status --short; git diff --stat", false},
		{"git show HEAD:a.txt", false},
		{"git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x", true},
		{"git tag v1", true},
		{"cd sub && git init -q", true},
		{"git branch b2", true},
		{`awk 'BEGIN { print "pwned" > "a.txt" }'`, true},
		{`awk 'BEGIN { print "pwned" > "sub/new" }'`, true},
	} {
		res, err := f.tool.Run(context.Background(), call(tc.cmd))
		if err != nil {
			t.Errorf("%s: %v", tc.cmd, err)
			continue
		}
		explained := strings.Contains(res.Output, "[the system refuses changes here: "+roReason+"]")
		if tc.fail && (!explained || strings.Contains(res.Output, "exit status 0")) {
			t.Errorf("%s: the refusal is not explained:\n%s", tc.cmd, res.Output)
		}
		if !tc.fail && (explained || strings.Contains(res.Output, "[exit status")) {
			t.Errorf("%s: reading failed:\n%s", tc.cmd, res.Output)
		}
	}
	if after := treeSnapshot(t, f.ws); after != before {
		t.Errorf("the read-only workspace changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
