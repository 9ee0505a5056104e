// Package providers builds an llm.Provider from what the user said: flags,
// then HEARTH_* environment variables, then the variables users of the
// servers already set (OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY), then
// defaults (Ollama on its usual address).
package providers

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
)

// The provider kinds.
const (
	KindOllama = "ollama"
	// KindOpenAI is any OpenAI-compatible server: OpenAI, vLLM, LM Studio,
	// llama.cpp's server, Ollama's /v1, gateways.
	KindOpenAI = "openai"
)

// Config says which server to talk to. Empty fields are filled by Resolve.
type Config struct {
	Kind    string
	BaseURL string
	Model   string
	APIKey  string
	// NumCtx is the context window to ask Ollama for (0: from the model).
	NumCtx int
	// IdleTimeout ends a stream that went silent (0: the default).
	IdleTimeout time.Duration
	// ImplicitThink says the models' templates open <think> in the prompt
	// (Qwen3 "thinking", DeepSeek-R1), so replies hold only </think>.
	ImplicitThink bool
	// Models holds what configuration says about models of an
	// OpenAI-compatible server, which does not say it itself.
	Models map[string]openai.ModelConfig
	Logger *slog.Logger
}

// Resolve fills the empty fields of c from the environment (read through
// getenv) and defaults, and checks what it got.
func Resolve(c Config, getenv func(string) string) (Config, error) {
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	c.Kind = strings.ToLower(pick(c.Kind, getenv("HEARTH_PROVIDER")))
	if c.Kind == "" {
		c.Kind = KindOllama
		if c.BaseURL == "" && getenv("HEARTH_BASE_URL") == "" && getenv("OLLAMA_HOST") == "" && getenv("OPENAI_BASE_URL") != "" {
			// Only OPENAI_BASE_URL is set: the user means that server.
			c.Kind = KindOpenAI
		}
	}
	c.Model = pick(c.Model, getenv("HEARTH_MODEL"))
	switch c.Kind {
	case KindOllama:
		c.BaseURL = pick(c.BaseURL, getenv("HEARTH_BASE_URL"))
		if c.BaseURL == "" {
			c.BaseURL = ollama.HostFromEnv(getenv)
		} else {
			c.BaseURL = ollama.ParseHost(c.BaseURL)
		}
		c.APIKey = pick(c.APIKey, getenv("HEARTH_API_KEY"))
	case KindOpenAI:
		c.BaseURL = openai.NormalizeBaseURL(pick(c.BaseURL, getenv("HEARTH_BASE_URL"), getenv("OPENAI_BASE_URL")))
		c.APIKey = pick(c.APIKey, getenv("HEARTH_API_KEY"), getenv("OPENAI_API_KEY"))
	default:
		return c, fmt.Errorf("unknown provider %q: use --provider ollama, or --provider openai for any OpenAI-compatible server (vLLM, LM Studio, llama.cpp)", c.Kind)
	}
	return c, nil
}

// New returns the provider c describes. Call Resolve first.
func New(c Config) (llm.Provider, error) {
	switch c.Kind {
	case KindOllama:
		o := ollama.Options{BaseURL: c.BaseURL, Model: c.Model, NumCtx: c.NumCtx, IdleTimeout: c.IdleTimeout, ImplicitThink: c.ImplicitThink, Logger: c.Logger}
		if c.APIKey != "" {
			// Ollama behind an authenticating proxy.
			o.Header = http.Header{"Authorization": {"Bearer " + c.APIKey}}
		}
		return ollama.New(o), nil
	case KindOpenAI:
		return openai.New(openai.Options{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model, Models: c.Models,
			IdleTimeout: c.IdleTimeout, ImplicitThink: c.ImplicitThink, Logger: c.Logger}), nil
	}
	return nil, fmt.Errorf("unknown provider %q", c.Kind)
}
