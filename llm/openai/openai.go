// Package openai talks to any server with an OpenAI-compatible
// /v1/chat/completions: OpenAI itself, vLLM, LM Studio, llama.cpp's server,
// Ollama's /v1, and the many gateways that copy them.
//
// It is a small hand-written client rather than github.com/openai/openai-go:
// the servers it targets differ from OpenAI exactly where that SDK is strict
// (reasoning as `reasoning` or `reasoning_content`, tool arguments as an
// object instead of a string, every parallel call sent as index 0, errors as
// an `error:` SSE field or a data object inside a 200 stream), and decoding
// only the fields Hearth uses keeps a streamed chunk to about one allocation.
package openai

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/thinktag"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// DefaultBaseURL is used when neither the options nor OPENAI_BASE_URL say.
const DefaultBaseURL = "https://api.openai.com/v1"

// ModelConfig is what configuration says about a model, for servers that do
// not say it themselves. Capabilities are never guessed from a name.
type ModelConfig struct {
	// Capabilities are what the model can do; nil says nothing (unknown:
	// only a list, even an empty one, makes them known).
	Capabilities  []llm.Capability
	ContextLength int
	// ImplicitThink says the model's chat template opens a <think> block in
	// the prompt (Qwen3 "thinking", DeepSeek-R1), so its replies hold only
	// a closing </think>.
	ImplicitThink bool
}

// Options configure a Provider.
type Options struct {
	// BaseURL is the API root, e.g. http://localhost:8000/v1. A URL with no
	// path gets /v1 added. Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token when not empty.
	APIKey string
	// Model is used when a request names none.
	Model string
	// Models holds per-model configuration, by model name.
	Models map[string]ModelConfig
	// ImplicitThink says every model's template opens <think> in the
	// prompt (see ModelConfig.ImplicitThink). Without it, a model is taken
	// to do so when llama.cpp's /props (asked for the window anyway, by
	// ModelInfo) shows a chat template that does, or once one of its
	// replies closed such a block: the text before the lone </think> is
	// then reclassified as reasoning (llm.EventThinkingReclassified).
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

// Provider is an llm.Provider for OpenAI-compatible servers.
type Provider struct {
	opts   Options
	base   string
	client *wire.Client
	// openai is set when talking to api.openai.com, which rejects the
	// chat_template_kwargs that local servers take.
	openai bool

	mu sync.Mutex
	// opens holds, by model, what the server's chat template says of
	// <think> (from llama.cpp's /props); closed the models whose replies
	// closed a block they did not open (a lone </think>).
	opens  map[string]templateThink
	closed map[string]bool
}

// templateThink is what a chat template says of <think>.
type templateThink struct {
	// opens: the generation prompt opens the block.
	opens bool
	// switchable: the template reads enable_thinking, which Hearth sends
	// as false when thinking is off; it may then close the block itself.
	switchable bool
}

// Provider has every optional ability of an llm.Provider.
var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.ModelLister    = (*Provider)(nil)
	_ llm.ModelDescriber = (*Provider)(nil)
	_ llm.Embedder       = (*Provider)(nil)
	_ llm.HealthChecker  = (*Provider)(nil)
)

// NormalizeBaseURL adds /v1 to a URL that has no path.
func NormalizeBaseURL(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), "/")
	if s == "" {
		return DefaultBaseURL
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	if u, err := url.Parse(s); err == nil && (u.Path == "" || u.Path == "/") {
		s += "/v1"
	}
	return s
}

// New returns a Provider.
func New(opts Options) *Provider {
	base := NormalizeBaseURL(opts.BaseURL)
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
	u, _ := url.Parse(base)
	return &Provider{
		opts:   opts,
		base:   base,
		opens:  map[string]templateThink{},
		closed: map[string]bool{},
		openai: u != nil && u.Hostname() == "api.openai.com",
		client: &wire.Client{
			Target: wire.Target{
				Provider:        "openai",
				BaseURL:         base,
				UnreachableHint: "is the server running? set --base-url or OPENAI_BASE_URL to its address (e.g. http://localhost:8000/v1 for vLLM, http://localhost:1234/v1 for LM Studio, http://localhost:8080/v1 for llama.cpp)",
				AuthHint:        "check the API key: --api-key, or OPENAI_API_KEY",
				WrongServerHint: "check --base-url or OPENAI_BASE_URL: most servers serve the API under /v1 (e.g. http://localhost:8000/v1); for Ollama's own API use --provider ollama",
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

// Kind returns "openai".
func (p *Provider) Kind() string { return "openai" }

// BaseURL returns the API root the provider talks to.
func (p *Provider) BaseURL() string { return p.base }

func (p *Provider) url(path string) string { return wire.JoinURL(p.base, path) }

func (p *Provider) model(m string) string {
	if m != "" {
		return m
	}
	return p.opts.Model
}

type modelEntry struct {
	ID      string `json:"id"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
	// vLLM reports the window it serves; llama.cpp the trained one.
	MaxModelLen int `json:"max_model_len"`
	Meta        struct {
		NCtxTrain int `json:"n_ctx_train"`
	} `json:"meta"`
}

func (p *Provider) list(ctx context.Context, op string, retry bool) ([]modelEntry, error) {
	var r struct {
		Data []modelEntry `json:"data"`
	}
	c := p.client
	if !retry {
		cc := *p.client
		cc.Retry.Max = 0
		c = &cc
	}
	if err := c.JSON(ctx, op, http.MethodGet, p.url("/models"), nil, &r); err != nil {
		return nil, err
	}
	sort.Slice(r.Data, func(i, j int) bool { return r.Data[i].ID < r.Data[j].ID })
	return r.Data, nil
}

func (p *Provider) info(e modelEntry) llm.ModelInfo {
	mi := llm.ModelInfo{Name: e.ID}
	if e.Created > 0 {
		mi.ModifiedAt = time.Unix(e.Created, 0).UTC()
	}
	switch {
	case e.MaxModelLen > 0:
		mi.ContextLength = e.MaxModelLen
	case e.Meta.NCtxTrain > 0:
		mi.TrainedContextLength = e.Meta.NCtxTrain
	}
	if mc, ok := p.lookupConfig(e.ID); ok {
		mi.Capabilities = append(mi.Capabilities, mc.Capabilities...)
		mi.CapabilitiesKnown = mi.CapabilitiesKnown || mc.Capabilities != nil
		if mc.ContextLength > 0 {
			mi.ContextLength = mc.ContextLength
		}
	}
	return mi
}

// Models lists /models. Capabilities are those configured in Options.Models;
// the wire has none.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	es, err := p.list(ctx, "list models", true)
	if err != nil {
		return nil, err
	}
	out := make([]llm.ModelInfo, len(es))
	for i, e := range es {
		out[i] = p.info(e)
	}
	return out, nil
}

// ModelInfo describes one model from /models and configuration.
func (p *Provider) ModelInfo(ctx context.Context, model string) (*llm.ModelInfo, error) {
	model = p.model(model)
	es, err := p.list(ctx, "show model", true)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(es))
	for _, e := range es {
		if sameModel(e.ID, model) {
			mi := p.info(e)
			if mi.ContextLength == 0 && e.Meta.NCtxTrain > 0 {
				mi.ContextLength = p.llamacppProps(ctx, model)
			}
			return &mi, nil
		}
		names = append(names, e.ID)
	}
	return nil, &llm.Error{Provider: "openai", Op: "show model", Code: llm.CodeModelNotFound,
		Message: fmt.Sprintf("model %q not found", model), Available: names,
		Hint: "choose one the server has with --model"}
}

// Health lists /models: it answers only if the server is up and the key is
// accepted.
func (p *Provider) Health(ctx context.Context) (*llm.ServerInfo, error) {
	start := time.Now()
	if _, err := p.list(ctx, "health check", false); err != nil {
		return nil, err
	}
	return &llm.ServerInfo{Kind: "openai", BaseURL: p.base, Latency: time.Since(start)}, nil
}

// Embed asks /embeddings.
func (p *Provider) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	var r struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	in := map[string]any{"model": p.model(model), "input": inputs, "encoding_format": "float"}
	if err := p.client.JSON(ctx, "embed", http.MethodPost, p.url("/embeddings"), in, &r); err != nil {
		return nil, p.withModels(ctx, err)
	}
	if len(r.Data) != len(inputs) {
		return nil, &llm.Error{Provider: "openai", Op: "embed", Code: llm.CodeBadResponse,
			Message: fmt.Sprintf("asked for %d embeddings, got %d", len(inputs), len(r.Data))}
	}
	out := make([][]float32, len(inputs))
	for i, d := range r.Data {
		j := d.Index
		if j < 0 || j >= len(out) || out[j] != nil {
			j = i
		}
		out[j] = d.Embedding
	}
	return out, nil
}

// withModels adds the server's models to a model-not-found error.
func (p *Provider) withModels(ctx context.Context, err error) error {
	le, ok := err.(*llm.Error)
	if !ok || le.Code != llm.CodeModelNotFound {
		return err
	}
	if le.Hint == "" {
		le.Hint = "choose one the server has with --model"
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if es, lerr := p.list(lctx, "list models", false); lerr == nil {
		for _, e := range es {
			le.Available = append(le.Available, e.ID)
		}
	}
	return le
}

// sameModel reports whether a listed model id names the requested model;
// Ollama's /v1 lists "tiny:latest" for a model used as "tiny".
func sameModel(listed, want string) bool {
	return listed == want || listed == want+":latest" || strings.TrimSuffix(listed, ":latest") == strings.TrimSuffix(want, ":latest")
}

// lookupConfig finds the configuration of a model by name, allowing for a
// ":latest" tag on either side.
func (p *Provider) lookupConfig(model string) (ModelConfig, bool) {
	if mc, ok := p.opts.Models[model]; ok {
		return mc, true
	}
	for name, mc := range p.opts.Models {
		if sameModel(name, model) {
			return mc, true
		}
	}
	return ModelConfig{}, false
}

func (p *Provider) modelConfig(model string) ModelConfig {
	mc, _ := p.lookupConfig(model)
	return mc
}

// llamacppProps asks llama.cpp's /props for the window it runs the model
// with (its -c), which /v1/models does not say (0 when unknown), and notes
// whether the model's chat template opens <think> in the prompt.
func (p *Provider) llamacppProps(ctx context.Context, model string) int {
	var props struct {
		NCtx    int `json:"n_ctx"`
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
		ChatTemplate string `json:"chat_template"`
	}
	root := strings.TrimSuffix(p.base, "/v1")
	c := *p.client
	c.Retry.Max = 0
	if err := c.JSON(ctx, "show model", http.MethodGet, root+"/props", nil, &props); err != nil {
		return 0
	}
	if props.ChatTemplate != "" {
		tt := templateThink{opens: thinktag.TemplateOpensThink(props.ChatTemplate),
			switchable: strings.Contains(props.ChatTemplate, "enable_thinking")}
		p.mu.Lock()
		p.opens[model] = tt
		p.mu.Unlock()
	}
	return max(props.NCtx, props.Default.NCtx)
}

// implicitThink reports whether a reply of the model starts inside a <think>
// block its template opened: configured, said by its template (unless the
// request turns thinking off and the template can honour that), or seen.
func (p *Provider) implicitThink(model string, think *llm.Think) bool {
	if p.opts.ImplicitThink || p.modelConfig(model).ImplicitThink {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if tt := p.opens[model]; tt.opens && !(tt.switchable && think != nil && !think.Enabled) {
		return true
	}
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
