package match

import (
	"bytes"
	"strings"
)

// utf8BOM is the byte order mark some editors put at the start of UTF-8
// files.
const utf8BOM = "\xef\xbb\xbf"

// Encoding is what a file's bytes carry beyond its text: a byte order mark
// and its line endings. Matching works on the text with "\n" line endings;
// the Encoding puts the rest back when the file is written.
type Encoding struct {
	bom  bool
	crlf bool // every line ends in "\r\n"; the text holds "\n"
}

// decode splits raw file bytes into text (BOM removed, "\r\n" turned into
// "\n" when the whole file uses "\r\n") and its Encoding. A file that mixes
// line endings is left as it is, so that lines the edit does not touch keep
// theirs; the line-based strategies ignore a stray "\r" as trailing
// whitespace.
func Decode(raw []byte) (string, Encoding) {
	var enc Encoding
	if bytes.HasPrefix(raw, []byte(utf8BOM)) {
		enc.bom = true
		raw = raw[len(utf8BOM):]
	}
	s := string(raw)
	if n := strings.Count(s, "\r\n"); n > 0 && n == strings.Count(s, "\n") {
		enc.crlf = true
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s, enc
}

// encode is the inverse of decode.
func (e Encoding) Encode(text string) []byte {
	if e.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if e.bom {
		return append([]byte(utf8BOM), text...)
	}
	return []byte(text)
}

// NormalizeNewlines turns "\r\n" into "\n" in a model's argument.
func NormalizeNewlines(s string) string {
	if strings.Contains(s, "\r") {
		s = strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// LooksBinary reports whether data (the head of a file) holds a NUL byte,
// which text files never do.
func LooksBinary(data []byte) bool {
	if len(data) > 8000 {
		data = data[:8000]
	}
	return bytes.IndexByte(data, 0) >= 0
}

// CRLF reports whether the file's lines end in CR LF.
func (e Encoding) CRLF() bool { return e.crlf }
