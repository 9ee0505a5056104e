package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hearth-agent/hearth/llm"
)

// DefaultCompressAt is the share of the context window at which older turns
// are summarised.
const DefaultCompressAt = 0.7

// summaryPrompt asks the model for a summary it can continue from.
const summaryPrompt = `Summarise the conversation above so that you can continue the work from the summary alone. Keep: the user's goal and requests, what was done (files read or changed, commands run and their results), decisions made, problems still open, and the next steps. Be concise and factual; use short bullet points.`

// SummaryPrefix starts the message that stands in for summarised turns.
const SummaryPrefix = "[Summary of the earlier conversation]\n"

// EstimateTokens guesses the prompt size of msgs and tools in tokens (see
// llm.PromptTokens).
func EstimateTokens(msgs []llm.Message, tools []llm.ToolSpec) int {
	return llm.PromptTokens(msgs, tools)
}

// cutPoint returns the index from which msgs are kept when the rest is
// summarised: as many recent messages as fit in keep tokens, starting at a
// message that is not a tool result (a result never loses its call). 0 means
// nothing can be summarised.
func cutPoint(msgs []llm.Message, keep int) int {
	total := 0
	cut := len(msgs)
	for i := len(msgs) - 1; i > 0; i-- {
		total += EstimateTokens(msgs[i:i+1], nil)
		if total > keep {
			break
		}
		if msgs[i].Role != llm.RoleTool {
			cut = i
		}
	}
	if cut == len(msgs) {
		// Even the last exchange is larger than keep: keep from the last
		// user message, the least a turn can go on from.
		for i := len(msgs) - 1; i > 0; i-- {
			if msgs[i].Role == llm.RoleUser {
				return i
			}
		}
		return 0
	}
	return cut
}

// Compress summarises the older part of a conversation with the agent's
// model, so that the messages from the returned cut on, after the summary,
// take about keep tokens at most. It is what happens automatically during a
// Run past the threshold, and what a /compress command calls.
func (a *Agent) Compress(ctx context.Context, msgs []llm.Message, keep int) (summary llm.Message, cut int, err error) {
	return a.compress(ctx, a.Model, msgs, keep, nil)
}

// CompressOptions shape a compression (CompressWith).
type CompressOptions struct {
	// OnUsage, if set, is given the server's token count of the summary's
	// model call (none when the server sent none), a failed call's too,
	// so that a caller can record what the summary cost.
	OnUsage func(u llm.Usage)
}

// CompressWith is Compress with options.
func (a *Agent) CompressWith(ctx context.Context, msgs []llm.Message, keep int, o CompressOptions) (summary llm.Message, cut int, err error) {
	return a.compress(ctx, a.Model, msgs, keep, o.OnUsage)
}

// compress is Compress with the model of a run; onUsage (if set) is given
// the summary call's token count.
func (a *Agent) compress(ctx context.Context, model string, msgs []llm.Message, keep int, onUsage func(llm.Usage)) (summary llm.Message, cut int, err error) {
	cut = cutPoint(msgs, keep)
	if cut <= 0 {
		return llm.Message{}, 0, errors.New("nothing to compress: the conversation is one exchange")
	}
	var req llm.Request
	req.Model = model
	req.ContextLength = a.ContextLength
	if a.System != "" {
		req.Messages = append(req.Messages, llm.Message{Role: llm.RoleSystem, Content: a.System})
	}
	// The model sees the old turns as plain text: tool calls rendered, no
	// tools offered (so it cannot call one), no reasoning. The text is cut
	// to fit well inside the window: each message keeps its start and end.
	budget := 1 << 30
	if a.ContextLength > 0 {
		budget = a.ContextLength * 4 * 6 / 10 // bytes: 60 % of the window
	}
	per := budget / max(cut, 1)
	var b strings.Builder
	for _, m := range msgs[:cut] {
		m.Content = clipMiddle(m.Content, max(per, 200))
		switch m.Role {
		case llm.RoleUser:
			fmt.Fprintf(&b, "User: %s\n\n", m.Content)
		case llm.RoleAssistant:
			if m.Content != "" {
				fmt.Fprintf(&b, "Assistant: %s\n\n", m.Content)
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(&b, "Assistant called %s(%s)\n\n", tc.Name, tc.Args)
			}
		case llm.RoleTool:
			fmt.Fprintf(&b, "Result of %s: %s\n\n", m.ToolName, clipMiddle(m.Content, min(2000, max(per, 200))))
		case llm.RoleSystem:
			fmt.Fprintf(&b, "Note: %s\n\n", m.Content)
		}
	}
	req.Messages = append(req.Messages, llm.Message{Role: llm.RoleUser, Content: b.String() + "\n---\n" + summaryPrompt})
	req.NoStream = true
	res, err := llm.Collect(a.Provider.Chat(ctx, &req))
	if onUsage != nil && res != nil && res.Usage != nil {
		onUsage(*res.Usage)
	}
	if err != nil {
		return llm.Message{}, 0, fmt.Errorf("summarising the conversation: %w", err)
	}
	text := strings.TrimSpace(res.Message.Content)
	if text == "" {
		return llm.Message{}, 0, errors.New("summarising the conversation: the model returned an empty summary")
	}
	return llm.Message{Role: llm.RoleUser, Content: SummaryPrefix + text}, cut, nil
}

// clipMiddle keeps the first and last parts of s within n bytes.
func clipMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "\n[… " + fmt.Sprint(tail-head) + " bytes left out …]\n" + s[tail:]
}
