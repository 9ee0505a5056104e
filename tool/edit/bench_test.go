package edit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/edit/internal/match"
)

// bigFile is about 10 MB of Go-like code: many small functions, each
// unique by name, with the common lines ("}", "return err") real code has.
var bigFile = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString("package big\n\n")
	for i := 0; b.Len() < 10<<20; i++ {
		fmt.Fprintf(&b, "// handler%d serves request kind %d.\nfunc handler%d(w http.ResponseWriter, r *http.Request) error {\n", i, i%97, i)
		fmt.Fprintf(&b, "\tid, err := strconv.Atoi(r.URL.Query().Get(\"id%d\"))\n\tif err != nil {\n\t\treturn err\n\t}\n", i%13)
		fmt.Fprintf(&b, "\tfor j := 0; j < id; j++ {\n\t\tfmt.Fprintf(w, \"%%d:%%d\\n\", j, %d)\n\t}\n\treturn nil\n}\n\n", i)
	}
	return b.String()
})

// nearEnd is a function near the end of bigFile.
func nearEnd(content string) (block string) {
	i := strings.LastIndex(content, "// handler")
	i = strings.LastIndex(content[:i], "// handler")
	j := strings.Index(content[i:], "\n\n")
	return content[i : i+j+1]
}

func benchFind(b *testing.B, old, new string, want match.Strategy) {
	content := bigFile()
	b.SetBytes(int64(len(content)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := match.Find(content, old, new, match.MatchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if m.Strategy != want {
			b.Fatalf("strategy %v, want %v", m.Strategy, want)
		}
	}
}

func BenchmarkFind10MB(b *testing.B) {
	block := nearEnd(bigFile())
	b.Run("exact", func(b *testing.B) {
		benchFind(b, block, strings.Replace(block, "return nil", "return io.EOF", 1), match.Exact)
	})
	b.Run("whitespace", func(b *testing.B) {
		old := strings.Replace(block, "j := 0; j < id; j++", "j:=0; j<id; j++", 1)
		benchFind(b, old, old, match.Whitespace)
	})
	b.Run("indentation", func(b *testing.B) {
		old := strings.ReplaceAll(block, "\t", "    ")
		benchFind(b, old, strings.Replace(old, "return nil", "return io.EOF", 1), match.Indentation)
	})
	b.Run("fuzzy", func(b *testing.B) {
		old := strings.Replace(block, "if err != nil {", "if err != nil && id > 0 {", 1)
		benchFind(b, old, block, match.Fuzzy)
	})
	b.Run("miss", func(b *testing.B) {
		content := bigFile()
		old := "func notThere(a, b int) int {\n\tx := a * b\n\treturn x / 2\n}\n"
		b.SetBytes(int64(len(content)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := match.Find(content, old, "", match.MatchOptions{}); err == nil {
				b.Fatal("found")
			}
		}
	})
}

// BenchmarkEdit10MB is the whole tool: read, check, match, write (atomic,
// synced), diff. Each iteration edits the block and the next edits it back.
func BenchmarkEdit10MB(b *testing.B) {
	dir := b.TempDir()
	content := bigFile()
	p := filepath.Join(dir, "big.go")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		b.Fatal(err)
	}
	ws, err := sandbox.New(dir)
	if err != nil {
		b.Fatal(err)
	}
	et := New(ws, nil, Options{})
	block := nearEnd(content)
	changed := strings.Replace(block, "return nil", "return io.EOF", 1)
	for _, c := range []struct {
		name     string
		old, new string // edit, and the edit back
	}{
		{"exact", block, changed},
		{"fuzzy", strings.Replace(block, "if err != nil {", "if err != nil && id > 0 {", 1), changed},
	} {
		b.Run(c.name, func(b *testing.B) {
			fwd, _ := json.Marshal(edit("big.go", c.old, c.new))
			back, _ := json.Marshal(edit("big.go", changed, block))
			b.SetBytes(int64(len(content)))
			for b.Loop() {
				if _, err := et.Run(context.Background(), tool.Call{Args: fwd}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				if _, err := et.Run(context.Background(), tool.Call{Args: back}); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		})
	}
}
