package llm_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/responses"
)

// transcriptDirs are the captures replayed by the contract tests: shapes
// researched from real servers' documentation and issue reports, and raw
// captures of a real Ollama (made by ../shared/ollama-peer/transcripts.sh).
var transcriptDirs = []string{
	"llmtest/testdata/transcripts",
	"../../shared/ollama-peer/transcripts",
}

// providerFor picks the dialect from the captured path and points a provider
// at the fake server.
func providerFor(t *testing.T, tr *llmtest.Transcript, srv *llmtest.Server, model string) llm.Provider {
	if strings.HasPrefix(tr.Path, "/api/") {
		return ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1, NumCtx: 4096})
	}
	if prefix, ok := strings.CutSuffix(tr.Path, "/responses"); ok {
		opts := responses.Options{BaseURL: srv.URL + prefix, MaxRetries: -1}
		if tr.Client.ImplicitThink {
			opts.Models = map[string]openai.ModelConfig{model: {ImplicitThink: true}}
		}
		return responses.New(opts)
	}
	prefix, _, _ := strings.Cut(tr.Path, "/chat/completions")
	prefix, _, _ = strings.Cut(prefix, "/models")
	opts := openai.Options{BaseURL: srv.URL + prefix, MaxRetries: -1}
	if tr.Client.ImplicitThink {
		opts.Models = map[string]openai.ModelConfig{model: {ImplicitThink: true}}
	}
	return openai.New(opts)
}

// requestFrom rebuilds the llm.Request that would send the captured body.
func requestFrom(t *testing.T, tr *llmtest.Transcript) *llm.Request {
	var body struct {
		Model  string `json:"model"`
		Stream *bool  `json:"stream"`
		Tools  []struct {
			Name     string `json:"name"` // the Responses API
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Think              any             `json:"think"`
		ReasoningEffort    string          `json:"reasoning_effort"`
		ChatTemplateKwargs map[string]bool `json:"chat_template_kwargs"`
		Reasoning          struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
	}
	if len(tr.RequestBody) > 0 {
		if err := json.Unmarshal(tr.RequestBody, &body); err != nil {
			t.Logf("request body is not JSON (%v); using defaults", err)
		}
	}
	req := &llm.Request{Model: body.Model, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	if req.Model == "" {
		req.Model = "m"
	}
	ollamaWire := strings.HasPrefix(tr.Path, "/api/")
	switch {
	case body.Stream != nil:
		req.NoStream = !*body.Stream
	case !ollamaWire:
		req.NoStream = true // OpenAI's default
	}
	for _, tl := range body.Tools {
		name := tl.Function.Name
		if name == "" {
			name = tl.Name
		}
		req.Tools = append(req.Tools, llm.ToolSpec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	if tr.Expect != nil {
		for _, name := range tr.Expect.OfferedTools {
			if !hasTool(req.Tools, name) {
				req.Tools = append(req.Tools, llm.ToolSpec{Name: name})
			}
		}
	}
	switch v := body.Think.(type) {
	case bool:
		req.Think = &llm.Think{Enabled: v}
	case string:
		req.Think = &llm.Think{Enabled: true, Level: v}
	}
	if ollamaWire {
		return req
	}
	if body.ReasoningEffort != "" {
		req.Think = &llm.Think{Enabled: true, Level: body.ReasoningEffort}
	}
	if body.Reasoning.Effort != "" {
		req.Think = &llm.Think{Enabled: true, Level: body.Reasoning.Effort}
	}
	return req
}

// isChat reports whether a captured path is a chat call of some dialect:
// /api/chat, /v1/chat/completions or /v1/responses.
func isChat(path string) bool {
	return strings.Contains(path, "chat") || strings.HasSuffix(path, "/responses")
}

func hasTool(ts []llm.ToolSpec, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// TestTranscripts replays every transcript with an "# expect:" line through
// the provider of its dialect and checks the normalised result.
func TestTranscripts(t *testing.T) {
	n := 0
	for _, dir := range transcriptDirs {
		trs, err := llmtest.LoadTranscripts(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trs {
			if tr.Expect == nil || !isChat(tr.Path) {
				continue
			}
			n++
			t.Run(tr.Name, func(t *testing.T) {
				t.Logf("source: %s", tr.Source)
				srv := llmtest.New(t)
				srv.Enqueue(tr.Path, tr.Response)
				req := requestFrom(t, tr)
				p := providerFor(t, tr, srv, req.Model)
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				res, err := llm.Collect(p.Chat(ctx, req))
				checkExpect(t, tr.Expect, res, err)
			})
		}
	}
	if n < 30 {
		t.Fatalf("only %d transcripts with expectations found", n)
	}
}

func checkExpect(t *testing.T, want *llmtest.Expect, res *llm.Response, err error) {
	t.Helper()
	if want.Error != "" {
		if code := llm.CodeOf(err); string(code) != want.Error {
			t.Fatalf("error code = %q (%v), want %q", code, err, want.Error)
		}
		// What streamed before the error is kept, not dropped.
		if got := strings.TrimSpace(res.Message.Content); got != strings.TrimSpace(want.Text) {
			t.Errorf("partial text = %q, want %q", got, want.Text)
		}
		return
	}
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	if got := strings.TrimSpace(res.Message.Content); got != strings.TrimSpace(want.Text) {
		t.Errorf("text = %q, want %q", got, want.Text)
	}
	if got := strings.TrimSpace(res.Message.Thinking); got != strings.TrimSpace(want.Thinking) {
		t.Errorf("thinking = %q, want %q", got, want.Thinking)
	}
	if len(res.Message.ToolCalls) != len(want.ToolCalls) {
		t.Fatalf("tool calls = %+v, want %d", res.Message.ToolCalls, len(want.ToolCalls))
	}
	ids := map[string]bool{}
	for i, w := range want.ToolCalls {
		got := res.Message.ToolCalls[i]
		if got.Name != w.Name || !jsonEqual(got.Args, w.Args) {
			t.Errorf("call %d = %s(%s), want %s(%s)", i, got.Name, got.Args, w.Name, w.Args)
		}
		if got.ID == "" || ids[got.ID] {
			t.Errorf("call %d has id %q: ids must be present and unique", i, got.ID)
		}
		ids[got.ID] = true
	}
	if want.Finish != "" && (res.Done == nil || string(res.Done.Reason) != want.Finish) {
		t.Errorf("done = %+v, want finish %q", res.Done, want.Finish)
	}
	if want.Usage != nil {
		if res.Usage == nil || res.Usage.InputTokens != want.Usage.Input || res.Usage.OutputTokens != want.Usage.Output {
			t.Errorf("usage = %+v, want %+v", res.Usage, *want.Usage)
		}
	}
}

// TestTranscriptsByteSplit replays every streamed transcript with its body
// cut at every byte offset into two chunks, and checks nothing changes.
func TestTranscriptsByteSplit(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every transcript split at 60 offsets: seconds (the race stage runs it)")
	}
	trs, err := llmtest.LoadTranscripts(transcriptDirs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		if tr.Expect == nil || tr.Expect.Error != "" || len(tr.Response.Chunks) < 2 || !isChat(tr.Path) {
			continue
		}
		t.Run(tr.Name, func(t *testing.T) {
			srv := llmtest.New(t)
			req := requestFrom(t, tr)
			p := providerFor(t, tr, srv, req.Model)
			body := tr.Response.Body()
			step := max(1, len(body)/60)
			for off := 1; off < len(body); off += step {
				srv.Enqueue(tr.Path, tr.Response.Split(off))
				res, err := llm.Collect(p.Chat(context.Background(), req))
				checkExpect(t, tr.Expect, res, err)
				if t.Failed() {
					t.Fatalf("failed with the body split at byte %d", off)
				}
			}
		})
	}
}

func TestTranscriptFilesAreSourced(t *testing.T) {
	trs, err := llmtest.LoadTranscripts(filepath.Clean(transcriptDirs[0]))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range trs {
		if tr.Source == "" || tr.What == "" || tr.Expect == nil {
			t.Errorf("%s: every researched transcript says where its shape came from (# source), what it shows (# what) and what to expect (# expect)", tr.Name)
		}
	}
}
