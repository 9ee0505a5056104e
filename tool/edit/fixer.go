package edit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// Fixer proposes a corrected old_string after one missed: a second
// opinion, usually a model, that sees the passage of the file the edit
// most likely meant. The edit tool asks it at most once per call and uses
// its answer only if that answer matches the file exactly as often as the
// call wants, inside the passage it was shown.
type Fixer interface {
	FixOldString(ctx context.Context, req FixRequest) (string, error)
}

// FixRequest is what a Fixer sees.
type FixRequest struct {
	// Path names the file, relative to the workspace.
	Path string
	// Excerpt is the part of the file old_string most likely meant, as
	// text (no line numbers).
	Excerpt string
	// OldString and NewString are the model's arguments.
	OldString, NewString string
}

// FixerFunc makes a Fixer of a function.
type FixerFunc func(ctx context.Context, req FixRequest) (string, error)

// FixOldString calls f.
func (f FixerFunc) FixOldString(ctx context.Context, req FixRequest) (string, error) {
	return f(ctx, req)
}

// ModelFixer asks a model, in one short chat, to copy the lines old_string
// meant from the excerpt. A small fast model will do; it needs no tools.
type ModelFixer struct {
	Provider llm.Provider
	// Model names the model; empty means the provider's default.
	Model string
	// Timeout bounds the chat; 0 means 60 seconds.
	Timeout time.Duration
	// Think, when set, is sent with the request (nil leaves the model's
	// default; thinking makes the answer slower and rarely better here).
	Think *llm.Think
	// OnUsage, if set, is given the server's token count of each chat
	// (none when the server sent none), a failed one's too, with the ctx
	// of the edit call that asked and the model named: a caller records
	// there what the fix cost (Hearth, in the session whose turn made the
	// call).
	OnUsage func(ctx context.Context, model string, u llm.Usage)
}

const fixerSystem = "You correct the search text of a find-and-replace edit. " +
	"The search text must be copied exactly from the file excerpt: the same characters, the same indentation, whole lines. " +
	"Answer with only the corrected search text in one ``` fenced block. If nothing in the excerpt matches, answer NONE."

// FixOldString implements Fixer.
func (m *ModelFixer) FixOldString(ctx context.Context, req FixRequest) (string, error) {
	timeout := m.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var u strings.Builder
	fmt.Fprintf(&u, "File %s, excerpt:\n%s\n\n", req.Path, fence(req.Excerpt))
	fmt.Fprintf(&u, "Search text (it does not match the file exactly):\n%s\n\n", fence(req.OldString))
	fmt.Fprintf(&u, "It is to be replaced with:\n%s\n\n", fence(req.NewString))
	u.WriteString("Write the lines of the excerpt that the search text means, exactly as they are in the excerpt.")
	temp := 0.0
	r, err := llm.Collect(m.Provider.Chat(ctx, &llm.Request{
		Model: m.Model,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: fixerSystem},
			{Role: llm.RoleUser, Content: u.String()},
		},
		Temperature: &temp,
		Think:       m.Think,
		MaxTokens:   max(256, 2*len(req.OldString)/3+64),
	}))
	if m.OnUsage != nil && r != nil && r.Usage != nil {
		m.OnUsage(ctx, m.Model, *r.Usage)
	}
	if err != nil {
		return "", err
	}
	return parseFixerAnswer(r.Message.Content)
}

// fence puts text in a fenced block whose fence the text does not hold.
func fence(s string) string {
	f := "```"
	for strings.Contains(s, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimSuffix(s, "\n") + "\n" + f
}

var errNoFix = errors.New("the fixer found no match")

// parseFixerAnswer takes the first fenced block of a reply, or the whole
// reply when it has none.
func parseFixerAnswer(s string) (string, error) {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i:]
		n := len(rest) - len(strings.TrimLeft(rest, "`"))
		f := rest[:n]
		body := rest[n:]
		// Skip the info string ("go", "python").
		if nl := strings.IndexByte(body, '\n'); nl >= 0 {
			body = body[nl+1:]
		} else {
			body = ""
		}
		if end := strings.Index(body, "\n"+f); end >= 0 {
			body = body[:end]
		} else if end := strings.Index(body, f); end >= 0 {
			body = body[:end]
		}
		s = body
	}
	if strings.TrimSpace(s) == "" || strings.TrimSpace(s) == "NONE" {
		return "", errNoFix
	}
	return strings.TrimSuffix(s, "\n"), nil
}
