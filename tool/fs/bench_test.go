package fs

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
)

// benchTree is a generated source tree of 50,000 files (500 directories of
// 100 files, 1–4 KB of code-like text each, some ignored by .gitignore),
// made once per benchmark process.
var benchTree = sync.OnceValues(func() (string, error) {
	root, err := os.MkdirTemp("", "hearth-bench-tree-")
	if err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("func return if else for range var const type struct interface package import map string int error nil true false ctx err value result handler request response config buffer")
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.tmp\nvendor/\n"), 0o644)
	for d := range 500 {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d/25), fmt.Sprintf("mod%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		for f := range 100 {
			var b strings.Builder
			fmt.Fprintf(&b, "package mod%03d\n\n", d)
			size := 1024 + rng.IntN(3072)
			for b.Len() < size {
				for range 8 {
					b.WriteString(words[rng.IntN(len(words))])
					b.WriteByte(' ')
				}
				b.WriteByte('\n')
			}
			if rng.IntN(1000) == 0 {
				b.WriteString("// NEEDLE: the handler leaks a connection\n")
			}
			ext := ".go"
			if f%20 == 0 {
				ext = ".tmp"
			}
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%03d%s", f, ext)), []byte(b.String()), 0o644); err != nil {
				return "", err
			}
		}
	}
	return root, nil
})

func benchKit(b *testing.B) (string, map[string]tool.Tool) {
	root, err := benchTree()
	if err != nil {
		b.Fatal(err)
	}
	ws, err := sandbox.New(root)
	if err != nil {
		b.Fatal(err)
	}
	tools := map[string]tool.Tool{}
	for _, t := range Tools(ws, tool.NewSeen(), Limits{MaxResults: 1 << 20}) {
		tools[t.Spec().Name] = t
	}
	return root, tools
}

func runTool(b *testing.B, t tool.Tool, args any) string {
	raw, _ := json.Marshal(args)
	r, err := t.Run(context.Background(), tool.Call{Args: raw})
	if err != nil {
		b.Fatal(err)
	}
	return r.Output
}

func runCmd(b *testing.B, dir, name string, args ...string) string {
	if _, err := exec.LookPath(name); err != nil {
		b.Skipf("%s is not installed (apt-get install ripgrep)", name)
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil && len(out) == 0 {
		b.Fatalf("%s: %v", name, err)
	}
	return string(out)
}

// BenchmarkSearch compares grep_search with ripgrep and glob with find on
// the same tree, in one run. Both sides honour .gitignore the same way
// (rg does by itself; find is given the same exclusion).
func BenchmarkSearch(b *testing.B) {
	root, tools := benchKit(b)
	b.Run("grep_search/literal", func(b *testing.B) {
		for b.Loop() {
			if out := runTool(b, tools["grep_search"], map[string]any{"pattern": "NEEDLE"}); !strings.Contains(out, "NEEDLE") {
				b.Fatal(out)
			}
		}
	})
	b.Run("rg/literal", func(b *testing.B) {
		for b.Loop() {
			runCmd(b, root, "rg", "--hidden", "--no-require-git", "-n", "NEEDLE")
		}
	})
	b.Run("grep_search/regexp", func(b *testing.B) {
		for b.Loop() {
			runTool(b, tools["grep_search"], map[string]any{"pattern": `handler\s+leaks?\s+a`})
		}
	})
	b.Run("rg/regexp", func(b *testing.B) {
		for b.Loop() {
			runCmd(b, root, "rg", "--hidden", "--no-require-git", "-n", `handler\s+leaks?\s+a`)
		}
	})
	b.Run("glob/**.go", func(b *testing.B) {
		for b.Loop() {
			runTool(b, tools["glob"], map[string]any{"pattern": "**/file01*.go"})
		}
	})
	b.Run("find/**.go", func(b *testing.B) {
		for b.Loop() {
			runCmd(b, root, "find", ".", "-name", "file01*.go", "-not", "-name", "*.tmp")
		}
	})
	b.Run("rg --files/**.go", func(b *testing.B) {
		for b.Loop() {
			runCmd(b, root, "rg", "--files", "--hidden", "--no-require-git", "-g", "file01*.go")
		}
	})
}

// TestBenchTreeAgreesWithRipgrep checks, on a small tree, that grep_search
// finds what ripgrep finds, so the benchmark compares equal work.
func TestSearchAgreesWithRipgrep(t *testing.T) {
	if _, err := exec.LookPath("rg"); err != nil {
		t.Skip("ripgrep not installed")
	}
	k := newKit(t, project, Limits{})
	out, err := k.call(t, "grep_search", map[string]any{"pattern": "func Add"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("rg", "--hidden", "--no-require-git", "-n", "--no-heading", "func Add")
	cmd.Dir = k.root
	rg, _ := cmd.Output()
	want := strings.Split(strings.TrimSpace(string(rg)), "\n")
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		got = append(got, grepLine.ReplaceAllString(l, "$1:$2:$3")) // rg writes no space
	}
	if strings.Join(sortedCopy(got), "\n") != strings.Join(sortedCopy(want), "\n") {
		t.Errorf("grep_search:\n%s\nrg:\n%s", out, rg)
	}
}

var grepLine = regexp.MustCompile(`^([^:]+):(\d+): (.*)$`)

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}
