package prompted

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/textcall"
)

// maxShown bounds the answer text kept in case a lone </think> makes it
// reasoning (as llm/internal/norm does).
const maxShown = 1 << 20

// maxListed is how many tool names a correction lists.
const maxListed = 20

// Decode turns the stream of a model driven by Encode into a normal stream.
// Thinking passes through. Answer text goes through the text-call parser:
// calls become EventToolCall (FromText, a fresh id), other text is passed on
// at once (only a possible partial marker is held back). A <tool_call> that
// cannot be read as a call of an offered tool becomes an EventToolCall with
// Args {} and ArgsError saying, for the model, how to write it (see
// docs/tool-protocol.md). The finish reason becomes tool_calls when calls
// were found. A stream that fails ends with what was held back as text,
// never a call that may have been cut off, then the error. With no offered
// tools the text is passed on as it is.
func Decode(offered []llm.ToolSpec, s llm.Stream) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		d := &decoder{yield: yield, tools: offered, watching: true}
		if len(offered) > 0 {
			names := make(map[string]bool, len(offered))
			for _, t := range offered {
				names[t.Name] = true
			}
			d.calls = textcall.NewStrict(func(n string) bool { return names[n] }, d.text, d.call, d.malformed)
		}
		done := false
		for ev, err := range s {
			if err != nil {
				d.abort()
				if !d.stopped {
					yield(llm.Event{}, err)
				}
				return
			}
			if !d.event(ev) {
				return
			}
			if ev.Kind == llm.EventDone {
				done = true
			}
		}
		if !done {
			// Not a well-behaved stream; what is held is text.
			d.abort()
		}
	}
}

// decoder is the state of one Decode stream.
type decoder struct {
	yield   func(llm.Event, error) bool
	tools   []llm.ToolSpec
	calls   *textcall.Extractor // nil: no tools offered
	stopped bool
	ncalls  int
	usage   *llm.Usage
	// shown is the answer text yielded so far, while it may yet be
	// declared reasoning; watching is cleared once it cannot.
	shown    strings.Builder
	watching bool
}

func (d *decoder) send(ev llm.Event) {
	if d.stopped {
		return
	}
	if !d.yield(ev, nil) {
		d.stopped = true
	}
}

// event handles one event of the inner stream; false when the consumer
// stopped.
func (d *decoder) event(ev llm.Event) bool {
	switch ev.Kind {
	case llm.EventText:
		if d.calls != nil {
			d.calls.Feed(ev.Text)
		} else {
			d.text(ev.Text)
		}
	case llm.EventThinkingReclassified:
		d.reclassify()
	case llm.EventToolCall:
		// A server that parsed a call anyway.
		d.ncalls++
		d.watching = false
		d.send(ev)
	case llm.EventUsage:
		// Held until the calls held back are out.
		if ev.Usage != nil {
			u := *ev.Usage
			d.usage = &u
		}
	case llm.EventDone:
		d.finish(ev.Done)
	default:
		d.send(ev)
	}
	return !d.stopped
}

func (d *decoder) text(s string) {
	if d.watching {
		if d.shown.Len()+len(s) > maxShown {
			d.watching = false
			d.shown.Reset()
		} else {
			d.shown.WriteString(s)
		}
	}
	d.send(llm.Event{Kind: llm.EventText, Text: s})
}

// reclassify handles a lone </think> the provider found: the answer text
// so far was reasoning. What Decode passed on is declared so, and what the
// parser held back follows as reasoning. After a call it cannot be taken
// back: the text stays the answer.
func (d *decoder) reclassify() {
	if d.ncalls > 0 {
		return
	}
	shown := d.shown.String()
	d.shown.Reset()
	d.watching = false
	var held string
	if d.calls != nil {
		held = d.calls.Take()
	}
	if shown != "" {
		d.send(llm.Event{Kind: llm.EventThinkingReclassified, Text: shown})
	}
	if held != "" {
		d.send(llm.Event{Kind: llm.EventThinking, Text: held})
	}
}

func (d *decoder) call(tc llm.ToolCall) {
	d.ncalls++
	d.watching = false
	d.shown.Reset()
	d.send(llm.Event{Kind: llm.EventToolCall, ToolCall: &tc})
}

func (d *decoder) malformed(m textcall.Malformed) {
	d.call(llm.ToolCall{ID: llm.NewCallID(), Name: m.Name, Args: json.RawMessage(`{}`), FromText: true,
		ArgsError: correction(d.tools, m)})
}

// abort ends a failed stream: what the parser held is text.
func (d *decoder) abort() {
	if d.calls != nil {
		d.calls.Abort()
	}
}

// finish decides what the parser held, then yields usage and done with the
// finish reason made to agree with the calls found.
func (d *decoder) finish(done *llm.Done) {
	var out llm.Done
	if done != nil {
		out = *done
	}
	if d.calls != nil {
		if out.Reason == llm.FinishLength {
			// Cut by the length limit: a call being written is incomplete.
			d.calls.Abort()
		} else {
			d.calls.Flush()
		}
	}
	switch {
	case d.ncalls > 0 && out.Reason != llm.FinishLength:
		out.Reason = llm.FinishToolCalls
	case out.Reason == llm.FinishToolCalls && d.ncalls == 0:
		out.Reason = llm.FinishStop
	case out.Reason == "":
		out.Reason = llm.FinishStop
	}
	if d.usage != nil {
		d.send(llm.Event{Kind: llm.EventUsage, Usage: d.usage})
	}
	d.send(llm.Event{Kind: llm.EventDone, Done: &out})
}

// correction is the ArgsError of a <tool_call> that could not be read: what
// was wrong, and the right form with a real tool.
func correction(tools []llm.ToolSpec, m textcall.Malformed) string {
	ex := tools[0]
	for _, t := range tools {
		if t.Name == m.Name {
			ex = t
			break
		}
	}
	form := "write exactly " + example(ex)
	switch m.Reason {
	case textcall.ReasonUnknown:
		names := make([]string, 0, min(len(tools), maxListed+1))
		for i, t := range tools {
			if i == maxListed {
				names = append(names, "…")
				break
			}
			names = append(names, t.Name)
		}
		return fmt.Sprintf("there is no tool %s; the tools are %s: %s", jsonString(m.Name), strings.Join(names, ", "), form)
	case textcall.ReasonNoName:
		return `your tool call could not be read (it has no "name"): ` + form
	case textcall.ReasonTooLong:
		return "your tool call could not be read (it is longer than 1 MiB): " + form
	default:
		return "your tool call could not be read (invalid JSON): " + form
	}
}
