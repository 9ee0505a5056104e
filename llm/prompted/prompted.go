// Package prompted drives models that cannot take native tool calls: it
// describes the tools in the system prompt and reads the calls from the
// text the model writes (the prompted tool protocol, docs/tool-protocol.md).
//
// Provider wraps an llm.Provider and chooses, per request, between sending
// tools natively and the prompted protocol (Mode). Encode and Decode are the
// protocol itself: Encode rewrites a request (tools into the system prompt,
// native calls and results in the history into text), Decode turns the
// model's stream back into normal events, calls included.
package prompted

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// Mode says how tools reach a model.
type Mode string

// The tool modes.
const (
	// Auto decides per model (the default): prompted when the server says
	// the model cannot call tools or once it refused them, else native,
	// falling back to prompted within the same stream if the server refuses.
	Auto Mode = "auto"
	// Native always sends tools natively.
	Native Mode = "native"
	// Prompted always describes tools in the prompt.
	Prompted Mode = "prompted"
)

// ParseMode reads a tool mode as a user writes it (a flag, a config file's
// tool_mode): "auto", "native" or "prompted"; "" is Auto.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.ToLower(strings.TrimSpace(s))); m {
	case "":
		return Auto, nil
	case Auto, Native, Prompted:
		return m, nil
	}
	return "", fmt.Errorf("unknown tool mode %q: use auto, native or prompted", s)
}

// Options configure a Provider.
type Options struct {
	// Mode is how tools reach the model; "" is Auto.
	Mode Mode
	// Memory keeps, across runs, the models whose server refused native
	// tools (see FileMemory). Nil: remembered for the life of the Provider
	// only. Either way a refusal is forgotten after RefusalTTL.
	Memory Memory
	// Logger receives a line when a refusal switches a model to the
	// prompted protocol; nil discards it.
	Logger *slog.Logger
}

// Provider is an llm.Provider that sends tools to the wrapped provider
// natively or by the prompted protocol, as its Mode decides (see Chat). It
// passes the wrapped provider's optional abilities on. It is safe for
// concurrent use.
type Provider struct {
	inner llm.Provider
	mode  Mode
	mem   Memory
	log   *slog.Logger

	mu sync.Mutex
	// refused holds the models known refused (this process, or Memory as
	// read once per model); checked holds the models Memory was read for.
	refused map[string]time.Time
	checked map[string]bool
	// described holds Describe's answers for Auto, by model.
	described map[string]*described
	// now is the clock (tests set it).
	now func() time.Time
}

// described is one model's Describe, done once: info is nil when it failed
// (the model's capabilities are then unknown). done is closed when it is
// decided; a cancelled Describe is forgotten and asked again.
type described struct {
	done chan struct{}
	info *llm.ModelInfo
	ok   bool // false: cancelled, not cached
}

// The optional abilities are passed on.
var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.ModelLister    = (*Provider)(nil)
	_ llm.ModelDescriber = (*Provider)(nil)
	_ llm.Embedder       = (*Provider)(nil)
	_ llm.HealthChecker  = (*Provider)(nil)
)

// New wraps p. An unknown o.Mode is taken as Auto.
func New(p llm.Provider, o Options) *Provider {
	mode := o.Mode
	if mode != Native && mode != Prompted {
		mode = Auto
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Provider{inner: p, mode: mode, mem: o.Memory, log: log,
		refused: map[string]time.Time{}, checked: map[string]bool{}, described: map[string]*described{}, now: time.Now}
}

// Kind returns the wrapped provider's kind.
func (p *Provider) Kind() string { return p.inner.Kind() }

// Unwrap returns the wrapped provider, for abilities this one does not pass
// on (Ollama's Pull, say).
func (p *Provider) Unwrap() llm.Provider { return p.inner }

// Mode returns the configured mode.
func (p *Provider) Mode() Mode { return p.mode }

// Chat sends req. A request without tools goes to the wrapped provider as
// it is. With tools, Decide chooses: native sends it as it is; prompted
// sends Encode(req) and reads the reply through Decode. In Auto mode, a
// native request the server refuses because of its tools (before anything
// was yielded) is remembered and sent again prompted, in the same stream.
// Refusals are remembered by the model name the request gives (one that
// names none, for the wrapped provider's default model, only in this
// process).
func (p *Provider) Chat(ctx context.Context, req *llm.Request) llm.Stream {
	if req == nil || len(req.Tools) == 0 {
		return p.inner.Chat(ctx, req)
	}
	return func(yield func(llm.Event, error) bool) {
		d := p.Decide(ctx, req.Model)
		if d.Mode == Prompted {
			p.prompted(ctx, req, yield)
			return
		}
		var refusal error
		emitted := false
		for ev, err := range p.inner.Chat(ctx, req) {
			if err != nil && !emitted && p.mode == Auto && isToolsRefusal(err) {
				refusal = err
				break
			}
			emitted = true
			if !yield(ev, err) {
				return
			}
		}
		if refusal == nil {
			return
		}
		p.remember(req.Model, refusal)
		p.prompted(ctx, req, yield)
	}
}

// prompted runs req by the prompted protocol.
func (p *Provider) prompted(ctx context.Context, req *llm.Request, yield func(llm.Event, error) bool) {
	offered := req.Tools
	if req.ToolChoice == llm.ToolChoiceNone {
		offered = nil // a call written anyway stays text
	}
	for ev, err := range Decode(offered, p.inner.Chat(ctx, Encode(req))) {
		if !yield(ev, err) {
			return
		}
	}
}

// remember records that the server refused tools for model.
func (p *Provider) remember(model string, refusal error) {
	now := p.now()
	p.mu.Lock()
	p.refused[model] = now
	p.checked[model] = true
	p.mu.Unlock()
	p.log.Info("the server refused tools for this model: describing them in the prompt from now on",
		"model", model, "provider", p.inner.Kind(), "refusal", refusal.Error())
	if p.mem == nil || model == "" {
		// The default model has no name to be remembered by across runs.
		return
	}
	if err := p.mem.RememberRefused(model, now); err != nil {
		p.log.Warn("cannot remember the refusal for the next runs", "model", model, "err", err)
	}
}

// refusedAt returns when the server refused tools for model, if it did
// less than RefusalTTL ago: in this process, or as Memory says (read once
// per model). An expired refusal is forgotten: native tools are tried
// again, and a new refusal is remembered again.
func (p *Provider) refusedAt(model string) (time.Time, bool) {
	now := p.now()
	p.mu.Lock()
	at, ok := p.refused[model]
	checked := p.checked[model]
	if ok && expired(at, now) {
		delete(p.refused, model)
		at, ok = time.Time{}, false
	}
	p.mu.Unlock()
	if ok || checked || p.mem == nil {
		return at, ok
	}
	mat, mok := p.mem.Refused(model)
	if mok && expired(mat, now) {
		mat, mok = time.Time{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.checked[model] = true
	if at, ok := p.refused[model]; ok {
		return at, true // refused here meanwhile
	}
	if mok {
		p.refused[model] = mat
	}
	return mat, mok
}

// Decision is how tools reach one model, and why.
type Decision struct {
	// Mode is Native or Prompted.
	Mode Mode
	// Reason says why, in one short sentence a user understands.
	Reason string
}

// Decide says how tools will reach model ("" is the wrapped provider's
// default model): as configured, or in Auto mode from a remembered refusal
// or what the server says of the model (asked once per model and process;
// a failed answer counts as "unknown", a cancelled one is asked again).
func (p *Provider) Decide(ctx context.Context, model string) Decision {
	if p.mode != Auto {
		return DecideFor(p.mode, nil, time.Time{})
	}
	if at, ok := p.refusedAt(model); ok {
		return DecideFor(Auto, nil, at)
	}
	return DecideFor(Auto, p.describe(ctx, model), time.Time{})
}

// describe returns what the wrapped provider says of model, asking it at
// most once per model (concurrent callers wait for the one asking); nil
// when it could not say.
func (p *Provider) describe(ctx context.Context, model string) *llm.ModelInfo {
	for {
		p.mu.Lock()
		d, ok := p.described[model]
		if !ok {
			d = &described{done: make(chan struct{})}
			p.described[model] = d
		}
		p.mu.Unlock()
		if !ok {
			info, err := llm.Describe(ctx, p.inner, model)
			d.ok = !cancelled(ctx, err)
			if err == nil {
				d.info = info
			} else if d.ok {
				p.log.Debug("the server did not describe the model: its tool calling is taken as unknown", "model", model, "err", err)
			}
			if !d.ok {
				p.mu.Lock()
				delete(p.described, model)
				p.mu.Unlock()
			}
			close(d.done)
			return d.info
		}
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil
		}
		if d.ok {
			return d.info
		}
		// The one asking was cancelled: ask again.
	}
}

// cancelled reports whether err is the caller's cancellation.
func cancelled(ctx context.Context, err error) bool {
	return err != nil && (ctx.Err() != nil || llm.CodeOf(err) == llm.CodeCancelled || errors.Is(err, context.Canceled))
}

// DecideFor is Decide's rule, for callers that already have the model's
// information (`hearth doctor`, `hearth models`): mode Native or Prompted is
// as configured; in Auto mode, a refusal remembered (refusedAt not zero)
// means prompted, then what info says (nil: unknown). The caller names the
// setting when it shows a configured mode's reason.
func DecideFor(mode Mode, info *llm.ModelInfo, refusedAt time.Time) Decision {
	switch {
	case mode == Native:
		return Decision{Native, "configured: tools are sent natively"}
	case mode == Prompted:
		return Decision{Prompted, "configured: tools are described in the prompt"}
	case !refusedAt.IsZero():
		return Decision{Prompted, fmt.Sprintf("the server refused tools for this model (%s); remembered", refusedAt.Local().Format(time.DateOnly))}
	case info != nil && info.CapabilitiesKnown && !info.Has(llm.CapTools):
		return Decision{Prompted, "the server says this model cannot call tools"}
	case info != nil && info.CapabilitiesKnown:
		return Decision{Native, "the server says this model calls tools"}
	}
	return Decision{Native, "the server does not say whether this model calls tools: native, and prompted if the server refuses them"}
}

// Models lists the wrapped provider's models.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	return llm.Models(ctx, p.inner)
}

// ModelInfo describes a model as the wrapped provider does, asking it
// each time. An answer is kept for Auto's decision when none is yet, so
// that a caller that describes the model before its first chat (for its
// context window) saves Auto asking again.
func (p *Provider) ModelInfo(ctx context.Context, model string) (*llm.ModelInfo, error) {
	info, err := llm.Describe(ctx, p.inner, model)
	if err == nil && p.mode == Auto {
		p.mu.Lock()
		if _, ok := p.described[model]; !ok {
			d := &described{done: make(chan struct{}), info: info, ok: true}
			close(d.done)
			p.described[model] = d
		}
		p.mu.Unlock()
	}
	return info, err
}

// Embed computes embeddings with the wrapped provider.
func (p *Provider) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	return llm.Embed(ctx, p.inner, model, inputs)
}

// Health checks the wrapped provider's server.
func (p *Provider) Health(ctx context.Context) (*llm.ServerInfo, error) {
	return llm.Health(ctx, p.inner)
}
