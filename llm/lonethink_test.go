package llm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
)

// A reply whose chat template opened <think> in the prompt, as llama.cpp
// (without a reasoning parser), LM Studio, vLLM or Ollama (for a model it
// does not know as thinking) stream it: the reasoning as ordinary content,
// the closing tag as a token of its own, then the answer.
var (
	loneReasoning = "Okay, the user asks for 2+2.\nThat is 4."
	loneAnswer    = "2 + 2 = **4**."
	loneParts     = []llmtest.Part{
		llmtest.Text("Okay"), llmtest.Text(", the user asks"), llmtest.Text(" for 2+2.\n"),
		llmtest.Text("That is 4."), llmtest.Text("\n"),
		llmtest.Text("</think>"), llmtest.Text("\n\n"),
		llmtest.Text("2 + 2"), llmtest.Text(" = **4**."),
	}
)

// events drains a stream into its events.
func events(t *testing.T, s llm.Stream) []llm.Event {
	t.Helper()
	var evs []llm.Event
	for ev, err := range s {
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	return evs
}

// again gives evs again as a stream, for llm.Collect.
func again(evs []llm.Event) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		for _, ev := range evs {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// checkLone checks a reply to loneParts: the thinking and the answer apart,
// and whether the text was first streamed as answer and then reclassified
// (reclassified) or streamed as thinking from the start.
func checkLone(t *testing.T, evs []llm.Event, reclassified bool) {
	t.Helper()
	res, _ := llm.Collect(again(evs))
	if strings.TrimSpace(res.Message.Thinking) != loneReasoning || res.Message.Content != loneAnswer {
		t.Fatalf("thinking %q, content %q", res.Message.Thinking, res.Message.Content)
	}
	var moved []string
	var text strings.Builder
	for _, ev := range evs {
		switch ev.Kind {
		case llm.EventText:
			text.WriteString(ev.Text)
		case llm.EventThinkingReclassified:
			if ev.Text != text.String() {
				t.Errorf("reclassified %q, but the text so far was %q", ev.Text, text.String())
			}
			moved = append(moved, ev.Text)
			text.Reset()
		}
	}
	switch {
	case reclassified && len(moved) != 1:
		t.Fatalf("want one reclassification, got %q", moved)
	case !reclassified && len(moved) != 0:
		t.Fatalf("want none (implicit from the start), got %q", moved)
	case !reclassified && evs[0].Kind != llm.EventThinking:
		t.Fatalf("the reply did not start as thinking: %v", evs[0].Kind)
	}
}

// TestLoneCloseBothDialects: without configuration, the first reply of a
// model is streamed as text until its lone </think>, then reclassified;
// the provider remembers, and the model's next replies are thinking from
// their first byte. Another model of the same provider is not affected.
func TestLoneCloseBothDialects(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			p := d.new(srv, noRetry)
			req := func(model string) *llm.Request {
				return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "2+2?"}}}
			}
			srv.Enqueue(d.path, d.stream("m", loneParts...), d.stream("m", loneParts...), d.stream("other", loneParts...))
			checkLone(t, events(t, p.Chat(context.Background(), req("m"))), true)
			checkLone(t, events(t, p.Chat(context.Background(), req("m"))), false)
			checkLone(t, events(t, p.Chat(context.Background(), req("other"))), true)
		})
	}
}

// TestLoneCloseSplitAtEveryOffset cuts the body of such a reply in two at
// every byte, each time for a provider that has not seen the model.
func TestLoneCloseSplitAtEveryOffset(t *testing.T) {
	for _, d := range wireDialects {
		srv := llmtest.New(t)
		sc := d.stream("m", loneParts...)
		body := sc.Body()
		for off := 1; off < len(body); off++ {
			srv.Enqueue(d.path, sc.Split(off))
			evs := events(t, d.new(srv, noRetry).Chat(context.Background(), askSum()))
			checkLone(t, evs, true)
			if t.Failed() {
				t.Fatalf("%s: body split at %d", d.name, off)
			}
		}
	}
}

// askSum is a request to the provider's default model.
func askSum() *llm.Request {
	return &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "2+2?"}}}
}

// TestLoneCloseNotWhereItIsShown: an answer that shows the tag, or a reply
// whose reasoning the server sent apart, is left as it came.
func TestLoneCloseNotWhereItIsShown(t *testing.T) {
	tests := []struct {
		name  string
		parts []llmtest.Part
		text  string
	}{
		{"in backticks", []llmtest.Part{llmtest.Text("The template closes with `</th"), llmtest.Text("ink>`.")}, "The template closes with `</think>`."},
		{"after the answer wrote the open tag", []llmtest.Part{llmtest.Text("It writes <think> and then </think>.")}, "It writes <think> and then </think>."},
		{"reasoning sent apart", []llmtest.Part{llmtest.Thinking("hmm"), llmtest.Text("a\n</think>\nb")}, "a\n</think>\nb"},
	}
	for _, d := range wireDialects {
		for _, tc := range tests {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", tc.parts...))
			evs := events(t, d.new(srv, noRetry).Chat(context.Background(), askSum()))
			res, _ := llm.Collect(again(evs))
			for _, ev := range evs {
				if ev.Kind == llm.EventThinkingReclassified {
					t.Errorf("%s/%s: reclassified %q", d.name, tc.name, ev.Text)
				}
			}
			if res.Message.Content != tc.text {
				t.Errorf("%s/%s: content %q", d.name, tc.name, res.Message.Content)
			}
		}
	}
}

// An Ollama template (Go) and a llama.cpp one (Jinja) whose generation
// prompt opens the block.
const (
	goTemplateOpens    = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n<think>\n"
	jinjaTemplateOpens = "{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}" +
		"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}"
	jinjaTemplateSwitch = "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}" +
		"{{- '<think>\\n\\n</think>\\n\\n' }}{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}"
)

// TestOllamaTemplateOpensThink: the template from /api/show, asked for the
// context window anyway, makes the first reply implicit; a model Ollama
// knows as thinking is left to Ollama; with the window configured, /api/show
// is not asked for the template's sake.
func TestOllamaTemplateOpensThink(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "r1-distill", Template: goTemplateOpens, ContextLength: 8192})
	srv.AddModel(llmtest.Model{Name: "qwen3-thinking", Template: goTemplateOpens, ContextLength: 8192, Capabilities: []string{"completion", "thinking"}})
	p := ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1})
	req := func(model string) *llm.Request {
		return &llm.Request{Model: model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "2+2?"}}}
	}
	srv.Enqueue("/api/chat", llmtest.OllamaStream("r1-distill", loneParts...))
	checkLone(t, events(t, p.Chat(context.Background(), req("r1-distill"))), false)

	// Ollama parses a thinking model's reasoning itself: its content is
	// the answer, shown as it comes.
	srv.Enqueue("/api/chat", llmtest.OllamaStream("qwen3-thinking", llmtest.Thinking("hmm"), llmtest.Text("Hello.")))
	evs := events(t, p.Chat(context.Background(), req("qwen3-thinking")))
	if res, _ := llm.Collect(again(evs)); res.Message.Thinking != "hmm" || res.Message.Content != "Hello." {
		t.Errorf("thinking model: %+v", res.Message)
	}
	srv.Enqueue("/api/chat", llmtest.OllamaStream("qwen3-thinking", llmtest.Text("Hello.")))
	evs = events(t, p.Chat(context.Background(), req("qwen3-thinking")))
	if evs[0].Kind != llm.EventText || evs[0].Text != "Hello." {
		t.Errorf("thinking model without reasoning: first event %v %q, want the answer at once", evs[0].Kind, evs[0].Text)
	}

	// The window configured: no /api/show on the way to the answer, and
	// the lone </think> is what tells.
	srv2 := llmtest.New(t)
	srv2.AddModel(llmtest.Model{Name: "r1-distill", Template: goTemplateOpens})
	p2 := ollama.New(ollama.Options{BaseURL: srv2.URL, MaxRetries: -1, NumCtx: 4096})
	srv2.Enqueue("/api/chat", llmtest.OllamaStream("r1-distill", loneParts...))
	checkLone(t, events(t, p2.Chat(context.Background(), req("r1-distill"))), true)
	if n := len(srv2.RequestsTo("/api/show")); n != 0 {
		t.Errorf("%d /api/show requests before the answer", n)
	}
	// Described since (the runtime asks for the window), the template is
	// read from what was fetched then.
	srv3 := llmtest.New(t)
	srv3.AddModel(llmtest.Model{Name: "r1-distill", Template: goTemplateOpens})
	p3 := ollama.New(ollama.Options{BaseURL: srv3.URL, MaxRetries: -1, NumCtx: 4096})
	if _, err := llm.Describe(context.Background(), p3, "r1-distill"); err != nil {
		t.Fatal(err)
	}
	srv3.Enqueue("/api/chat", llmtest.OllamaStream("r1-distill", loneParts...))
	checkLone(t, events(t, p3.Chat(context.Background(), req("r1-distill"))), false)
	if n := len(srv3.RequestsTo("/api/show")); n != 1 {
		t.Errorf("%d /api/show requests, want the describe's one", n)
	}
}

// TestLlamaCppTemplateOpensThink: the chat_template of /props, asked by
// ModelInfo for the window, makes the first reply implicit; Chat itself
// asks nothing more.
func TestLlamaCppTemplateOpensThink(t *testing.T) {
	setup := func(t *testing.T, tmpl string) (*llmtest.Server, *openai.Provider) {
		srv := llmtest.New(t)
		srv.Always("/v1/models", llmtest.JSONResponse(200, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": "qwq.gguf", "object": "model", "meta": map[string]any{"n_ctx_train": 131072}}}}))
		srv.Always("/props", llmtest.JSONResponse(200, map[string]any{"chat_template": tmpl,
			"default_generation_settings": map[string]any{"n_ctx": 4096}}))
		p := openai.New(openai.Options{BaseURL: srv.OpenAIURL(), MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if mi, err := llm.Describe(ctx, p, "qwq.gguf"); err != nil || mi.ContextLength != 4096 {
			t.Fatalf("%+v %v", mi, err)
		}
		return srv, p
	}
	req := &llm.Request{Model: "qwq.gguf", Messages: []llm.Message{{Role: llm.RoleUser, Content: "2+2?"}}}

	srv, p := setup(t, jinjaTemplateOpens)
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("qwq.gguf", loneParts...))
	checkLone(t, events(t, p.Chat(context.Background(), req)), false)
	if n := len(srv.RequestsTo("/props")); n != 1 {
		t.Errorf("%d /props requests, want ModelInfo's one", n)
	}

	// A template that closes the block when thinking is off: with
	// thinking off, the reply is not taken to start inside one.
	srv, p = setup(t, jinjaTemplateSwitch)
	off := *req
	off.Think = &llm.Think{Enabled: false}
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("qwq.gguf", llmtest.Text("4.")))
	evs := events(t, p.Chat(context.Background(), &off))
	if evs[0].Kind != llm.EventText || evs[0].Text != "4." {
		t.Errorf("thinking off: first event %v %q, want the answer at once", evs[0].Kind, evs[0].Text)
	}
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("qwq.gguf", loneParts...))
	checkLone(t, events(t, p.Chat(context.Background(), req)), false)

	// A template that does not open it: watched, and reclassified.
	srv, p = setup(t, "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}")
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("qwq.gguf", loneParts...))
	checkLone(t, events(t, p.Chat(context.Background(), req)), true)
}

// TestTranscriptsNeedNoImplicitThink replays the captures that were made
// with implicit_think configured without it: a lone </think> is enough.
func TestTranscriptsNeedNoImplicitThink(t *testing.T) {
	n := 0
	for _, dir := range transcriptDirs {
		trs, err := llmtest.LoadTranscripts(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			if tr.Expect == nil || !tr.Client.ImplicitThink || !strings.Contains(tr.Path, "chat") {
				continue
			}
			n++
			t.Run(tr.Name, func(t *testing.T) {
				plain := *tr
				plain.Client.ImplicitThink = false
				srv := llmtest.New(t)
				srv.Enqueue(tr.Path, tr.Response)
				req := requestFrom(t, &plain)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := llm.Collect(providerFor(t, &plain, srv, req.Model).Chat(ctx, req))
				checkExpect(t, tr.Expect, res, err)
			})
		}
	}
	if n == 0 {
		t.Fatal("no transcript configures implicit_think")
	}
}
