package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// fuzzPolicy is a policy over a throwaway tree: fuzzing resolves paths (it
// only reads the file system).
func fuzzPolicy(f *testing.F) (*Policy, string) {
	base, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	home := filepath.Join(base, "home")
	ws := filepath.Join(home, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(ws, "root")); err != nil {
		f.Fatal(err)
	}
	return &Policy{Workspace: ws, Writable: []string{filepath.Join(base, "tmp")}, FSRoot: "/", Home: home}, ws
}

var rootSpellings = []string{"/", "//", "/.", "/..", "/./", "///.//", "root/", "root/.", "../../../../../../../../../.."}

// FuzzPolicy: Check never panics, and rm -rf of the root, however it is
// spelled and wherever it hides among other arguments, is always refused.
func FuzzPolicy(f *testing.F) {
	p, ws := fuzzPolicy(f)
	for _, s := range []string{
		"rm\x00-rf\x00/", "rm\x00-r\x00-f\x00/", "find\x00/\x00-delete", "cp\x00a\x00/etc",
		"env\x00-i\x00rm\x00x", "xargs\x00rm", "bash\x00-c\x00rm -rf $HOME", "tar\x00-xzf\x00a.tgz\x00-C\x00/",
		"chmod\x00-w\x00/etc/passwd", "sed\x00-i.bak\x00s/a/b/\x00f", "kill\x00-9\x00-1",
		"timeout\x00-s\x00KILL\x005\x00rm\x00-rf\x00/", "dd\x00of=/dev/sda", "docker\x00run\x00-v\x00/:/h\x00x",
		"find\x00.\x00-exec\x00sh\x00-c\x00rm \"$1\"\x00_\x00{}\x00;", "ln\x00-s\x00/etc\x00x",
		"docker\x00--context\x00c\x00compose\x00-f\x00x.yml\x00up", "docker\x00run\x00--device=/dev/sda\x00--net\x00host\x00x",
		"docker\x00container\x00cp\x00c:/x\x00/etc", "podman\x00unshare\x00rm\x00x", "docker\x00volume\x00create\x00-o\x00o=bind",
		"systemctl\x00--user\x00-p\x00X\x00start\x00x", "loginctl\x00enable-linger", "service\x00x\x00start",
		"busctl\x00--user\x00call\x00a", "gdbus\x00introspect", "qdbus\x00a\x00b\x00c", "crontab\x00-l", "at\x00now",
	} {
		f.Add(s, uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, where, spelling uint8) {
		argv := strings.Split(s, "\x00")
		for _, dir := range []string{ws, filepath.Join(ws, "sub"), ""} {
			_ = p.Check(argv, dir)
			_ = p.CheckWrite(s, dir)
		}
		// Hide rm -rf <root> among the arguments: still refused.
		root := rootSpellings[int(spelling)%len(rootSpellings)]
		args := append([]string(nil), argv...)
		for i, a := range args {
			// Options that would make the root an option's value, or
			// end the argument list early, are not what this tests.
			if strings.HasPrefix(a, "-") || a == "" {
				args[i] = "x"
			}
		}
		i := int(where) % (len(args) + 1)
		args = append(args[:i], append([]string{root}, args[i:]...)...)
		rm := append([]string{"rm", "-rf"}, args...)
		if err := p.Check(rm, ws); err == nil {
			t.Fatalf("not refused: %q", rm)
		}
		if err := p.Check(append([]string{"sudo"}, argv...), ws); err == nil {
			t.Fatalf("sudo not refused: %q", argv)
		}
	})
}

// FuzzCheckScript: CheckScript never panics, and a script holding the
// simple command `rm -rf /` anywhere (in a function, a pipe, $(…), a
// subshell, an if) is always refused before it runs.
func FuzzCheckScript(f *testing.F) {
	p, ws := fuzzPolicy(f)
	for _, s := range []string{
		"rm -rf /", "echo hi; rm -rf /", "f() { rm -rf /; }", "x=$(rm -rf /)", "(cd sub; rm -rf /) | cat",
		"if true; then rm -rf /; fi", "echo $(echo $(rm -rf /))", "bash -c 'rm -rf /'", ":(){ :|:& };:",
		"eval 'rm -rf /'", "for i in 1; do rm -rf / & done", "case x in x) rm -rf /;; esac", "a && rm -rf / || b",
		"cat <<EOF\nrm -rf /\nEOF", "echo 'rm -rf /'", "X=/; rm -rf $X", "sudo ls", "rm -rf ~", "> /etc/passwd",
		"[[ -n $(rm -rf /) ]]", "diff <(rm -rf /) b", "rm -rf / &", "time rm -rf /", "! rm -rf /",
		"coproc rm -rf /", "while rm -rf /; do :; done", "declare x=$(rm -rf /)",
		"docker compose up -d && rm -rf /", "systemctl --user start x; rm -rf /", "echo 'rm -rf /' | at now",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		err := p.CheckScript(src, ws)
		file, perr := parse(src)
		if perr != nil {
			return
		}
		if err == nil && holdsRmRoot(file) {
			t.Fatalf("not refused: %q", src)
		}
	})
}

// holdsRmRoot reports whether the script has the simple command rm -rf /
// anywhere, spelled literally.
func holdsRmRoot(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		ce, ok := n.(*syntax.CallExpr)
		if !ok || len(ce.Args) != 3 {
			return !found
		}
		var words []string
		for _, w := range ce.Args {
			lit, ok := literal(w, "")
			if !ok {
				return true
			}
			words = append(words, lit)
		}
		if words[0] == "rm" && words[1] == "-rf" && words[2] == "/" {
			found = true
		}
		return !found
	})
	return found
}
