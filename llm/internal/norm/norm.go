// Package norm turns what a provider decoded from the wire (content deltas,
// reasoning deltas, native tool calls, a finish reason, usage) into the one
// normalised llm event stream: reasoning inside <think> tags moved to
// thinking, tool calls written as text made into calls, finish reasons made
// to agree with what happened.
//
// A reply not known to start inside a block its chat template opened is
// watched for a lone </think>: when one comes, the answer text already
// yielded is declared reasoning (llm.EventThinkingReclassified), and what the
// text-call extractor held back from it follows as reasoning.
package norm

import (
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/textcall"
	"github.com/hearth-agent/hearth/llm/internal/thinktag"
)

// Yield is the consumer of a stream, as in llm.Stream.
type Yield = func(llm.Event, error) bool

// Normalizer is fed by a provider's decoder and yields llm events. It is not
// safe for concurrent use.
type Normalizer struct {
	yield   Yield
	split   *thinktag.Splitter
	calls   *textcall.Extractor
	emitted bool
	stopped bool
	ncalls  int
	// sawContent is set once any content arrived.
	sawContent bool
	// ids are the call ids yielded, to keep them unique within a reply.
	ids map[string]bool
	// watching is set while the answer text may yet turn out to be
	// reasoning (a lone </think> to come); shown is the text yielded so far.
	watching bool
	shown    strings.Builder
	onLone   func()
}

// maxWatched bounds the text kept while watching for a lone </think>: past
// it, no block the template opened is assumed.
const maxWatched = 1 << 20

// Options configure a Normalizer for one request.
type Options struct {
	// Tools are the names of the tools the request offered; text tool
	// calls are looked for only when there are some.
	Tools []string
	// ImplicitThink says the chat template opened a <think> block in the
	// prompt, so the reply starts inside it. Otherwise the reply is
	// watched for a lone </think> (see the package comment).
	ImplicitThink bool
	// OnLoneClose, if set, is called when a lone </think> made the text
	// before it reasoning: the provider can then take the model's template
	// to open the block, and say so (ImplicitThink) from its next request.
	OnLoneClose func()
}

// New returns a Normalizer that yields to yield.
func New(opts Options, yield Yield) *Normalizer {
	n := &Normalizer{yield: yield, split: thinktag.New(opts.ImplicitThink), onLone: opts.OnLoneClose}
	if !opts.ImplicitThink {
		n.watching = true
		n.split.Watch(n.loneClose)
	}
	if len(opts.Tools) > 0 {
		offered := make(map[string]bool, len(opts.Tools))
		for _, t := range opts.Tools {
			offered[t] = true
		}
		n.calls = textcall.New(func(name string) bool { return offered[name] }, n.text, n.textCall)
	}
	return n
}

// Emitted reports whether any event has been yielded; after that a failed
// request must not be retried.
func (n *Normalizer) Emitted() bool { return n.emitted }

// Stopped reports whether the consumer stopped the stream.
func (n *Normalizer) Stopped() bool { return n.stopped }

func (n *Normalizer) send(ev llm.Event) bool {
	if n.stopped {
		return false
	}
	n.emitted = true
	if !n.yield(ev, nil) {
		n.stopped = true
	}
	return !n.stopped
}

// Content feeds a piece of the answer text as the server sent it.
func (n *Normalizer) Content(s string) bool {
	if s == "" {
		return !n.stopped
	}
	n.sawContent = true
	n.split.Feed(s, n.fromSplit)
	return !n.stopped
}

// Reasoning feeds a piece of reasoning the server sent apart from the text.
func (n *Normalizer) Reasoning(s string) bool {
	if s == "" {
		return !n.stopped
	}
	if n.watching {
		// The server separates reasoning itself: a </think> in the
		// content is not the end of it.
		n.watching = false
		n.shown.Reset()
		n.split.Unwatch(n.fromSplit)
	}
	if !n.sawContent {
		// The server separates reasoning itself: the content that follows
		// is the answer, not an implicit thinking block.
		n.split.Reset(false)
	}
	return n.send(llm.Event{Kind: llm.EventThinking, Text: s})
}

func (n *Normalizer) fromSplit(thinking bool, s string) {
	if thinking {
		n.send(llm.Event{Kind: llm.EventThinking, Text: s})
		return
	}
	if n.calls != nil {
		n.calls.Feed(s)
		return
	}
	n.text(s)
}

func (n *Normalizer) text(s string) {
	if n.watching {
		if n.shown.Len()+len(s) > maxWatched {
			n.watching = false
			n.shown.Reset()
		} else {
			n.shown.WriteString(s)
		}
	}
	n.send(llm.Event{Kind: llm.EventText, Text: s})
}

// loneClose is the think splitter's question on a lone </think>: may the
// text before it be reasoning? Not once a call was yielded (it cannot be
// taken back) nor after reasoning came apart. If it may, the text yielded
// is declared reasoning, and what the call extractor held follows as such.
func (n *Normalizer) loneClose() bool {
	if !n.watching || n.ncalls > 0 {
		return false
	}
	n.watching = false
	var held string
	if n.calls != nil {
		held = n.calls.Take()
	}
	if n.shown.Len() > 0 {
		n.send(llm.Event{Kind: llm.EventThinkingReclassified, Text: n.shown.String()})
		n.shown.Reset()
	}
	if held != "" {
		n.send(llm.Event{Kind: llm.EventThinking, Text: held})
	}
	if n.onLone != nil {
		n.onLone()
	}
	return true
}

func (n *Normalizer) textCall(tc llm.ToolCall) {
	n.ToolCall(tc)
}

// ToolCall yields one complete tool call.
func (n *Normalizer) ToolCall(tc llm.ToolCall) bool {
	if tc.ID == "" || n.ids[tc.ID] {
		// None sent, or one already used in this reply: results are
		// paired with calls by id, so each needs its own.
		tc.ID = llm.NewCallID()
	}
	if n.ids == nil {
		n.ids = map[string]bool{}
	}
	n.ids[tc.ID] = true
	if len(tc.Args) == 0 {
		tc.Args = []byte(`{}`)
	}
	n.ncalls++
	if n.watching {
		// A call cannot be taken back: the text before it stays the answer.
		n.watching = false
		n.shown.Reset()
	}
	return n.send(llm.Event{Kind: llm.EventToolCall, ToolCall: &tc})
}

// Flush ends the text: anything held by the think splitter or the call
// extractor is decided and yielded.
func (n *Normalizer) Flush() bool {
	n.split.Flush(n.fromSplit)
	if n.calls != nil {
		n.calls.Flush()
	}
	return !n.stopped
}

// Abort ends a stream that failed: text held back (a possible tag, a
// possible call) is yielded as text, so that a partial answer is never lost,
// and nothing held becomes a tool call.
func (n *Normalizer) Abort() {
	n.split.Flush(n.fromSplitAborting)
	if n.calls != nil {
		n.calls.Abort()
	}
}

func (n *Normalizer) fromSplitAborting(thinking bool, s string) {
	if thinking {
		n.send(llm.Event{Kind: llm.EventThinking, Text: s})
		return
	}
	if n.calls != nil {
		n.calls.Abort() // what it held comes first
	}
	n.text(s)
}

// Finish flushes, then yields usage (if any) and EventDone. reason is the
// server's finish reason, normalised here: a reply that made tool calls ends
// with FinishToolCalls whatever the server said, unless it was cut by length.
func (n *Normalizer) Finish(reason llm.FinishReason, usage *llm.Usage, truncated bool) bool {
	if reason == llm.FinishLength {
		// Cut by the length limit: a call the model was writing as text
		// is incomplete, whatever it looks like.
		n.Abort()
	} else if !n.Flush() {
		return false
	}
	if n.stopped {
		return false
	}
	switch {
	case n.ncalls > 0 && reason != llm.FinishLength:
		reason = llm.FinishToolCalls
	case reason == llm.FinishToolCalls && n.ncalls == 0:
		reason = llm.FinishStop
	case reason == "":
		reason = llm.FinishStop
	}
	if usage != nil && !n.send(llm.Event{Kind: llm.EventUsage, Usage: usage}) {
		return false
	}
	return n.send(llm.Event{Kind: llm.EventDone, Done: &llm.Done{Reason: reason, PromptTruncated: truncated}})
}

// FinishReason maps a server's finish reason to the normalised one.
func FinishReason(s string) llm.FinishReason {
	switch s {
	case "length", "max_tokens", "model_length":
		return llm.FinishLength
	case "tool_calls", "function_call", "tool_use":
		return llm.FinishToolCalls
	default:
		return llm.FinishStop
	}
}
