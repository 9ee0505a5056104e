package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
)

// prompt is about 2.1k tokens: a 6 KB system prompt with a 2 KB note, and
// one tool whose schema is 2.4 KB.
func prompt() *Prompt {
	note := strings.Repeat("n", 2000)
	return &Prompt{
		System: strings.Repeat("s", 4000) + "\n\nProject notes from AGENTS.md:\n" + note,
		Notes:  []Note{{Name: "AGENTS.md", Text: note}},
		Tools: []llm.ToolSpec{{Name: "read_file", Description: "Read a file",
			Parameters: json.RawMessage(`{"type":"object","description":"` + strings.Repeat("p", 2360) + `"}`)}},
	}
}

func TestPromptAgainstWindow(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools"}, ContextLength: 40960})
	srv.AddModel(llmtest.Model{Name: "four:k", Capabilities: []string{"completion", "tools"}, ContextLength: 40960, NumCtx: 4096})
	srv.AddModel(llmtest.Model{Name: "two:k", Capabilities: []string{"completion", "tools"}, ContextLength: 40960, NumCtx: 2048})
	srv.AddModel(llmtest.Model{Name: "short:4k", Capabilities: []string{"completion", "tools"}, ContextLength: 4096})
	ctx := context.Background()
	asked := 0
	opts := func(model string) Options {
		return Options{Model: model, SkipChat: true, Prompt: func(context.Context) (*Prompt, error) {
			asked++
			return prompt(), nil
		}}
	}
	p := ollama.New(ollama.Options{BaseURL: srv.URL})
	if tokens := prompt().Tokens(); tokens < 2048 || tokens > 2250 {
		t.Fatalf("the test prompt is %d tokens", tokens)
	}

	// Hearth asks Ollama for the model's window capped at 16k.
	r := Run(ctx, p, srv.URL, opts("qwen3:4b"))
	c := find(r, "prompt")
	if c.Status != OK || !strings.Contains(c.Detail, "≈2.1k of 16k tokens before your first message") ||
		!strings.Contains(c.Detail, "AGENTS.md 0.5k") || !strings.Contains(c.Detail, "1 tools 0.6k") || !strings.Contains(c.Detail, "estimate") {
		t.Errorf("fits: %+v", c)
	}
	if r.PromptTokens != prompt().Tokens() || r.ContextLength != 16384 {
		t.Errorf("report: %d tokens of %d", r.PromptTokens, r.ContextLength)
	}

	// The Modelfile's num_ctx 4096: the prompt takes half of it.
	r = Run(ctx, p, srv.URL, opts("four:k"))
	c = find(r, "prompt")
	if !r.Ready || c.Status != Warn || !strings.Contains(c.Detail, "≈2.1k of 4k tokens") || !strings.Contains(c.Detail, "(48%) for the conversation") ||
		!strings.Contains(c.Fix, "HEARTH_NUM_CTX=8192") || !strings.Contains(c.Fix, "PARAMETER num_ctx 8192") || !strings.Contains(c.Fix, "AGENTS.md") {
		t.Errorf("cramped: %+v", c)
	}

	// 2048: it does not fit at all.
	r = Run(ctx, p, srv.URL, opts("two:k"))
	c = find(r, "prompt")
	if r.Ready || c.Status != Fail || !strings.Contains(c.Detail, "larger than the whole window") || !strings.Contains(c.Fix, "HEARTH_NUM_CTX=8192") {
		t.Errorf("too big: %+v", c)
	}

	// The window Hearth is told to ask for (HEARTH_NUM_CTX) is the one
	// compared.
	r = Run(ctx, ollama.New(ollama.Options{BaseURL: srv.URL, NumCtx: 32768}), srv.URL, opts("two:k"))
	if c = find(r, "prompt"); c.Status != OK || !strings.Contains(c.Detail, "of 32k tokens") {
		t.Errorf("configured window: %+v", c)
	}

	// A model trained for 4k cannot be given more: send less.
	r = Run(ctx, p, srv.URL, opts("short:4k"))
	c = find(r, "prompt")
	if c.Status != Warn || strings.Contains(c.Fix, "HEARTH_NUM_CTX") || !strings.Contains(c.Fix, "longest window is 4k tokens") || !strings.Contains(c.Fix, "fewer tools") {
		t.Errorf("trained limit: %+v", c)
	}

	// An OpenAI-compatible server: the fix is the server's option.
	o := openai.New(openai.Options{BaseURL: srv.OpenAIURL(), Models: map[string]openai.ModelConfig{"qwen3:4b": {ContextLength: 4096}}})
	r = Run(ctx, o, srv.OpenAIURL(), opts("qwen3:4b"))
	if c = find(r, "prompt"); c.Status != Warn || !strings.Contains(c.Fix, "--max-model-len 8192") || !strings.Contains(c.Fix, "-c 8192") {
		t.Errorf("openai: %+v", c)
	}

	// Not asked when the model is missing; a failure to measure is said.
	before := asked
	r = Run(ctx, p, srv.URL, opts("missing:1b"))
	if asked != before || find(r, "prompt").Name != "" {
		t.Errorf("measured for a missing model: %+v", r.Checks)
	}
	o2 := opts("qwen3:4b")
	o2.Prompt = func(context.Context) (*Prompt, error) {
		return nil, errors.New("the workspace would be your home directory")
	}
	r = Run(ctx, p, srv.URL, o2)
	if c = find(r, "prompt"); c.Status != Skip || !strings.Contains(c.Detail, "home directory") || !r.Ready {
		t.Errorf("not measured: %+v", c)
	}
}

func TestPromptCheckDetails(t *testing.T) {
	pr := prompt()
	pr.MCPServers = []string{"files", "search"}
	c := promptCheck("ollama", &llm.ModelInfo{ContextLength: 4096}, pr, nil)
	if !strings.Contains(c.Detail, "not counted: the tools of the MCP servers files, search") || !strings.Contains(c.Fix, "fewer MCP servers") {
		t.Errorf("MCP: %+v", c)
	}
	c = promptCheck("ollama", &llm.ModelInfo{}, prompt(), nil)
	if c.Status != OK || !strings.Contains(c.Detail, "the window is not known") {
		t.Errorf("unknown window: %+v", c)
	}
	// Just too little room for a message and its answer.
	c = promptCheck("ollama", &llm.ModelInfo{ContextLength: prompt().Tokens() + 500}, prompt(), nil)
	if c.Status != Fail || !strings.Contains(c.Detail, "no room for your message") {
		t.Errorf("no room: %+v", c)
	}
	// A big prompt wants a window it takes at most 40 % of.
	big := prompt()
	big.System += strings.Repeat("x", 40000) // ≈12k tokens
	c = promptCheck("ollama", &llm.ModelInfo{ContextLength: 16384, TrainedContextLength: 131072}, big, nil)
	if c.Status != Warn || !strings.Contains(c.Fix, "HEARTH_NUM_CTX=32768") {
		t.Errorf("big prompt: %+v", c)
	}
	for n, want := range map[int]string{42: "42", 412: "0.4k", 2150: "2.1k", 4096: "4k", 16384: "16k", 40960: "40k"} {
		if got := kTokens(n); got != want {
			t.Errorf("kTokens(%d) = %q, want %q", n, got, want)
		}
	}
}
