// Package termtext makes text that Hearth did not write (a model's answer
// and reasoning, tool output, a server's error message, a session title the
// model chose) safe to show on a terminal.
//
// A terminal obeys the control sequences in what it prints. A model steered
// by prompt injection can therefore write to the user's clipboard (OSC 52),
// retitle the window (OSC 0/2), clear the screen or move the cursor to
// overwrite what was shown (CSI), plant a hyperlink whose target differs
// from its text (OSC 8), or talk to the terminal itself (DCS, APC, PM, SOS
// strings; some terminals answer them, or run their payloads). What
// reaches the terminal through this package is text and nothing else:
//
//   - Printable text is kept, all of Unicode, byte for byte, and so are
//     newline and tab.
//   - Escape sequences are removed whole: ESC with its parameters and final
//     byte (CSI such as ESC [ 2 J, two-byte and nF escapes), and the strings
//     (OSC, DCS, SOS, PM, APC) with their payload up to their terminator
//     (ST, BEL, CAN or SUB). The payload goes with them because ESC never
//     occurs in ordinary text: what follows it is meant for the terminal,
//     not the reader (an OSC 52 payload, a window title). A string also ends
//     at a line break, so a stray, unterminated ESC ] can hide at most the
//     rest of one line, never the rest of an answer.
//   - C1 controls (U+0080–U+009F, which some terminals obey even in UTF-8)
//     are removed, but only the control itself: unlike ESC they occur in
//     ordinary text that was decoded with the wrong charset (UTF-8 read as
//     Latin-1 turns ” into â, U+0080, U+009D), so what follows them is kept.
//   - The other C0 controls (BEL, backspace, form feed, NUL…) and DEL are
//     removed: backspace, like the cursor moves, can overwrite what was
//     shown.
//   - A carriage return becomes a line break (CR LF is one line break), so
//     that "harmless\rrm -rf ~" shows both parts instead of the second over
//     the first. Stripper.KeepCR leaves it to a caller that draws the line
//     itself.
//   - Bidirectional embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069) are made visible as [U+202E] rather than removed or
//     kept: kept, they make text read differently from what it is (the
//     "Trojan Source" attack, CVE-2021-42574: a command or a path shown in
//     an order that is not the one it has); removed, the reader would not
//     know that the text tried. The marks a reader needs for mixed-direction
//     text (U+200E, U+200F, U+061C) are kept.
//   - Bytes that are not UTF-8 become U+FFFD, one per byte, as a UTF-8
//     terminal shows them; a raw 0x80–0x9F byte is never passed through, so
//     a terminal set to 8-bit controls cannot read one as C1.
//
// So the output never holds ESC, a C0 control other than newline and tab, DEL
// or a C1 control, and is always valid UTF-8. Text with nothing to remove is
// returned unchanged, without copying.
//
// A Stripper carries its state from one piece to the next: a sequence split
// across two streamed deltas, or a character split across two reads, is
// handled exactly as if it had come in one piece.
package termtext

import (
	"io"
	"unicode/utf8"
)

// state is where the parser is in an escape sequence.
type state uint8

const (
	ground   state = iota // ordinary text
	escape                // after ESC
	escInter              // ESC and intermediate bytes (nF escapes)
	csi                   // ESC [ and parameters
	str                   // OSC, DCS, SOS, PM, APC: the payload up to its terminator
)

// Stripper removes control sequences from a stream of text given in pieces.
// The zero value is ready to use; a Stripper is not safe for concurrent use.
type Stripper struct {
	// KeepCR keeps carriage returns as they are, for a caller that resolves
	// them before the text reaches a terminal (a tool card that shows the
	// last state of a progress line). Nothing else changes.
	KeepCR bool

	st state
	// cr is set after a carriage return became a line break: a line feed
	// right after it is the same line break.
	cr bool
	// u holds the first bytes of a character that the next piece completes.
	u  [utf8.UTFMax]byte
	un int
}

// Append appends to dst what p becomes, and returns the extended slice.
// Bytes of an unfinished sequence or character are held for the next call.
func (s *Stripper) Append(dst, p []byte) []byte { return strip(s, dst, p) }

// AppendString is Append for a string.
func (s *Stripper) AppendString(dst []byte, p string) []byte { return strip(s, dst, p) }

func strip[T string | []byte](s *Stripper, dst []byte, p T) []byte {
	for i := 0; i < len(p); {
		if s.un > 0 {
			// Complete a character begun in an earlier piece.
			s.u[s.un] = p[i]
			s.un++
			i++
			if !utf8.FullRune(s.u[:s.un]) {
				continue
			}
			held, k := s.u, s.un
			s.un = 0
			r, n := utf8.DecodeRune(held[:k])
			dst = s.step(dst, r, held[:n])
			if n < k {
				// Not UTF-8: one U+FFFD for the first byte, and the rest
				// is read again.
				dst = strip(s, dst, held[n:k])
			}
			continue
		}
		b := p[i]
		if b < utf8.RuneSelf {
			if s.st == ground && !s.cr {
				j := i
				for j < len(p) && p[j] < utf8.RuneSelf && plain[p[j]] {
					j++
				}
				if j > i {
					dst = append(dst, p[i:j]...)
					i = j
					continue
				}
			}
			dst = s.step(dst, rune(b), []byte{b})
			i++
			continue
		}
		var c [utf8.UTFMax]byte
		m := copy(c[:], p[i:])
		if !utf8.FullRune(c[:m]) {
			s.un = copy(s.u[:], c[:m])
			break
		}
		r, n := utf8.DecodeRune(c[:m])
		dst = s.step(dst, r, c[:n])
		i += n
	}
	return dst
}

// String returns what p becomes, carrying the state to the next piece.
// Clean text in the ground state is returned as it is, without copying.
func (s *Stripper) String(p string) string {
	if s.st == ground && !s.cr && s.un == 0 && cleanPrefix(p) == len(p) {
		return p
	}
	return string(strip(s, nil, p))
}

// Flush ends the stream: it appends to dst what the held bytes of an
// unfinished character become (U+FFFD each, unless inside a sequence),
// drops an unfinished sequence, and leaves the Stripper ready for a new
// stream.
func (s *Stripper) Flush(dst []byte) []byte {
	for i := range s.un {
		dst = s.step(dst, utf8.RuneError, s.u[i:i+1])
	}
	s.Reset()
	return dst
}

// Reset forgets any unfinished sequence or character.
func (s *Stripper) Reset() {
	s.st, s.cr, s.un = ground, false, 0
}

// String returns s without control sequences (see the package comment).
// It returns s itself when there is nothing to remove.
func String(s string) string {
	if cleanPrefix(s) == len(s) {
		return s
	}
	var st Stripper
	return string(st.Flush(st.AppendString(make([]byte, 0, len(s)), s)))
}

// Writer writes to an underlying writer what a Stripper makes of the text
// written to it. Call Flush at the end of a stream.
type Writer struct {
	s   Stripper
	w   io.Writer
	buf []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write strips p and writes the result. It reports len(p) written when the
// underlying write succeeds, whatever was removed.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = w.s.Append(w.buf[:0], p)
	return len(p), w.flushBuf()
}

// WriteString is Write for a string.
func (w *Writer) WriteString(p string) (int, error) {
	w.buf = w.s.AppendString(w.buf[:0], p)
	return len(p), w.flushBuf()
}

// Flush ends the stream (see Stripper.Flush): what comes next starts
// outside any sequence.
func (w *Writer) Flush() error {
	w.buf = w.s.Flush(w.buf[:0])
	return w.flushBuf()
}

func (w *Writer) flushBuf() error {
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}

// plain marks the ASCII bytes that pass as they are: printable, newline
// and tab.
var plain = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = true
	}
	t['\n'], t['\t'] = true, true
	return t
}()

// cleanPrefix returns the length of the longest prefix of p that passes
// unchanged: a fast scan for the common case of nothing to remove.
func cleanPrefix(p string) int {
	for i := 0; i < len(p); {
		b := p[i]
		if b < utf8.RuneSelf {
			if !plain[b] {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && n == 1 || isC1(r) || isBidi(r) {
			return i
		}
		i += n
	}
	return len(p)
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// isBidi reports the explicit directional embeddings, overrides and
// isolates: LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI.
func isBidi(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }

const (
	bel = 0x07
	esc = 0x1b
	can = 0x18
	sub = 0x1a
	del = 0x7f
	st8 = 0x9c // ST as a C1 control
)

// step handles one character; raw is its bytes in the input (one byte for
// a byte that is not UTF-8, when r is U+FFFD).
func (s *Stripper) step(dst []byte, r rune, raw []byte) []byte {
	if s.cr {
		s.cr = false
		if r == '\n' {
			return dst // CR LF: one line break, already written
		}
	}
	switch s.st {
	case ground:
		switch {
		case r == esc:
			s.st = escape
		case r < 0x20:
			return s.control(dst, r)
		case r == del, isC1(r):
		case isBidi(r):
			dst = append(dst, "[U+"...)
			dst = append(dst, hex4(r)...)
			dst = append(dst, ']')
		case r == utf8.RuneError:
			dst = utf8.AppendRune(dst, utf8.RuneError)
		default:
			dst = append(dst, raw...)
		}
	case escape, escInter, csi:
		switch {
		case r == esc:
			s.st = escape
		case r == can || r == sub:
			s.st = ground
		case r < 0x20:
			// Terminals act on a control inside a sequence and go on with
			// the sequence.
			return s.control(dst, r)
		case r == del:
			// ignored inside a sequence, as terminals do
		case r >= 0x80:
			// Not part of any sequence: it ends it, and is read as text.
			s.st = ground
			return s.step(dst, r, raw)
		case s.st == escape:
			switch {
			case r == '[':
				s.st = csi
			case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
				s.st = str
			case r < 0x30:
				s.st = escInter
			default:
				s.st = ground // a two-byte escape such as ESC c or ESC \
			}
		case s.st == csi && r < 0x40, s.st == escInter && r < 0x30:
			// parameters and intermediate bytes
		default:
			s.st = ground // the final byte
		}
	case str:
		switch r {
		case esc:
			s.st = escape // ESC \ is ST; any other escape starts anew
		case bel, can, sub, st8:
			s.st = ground
		case '\n', '\r':
			s.st = ground
			return s.step(dst, r, raw)
		}
	}
	return dst
}

// control handles a C0 control: newline and tab are kept, a carriage
// return becomes a line break, the rest are dropped.
func (s *Stripper) control(dst []byte, r rune) []byte {
	switch r {
	case '\n', '\t':
		dst = append(dst, byte(r))
	case '\r':
		if s.KeepCR {
			return append(dst, '\r')
		}
		dst = append(dst, '\n')
		s.cr = true
	}
	return dst
}

func hex4(r rune) []byte {
	const digits = "0123456789ABCDEF"
	return []byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]}
}
