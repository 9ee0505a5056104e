package llm

import "strings"

// Response is a whole reply, gathered from a Stream by Collect.
type Response struct {
	// Message is the assistant message: content, thinking and tool calls.
	Message Message
	// Usage is the token count, nil when the server sent none.
	Usage *Usage
	// Done says why the model stopped; nil if the stream failed.
	Done *Done
}

// Collect drains s and gathers the reply. On error it returns what arrived
// before the error together with the error, so partial answers are not lost.
func Collect(s Stream) (*Response, error) {
	r := &Response{Message: Message{Role: RoleAssistant}}
	var text, thinking strings.Builder
	var err error
	for ev, e := range s {
		if e != nil {
			err = e
			break
		}
		switch ev.Kind {
		case EventText:
			text.WriteString(ev.Text)
		case EventThinking:
			thinking.WriteString(ev.Text)
		case EventThinkingReclassified:
			// The text so far was reasoning, and came before any.
			thinking.WriteString(text.String())
			text.Reset()
		case EventToolCall:
			r.Message.ToolCalls = append(r.Message.ToolCalls, *ev.ToolCall)
		case EventUsage:
			u := *ev.Usage
			r.Usage = &u
		case EventDone:
			d := *ev.Done
			r.Done = &d
		}
	}
	r.Message.Content = text.String()
	r.Message.Thinking = thinking.String()
	return r, err
}
