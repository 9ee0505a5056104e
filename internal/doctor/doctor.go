// Package doctor checks that a model server is ready for Hearth: that it
// answers, which version it is, whether it offers OpenAI's Responses API
// (for the OpenAI dialects), that the chosen model is there (and, on
// Ollama, pulls it when it is not), that it can call tools, that its context
// window holds what Hearth sends before the user says anything, and that it
// answers a chat. Each problem comes with the fix.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/prompted"
)

// Status is the outcome of one check.
type Status string

// Outcomes, from best to worst.
const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Check is one line of the report.
type Check struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Report is the whole diagnosis.
type Report struct {
	Provider string  `json:"provider"`
	BaseURL  string  `json:"base_url"`
	Model    string  `json:"model,omitempty"`
	Checks   []Check `json:"checks"`
	// Ready is true when no check failed.
	Ready bool `json:"ready"`
	// MissingModel is the chosen model when the server does not have it
	// (Ollama can pull it: see Pull).
	MissingModel string `json:"missing_model,omitempty"`
	// PromptTokens estimates what Hearth sends before the user's first
	// message (system prompt and tool definitions), when measured;
	// ContextLength is the model's window, when known.
	PromptTokens  int `json:"prompt_tokens,omitempty"`
	ContextLength int `json:"context_length,omitempty"`
	// ToolMode is how the model will get its tools, "native" or
	// "prompted" (docs/tool-protocol.md), and ToolModeReason why, when
	// the model was checked.
	ToolMode       string `json:"tool_mode,omitempty"`
	ToolModeReason string `json:"tool_mode_reason,omitempty"`
}

// Insert adds c after the check named after (at the end when there is
// none), and updates Ready.
func (r *Report) Insert(after string, c Check) {
	i := len(r.Checks)
	for j, x := range r.Checks {
		if x.Name == after {
			i = j + 1
		}
	}
	r.Checks = slices.Insert(r.Checks, i, c)
	r.ready()
}

// ready sets Ready: no check failed.
func (r *Report) ready() {
	r.Ready = true
	for _, c := range r.Checks {
		if c.Status == Fail {
			r.Ready = false
		}
	}
}

// MinContext is the smallest context window that leaves room for Hearth's
// system prompt, tool definitions and a few turns of work.
const MinContext = 8192

// minOllama is the oldest Ollama with streamed tool calls and thinking.
var minOllama = [3]int{0, 9, 0}

// Options tune Run.
type Options struct {
	// Model is the model to check; empty checks the server only and says
	// how to choose one.
	Model string
	// SkipChat leaves out the live chat, which loads the model.
	SkipChat bool
	// Progress, if set, is told what is being checked (for a spinner).
	Progress func(step string)
	// Extra checks the caller made (the sandbox, the config) come first.
	Extra []Check
	// Prompt, if set, says what Hearth sends before the user's first
	// message, to compare with the model's window. It is called only once
	// the model is known to be there.
	Prompt func(context.Context) (*Prompt, error)
	// ToolMode is the configured tool mode ("": auto), and RefusedAt, if
	// set, says when the server refused tools for a model (zero: never,
	// or not remembered).
	ToolMode  prompted.Mode
	RefusedAt func(model string) time.Time
}

// Run diagnoses p.
func Run(ctx context.Context, p llm.Provider, baseURL string, opts Options) *Report {
	r := &Report{Provider: p.Kind(), BaseURL: baseURL, Model: opts.Model}
	add := func(c Check) { r.Checks = append(r.Checks, c) }
	r.Checks = append(r.Checks, opts.Extra...)
	progress := func(s string) {
		if opts.Progress != nil {
			opts.Progress(s)
		}
	}
	defer r.ready()

	progress("reaching the server")
	info, err := llm.Health(ctx, p)
	if err != nil {
		add(fromError("server", err))
		add(Check{Name: "model", Status: Skip, Detail: "not checked: the server check failed"})
		return r
	}
	detail := fmt.Sprintf("%s answers at %s in %s", kindName(p.Kind()), info.BaseURL, info.Latency.Round(time.Millisecond))
	if info.Version != "" {
		detail = fmt.Sprintf("%s %s answers at %s in %s", kindName(p.Kind()), info.Version, info.BaseURL, info.Latency.Round(time.Millisecond))
	}
	add(Check{Name: "server", Status: OK, Detail: detail})
	if p.Kind() == "ollama" {
		add(versionCheck(info.Version))
	}
	if rp, ok := p.(responsesProber); ok {
		progress("asking whether the server offers the Responses API")
		add(responsesCheck(ctx, rp, p.Kind(), info.BaseURL))
	}

	progress("listing models")
	models, err := llm.Models(ctx, p)
	if err != nil {
		add(fromError("models", err))
		return r
	}
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	switch {
	case len(models) == 0 && opts.Model != "" && p.Kind() == "ollama":
		// A fresh Ollama: the model check below says how to pull it.
		add(Check{Name: "models", Status: Warn, Detail: "the server has no models yet"})
	case len(models) == 0:
		fix := "load a model into the server"
		if p.Kind() == "ollama" {
			fix = "pull one, e.g. `hearth doctor -m qwen3:4b --pull` or `ollama pull qwen3:4b` (small, thinks, calls tools)"
		}
		add(Check{Name: "models", Status: Fail, Detail: "the server has no models", Fix: fix})
		return r
	default:
		add(Check{Name: "models", Status: OK, Detail: fmt.Sprintf("%d available: %s", len(models), clipList(names, 8))})
	}

	if opts.Model == "" {
		add(Check{Name: "model", Status: Fail, Detail: "no model chosen",
			Fix: fmt.Sprintf("choose one with --model (or HEARTH_MODEL), e.g. --model %s", suggest(models))})
		return r
	}
	progress("describing " + opts.Model)
	mi, err := llm.Describe(ctx, p, opts.Model)
	if err != nil {
		c := fromError("model", err)
		if llm.CodeOf(err) == llm.CodeModelNotFound {
			r.MissingModel = opts.Model
			c.Detail = fmt.Sprintf("%q is not on the server", opts.Model)
			if p.Kind() == "ollama" {
				c.Fix = fmt.Sprintf("pull it: add --pull to this command, or run `ollama pull %s`", opts.Model)
				if len(names) > 0 {
					c.Fix += "; or choose one of: " + clipList(names, 8)
				}
			} else {
				c.Fix = "load it into the server, or choose one of: " + clipList(names, 8)
			}
		}
		add(c)
		return r
	}
	add(Check{Name: "model", Status: OK, Detail: describe(mi)})
	var refused time.Time
	if opts.RefusedAt != nil {
		refused = opts.RefusedAt(opts.Model)
	}
	decision := prompted.DecideFor(opts.ToolMode, mi, refused)
	r.ToolMode, r.ToolModeReason = string(decision.Mode), decision.Reason
	add(toolsCheck(mi, decision))
	add(thinkingCheck(mi))
	add(contextCheck(p.Kind(), mi))
	r.ContextLength = mi.ContextLength
	if opts.Prompt != nil {
		progress("measuring what Hearth sends before your first message")
		pr, err := opts.Prompt(ctx)
		if err == nil {
			pr.Prompted = decision.Mode == prompted.Prompted
		}
		c := promptCheck(p.Kind(), mi, pr, err)
		if err == nil {
			r.PromptTokens = pr.Tokens()
		}
		add(c)
	}

	if opts.SkipChat {
		return r
	}
	progress("asking " + opts.Model + " for a one-word answer (the first call loads the model)")
	add(chatCheck(ctx, p, opts.Model))
	return r
}

// responsesProber is a provider that can tell whether its server offers
// OpenAI's Responses API (llm/openai and llm/responses can).
type responsesProber interface {
	OffersResponses(ctx context.Context) (bool, error)
}

// responsesCheck says whether the server offers the Responses API: for the
// responses provider, whether it can work at all; for the OpenAI dialect,
// that --provider responses would work too.
func responsesCheck(ctx context.Context, p responsesProber, kind, baseURL string) Check {
	offered, err := p.OffersResponses(ctx)
	at := strings.TrimRight(baseURL, "/") + "/responses"
	switch {
	case err != nil:
		c := fromError("responses", err)
		c.Status, c.Detail = Skip, "cannot tell whether the server offers the Responses API: "+c.Detail
		return c
	case offered && kind == "responses":
		return Check{Name: "responses", Status: OK, Detail: "the server offers the Responses API (POST " + at + ")"}
	case offered:
		return Check{Name: "responses", Status: OK, Detail: "the server also offers the Responses API (POST " + at + "): --provider responses speaks it"}
	case kind == "responses":
		return Check{Name: "responses", Status: Fail, Detail: "the server does not offer the Responses API (nothing answers POST " + at + ")",
			Fix: "use --provider openai (chat completions): llama.cpp's server and Ollama before 0.13.3 do not speak the Responses API; or upgrade the server (Ollama 0.13.3+, vLLM, LM Studio 0.3.29+ do)"}
	}
	return Check{Name: "responses", Status: OK, Detail: "chat completions only: the server does not offer the Responses API"}
}

func kindName(k string) string {
	if k == "ollama" {
		return "Ollama"
	}
	return "OpenAI-compatible server"
}

func fromError(name string, err error) Check {
	c := Check{Name: name, Status: Fail, Detail: err.Error()}
	var le *llm.Error
	if errors.As(err, &le) {
		c.Detail = le.Message
		if len(le.Available) > 0 {
			c.Detail += " (available: " + clipList(le.Available, 8) + ")"
		}
		c.Fix = le.Hint
	}
	return c
}

func versionCheck(v string) Check {
	got, ok := parseVersion(v)
	switch {
	case !ok:
		return Check{Name: "version", Status: Warn, Detail: fmt.Sprintf("cannot read the version %q", v)}
	case compare(got, minOllama) < 0:
		return Check{Name: "version", Status: Warn,
			Detail: fmt.Sprintf("Ollama %s is older than %d.%d: streamed tool calls and thinking may not work", v, minOllama[0], minOllama[1]),
			Fix:    "upgrade Ollama (https://ollama.com/download)"}
	}
	return Check{Name: "version", Status: OK, Detail: "Ollama " + v + " streams tool calls and thinking"}
}

func parseVersion(v string) ([3]int, bool) {
	var out [3]int
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	v, _, _ = strings.Cut(v, "-")
	parts := strings.Split(v, ".")
	if len(parts) < 2 {
		return out, false
	}
	for i := 0; i < len(parts) && i < 3; i++ {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return out, false
		}
		out[i] = n
	}
	return out, true
}

func compare(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

func describe(m *llm.ModelInfo) string {
	var parts []string
	if m.ParameterSize != "" {
		parts = append(parts, m.ParameterSize+" parameters")
	}
	if m.Quantization != "" {
		parts = append(parts, m.Quantization)
	}
	d := m.Name + " is on the server"
	if len(parts) > 0 {
		d += " (" + strings.Join(parts, ", ") + ")"
	}
	return d
}

// toolsCheck says how the model will get its tools (d), and whether that
// works well.
func toolsCheck(m *llm.ModelInfo, d prompted.Decision) Check {
	switch {
	case d.Mode == prompted.Prompted && m.Has(llm.CapTools):
		return Check{Name: "tools", Status: OK, Detail: "prompted (" + d.Reason + "): the tools are described in the prompt and the calls read from the model's text, though it calls tools natively",
			Fix: "--tool-mode auto would use its native tool calls"}
	case d.Mode == prompted.Prompted:
		return Check{Name: "tools", Status: Warn, Detail: "prompted (" + d.Reason + "): Hearth describes the tools in the prompt and reads the calls the model writes, which small models do less reliably than native calls",
			Fix: "for agent work choose a model with tools (qwen3, llama3.1, mistral-nemo, gpt-oss)"}
	case m.Has(llm.CapTools):
		return Check{Name: "tools", Status: OK, Detail: "native: calls tools natively"}
	case !m.CapabilitiesKnown:
		return Check{Name: "tools", Status: Warn, Detail: "native (" + d.Reason + "); Hearth also reads tool calls the model writes as text",
			Fix: "use a model made for tool calling (qwen3, llama3.1, mistral-nemo, gpt-oss), served with tool parsing on (vLLM: --enable-auto-tool-choice; llama.cpp: --jinja)"}
	}
	return Check{Name: "tools", Status: Fail, Detail: "native (" + d.Reason + "), but the server says the model cannot call tools: it will refuse them",
		Fix: "use --tool-mode auto or prompted (the tools described in the prompt), or choose a model with tools"}
}

func thinkingCheck(m *llm.ModelInfo) Check {
	if m.Has(llm.CapThinking) {
		return Check{Name: "thinking", Status: OK, Detail: "reasons before answering; the reasoning is shown apart from the answer"}
	}
	if !m.CapabilitiesKnown {
		return Check{Name: "thinking", Status: OK, Detail: "unknown; reasoning in <think>…</think> is shown apart from the answer (set HEARTH_IMPLICIT_THINK=1 for templates that open <think> themselves)"}
	}
	return Check{Name: "thinking", Status: OK, Detail: "no separate reasoning (not needed)"}
}

func contextCheck(kind string, m *llm.ModelInfo) Check {
	n := m.ContextLength
	if n == 0 && m.TrainedContextLength > 0 {
		return Check{Name: "context", Status: Warn, Detail: fmt.Sprintf("the model was trained for %d tokens; the window the server runs it with is not known", m.TrainedContextLength),
			Fix: "make sure the server's window is at least 8192 tokens (llama.cpp: -c)"}
	}
	switch {
	case n == 0:
		return Check{Name: "context", Status: Warn, Detail: "the server does not say how long the context window is",
			Fix: "make sure the server runs the model with a window of at least 8192 tokens (vLLM: --max-model-len; llama.cpp: -c)"}
	case n < MinContext:
		fix := "choose a model with a longer context"
		if kind == "ollama" && m.TrainedContextLength > n {
			fix = fmt.Sprintf("the model supports %d: raise num_ctx (HEARTH_NUM_CTX or the model's Modelfile)", m.TrainedContextLength)
		}
		return Check{Name: "context", Status: Warn, Detail: fmt.Sprintf("%d tokens: tight for agent work (Hearth wants %d+)", n, MinContext), Fix: fix}
	}
	d := fmt.Sprintf("%d tokens", n)
	if m.TrainedContextLength > n {
		d += fmt.Sprintf(" (of the model's %d)", m.TrainedContextLength)
	}
	return Check{Name: "context", Status: OK, Detail: d}
}

func chatCheck(ctx context.Context, p llm.Provider, model string) Check {
	start := time.Now()
	res, err := llm.Collect(p.Chat(ctx, &llm.Request{Model: model, MaxTokens: 16,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "Reply with the single word: ready"}}}))
	if err != nil {
		c := fromError("chat", err)
		if res != nil && (res.Message.Content != "" || res.Message.Thinking != "") {
			c.Detail += " (after a partial answer)"
		}
		return c
	}
	d := fmt.Sprintf("answered in %s", time.Since(start).Round(time.Millisecond))
	if res.Done != nil && res.Done.PromptTruncated {
		return Check{Name: "chat", Status: Warn, Detail: d + ", but the server cut the prompt", Fix: "raise the context window"}
	}
	if strings.TrimSpace(res.Message.Content) == "" && len(res.Message.ToolCalls) == 0 {
		if res.Message.Thinking != "" {
			return Check{Name: "chat", Status: OK, Detail: d + " (reasoning only within 16 tokens)"}
		}
		return Check{Name: "chat", Status: Warn, Detail: d + " with an empty answer"}
	}
	return Check{Name: "chat", Status: OK, Detail: d}
}

// suggest names a model to try: one with tools if the server says.
func suggest(models []llm.ModelInfo) string {
	for _, m := range models {
		if m.Has(llm.CapTools) {
			return m.Name
		}
	}
	return models[0].Name
}

func clipList(names []string, n int) string {
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + fmt.Sprintf(" and %d more", len(names)-n)
}
