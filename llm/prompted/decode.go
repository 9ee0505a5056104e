package prompted

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/textcall"
)

// maxShown bounds the answer text kept, and the calls and text held back,
// in case a lone </think> makes them reasoning (as llm/internal/norm does):
// past it, the reply is taken not to be reasoning.
const maxShown = 1 << 20

// maxListed is how many tool names a correction lists.
const maxListed = 20

// maxCalls is how many calls one reply may make: past it, one malformed
// call says so (tooMany) and the rest are dropped.
const maxCalls = 32

// tooMany is the ArgsError of the call that stands for those past maxCalls.
var tooMany = fmt.Sprintf("too many tool calls in one reply: at most %d; make fewer at a time", maxCalls)

// endMarker ends the reply where the model starts to write a tool's result
// itself, in its answer text (outside a call being read). No closing ">":
// it also catches the <tool_response name="…"> form of the history.
const endMarker = "<tool_response"

// Decode turns the stream of a model driven by Encode into a normal stream.
// Thinking passes through. Answer text goes through the text-call parser:
// calls become EventToolCall (FromText, a fresh id), other text is passed on
// at once (only a possible partial marker is held back). A <tool_call> that
// cannot be read as a call of an offered tool becomes an EventToolCall with
// Args {} and ArgsError saying, for the model, how to write it (see
// docs/tool-protocol.md). A reply makes at most maxCalls calls: the next
// one is a call with ArgsError tooMany, and the rest are dropped. The finish
// reason becomes tool_calls when calls were found. With no offered tools
// the text is passed on as it is.
//
// When the model starts to write "<tool_response" in its answer text
// (not in reasoning, not inside a call), the reply ends there: what follows
// is dropped, Decode stops reading s (which closes the request) and ends
// with its own EventDone.
//
// While the answer text may still turn out to be reasoning (a lone
// </think> the provider reports as EventThinkingReclassified), calls are
// held back, with the text that follows them, until the reply ends; if it
// is reasoning, they become reasoning text and are not calls.
//
// A stream that fails ends with what was held back as text, never a call
// that may have been cut off, then the error.
func Decode(offered []llm.ToolSpec, s llm.Stream) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		d := &decoder{yield: yield, tools: offered, watching: true}
		if len(offered) > 0 {
			names := make(map[string]bool, len(offered))
			for _, t := range offered {
				names[t.Name] = true
			}
			d.calls = textcall.NewStrict(func(n string) bool { return names[n] }, d.text, d.textCall, d.malformed)
		} else {
			d.calls = textcall.NewPlain(d.text)
		}
		d.calls.EndAt(endMarker)
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
			if d.calls.Ended() {
				// The model began to write a result: the reply is over.
				// Returning stops reading the stream.
				d.finish(nil)
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
	calls   *textcall.Extractor
	stopped bool
	// ncalls counts the calls yielded or held (tooMany's included); capped
	// is set once tooMany was.
	ncalls int
	capped bool
	usage  *llm.Usage
	// shown is the answer text yielded so far, while it may yet be
	// declared reasoning; watching is cleared once it cannot.
	shown    strings.Builder
	watching bool
	// held are the events kept back while watching: the calls, and the text
	// after the first of them, in order; heldSize is their length as text.
	held     []heldEvent
	heldSize int
}

// heldEvent is an event kept back while the reply may be reasoning (none
// for a call dropped past maxCalls), and what it reads as if it is.
type heldEvent struct {
	ev   llm.Event
	text string
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
		d.calls.Feed(ev.Text)
	case llm.EventThinking:
		// Reasoning that came apart from the text: the text is not
		// reasoning (no reclassification follows).
		d.unwatch()
		d.send(ev)
	case llm.EventThinkingReclassified:
		d.reclassify()
	case llm.EventToolCall:
		// A server that parsed a call anyway: it is not reasoning.
		d.unwatch()
		d.add(*ev.ToolCall, "")
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
	ev := llm.Event{Kind: llm.EventText, Text: s}
	if d.watching {
		if len(d.held) > 0 {
			d.hold(ev, s)
			return
		}
		if d.shown.Len()+len(s) > maxShown {
			d.unwatch()
		} else {
			d.shown.WriteString(s)
		}
	}
	d.send(ev)
}

// hold keeps ev back while the reply may be reasoning; text is what it
// reads as then. Past maxShown, no reasoning is assumed.
func (d *decoder) hold(ev llm.Event, text string) {
	d.held = append(d.held, heldEvent{ev, text})
	d.heldSize += len(text)
	if d.shown.Len()+d.heldSize > maxShown {
		d.unwatch()
	}
}

// unwatch decides that the answer text is not reasoning: what was held back
// is yielded, in order.
func (d *decoder) unwatch() {
	d.watching = false
	d.shown.Reset()
	held := d.held
	d.held, d.heldSize = nil, 0
	for _, h := range held {
		if h.ev.Kind != 0 { // 0: a call dropped past maxCalls
			d.send(h.ev)
		}
	}
}

// reclassify handles a lone </think> the provider found: the answer text
// so far was reasoning. What Decode passed on is declared so; the calls
// held back and the text after them, then what the parser held back,
// follow as reasoning. The calls are dropped.
func (d *decoder) reclassify() {
	if !d.watching {
		return
	}
	shown := d.shown.String()
	var reasoning strings.Builder
	for _, h := range d.held {
		reasoning.WriteString(h.text)
	}
	d.shown.Reset()
	d.held, d.heldSize = nil, 0
	d.watching = false
	d.ncalls, d.capped = 0, false
	reasoning.WriteString(d.calls.Take())
	if shown != "" {
		d.send(llm.Event{Kind: llm.EventThinkingReclassified, Text: shown})
	}
	if reasoning.Len() > 0 {
		d.send(llm.Event{Kind: llm.EventThinking, Text: reasoning.String()})
	}
}

// textCall is a call the parser read; as reasoning, it reads as the
// protocol writes it.
func (d *decoder) textCall(tc llm.ToolCall) {
	d.add(tc, callText(tc.Name, tc.Args))
}

func (d *decoder) malformed(m textcall.Malformed) {
	if d.ncalls >= maxCalls {
		d.add(llm.ToolCall{}, m.Text) // past the limit: no correction to write
		return
	}
	d.add(llm.ToolCall{ID: llm.NewCallID(), Name: m.Name, Args: json.RawMessage(`{}`), FromText: true,
		ArgsError: correction(d.tools, m)}, m.Text)
}

// add yields a call, or holds it while the reply may be reasoning (text is
// what it reads as then). Past maxCalls, the first call is replaced by one
// that says so, and the others are dropped.
func (d *decoder) add(tc llm.ToolCall, text string) {
	if d.ncalls >= maxCalls {
		if d.capped {
			if d.watching {
				// Dropped, but still reasoning text if the reply is.
				d.hold(llm.Event{}, text)
			}
			return
		}
		d.capped = true
		tc = llm.ToolCall{ID: llm.NewCallID(), Args: json.RawMessage(`{}`), FromText: true, ArgsError: tooMany}
	}
	d.ncalls++
	ev := llm.Event{Kind: llm.EventToolCall, ToolCall: &tc}
	if d.watching {
		d.hold(ev, text)
		return
	}
	d.send(ev)
}

// abort ends a failed stream: what the parser held is text, and what was
// held back goes out.
func (d *decoder) abort() {
	d.calls.Abort()
	d.unwatch()
}

// finish decides what the parser held, yields what was held back, then
// usage and done with the finish reason made to agree with the calls
// found. done is nil when Decode ends the reply itself.
func (d *decoder) finish(done *llm.Done) {
	var out llm.Done
	if done != nil {
		out = *done
	}
	if out.Reason == llm.FinishLength {
		// Cut by the length limit: a call being written is incomplete.
		d.calls.Abort()
	} else {
		d.calls.Flush()
	}
	d.unwatch()
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
	case textcall.ReasonTooLarge:
		return "your tool call could not be read (invalid JSON, too large to repair): send valid JSON, and split large content into smaller calls; " + form
	default:
		return "your tool call could not be read (invalid JSON): " + form
	}
}
