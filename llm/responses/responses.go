// Package responses talks to servers that speak OpenAI's Responses API,
// POST /v1/responses: OpenAI itself, Ollama (0.13.3 and later), vLLM, LM
// Studio (0.3.29 and later). llama.cpp's server does not speak it yet: use
// llm/openai (chat completions) for it.
//
// It is stateless: the whole conversation goes out as input items with
// every request (messages, function_call items with their call_id,
// function_call_output items), with store set to false, and nothing is
// asked of the server's memory (no previous_response_id). That is what
// Ollama, which keeps nothing between requests, needs; OpenAI takes it too.
//
// Like llm/openai it is a small hand-written client rather than an SDK:
// local servers implement the API each its own way (reasoning as summary
// text or as reasoning_text; one output_index shared by a message and the
// call after it; no response.incomplete when a reply is cut; errors as a
// response.failed, an error event, or a plain error object in the stream),
// and decoding only the fields Hearth reads keeps a streamed event to a few
// allocations. The stream is normalised into the same llm events as the
// other dialects (see llm.Stream).
//
// The models list, model descriptions, embeddings and the health check use
// the same server's /models and /embeddings, through llm/openai.
package responses

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
	"github.com/hearth-agent/hearth/llm/openai"
)

// kind is the provider's Kind, in errors and logs.
const kind = "responses"

// Options configure a Provider.
type Options struct {
	// BaseURL is the API root, e.g. http://localhost:11434/v1 for Ollama.
	// A URL with no path gets /v1 added. Empty means openai.DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// Model is used when a request names none.
	Model string
	// Models holds per-model configuration, by model name, as for
	// llm/openai: the server does not say what a model can do.
	Models map[string]openai.ModelConfig
	// ImplicitThink says every model's template opens <think> in the
	// prompt (see openai.ModelConfig.ImplicitThink). Without it a model is
	// taken to do so once one of its replies closed such a block.
	ImplicitThink bool
	// IdleTimeout, FirstByteTimeout, MaxRetries, HTTPClient and Logger are
	// as in the ollama package.
	IdleTimeout      time.Duration
	FirstByteTimeout time.Duration
	MaxRetries       int
	HTTPClient       *http.Client
	Logger           *slog.Logger
	// Header is added to every request (gateways that want more than a key).
	Header http.Header
}

// Provider is an llm.Provider for servers with the Responses API.
type Provider struct {
	opts   Options
	base   string
	client *wire.Client
	// meta answers what is not a chat (models, embeddings, health) from
	// the same server's OpenAI-compatible endpoints.
	meta *openai.Provider

	mu sync.Mutex
	// closed holds the models whose replies closed a <think> block they
	// did not open (a lone </think>).
	closed map[string]bool
}

// Provider has every optional ability of an llm.Provider.
var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.ModelLister    = (*Provider)(nil)
	_ llm.ModelDescriber = (*Provider)(nil)
	_ llm.Embedder       = (*Provider)(nil)
	_ llm.HealthChecker  = (*Provider)(nil)
)

// New returns a Provider.
func New(opts Options) *Provider {
	base := openai.NormalizeBaseURL(opts.BaseURL)
	hdr := http.Header{}
	for k, v := range opts.Header {
		hdr[k] = v
	}
	if opts.APIKey != "" {
		hdr.Set("Authorization", "Bearer "+opts.APIKey)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient()
	}
	return &Provider{
		opts:   opts,
		base:   base,
		closed: map[string]bool{},
		meta: openai.New(openai.Options{BaseURL: base, APIKey: opts.APIKey, Model: opts.Model, Models: opts.Models,
			ImplicitThink: opts.ImplicitThink, IdleTimeout: opts.IdleTimeout, FirstByteTimeout: opts.FirstByteTimeout,
			MaxRetries: opts.MaxRetries, HTTPClient: hc, Logger: opts.Logger, Header: opts.Header}),
		client: &wire.Client{
			Target: wire.Target{
				Provider:        kind,
				BaseURL:         base,
				UnreachableHint: "is the server running? set --base-url or OPENAI_BASE_URL to its address (e.g. http://localhost:11434/v1 for Ollama, http://localhost:8000/v1 for vLLM, http://localhost:1234/v1 for LM Studio)",
				AuthHint:        "check the API key: --api-key, or OPENAI_API_KEY",
				WrongServerHint: "check --base-url or OPENAI_BASE_URL: the Responses API is served under /v1 (e.g. http://localhost:11434/v1 for Ollama); a server without it (llama.cpp's, Ollama before 0.13.3) speaks chat completions: use --provider openai",
			},
			HTTP:             hc,
			Header:           hdr,
			IdleTimeout:      opts.IdleTimeout,
			FirstByteTimeout: opts.FirstByteTimeout,
			Retry:            wire.RetryFor(opts.MaxRetries),
			Log:              opts.Logger,
		},
	}
}

// Kind returns "responses".
func (p *Provider) Kind() string { return kind }

// BaseURL returns the API root the provider talks to.
func (p *Provider) BaseURL() string { return p.base }

func (p *Provider) url(path string) string { return wire.JoinURL(p.base, path) }

func (p *Provider) model(m string) string {
	if m != "" {
		return m
	}
	return p.opts.Model
}

// Models lists the server's /models, with the capabilities configured in
// Options.Models.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	ms, err := p.meta.Models(ctx)
	return ms, own(err)
}

// ModelInfo describes one model from /models and configuration.
func (p *Provider) ModelInfo(ctx context.Context, model string) (*llm.ModelInfo, error) {
	mi, err := p.meta.ModelInfo(ctx, p.model(model))
	return mi, own(err)
}

// Embed asks /embeddings.
func (p *Provider) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	vs, err := p.meta.Embed(ctx, p.model(model), inputs)
	return vs, own(err)
}

// Health lists /models: it answers only if the server is up and the key is
// accepted. (Whether the server offers the Responses API is another
// question: OffersResponses asks it.)
func (p *Provider) Health(ctx context.Context) (*llm.ServerInfo, error) {
	info, err := p.meta.Health(ctx)
	if err != nil {
		return nil, own(err)
	}
	info.Kind = kind
	return info, nil
}

// OffersResponses reports whether the server answers POST /responses (see
// openai.Provider.OffersResponses).
func (p *Provider) OffersResponses(ctx context.Context) (bool, error) {
	ok, err := p.meta.OffersResponses(ctx)
	return ok, own(err)
}

// own makes an error of the metadata provider this provider's.
func own(err error) error {
	var le *llm.Error
	if errors.As(err, &le) {
		le.Provider = kind
	}
	return err
}

// withModels adds the server's models to a model-not-found error.
func (p *Provider) withModels(ctx context.Context, err error) error {
	var le *llm.Error
	if !errors.As(err, &le) || le.Code != llm.CodeModelNotFound {
		return err
	}
	if le.Hint == "" {
		le.Hint = "choose one the server has with --model (`hearth models` lists them)"
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if ms, lerr := p.meta.Models(lctx); lerr == nil {
		for _, m := range ms {
			le.Available = append(le.Available, m.Name)
		}
	}
	return le
}

// implicitThink reports whether a reply of the model starts inside a
// <think> block its template opened: configured, or seen.
func (p *Provider) implicitThink(model string) bool {
	if p.opts.ImplicitThink {
		return true
	}
	for name, mc := range p.opts.Models {
		if mc.ImplicitThink && sameModel(name, model) {
			return true
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed[model]
}

// sawLoneClose remembers that a reply of the model closed a block its
// template opened, so that its next replies are read as starting inside one.
func (p *Provider) sawLoneClose(model string) {
	p.mu.Lock()
	p.closed[model] = true
	p.mu.Unlock()
	if p.opts.Logger != nil {
		p.opts.Logger.Debug("a reply closed a <think> block opened in the prompt: the model's next replies are read as starting inside one", "model", model)
	}
}

// sameModel reports whether two model names are the same, allowing for
// Ollama's implicit ":latest" tag.
func sameModel(a, b string) bool {
	return strings.TrimSuffix(a, ":latest") == strings.TrimSuffix(b, ":latest")
}
