// Package textcall finds tool calls that a model wrote as text, because it
// has no native tool calling or its server did not parse them, and turns them
// into real calls while the answer streams.
//
// Recognised, when the request offered tools:
//   - <tool_call>{"name": …, "arguments": {…}}</tool_call> anywhere (Hermes,
//     Qwen); the closing tag may be missing at the end of the reply;
//   - [TOOL_CALLS][{"name": …, "arguments": {…}}] anywhere (Mistral);
//   - a fenced ```json block at the start of a line holding such an object
//     (or a list of them) whose name is an offered tool;
//   - such an object as the whole start of the reply (Llama 3 style, with
//     "parameters" for "arguments").
//
// Text that merely shows JSON is left alone: a fenced or bare object becomes a
// call only if it names an offered tool and has no keys but a call's.
// Outside those shapes text passes through at once; only a possible partial
// marker at the end of a chunk is held back until the next chunk.
package textcall

import (
	"encoding/json"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/argjson"
)

const (
	hermesOpen   = "<tool_call>"
	hermesClose  = "</tool_call>"
	mistralOpen  = "[TOOL_CALLS]"
	fence        = "```"
	maxCaptured  = 1 << 20 // a capture longer than this is given up as text
	triggerBytes = "<[`{"
)

type mode uint8

const (
	mPass    mode = iota // pass-through
	mHermes              // inside <tool_call>…
	mMistral             // after [TOOL_CALLS]
	mFence               // inside a ``` block
	mBare                // a JSON object at the start of the reply
)

// Extractor is the streaming state machine. It is not safe for concurrent use.
type Extractor struct {
	offered func(name string) bool
	text    func(string)
	call    func(llm.ToolCall)

	mode mode
	// held is a possible partial marker (pass-through) or the captured
	// text of a candidate call (other modes).
	held strings.Builder
	// started is set once the reply has shown anything but white space;
	// lineStart when the last byte passed on was a newline.
	started   bool
	lineStart bool
	// afterCall drops the white space between and after captured calls.
	afterCall bool
	// json tracks nesting in mBare and mMistral.
	depth    int
	inString bool
	escaped  bool
	// fenceChecked is set once a fence's first line and first content byte
	// showed it may hold a call.
	fenceChecked bool
}

// New returns an Extractor. offered reports whether a name is one of the
// request's tools; text receives answer text and call each call found.
func New(offered func(string) bool, text func(string), call func(llm.ToolCall)) *Extractor {
	return &Extractor{offered: offered, text: text, call: call, lineStart: true}
}

// Feed processes the next chunk of answer text.
func (e *Extractor) Feed(chunk string) {
	for chunk != "" {
		if e.mode == mPass {
			chunk = e.pass(chunk)
		} else {
			chunk = e.capture(chunk)
		}
	}
}

// pass emits text up to the next marker and switches mode there.
func (e *Extractor) pass(chunk string) string {
	if e.held.Len() > 0 {
		chunk = e.held.String() + chunk
		e.held.Reset()
	}
	if e.afterCall {
		i := 0
		for i < len(chunk) && isSpace(chunk[i]) {
			i++
		}
		chunk = chunk[i:]
		if chunk == "" {
			return ""
		}
		e.afterCall = false
	}
	if !e.started && strings.TrimSpace(chunk) == "" {
		// Leading white space waits: it may precede a call.
		e.held.WriteString(chunk)
		return ""
	}
	from := 0
	for {
		j := strings.IndexAny(chunk[from:], triggerBytes)
		if j < 0 {
			e.emit(chunk)
			return ""
		}
		i := from + j
		rest := chunk[i:]
		var marker string
		var next mode
		switch chunk[i] {
		case '<':
			marker, next = hermesOpen, mHermes
		case '[':
			marker, next = mistralOpen, mMistral
		case '`':
			if !e.lineStartAt(chunk, i) {
				from = i + 1
				continue
			}
			marker, next = fence, mFence
		case '{':
			if e.started || strings.TrimSpace(chunk[:i]) != "" {
				from = i + 1
				continue
			}
			marker, next = "{", mBare
		}
		switch {
		case strings.HasPrefix(rest, marker):
			e.mode = next
			e.depth, e.inString, e.escaped, e.fenceChecked = 0, false, false, false
			if next == mBare {
				// Leading white space is kept with the capture: dropped
				// if it is a call, given back if not.
				return chunk
			}
			e.emit(chunk[:i])
			if next == mFence {
				// The marker is part of what a failed capture gives back.
				return rest
			}
			e.held.WriteString(marker)
			return rest[len(marker):]
		case len(rest) < len(marker) && strings.HasPrefix(marker, rest):
			// A partial marker at the end of the chunk: wait for more.
			e.emit(chunk[:i])
			e.held.WriteString(rest)
			return ""
		}
		from = i + 1
	}
}

// lineStartAt reports whether chunk[i] begins a line (indentation allowed).
func (e *Extractor) lineStartAt(chunk string, i int) bool {
	j := i - 1
	for j >= 0 && (chunk[j] == ' ' || chunk[j] == '\t') {
		j--
	}
	if j < 0 {
		return e.lineStart
	}
	return chunk[j] == '\n'
}

// capture accumulates a candidate call until it is complete, then decides.
func (e *Extractor) capture(chunk string) string {
	start := e.held.Len()
	e.held.WriteString(chunk)
	buf := e.held.String()
	switch e.mode {
	case mHermes:
		if i := strings.Index(buf[max(0, start-len(hermesClose)):], hermesClose); i >= 0 {
			end := max(0, start-len(hermesClose)) + i
			inner := buf[len(hermesOpen):end]
			e.held.Reset()
			e.mode = mPass
			if !e.emitCalls(inner, false) {
				e.emit(buf[:end+len(hermesClose)])
			}
			return buf[end+len(hermesClose):]
		}
	case mMistral, mBare:
		from := len(mistralOpen)
		if e.mode == mBare {
			from = 0
		}
		if end := e.scanJSON(buf, max(from, start)); end >= 0 {
			strict := e.mode == mBare
			e.held.Reset()
			e.mode = mPass
			if !e.emitCalls(buf[from:end], strict) {
				e.emit(buf[:end])
			}
			return buf[end:]
		}
	case mFence:
		if !e.fenceChecked {
			nl := strings.IndexByte(buf, '\n')
			if nl < 0 {
				if len(buf) > 64 {
					return e.giveUp()
				}
				return ""
			}
			info := strings.TrimSpace(strings.TrimLeft(buf[:nl], " \t`"))
			switch strings.ToLower(info) {
			case "", "json", "tool_call", "tool_code", "jsonc":
			default:
				return e.giveUp()
			}
			body := strings.TrimSpace(buf[nl+1:])
			if body == "" {
				return ""
			}
			if body[0] != '{' && body[0] != '[' {
				return e.giveUp()
			}
			e.fenceChecked = true
		}
		nl := strings.IndexByte(buf, '\n')
		if i := strings.Index(buf[nl:], "\n"+strings.TrimLeft(fence, " ")); i >= 0 {
			closeAt := nl + i
			// The closing fence must be a line of its own (``` and spaces).
			lineEnd := strings.IndexByte(buf[closeAt+1:], '\n')
			if lineEnd < 0 {
				return "" // wait for the end of the closing line
			}
			line := strings.TrimSpace(buf[closeAt+1 : closeAt+1+lineEnd])
			if strings.Trim(line, "`") != "" {
				return e.giveUp()
			}
			end := closeAt + 1 + lineEnd + 1
			e.held.Reset()
			e.mode = mPass
			if !e.emitCalls(buf[nl+1:closeAt], true) {
				e.emit(buf[:end])
			}
			return buf[end:]
		}
	}
	if e.held.Len() > maxCaptured {
		return e.giveUp()
	}
	return ""
}

// giveUp ends a capture that is not a call: what was held is plain text.
func (e *Extractor) giveUp() string {
	s := e.held.String()
	e.held.Reset()
	e.mode = mPass
	e.emit(s)
	return ""
}

// scanJSON continues the nesting scan of buf from byte i and returns the end
// of the first complete JSON value, or -1.
func (e *Extractor) scanJSON(buf string, i int) int {
	for ; i < len(buf); i++ {
		c := buf[i]
		if e.inString {
			switch {
			case e.escaped:
				e.escaped = false
			case c == '\\':
				e.escaped = true
			case c == '"':
				e.inString = false
			}
			continue
		}
		switch c {
		case '"':
			e.inString = true
		case '{', '[':
			e.depth++
		case '}', ']':
			e.depth--
			if e.depth <= 0 {
				return i + 1
			}
		}
	}
	return -1
}

// Abort ends a stream that failed: whatever is held is given back as text,
// never made into a call (the call may have been cut off).
func (e *Extractor) Abort() {
	buf := e.held.String()
	e.held.Reset()
	e.mode = mPass
	e.emit(buf)
}

// Take returns what the extractor holds back and has not passed on (a
// possible partial marker, leading white space, a call being captured), and
// makes it ready for a new answer, as New does. The caller found that the
// text so far was reasoning, not the answer: what is held is reasoning too.
func (e *Extractor) Take() string {
	held := e.held.String()
	*e = Extractor{offered: e.offered, text: e.text, call: e.call, lineStart: true}
	return held
}

// Flush ends the stream: a capture still open is decided on what arrived
// (a missing closing tag or fence is forgiven), anything held is text.
func (e *Extractor) Flush() {
	buf := e.held.String()
	e.held.Reset()
	m := e.mode
	e.mode = mPass
	switch m {
	case mPass:
		e.emit(buf)
	case mHermes:
		if !e.emitCalls(buf[len(hermesOpen):], false) {
			e.emit(buf)
		}
	case mMistral:
		if !e.emitCalls(buf[len(mistralOpen):], false) {
			e.emit(buf)
		}
	case mBare:
		if !e.emitCalls(buf, true) {
			e.emit(buf)
		}
	case mFence:
		body := buf
		if nl := strings.IndexByte(buf, '\n'); nl >= 0 {
			body = strings.TrimRight(strings.TrimSpace(buf[nl+1:]), "`")
		} else {
			body = ""
		}
		if !e.emitCalls(body, true) {
			e.emit(buf)
		}
	}
}

func (e *Extractor) emit(s string) {
	if s == "" {
		return
	}
	e.text(s)
	if !e.started && strings.TrimSpace(s) != "" {
		e.started = true
	}
	e.lineStart = s[len(s)-1] == '\n'
}

// emitCalls parses s as one call object or a list of them and emits them.
// strict requires every call to name an offered tool and to have no keys
// but a call's. It reports whether s was a call.
func (e *Extractor) emitCalls(s string, strict bool) bool {
	calls, ok := parseCalls(s, strict, e.offered)
	if !ok {
		return false
	}
	for _, c := range calls {
		e.call(c)
	}
	e.started = true
	e.afterCall = true
	e.lineStart = true
	return true
}

// callObject is the shape a written call takes: {"name","arguments"} or
// {"name","parameters"}, or OpenAI's {"type":"function","function":{…}}.
type callObject struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
	Function   *callObject     `json:"function"`
}

var callKeys = map[string]bool{"name": true, "arguments": true, "parameters": true, "type": true, "function": true, "id": true}

func parseCalls(s string, strict bool, offered func(string) bool) ([]llm.ToolCall, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	var raws []json.RawMessage
	if s[0] == '[' {
		if err := json.Unmarshal([]byte(s), &raws); err != nil || len(raws) == 0 {
			return nil, false
		}
	} else {
		raw, _, err := argjson.Normalize([]byte(s))
		if err != nil {
			return nil, false
		}
		raws = []json.RawMessage{raw}
	}
	calls := make([]llm.ToolCall, 0, len(raws))
	for _, raw := range raws {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			return nil, false
		}
		var obj callObject
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, false
		}
		if obj.Function != nil && obj.Name == "" {
			obj = *obj.Function
		}
		if obj.Name == "" {
			return nil, false
		}
		if strict {
			if !offered(obj.Name) {
				return nil, false
			}
			for k := range keys {
				if !callKeys[k] {
					return nil, false
				}
			}
		}
		args := obj.Arguments
		if len(args) == 0 {
			args = obj.Parameters
		}
		if len(args) > 0 && args[0] == '"' {
			// Arguments given as a string holding JSON.
			var inner string
			if json.Unmarshal(args, &inner) == nil {
				args = json.RawMessage(inner)
			}
		}
		tc := llm.ToolCall{ID: llm.NewCallID(), Name: obj.Name, FromText: true}
		norm, repaired, err := argjson.Normalize(args)
		if err != nil {
			tc.Args = json.RawMessage(`{}`)
			tc.ArgsError = err.Error()
		} else {
			tc.Args, tc.Repaired = norm, repaired
		}
		calls = append(calls, tc)
	}
	return calls, true
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
