package highlight

import (
	"strings"

	c "github.com/alecthomas/chroma/v2"
)

// goLexer is chroma's Go lexer (chroma's lexers/go.go, which is Go code
// rather than an XML definition), with raw strings as plain strings rather
// than delegated to the Go template lexer.
func goLexer() c.Lexer {
	return c.MustNewLexer(
		&c.Config{
			Name:      "Go",
			Aliases:   []string{"go", "golang"},
			Filenames: []string{"*.go"},
			MimeTypes: []string{"text/x-gosrc"},
		},
		goRules,
	).SetAnalyser(func(text string) float32 {
		if strings.Contains(text, "fmt.") && strings.Contains(text, "package ") {
			return 0.5
		}
		if strings.Contains(text, "package ") {
			return 0.1
		}
		return 0.0
	})
}

func goRules() c.Rules {
	return c.Rules{
		"root": {
			{Pattern: `\n`, Type: c.TextWhitespace},
			{Pattern: `\s+`, Type: c.TextWhitespace},
			{Pattern: `//[^\s\n\r][^\n\r]*`, Type: c.CommentPreproc},
			{Pattern: `//[^\n\r]*`, Type: c.CommentSingle},
			{Pattern: `/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, Type: c.CommentMultiline},
			{Pattern: `(import|package)\b`, Type: c.KeywordNamespace},
			{Pattern: `(var|func|struct|map|chan|type|interface|const)\b`, Type: c.KeywordDeclaration},
			{Pattern: c.Words(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), Type: c.Keyword},
			{Pattern: `(true|false|iota|nil)\b`, Type: c.KeywordConstant},
			{Pattern: c.Words(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), Type: c.ByGroups(c.NameBuiltin, c.Punctuation)},
			{Pattern: c.Words(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), Type: c.KeywordType},
			{Pattern: `\d+i`, Type: c.LiteralNumber},
			{Pattern: `\d+\.\d*([Ee][-+]\d+)?i`, Type: c.LiteralNumber},
			{Pattern: `\.\d+([Ee][-+]\d+)?i`, Type: c.LiteralNumber},
			{Pattern: `\d+[Ee][-+]\d+i`, Type: c.LiteralNumber},
			{Pattern: `\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, Type: c.LiteralNumberFloat},
			{Pattern: `\.\d+([eE][+\-]?\d+)?`, Type: c.LiteralNumberFloat},
			{Pattern: `0[0-7]+`, Type: c.LiteralNumberOct},
			{Pattern: `0[xX][0-9a-fA-F_]+`, Type: c.LiteralNumberHex},
			{Pattern: `0b[01_]+`, Type: c.LiteralNumberBin},
			{Pattern: `(0|[1-9][0-9_]*)`, Type: c.LiteralNumberInteger},
			{Pattern: `'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, Type: c.LiteralStringChar},
			{Pattern: "`[^`]*`", Type: c.LiteralString},
			{Pattern: `"(\\\\|\\"|[^"])*"`, Type: c.LiteralString},
			{Pattern: `(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, Type: c.Operator},
			{Pattern: `([a-zA-Z_]\w*)(\s*)(\()`, Type: c.ByGroups(c.NameFunction, c.UsingSelf("root"), c.Punctuation)},
			{Pattern: `[|^<>=!()\[\]{}.,;:~]`, Type: c.Punctuation},
			{Pattern: `[^\W\d]\w*`, Type: c.NameOther},
		},
	}
}
