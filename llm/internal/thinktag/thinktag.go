// Package thinktag moves reasoning written inside the answer text as
// <think>…</think> to a separate thinking stream, however the tags are split
// across streamed chunks.
//
// Two shapes are handled:
//   - an explicit block: the answer opens with <think> (after optional white
//     space) and the block ends at </think>;
//   - an implicit block: the chat template opened <think> in the prompt
//     (Qwen3 "thinking" and DeepSeek-R1 templates), so the stream holds only a
//     lone </think> and everything before it is reasoning. The caller says
//     when to expect this (Implicit), because it cannot be known from the
//     stream until the closing tag arrives.
//
// When the caller could not say, it can ask the splitter to watch the answer
// text for a lone </think> (Watch): then the text already passed on turns
// out to have been reasoning, and the caller is told so that it can move it.
// The tag counts only where it plausibly closes a block: not after the
// answer wrote <think> itself or closed a block, not inside backticks, not
// right after a quote.
//
// Outside a block the splitter is a pass-through that never holds text back,
// except, while it watches, a possible partial tag at the end of a chunk.
//
// TemplateOpensThink tells from a chat template whether it opens the block
// in the prompt.
package thinktag

import (
	"strings"
	"unicode/utf8"
)

const (
	openTag  = "<think>"
	closeTag = "</think>"
)

type state uint8

const (
	stStart    state = iota // nothing but white space seen yet
	stThink                 // inside a block
	stAfter                 // just closed a block: drop white space before the answer
	stText                  // answer text: pass-through
	stImplicit              // implicit block, before its first non-space byte
	stWatch                 // answer text, watched for a lone </think>
)

// Emit receives each piece of output: thinking reports which stream it
// belongs to. Pieces are substrings of the fed chunks wherever possible.
type Emit func(thinking bool, text string)

// Splitter is the streaming state machine. The zero value expects an
// explicit block; use New for an implicit one. It is not safe for concurrent
// use.
type Splitter struct {
	st state
	// held is a possible partial tag (or leading white space) not yet
	// known to be text or tag.
	held strings.Builder
	ws   int // leading white-space bytes at the front of held
	// implicit records the thinking of an implicit block until its close is
	// seen, so that a stream that never closes it can be given back as text.
	implicit    bool
	implicitBuf strings.Builder
	closed      bool
	// lone is the hook of Watch (nil: not watching).
	lone func() bool
	// ticks counts the backticks of the watched text (odd: inside code);
	// tail is its last bytes, for the rune before a tag.
	ticks int
	tail  string
}

// New returns a Splitter. With implicit set, the stream is taken to start
// inside a thinking block whose opening tag was in the prompt.
func New(implicit bool) *Splitter {
	s := &Splitter{}
	s.Reset(implicit)
	return s
}

// Reset makes s ready for a new stream.
func (s *Splitter) Reset(implicit bool) {
	s.held.Reset()
	s.ws = 0
	s.implicitBuf.Reset()
	s.closed = false
	s.implicit = implicit
	s.ticks, s.tail = 0, ""
	s.st = stStart
	if implicit {
		s.st = stImplicit
	}
}

// Watch makes the splitter, when it does not expect an implicit block, watch
// the answer text for a lone </think> closing a block that the chat template
// opened. On one, it calls lone before emitting anything more: a lone that
// returns true has taken everything emitted as text so far to be reasoning;
// the text between that and the tag is then emitted as thinking, and what
// follows the tag is the answer. A lone that returns false refuses: the tag
// and the rest are text. Either way watching ends; it ends too at <think>
// written in the answer, after an explicit block, and at a tag inside
// backticks or right after a quote. Call Watch before the first Feed; Reset
// keeps it.
func (s *Splitter) Watch(lone func() bool) { s.lone = lone }

// Unwatch stops watching (the server sent reasoning apart, say): a partial
// tag held back is emitted as text.
func (s *Splitter) Unwatch(emit Emit) {
	s.lone = nil
	if s.st == stWatch {
		s.endWatch("", emit)
	}
}

// Feed processes the next chunk of answer text.
func (s *Splitter) Feed(chunk string, emit Emit) {
	for chunk != "" {
		switch s.st {
		case stText:
			emit(false, chunk)
			return
		case stWatch:
			chunk = s.feedWatch(chunk, emit)
		case stStart, stImplicit:
			chunk = s.feedStart(chunk, emit)
		case stAfter:
			i := firstNonSpace(chunk)
			if i < 0 {
				return
			}
			chunk = chunk[i:]
			s.st = stText
		case stThink:
			chunk = s.feedThink(chunk, emit)
		}
	}
}

// feedStart handles the leading part: white space, then either <think> or
// anything else. It returns what is left of chunk to process.
func (s *Splitter) feedStart(chunk string, emit Emit) string {
	for i := 0; i < len(chunk); i++ {
		c := chunk[i]
		tagPart := s.held.Len() - s.ws
		if tagPart == 0 {
			if isSpace(c) {
				s.held.WriteByte(c)
				s.ws++
				continue
			}
			if c != '<' {
				return s.leaveStart(chunk[i:], emit)
			}
		}
		// Matching <think> or </think> byte by byte, across chunks. A reply
		// that starts by closing the block had it opened by the template
		// and left empty.
		tag := s.held.String()[s.ws:] + string(c)
		isOpen, isClose := strings.HasPrefix(openTag, tag), strings.HasPrefix(closeTag, tag)
		if !isOpen && !isClose {
			return s.leaveStart(chunk[i:], emit)
		}
		s.held.WriteByte(c)
		switch tag {
		case openTag:
			s.held.Reset()
			s.ws = 0
			s.st = stThink
			return chunk[i+1:]
		case closeTag:
			s.held.Reset()
			s.ws = 0
			s.close()
			return chunk[i+1:]
		}
	}
	return ""
}

// leaveStart is called when the leading part turned out not to open a block.
func (s *Splitter) leaveStart(rest string, emit Emit) string {
	held := s.held.String()
	s.held.Reset()
	s.ws = 0
	if s.st == stImplicit {
		// The block was opened in the prompt: what we held is reasoning.
		s.st = stThink
		if held != "" {
			s.think(held, emit)
		}
		return rest
	}
	s.st = stText
	if s.lone != nil {
		s.st = stWatch
		s.watched(held)
	}
	if held != "" {
		emit(false, held)
	}
	return rest
}

// feedThink emits reasoning up to the closing tag, holding a possible
// partial tag at the end of the chunk.
func (s *Splitter) feedThink(chunk string, emit Emit) string {
	if s.held.Len() > 0 {
		// Continue a partial closing tag.
		held := s.held.String()
		n := min(len(closeTag)-len(held), len(chunk))
		if chunk[:n] == closeTag[len(held):len(held)+n] {
			if len(held)+n == len(closeTag) {
				s.held.Reset()
				s.close()
				return chunk[n:]
			}
			s.held.WriteString(chunk[:n])
			return ""
		}
		// Not a tag after all: the held bytes are reasoning.
		s.held.Reset()
		s.think(held, emit)
	}
	if i := strings.Index(chunk, closeTag); i >= 0 {
		if i > 0 {
			s.think(chunk[:i], emit)
		}
		s.close()
		return chunk[i+len(closeTag):]
	}
	// Hold the longest suffix that is a prefix of the closing tag.
	k := partialSuffix(chunk, closeTag)
	if k > 0 {
		s.think(chunk[:k], emit)
	}
	s.held.WriteString(chunk[k:])
	return ""
}

// feedWatch passes answer text on, looking for a lone closing tag; a
// possible partial tag at the end of the chunk is held back.
func (s *Splitter) feedWatch(chunk string, emit Emit) string {
	buf := chunk
	if s.held.Len() > 0 {
		buf = s.held.String() + chunk
		s.held.Reset()
	}
	ticks := s.ticks
	for i := 0; i < len(buf); i++ {
		switch buf[i] {
		case '`':
			ticks++
			continue
		case '<':
		default:
			continue
		}
		rest := buf[i:]
		switch {
		case strings.HasPrefix(rest, openTag):
			// The answer writes the tag itself: a </think> after it
			// closes that, not a block the template opened.
			return s.endWatch(buf, emit)
		case strings.HasPrefix(rest, closeTag):
			before := buf[:i]
			if len(before) < utf8.UTFMax {
				before = s.tail + before
			}
			prev, _ := utf8.DecodeLastRuneInString(before)
			if ticks%2 == 1 || isQuote(prev) || !s.lone() {
				// Code or a quotation showing the tag, or the caller
				// refused: the tag is text, and so is what follows.
				return s.endWatch(buf, emit)
			}
			if i > 0 {
				emit(true, buf[:i])
			}
			s.close()
			return rest[len(closeTag):]
		case len(rest) < len(closeTag) && (strings.HasPrefix(closeTag, rest) || strings.HasPrefix(openTag, rest)):
			s.held.WriteString(rest)
			buf = buf[:i]
		}
	}
	s.watched(buf)
	if buf != "" {
		emit(false, buf)
	}
	return ""
}

// endWatch ends watching: held (partial tag) and text are emitted as text,
// and the splitter is a pass-through from now on.
func (s *Splitter) endWatch(text string, emit Emit) string {
	if s.held.Len() > 0 {
		text = s.held.String() + text
		s.held.Reset()
	}
	s.st = stText
	if text != "" {
		emit(false, text)
	}
	return ""
}

// watched records text passed on while watching.
func (s *Splitter) watched(text string) {
	if text == "" {
		return
	}
	s.ticks += strings.Count(text, "`")
	if len(text) < utf8.UTFMax {
		text = s.tail + text
	}
	s.tail = text[max(0, len(text)-utf8.UTFMax):]
}

// isQuote reports whether r opens or closes a quotation or code: a tag
// right after one is being shown, not used.
func isQuote(r rune) bool {
	switch r {
	case '`', '"', '\'', '“', '”', '‘', '’', '«', '»', '„':
		return true
	}
	return false
}

func (s *Splitter) think(text string, emit Emit) {
	if s.implicit && !s.closed {
		s.implicitBuf.WriteString(text)
	}
	emit(true, text)
}

func (s *Splitter) close() {
	s.closed = true
	s.implicitBuf.Reset()
	s.st = stAfter
}

// Flush ends the stream, emitting anything still held. When an implicit
// block was never closed, all its reasoning is emitted again as answer text:
// the model did not think after all, and the answer must not be lost.
func (s *Splitter) Flush(emit Emit) {
	held := s.held.String()
	s.held.Reset()
	s.ws = 0
	switch s.st {
	case stStart, stWatch:
		if held != "" {
			emit(false, held)
		}
	case stImplicit, stThink:
		if held != "" {
			s.think(held, emit)
		}
		if s.implicit && !s.closed && s.implicitBuf.Len() > 0 {
			emit(false, s.implicitBuf.String())
		}
	}
	s.implicitBuf.Reset()
	s.st = stText
}

// partialSuffix returns the index in s where the longest suffix of s that is
// a proper prefix of tag begins, or len(s) if there is none.
func partialSuffix(s, tag string) int {
	start := max(0, len(s)-len(tag)+1)
	for i := start; i < len(s); i++ {
		if s[i] == tag[0] && strings.HasPrefix(tag, s[i:]) {
			return i
		}
	}
	return len(s)
}

func firstNonSpace(s string) int {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return i
		}
	}
	return -1
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
