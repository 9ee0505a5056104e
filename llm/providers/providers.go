// Package providers builds an llm.Provider from what the user said: flags,
// then HEARTH_* environment variables, then the variables users of the
// servers already set (OLLAMA_HOST, OPENAI_BASE_URL, OPENAI_API_KEY), then
// defaults (Ollama on its usual address).
package providers

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/llm/responses"
)

// The provider kinds.
const (
	KindOllama = "ollama"
	// KindOpenAI is any OpenAI-compatible server: OpenAI, vLLM, LM Studio,
	// llama.cpp's server, Ollama's /v1, gateways.
	KindOpenAI = "openai"
	// KindResponses is a server with OpenAI's Responses API: OpenAI,
	// Ollama's /v1 (0.13.3 and later), vLLM, LM Studio (0.3.29 and later).
	// Its address, key and environment are those of KindOpenAI.
	KindResponses = "responses"
)

// SecretEnv are the environment variables Resolve reads keys from. Hearth
// takes them out of its environment once read (internal/envscrub), so that
// the programs it starts do not inherit them.
var SecretEnv = []string{"HEARTH_API_KEY", "OPENAI_API_KEY"}

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
	// OpenAI-compatible server (chat completions or Responses), which does
	// not say it itself.
	Models map[string]openai.ModelConfig
	// ToolMode is how the models are offered tools: "auto" (the default),
	// "native" or "prompted" (prompted.ParseMode). New does not apply it:
	// the agent wraps the provider (hearth.Config.ToolMode).
	ToolMode string
	Logger   *slog.Logger
}

// Resolve combines what flags said (c) with the environment (read through
// getenv: HEARTH_PROVIDER, HEARTH_MODEL, HEARTH_BASE_URL, OLLAMA_HOST,
// OPENAI_BASE_URL, HEARTH_API_KEY, OPENAI_API_KEY, HEARTH_NUM_CTX,
// HEARTH_IDLE_TIMEOUT, HEARTH_IMPLICIT_THINK, HEARTH_TOOL_MODE), then base (a config file's
// entry), then defaults, and checks the result. Flags win over the
// environment, which wins over the file; this is the one place the model
// server's settings are resolved.
func Resolve(c, base Config, getenv func(string) string) (Config, error) {
	pick := func(vals ...string) string {
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	c.Kind = strings.ToLower(pick(c.Kind, getenv("HEARTH_PROVIDER"), base.Kind))
	if c.Kind == "" {
		c.Kind = KindOllama
		if c.BaseURL == "" && getenv("HEARTH_BASE_URL") == "" && getenv("OLLAMA_HOST") == "" && getenv("OPENAI_BASE_URL") != "" {
			// Only OPENAI_BASE_URL is set: the user means that server.
			c.Kind = KindOpenAI
		}
	}
	c.Model = pick(c.Model, getenv("HEARTH_MODEL"), base.Model)
	switch c.Kind {
	case KindOllama:
		c.BaseURL = pick(c.BaseURL, getenv("HEARTH_BASE_URL"), getenv("OLLAMA_HOST"), base.BaseURL)
		if c.BaseURL == "" {
			c.BaseURL = ollama.DefaultHost
		} else {
			c.BaseURL = ollama.ParseHost(c.BaseURL)
		}
		c.APIKey = pick(c.APIKey, getenv("HEARTH_API_KEY"), base.APIKey)
	case KindOpenAI, KindResponses:
		c.BaseURL = openai.NormalizeBaseURL(pick(c.BaseURL, getenv("HEARTH_BASE_URL"), getenv("OPENAI_BASE_URL"), base.BaseURL))
		c.APIKey = pick(c.APIKey, getenv("HEARTH_API_KEY"), getenv("OPENAI_API_KEY"), base.APIKey)
	default:
		return c, fmt.Errorf("unknown provider %q: use --provider ollama, --provider openai for any OpenAI-compatible server (vLLM, LM Studio, llama.cpp), --provider responses for one with the Responses API (Ollama 0.13.3+, vLLM, LM Studio 0.3.29+), or the name of a provider in your config", c.Kind)
	}
	if s := strings.TrimSpace(getenv("HEARTH_NUM_CTX")); s != "" && c.NumCtx == 0 {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return c, fmt.Errorf("HEARTH_NUM_CTX=%q: want a number of tokens", s)
		}
		c.NumCtx = n
	}
	if c.NumCtx == 0 {
		c.NumCtx = base.NumCtx
	}
	if s := strings.TrimSpace(getenv("HEARTH_IDLE_TIMEOUT")); s != "" && c.IdleTimeout == 0 {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return c, fmt.Errorf("HEARTH_IDLE_TIMEOUT=%q: want a duration such as 5m", s)
		}
		c.IdleTimeout = d
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = base.IdleTimeout
	}
	if s := strings.TrimSpace(getenv("HEARTH_IMPLICIT_THINK")); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return c, fmt.Errorf("HEARTH_IMPLICIT_THINK=%q: want true or false", s)
		}
		c.ImplicitThink = c.ImplicitThink || b
	}
	c.ImplicitThink = c.ImplicitThink || base.ImplicitThink
	from := "--tool-mode"
	if c.ToolMode == "" {
		from = "HEARTH_TOOL_MODE"
		if c.ToolMode = strings.TrimSpace(getenv("HEARTH_TOOL_MODE")); c.ToolMode == "" {
			from, c.ToolMode = "the provider's tool_mode", base.ToolMode
		}
	}
	mode, err := prompted.ParseMode(c.ToolMode)
	if err != nil {
		return c, fmt.Errorf("%s: %w", from, err)
	}
	c.ToolMode = string(mode)
	if c.Models == nil {
		c.Models = base.Models
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
	case KindResponses:
		return responses.New(responses.Options{BaseURL: c.BaseURL, APIKey: c.APIKey, Model: c.Model, Models: c.Models,
			IdleTimeout: c.IdleTimeout, ImplicitThink: c.ImplicitThink, Logger: c.Logger}), nil
	}
	return nil, fmt.Errorf("unknown provider %q", c.Kind)
}
