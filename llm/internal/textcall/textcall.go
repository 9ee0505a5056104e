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
//
// A fence line that does not open a call (another language, or a body that
// does not start with { or [) is text, and what follows it is read again: a
// <tool_call> wrapped in a fence, or written after a code block, is found.
// Such a code block is tracked, so that its closing fence is text too and is
// not taken for the opening of another.
//
// An Extractor made by NewStrict (the prompted tool protocol, where
// <tool_call> is how the model was told to call) never gives a <tool_call>
// capture back as text: one that is not a readable call of an offered tool
// is reported as Malformed, and the other forms are read as above. EndAt
// sets a marker that ends the answer when the model writes it outside a
// capture (the prompted protocol's <tool_response); NewPlain reads no calls,
// only that marker.
package textcall

import (
	"encoding/json"
	"errors"
	"regexp"
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
	// maxFenceLine is how far the first line of a fence may run before its
	// end is seen: past it, the fence is not read for a call.
	maxFenceLine = 64
)

type mode uint8

const (
	mPass    mode = iota // pass-through
	mHermes              // inside <tool_call>…
	mMistral             // after [TOOL_CALLS]
	mFence               // inside a ``` block
	mBare                // a JSON object at the start of the reply
	mSkip                // strict: the rest of an overlong <tool_call>, dropped
	mEnded               // the end marker came (EndAt): the rest is dropped
	mClose               // not a capture: the closing fence of a code block
)

// Reason says why a strict Extractor could not read a <tool_call> capture.
type Reason string

// The reasons a <tool_call> capture is Malformed.
const (
	// ReasonJSON: the body is not a JSON object (or list of them), even
	// after repair, or it is empty.
	ReasonJSON Reason = "invalid JSON"
	// ReasonNoName: the object has no "name".
	ReasonNoName Reason = "no name"
	// ReasonUnknown: the name is not one of the offered tools.
	ReasonUnknown Reason = "unknown tool"
	// ReasonTooLong: the capture grew past the size limit (1 MiB) before
	// its closing tag; the rest of it, up to </tool_call>, is dropped.
	ReasonTooLong Reason = "too long"
	// ReasonTooLarge: the body is not valid JSON, and too large to be
	// repaired (argjson.MaxRepair).
	ReasonTooLarge Reason = "too large to repair"
)

// Malformed is a <tool_call> capture that a strict Extractor could not read
// as a call of an offered tool.
type Malformed struct {
	// Name is the tool's name where one could be read, else "".
	Name   string
	Reason Reason
	// Text is the capture as the model wrote it, tags included; for an
	// element of a list, that element; for ReasonTooLong, what was held
	// when it was given up.
	Text string
}

// Extractor is the streaming state machine. It is not safe for concurrent use.
type Extractor struct {
	offered func(name string) bool
	text    func(string)
	call    func(llm.ToolCall)
	// malformed is set in strict mode (NewStrict).
	malformed func(Malformed)

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
	// inFence is set inside a code block whose opening fence was given up
	// as text: its next fence line closes it, and is text too.
	inFence bool
	// plain (NewPlain) reads no calls; end is the marker set by EndAt;
	// triggers are the bytes that may begin a marker.
	plain    bool
	end      string
	triggers string
}

// New returns an Extractor. offered reports whether a name is one of the
// request's tools; text receives answer text and call each call found.
func New(offered func(string) bool, text func(string), call func(llm.ToolCall)) *Extractor {
	return &Extractor{offered: offered, text: text, call: call, lineStart: true, triggers: triggerBytes}
}

// NewStrict returns an Extractor for the prompted tool protocol: as New, but
// a <tool_call> capture that is not a readable call of an offered tool (or a
// list of them) goes to malformed instead of being given back as text, and
// its well-formed calls must name offered tools. A capture cut by a failed
// stream (Abort) is still text.
func NewStrict(offered func(string) bool, text func(string), call func(llm.ToolCall), malformed func(Malformed)) *Extractor {
	return &Extractor{offered: offered, text: text, call: call, malformed: malformed, lineStart: true, triggers: triggerBytes}
}

// NewPlain returns an Extractor that reads no calls: all text goes to text
// as it comes, and only the marker set by EndAt is looked for.
func NewPlain(text func(string)) *Extractor {
	return &Extractor{text: text, plain: true, started: true, lineStart: true}
}

// EndAt makes the answer end at marker (which must not be empty): when the
// marker begins in text the extractor scans for calls, outside any capture
// (a call being read), the text before it is passed on, the marker and all
// that follows are dropped, and Ended reports true. A possible partial
// marker at the end of a chunk is held back like the others. Call it before
// the first Feed.
func (e *Extractor) EndAt(marker string) {
	e.end = marker
	if !strings.Contains(e.triggers, marker[:1]) {
		e.triggers += marker[:1]
	}
}

// Ended reports whether the marker set by EndAt came: the answer is over.
func (e *Extractor) Ended() bool { return e.mode == mEnded }

// Feed processes the next chunk of answer text.
func (e *Extractor) Feed(chunk string) {
	for chunk != "" {
		switch e.mode {
		case mEnded:
			return
		case mPass:
			chunk = e.pass(chunk)
		default:
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
		j := strings.IndexAny(chunk[from:], e.triggers)
		if j < 0 {
			e.emit(chunk)
			return ""
		}
		i := from + j
		rest := chunk[i:]
		partial := false
		for _, m := range e.markersAt(chunk, i) {
			switch {
			case strings.HasPrefix(rest, m.marker):
				return e.open(chunk, i, m)
			case len(rest) < len(m.marker) && strings.HasPrefix(m.marker, rest):
				partial = true
			}
		}
		if partial {
			// A partial marker at the end of the chunk: wait for more.
			e.emit(chunk[:i])
			e.held.WriteString(rest)
			return ""
		}
		from = i + 1
	}
}

// marker is what may begin at a trigger byte, and the mode it leads to.
type marker struct {
	marker string
	next   mode
}

// markersAt returns the markers that may begin at chunk[i].
func (e *Extractor) markersAt(chunk string, i int) []marker {
	var out []marker
	if e.end != "" && chunk[i] == e.end[0] {
		out = append(out, marker{e.end, mEnded})
	}
	if e.plain {
		return out
	}
	switch chunk[i] {
	case '<':
		out = append(out, marker{hermesOpen, mHermes})
	case '[':
		out = append(out, marker{mistralOpen, mMistral})
	case '`':
		if e.lineStartAt(chunk, i) {
			if e.inFence {
				out = append(out, marker{fence, mClose})
			} else {
				out = append(out, marker{fence, mFence})
			}
		}
	case '{':
		if !e.started && strings.TrimSpace(chunk[:i]) == "" {
			out = append(out, marker{"{", mBare})
		}
	}
	return out
}

// open acts on the marker m found at chunk[i] and returns what is left to
// scan.
func (e *Extractor) open(chunk string, i int, m marker) string {
	rest := chunk[i:]
	switch m.next {
	case mEnded:
		e.emit(chunk[:i])
		e.mode = mEnded
		return ""
	case mClose:
		// The end of a code block, text like its body.
		e.inFence = false
		e.emit(chunk[:i+len(m.marker)])
		return rest[len(m.marker):]
	case mBare:
		// Leading white space is kept with the capture: dropped if it is
		// a call, given back if not.
		e.start(m.next)
		return chunk
	case mFence:
		// The marker is part of what a failed capture gives back.
		e.emit(chunk[:i])
		e.start(m.next)
		return rest
	}
	e.emit(chunk[:i])
	e.start(m.next)
	e.held.WriteString(m.marker)
	return rest[len(m.marker):]
}

// start begins a capture in mode m.
func (e *Extractor) start(m mode) {
	e.mode = m
	e.depth, e.inString, e.escaped, e.fenceChecked = 0, false, false, false
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
	if e.mode == mSkip {
		return e.skip(chunk)
	}
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
			if e.malformed != nil {
				e.emitStrict(inner, buf[:end+len(hermesClose)])
			} else if !e.emitCalls(inner, false) {
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
			if nl < 0 && len(buf) > maxFenceLine || nl > maxFenceLine {
				// Too long a first line to wait for (decided on its first
				// bytes only, however the text is split).
				return e.fenceText(buf, buf[:maxFenceLine+1])
			}
			if nl < 0 {
				return ""
			}
			info := strings.TrimSpace(strings.TrimLeft(buf[:nl], " \t`"))
			switch strings.ToLower(info) {
			case "", "json", "tool_call", "tool_code", "jsonc":
			default:
				return e.fenceText(buf, buf[:nl])
			}
			body := strings.TrimSpace(buf[nl+1:])
			if body == "" {
				return ""
			}
			if body[0] != '{' && body[0] != '[' {
				// Not a call in the fence (a <tool_call> wrapped in one
				// is read on its own).
				return e.fenceText(buf, buf[:nl])
			}
			e.fenceChecked = true
		}
		nl := strings.IndexByte(buf, '\n')
		if i := strings.Index(buf[nl:], "\n"+fence); i >= 0 {
			closeAt := nl + i
			// The closing fence must be a line of its own (``` and spaces).
			lineEnd := strings.IndexByte(buf[closeAt+1:], '\n')
			if lineEnd < 0 {
				return "" // wait for the end of the closing line
			}
			line := strings.TrimSpace(buf[closeAt+1 : closeAt+1+lineEnd])
			end := closeAt + 1 + lineEnd + 1
			if strings.Trim(line, "`") != "" {
				// Not a closing fence: the block goes on, as text up
				// to that line.
				e.held.Reset()
				e.mode = mPass
				e.inFence = true
				e.emit(buf[:end])
				return buf[end:]
			}
			e.held.Reset()
			e.mode = mPass
			if !e.emitCalls(buf[nl+1:closeAt], true) {
				e.emit(buf[:end])
			}
			return buf[end:]
		}
	}
	if e.held.Len() > maxCaptured {
		if e.mode == mHermes && e.malformed != nil {
			return e.tooLong()
		}
		return e.giveUp()
	}
	return ""
}

// tooLong ends a strict <tool_call> capture that outgrew maxCaptured: it is
// reported, and what follows up to its closing tag is dropped (mSkip).
func (e *Extractor) tooLong() string {
	s := e.held.String()
	e.held.Reset()
	e.mode = mSkip
	e.malformed(Malformed{Name: nameIn(s), Reason: ReasonTooLong, Text: s})
	e.markCall()
	// The closing tag may have begun at the end of what was held.
	return e.skip(s[max(0, len(s)-len(hermesClose)+1):])
}

// skip drops text up to and including the closing tag of an overlong call;
// held keeps only what may be the start of that tag.
func (e *Extractor) skip(chunk string) string {
	buf := e.held.String() + chunk
	e.held.Reset()
	if i := strings.Index(buf, hermesClose); i >= 0 {
		e.mode = mPass
		return buf[i+len(hermesClose):]
	}
	for k := min(len(hermesClose)-1, len(buf)); k > 0; k-- {
		if strings.HasPrefix(hermesClose, buf[len(buf)-k:]) {
			e.held.WriteString(buf[len(buf)-k:])
			break
		}
	}
	return ""
}

// fenceText ends a fence capture that is not a call before its body was
// read: the backticks are text, and what follows them (the rest of the
// line, the body) is returned to be scanned again. line is the first line,
// or as much of it as was looked at: if the text after its backticks has
// none (as in CommonMark), the line opens a code block, so the block's next
// fence line closes it and is not read as a fence.
func (e *Extractor) fenceText(buf, line string) string {
	ticks := len(line) - len(strings.TrimLeft(line, "`"))
	e.held.Reset()
	e.mode = mPass
	e.inFence = !strings.Contains(line[ticks:], "`")
	e.emit(buf[:ticks])
	return buf[ticks:]
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
	switch e.mode {
	case mSkip:
		buf = "" // the rest of a call already reported
	case mEnded:
		return
	}
	e.mode = mPass
	e.emit(buf)
}

// Take returns what the extractor holds back and has not passed on (a
// possible partial marker, leading white space, a call being captured), and
// makes it ready for a new answer, as New does. The caller found that the
// text so far was reasoning, not the answer: what is held is reasoning too.
func (e *Extractor) Take() string {
	held := e.held.String()
	*e = Extractor{offered: e.offered, text: e.text, call: e.call, malformed: e.malformed, lineStart: true,
		plain: e.plain, started: e.plain, end: e.end, triggers: e.triggers}
	return held
}

// Flush ends the stream: a capture still open is decided on what arrived
// (a missing closing tag or fence is forgiven), anything held is text.
func (e *Extractor) Flush() {
	buf := e.held.String()
	e.held.Reset()
	m := e.mode
	if m == mEnded {
		return
	}
	e.mode = mPass
	switch m {
	case mPass:
		e.emit(buf)
	case mHermes:
		if e.malformed != nil {
			e.emitStrict(buf[len(hermesOpen):], buf)
		} else if !e.emitCalls(buf[len(hermesOpen):], false) {
			e.emit(buf)
		}
	case mSkip:
		// The rest of a call already reported.
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
	e.markCall()
	return true
}

// markCall notes that a call (or a malformed one) ended the text so far.
func (e *Extractor) markCall() {
	e.started = true
	e.afterCall = true
	e.lineStart = true
}

// emitStrict decides a <tool_call> capture in strict mode: each call object
// in inner (one, or a list of objects) is a call if it names an offered
// tool, and is reported as malformed otherwise; a body that is not
// readable, or a list holding anything but objects, is one malformed call.
// whole is the capture, tags included.
func (e *Extractor) emitStrict(inner, whole string) {
	defer e.markCall()
	// bad reports what whole holds: the capture, or the element of a list
	// being read.
	bad := func(r Reason, name string) {
		e.malformed(Malformed{Name: name, Reason: r, Text: whole})
	}
	s := strings.TrimSpace(inner)
	if s == "" {
		bad(ReasonJSON, "")
		return
	}
	var raws []json.RawMessage
	list := s[0] == '['
	if list {
		if err := json.Unmarshal([]byte(s), &raws); err != nil || len(raws) == 0 {
			bad(ReasonJSON, nameIn(s))
			return
		}
		for _, raw := range raws {
			if len(raw) == 0 || raw[0] != '{' {
				// A list that is not all call objects is one unreadable
				// call, not one per element.
				bad(ReasonJSON, nameIn(s))
				return
			}
		}
	} else {
		raw, _, err := argjson.Normalize([]byte(s))
		if err != nil {
			r := ReasonJSON
			if errors.Is(err, argjson.ErrTooLarge) {
				r = ReasonTooLarge
			}
			bad(r, nameIn(s))
			return
		}
		raws = []json.RawMessage{raw}
	}
	for _, raw := range raws {
		if list {
			// An element of a list is reported on its own, as written
			// (json.RawMessage keeps its bytes).
			whole = string(raw)
		}
		obj, ok := readCallObject(raw)
		switch {
		case !ok:
			bad(ReasonJSON, nameIn(string(raw)))
		case obj.Name == "":
			bad(ReasonNoName, "")
		case !e.offered(obj.Name):
			bad(ReasonUnknown, obj.Name)
		default:
			e.call(obj.toolCall())
		}
	}
}

// namePattern finds a "name" in text that is not readable JSON.
var namePattern = regexp.MustCompile(`"name"\s*:\s*"([^"\\\n]{1,100})"`)

// nameIn returns the tool name written in s, if one can be read.
func nameIn(s string) string {
	if m := namePattern.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
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
		obj, ok := readCallObject(raw)
		if !ok || obj.Name == "" {
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
		calls = append(calls, obj.toolCall())
	}
	return calls, true
}

// readCallObject reads one call object, unwrapping OpenAI's
// {"type":"function","function":{…}} shape.
func readCallObject(raw json.RawMessage) (callObject, bool) {
	var obj callObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return callObject{}, false
	}
	if obj.Function != nil && obj.Name == "" {
		obj = *obj.Function
	}
	return obj, true
}

// toolCall makes the call: a fresh id, the arguments normalised (or, when
// they cannot be read, {} and ArgsError saying why).
func (obj callObject) toolCall() llm.ToolCall {
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
	return tc
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }
