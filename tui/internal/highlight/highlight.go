// Package highlight tokenises code for the terminal UI with chroma, without
// chroma's lexers and styles packages: both build registries of every lexer
// and style at process start (about 8 ms and 2–3 MB each), a cost every
// `hearth` run would pay. This package embeds the lexer definitions of the
// languages a coding model usually writes (copied from chroma, MIT, see
// LICENSE.chroma) and two styles, and loads them on first use.
package highlight

import (
	"embed"
	"io/fs"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

//go:embed lexers/*.xml styles/*.xml
var embedded embed.FS

var (
	once     sync.Once
	registry *chroma.LexerRegistry
	fallback chroma.Lexer
)

func load() {
	registry = chroma.NewLexerRegistry()
	paths, err := fs.Glob(embedded, "lexers/*.xml")
	if err != nil {
		panic(err)
	}
	for _, p := range paths {
		registry.Register(chroma.MustNewXMLLexer(embedded, p))
	}
	registry.Register(goLexer())
	fallback = chroma.MustNewLexer(&chroma.Config{Name: "fallback", Priority: -1}, func() chroma.Rules {
		return chroma.Rules{"root": {
			{Pattern: `.+`, Type: chroma.Text},
			{Pattern: `\n`, Type: chroma.Text},
		}}
	})
}

// Warm loads the lexer definitions, so that the first code block does not
// pay for it. It is safe to call from any goroutine.
func Warm() { once.Do(load) }

// Lexer returns the lexer for a fenced code block's language (a name, an
// alias or a file name); a plain-text lexer when none is known.
func Lexer(lang string) chroma.Lexer {
	once.Do(load)
	lang = strings.ToLower(strings.TrimSpace(lang))
	if lang == "" {
		return fallback
	}
	if lx := registry.Get(lang); lx != nil {
		return lx
	}
	if lx := registry.Match("x." + lang); lx != nil {
		return lx
	}
	return fallback
}

// Known reports whether lang names an embedded lexer.
func Known(lang string) bool { return Lexer(lang) != fallback }

var (
	styleMu sync.Mutex
	styles  = map[string]*chroma.Style{}
)

// Style returns one of the embedded styles, "github" or "github-dark"
// (nil for any other name).
func Style(name string) *chroma.Style {
	styleMu.Lock()
	defer styleMu.Unlock()
	if st, ok := styles[name]; ok {
		return st
	}
	var st *chroma.Style
	if f, err := embedded.Open("styles/" + name + ".xml"); err == nil {
		st, err = chroma.NewXMLStyle(f)
		f.Close()
		if err != nil {
			st = nil
		}
	}
	styles[name] = st
	return st
}
