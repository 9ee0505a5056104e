// Package argjson turns tool-call arguments, as servers and models send
// them, into one JSON object: an object or a JSON string holding one (the
// OpenAI wire), a string encoded twice, nothing at all, or slightly
// malformed JSON that a small model wrote.
//
// Repairs are made only where the intent is unambiguous: trailing commas,
// single quotes, Python literals (True, None), unquoted keys, a missing
// closing brace or bracket, a code fence around the object. Input larger
// than MaxRepair is not repaired. Arguments that
// look cut off inside a string (`{"path": "notes.t`) are refused rather
// than guessed, because running a tool on a guessed path is worse than
// asking the model again.
package argjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/kaptinlin/jsonrepair"
)

// Empty is the arguments of a call that sent none.
var empty = json.RawMessage(`{}`)

// ErrNotObject is returned for arguments that are valid JSON but not an object.
var ErrNotObject = errors.New("tool arguments must be a JSON object")

// ErrTooLarge is wrapped by the error for input larger than MaxRepair that
// would need repair.
var ErrTooLarge = errors.New("too large to repair")

// MaxRepair is the largest input Normalize tries to repair, in bytes. The
// repair takes time that grows faster than the input (seconds at a few
// hundred KiB) and cannot be interrupted; a model that writes that much can
// write valid JSON. Valid JSON of any size is read.
const MaxRepair = 64 << 10

// Normalize returns the arguments as a JSON object. repaired reports whether
// the input had to be repaired to get there. On error, the returned error
// says what was wrong in words a model can act on.
func Normalize(raw []byte) (args json.RawMessage, repaired bool, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `""` {
		return empty, false, nil
	}
	if json.Valid(raw) {
		switch raw[0] {
		case '{':
			return json.RawMessage(raw), false, nil
		case '"':
			// A JSON string: arguments encoded twice. Decode once more.
			var inner string
			if err := json.Unmarshal(raw, &inner); err != nil {
				return nil, false, err
			}
			a, _, err := Normalize([]byte(inner))
			return a, true, err
		default:
			return nil, false, fmt.Errorf("%w, got %s", ErrNotObject, kindOf(raw[0]))
		}
	}
	s := stripFence(string(raw))
	if !strings.HasPrefix(s, "{") {
		return nil, false, fmt.Errorf("tool arguments are not a JSON object: %s", clip(raw))
	}
	if unterminatedString(s) {
		return nil, false, fmt.Errorf("tool arguments end inside a string, as if cut off: %s", clip(raw))
	}
	if open := unclosed(s); open > 0 {
		// A missing closing brace is forgiven only after a value that is
		// clearly complete ("…}", "…]", "…\""): `{"n": 1` may have been
		// cut from `{"n": 100}`.
		last := strings.TrimRight(s, " \t\r\n")
		if c := last[len(last)-1]; c != '}' && c != ']' && c != '"' && c != '\'' {
			return nil, false, fmt.Errorf("tool arguments end before they are complete, as if cut off: %s", clip(raw))
		}
	}
	if len(s) > MaxRepair {
		return nil, false, fmt.Errorf("tool arguments are not valid JSON, and at %d KiB %w (the limit is %d KiB): send valid JSON, and split large content into smaller calls", (len(s)+1023)>>10, ErrTooLarge, MaxRepair>>10)
	}
	fixed, err := jsonrepair.Repair(s)
	if err != nil {
		return nil, false, fmt.Errorf("tool arguments are not valid JSON (%v): %s", err, clip(raw))
	}
	fixed = strings.TrimSpace(fixed)
	if !strings.HasPrefix(fixed, "{") || !json.Valid([]byte(fixed)) {
		return nil, false, fmt.Errorf("tool arguments are not a JSON object: %s", clip(raw))
	}
	return json.RawMessage(fixed), true, nil
}

// stripFence removes a ```json … ``` fence around s, if there is one.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "```") {
		return s
	}
	s = strings.TrimPrefix(s, "```")
	if i := strings.IndexByte(s, '\n'); i >= 0 && !strings.Contains(s[:i], "{") {
		s = s[i+1:]
	}
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(s, "```")
	return strings.TrimSpace(s)
}

// unterminatedString reports whether s ends inside a quoted string (double
// or single quotes, backslash escapes honoured).
func unterminatedString(s string) bool {
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == 0:
			if c == '"' {
				quote = c
			} else if c == '\'' && opensSingle(s, i) {
				quote = c
			}
		case c == '\\':
			i++
		case c == quote:
			quote = 0
		}
	}
	return quote != 0
}

// unclosed counts the braces and brackets left open at the end of s, outside
// strings.
func unclosed(s string) int {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || (c == '\'' && opensSingle(s, i)):
			quote = c
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
		}
	}
	return depth
}

// opensSingle reports whether the single quote at s[i] starts a string: it
// follows a structural character, not a letter (as in "don't").
func opensSingle(s string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		switch s[j] {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[', ',', ':':
			return true
		default:
			return false
		}
	}
	return true
}

func kindOf(c byte) string {
	switch c {
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

func clip(b []byte) string {
	const max = 200
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
