// Package ollama talks to Ollama's native API: /api/chat (NDJSON streaming
// and not), /api/tags, /api/show, /api/version and /api/embed.
//
// Beyond the wire, it looks after two things Ollama leaves to the client:
// the context window (Ollama's default num_ctx is small and it silently drops
// the front of an overlong prompt, system prompt and tool definitions first),
// and ids for tool calls (older servers send none).
package ollama

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/thinktag"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// DefaultHost is where Ollama listens unless OLLAMA_HOST says otherwise.
const DefaultHost = "http://127.0.0.1:11434"

// DefaultMaxContext caps the context window asked for when it comes from the
// model's own maximum: some models declare 128K or more, and a window that
// large can exhaust a laptop's memory. Set Options.NumCtx to go higher.
const DefaultMaxContext = 16384

// Options configure a Provider. The zero value talks to OLLAMA_HOST (or the
// default address) with sensible timeouts.
type Options struct {
	// BaseURL is the server's address; empty means HostFromEnv(os.Getenv).
	BaseURL string
	// Model is used when a request names none.
	Model string
	// NumCtx, when set, is the context window asked for on every chat.
	// Otherwise it is the model's own (from /api/show), capped at
	// MaxContext, unless the model's Modelfile sets num_ctx itself.
	NumCtx int
	// MaxContext caps a window taken from the model; 0 means
	// DefaultMaxContext.
	MaxContext int
	// AllowTruncation lets Ollama drop the front of an overlong prompt, as
	// it does by default. Hearth asks it not to (truncate: false), so an
	// overlong prompt fails with CodeContextLength instead of silently
	// losing its system prompt.
	AllowTruncation bool
	// ImplicitThink says the models' templates open <think> in the prompt,
	// so a reply holds only a closing </think> (for models Ollama does not
	// know as thinking models, whose reasoning it leaves in the content).
	// Without it, a model is taken to do so when its template (from
	// /api/show, when asked for anyway) says it, or once one of its replies
	// closed such a block: the text before the lone </think> is then
	// reclassified as reasoning (llm.EventThinkingReclassified).
	ImplicitThink bool
	// KeepAlive is sent with every chat unless the request sets its own.
	KeepAlive time.Duration
	// IdleTimeout ends a stream that started and then went silent;
	// FirstByteTimeout a request that got nothing at all. Zero means the
	// defaults (2 min, 10 min); negative disables.
	IdleTimeout      time.Duration
	FirstByteTimeout time.Duration
	// MaxRetries is how many times a transient failure is retried before
	// any output; 0 means 2, negative means none.
	MaxRetries int
	// HTTPClient is used for every request; nil means a default one.
	HTTPClient *http.Client
	// Header is added to every request (an authenticating proxy in front
	// of Ollama).
	Header http.Header
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
}

// Provider is an llm.Provider for Ollama's native API.
type Provider struct {
	opts   Options
	base   string
	client *wire.Client

	mu    sync.Mutex
	shown map[string]*modelMeta // /api/show results, by model
	// closed holds the models whose replies closed a <think> block they
	// did not open (a lone </think>): their template opens it.
	closed map[string]bool
}

type modelMeta struct {
	info llm.ModelInfo
	// numCtx is what the Modelfile sets, 0 if it sets nothing.
	numCtx int
	// opensThink is set when the model's template opens <think> in the
	// prompt and Ollama does not parse the model's thinking (it has no
	// "thinking" capability): the reply's content starts inside the block.
	opensThink bool
}

// Provider has every optional ability of an llm.Provider.
var (
	_ llm.Provider       = (*Provider)(nil)
	_ llm.ModelLister    = (*Provider)(nil)
	_ llm.ModelDescriber = (*Provider)(nil)
	_ llm.Embedder       = (*Provider)(nil)
	_ llm.HealthChecker  = (*Provider)(nil)
)

// HostFromEnv returns Ollama's address as the ollama command line reads it
// from OLLAMA_HOST: "host", "host:port", ":port", "http(s)://host[:port]"
// all work; the port defaults to 11434 (80/443 with an explicit scheme).
func HostFromEnv(getenv func(string) string) string {
	s := strings.TrimSpace(strings.Trim(getenv("OLLAMA_HOST"), `"'`))
	if s == "" {
		return DefaultHost
	}
	return ParseHost(s)
}

// ParseHost normalises an Ollama address the way OLLAMA_HOST is read.
func ParseHost(s string) string {
	defaultPort := "11434"
	scheme, hostport, ok := strings.Cut(s, "://")
	switch {
	case !ok:
		scheme, hostport = "http", s
	case scheme == "http":
		defaultPort = "80"
	case scheme == "https":
		defaultPort = "443"
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = "127.0.0.1", defaultPort
		if ip := net.ParseIP(strings.Trim(hostport, "[]")); ip != nil {
			host = ip.String()
		} else if hostport != "" {
			host = hostport
		}
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1" // a listen-on-all address; connect locally
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		port = defaultPort
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: path}
	return strings.TrimRight(u.String(), "/")
}

// New returns a Provider.
func New(opts Options) *Provider {
	base := opts.BaseURL
	if base == "" {
		base = DefaultHost
	} else if !strings.Contains(base, "://") {
		base = ParseHost(base)
	}
	base = strings.TrimRight(base, "/")
	hc := opts.HTTPClient
	if hc == nil {
		hc = wire.NewHTTPClient()
	}
	return &Provider{
		opts: opts,
		base: base,
		client: &wire.Client{
			Target: wire.Target{
				Provider:        "ollama",
				BaseURL:         base,
				UnreachableHint: "is Ollama running? start it with `ollama serve`, or set OLLAMA_HOST (or --base-url) to where it listens",
				AuthHint:        "the server behind this address wants credentials; Ollama itself does not",
				WrongServerHint: "is Ollama listening there? check --base-url or OLLAMA_HOST (Ollama's port is 11434); for an OpenAI-compatible server (vLLM, LM Studio, llama.cpp) use --provider openai",
			},
			HTTP:             hc,
			Header:           opts.Header,
			IdleTimeout:      opts.IdleTimeout,
			FirstByteTimeout: opts.FirstByteTimeout,
			Retry:            wire.RetryFor(opts.MaxRetries),
			Log:              opts.Logger,
		},
		shown:  map[string]*modelMeta{},
		closed: map[string]bool{},
	}
}

// Kind returns "ollama".
func (p *Provider) Kind() string { return "ollama" }

// BaseURL returns the address the provider talks to.
func (p *Provider) BaseURL() string { return p.base }

func (p *Provider) url(path string) string { return wire.JoinURL(p.base, path) }

func (p *Provider) model(m string) string {
	if m != "" {
		return m
	}
	return p.opts.Model
}

// Health asks /api/version.
func (p *Provider) Health(ctx context.Context) (*llm.ServerInfo, error) {
	start := time.Now()
	var v struct {
		Version string `json:"version"`
	}
	c := *p.client
	c.Retry.Max = 0
	if err := c.JSON(ctx, "health check", http.MethodGet, p.url("/api/version"), nil, &v); err != nil {
		return nil, err
	}
	return &llm.ServerInfo{Kind: "ollama", BaseURL: p.base, Version: v.Version, Latency: time.Since(start)}, nil
}

// Models lists /api/tags, with each model's capabilities from /api/show.
func (p *Provider) Models(ctx context.Context) ([]llm.ModelInfo, error) {
	names, err := p.tags(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]llm.ModelInfo, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, t := range names {
		out[i] = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if m, err := p.ModelInfo(ctx, t.Name); err == nil {
				mi := *m
				mi.Size, mi.ModifiedAt = t.Size, t.ModifiedAt
				out[i] = mi
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, p.client.FromTransport(ctx, "list models", err)
	}
	return out, nil
}

func (p *Provider) tags(ctx context.Context) ([]llm.ModelInfo, error) {
	var r struct {
		Models []struct {
			Name       string    `json:"name"`
			Model      string    `json:"model"`
			Size       int64     `json:"size"`
			ModifiedAt time.Time `json:"modified_at"`
			Details    details   `json:"details"`
		} `json:"models"`
	}
	if err := p.client.JSON(ctx, "list models", http.MethodGet, p.url("/api/tags"), nil, &r); err != nil {
		return nil, err
	}
	out := make([]llm.ModelInfo, 0, len(r.Models))
	for _, m := range r.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		out = append(out, llm.ModelInfo{Name: name, Size: m.Size, ModifiedAt: m.ModifiedAt,
			Family: m.Details.Family, ParameterSize: m.Details.ParameterSize, Quantization: m.Details.QuantizationLevel})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

type details struct {
	Family            string `json:"family"`
	ParameterSize     string `json:"parameter_size"`
	QuantizationLevel string `json:"quantization_level"`
}

// ModelInfo asks /api/show. Capabilities come from the server's own list;
// ContextLength is the window Hearth will use with this model (see
// Options.NumCtx), and the model's trained maximum is not exceeded.
func (p *Provider) ModelInfo(ctx context.Context, model string) (*llm.ModelInfo, error) {
	m, err := p.show(ctx, p.model(model))
	if err != nil {
		return nil, err
	}
	info := m.info
	info.ContextLength = p.window(m)
	return &info, nil
}

func (p *Provider) show(ctx context.Context, model string) (*modelMeta, error) {
	p.mu.Lock()
	m, ok := p.shown[model]
	p.mu.Unlock()
	if ok {
		return m, nil
	}
	var r struct {
		Template     string         `json:"template"`
		Parameters   string         `json:"parameters"`
		Details      details        `json:"details"`
		ModelInfo    map[string]any `json:"model_info"`
		Capabilities []string       `json:"capabilities"`
		ModifiedAt   time.Time      `json:"modified_at"`
	}
	err := p.client.JSON(ctx, "show model", http.MethodPost, p.url("/api/show"), map[string]string{"model": model}, &r)
	if err != nil {
		return nil, p.withModels(ctx, err, model)
	}
	m = &modelMeta{info: llm.ModelInfo{
		Name: model, Family: r.Details.Family, ParameterSize: r.Details.ParameterSize,
		Quantization: r.Details.QuantizationLevel, ModifiedAt: r.ModifiedAt,
		CapabilitiesKnown: r.Capabilities != nil,
	}}
	for _, c := range r.Capabilities {
		switch c {
		case "tools":
			m.info.Capabilities = append(m.info.Capabilities, llm.CapTools)
		case "thinking":
			m.info.Capabilities = append(m.info.Capabilities, llm.CapThinking)
		case "vision":
			m.info.Capabilities = append(m.info.Capabilities, llm.CapVision)
		case "embedding":
			m.info.Capabilities = append(m.info.Capabilities, llm.CapEmbedding)
		}
	}
	m.info.TrainedContextLength = trainedContext(r.ModelInfo)
	m.numCtx = paramInt(r.Parameters, "num_ctx")
	// A model Ollama knows as thinking has its reasoning parsed by Ollama
	// (message.thinking), the block its template opens included.
	m.opensThink = !m.info.Has(llm.CapThinking) && thinktag.TemplateOpensThink(r.Template)
	p.mu.Lock()
	p.shown[model] = m
	p.mu.Unlock()
	return m, nil
}

// cached returns what /api/show said of a model, if it was asked.
func (p *Provider) cached(model string) *modelMeta {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.shown[model]
}

// implicitThink reports whether a reply of the model starts inside a <think>
// block its template opened: configured, said by its template, or seen.
func (p *Provider) implicitThink(model string, m *modelMeta) bool {
	if p.opts.ImplicitThink || (m != nil && m.opensThink) {
		return true
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
	if p.opts.Logger == nil {
		return
	}
	p.opts.Logger.Debug("a reply closed a <think> block opened in the prompt: the model's next replies are read as starting inside one", "model", model)
}

// window is the context length used with a model: configured, else the
// Modelfile's num_ctx, else the model's trained maximum capped.
func (p *Provider) window(m *modelMeta) int {
	switch {
	case p.opts.NumCtx > 0:
		return p.opts.NumCtx
	case m.numCtx > 0:
		return m.numCtx
	}
	limit := p.opts.MaxContext
	if limit <= 0 {
		limit = DefaultMaxContext
	}
	if t := m.info.TrainedContextLength; t > 0 {
		return min(t, limit)
	}
	return 0
}

// trainedContext finds "<architecture>.context_length" in model_info.
func trainedContext(mi map[string]any) int {
	if arch, ok := mi["general.architecture"].(string); ok {
		if v, ok := mi[arch+".context_length"].(float64); ok {
			return int(v)
		}
	}
	for k, v := range mi {
		if strings.HasSuffix(k, ".context_length") {
			if f, ok := v.(float64); ok {
				return int(f)
			}
		}
	}
	return 0
}

// paramInt reads one integer from /api/show's "parameters" text.
func paramInt(params, name string) int {
	for _, line := range strings.Split(params, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == name {
			if n, err := strconv.Atoi(f[1]); err == nil {
				return n
			}
		}
	}
	return 0
}

// withModels adds the server's models and a fix to a model-not-found error.
func (p *Provider) withModels(ctx context.Context, err error, model string) error {
	le, ok := err.(*llm.Error)
	if !ok || le.Code != llm.CodeModelNotFound {
		return err
	}
	if le.Hint == "" {
		le.Hint = fmt.Sprintf("pull it with `ollama pull %s`, or choose one the server has with --model", model)
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if tags, terr := p.tags(lctx); terr == nil {
		for _, t := range tags {
			le.Available = append(le.Available, t.Name)
		}
	}
	return le
}

// Embed asks /api/embed.
func (p *Provider) Embed(ctx context.Context, model string, inputs []string) ([][]float32, error) {
	model = p.model(model)
	var r struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	in := map[string]any{"model": model, "input": inputs}
	if err := p.client.JSON(ctx, "embed", http.MethodPost, p.url("/api/embed"), in, &r); err != nil {
		return nil, p.withModels(ctx, err, model)
	}
	if len(r.Embeddings) != len(inputs) {
		return nil, &llm.Error{Provider: "ollama", Op: "embed", Code: llm.CodeBadResponse,
			Message: fmt.Sprintf("asked for %d embeddings, got %d", len(inputs), len(r.Embeddings))}
	}
	return r.Embeddings, nil
}
