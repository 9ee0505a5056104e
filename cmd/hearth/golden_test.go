package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites the golden files: go test ./cmd/hearth/ -run NAME -update
var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the tests print")

// golden compares got with testdata/NAME.golden.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: run go test ./cmd/hearth/ -run '%s' -update to write it", err, t.Name())
	}
	if string(want) != got {
		t.Errorf("the output differs from %s (if the change is meant, rerun with -update and read the diff):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// transcript is a command's outcome as a golden file shows it: the command
// line, the exit code, stdout and stderr, with the test's temporary paths
// and the fake server's address replaced by fixed names.
type transcript struct {
	b       strings.Builder
	replace []string // old, new pairs
}

func newTranscript(replace ...string) *transcript { return &transcript{replace: replace} }

func (tr *transcript) add(args []string, code int, stdout, stderr string) {
	tr.addEnv(nil, args, code, stdout, stderr)
}

// addEnv is add for a command run with variables set (KEY=value).
func (tr *transcript) addEnv(env, args []string, code int, stdout, stderr string) {
	r := strings.NewReplacer(tr.replace...)
	line := "hearth " + shellWords(args)
	if len(env) > 0 {
		line = shellWords(env) + " " + line
	}
	fmt.Fprintf(&tr.b, "$ %s\n", r.Replace(line))
	fmt.Fprintf(&tr.b, "exit %d\n", code)
	fmt.Fprintf(&tr.b, "--- stdout\n%s", r.Replace(stdout))
	fmt.Fprintf(&tr.b, "--- stderr\n%s", r.Replace(stderr))
	tr.b.WriteString("\n")
}

func (tr *transcript) String() string { return tr.b.String() }

// shellWords writes args as a shell would take them back.
func shellWords(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n\"'$`\\|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
