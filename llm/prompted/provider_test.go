package prompted_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/llm/responses"
)

// dialect is one wire format of the fake server.
type dialect struct {
	name   string
	path   string
	new    func(srv *llmtest.Server) llm.Provider
	stream func(model string, parts ...llmtest.Part) llmtest.Scenario
}

var dialects = []dialect{
	{"ollama", "/api/chat", func(srv *llmtest.Server) llm.Provider {
		return ollama.New(ollama.Options{BaseURL: srv.OllamaURL(), Model: "m", NumCtx: 8192, MaxRetries: -1})
	}, llmtest.OllamaStream},
	{"openai", "/v1/chat/completions", func(srv *llmtest.Server) llm.Provider {
		return openai.New(openai.Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1})
	}, llmtest.OpenAIStream},
	{"responses", "/v1/responses", func(srv *llmtest.Server) llm.Provider {
		return responses.New(responses.Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1})
	}, llmtest.ResponsesStream},
}

var tools = []llm.ToolSpec{
	{Name: "read_file", Description: "Read a text file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
	{Name: "glob", Description: "Find files.", Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string"}},"required":["pattern"]}`)},
}

const callText = `<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}</tool_call>`

func request() *llm.Request {
	return &llm.Request{Model: "m", Tools: tools, Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are Hearth."},
		{Role: llm.RoleUser, Content: "What is in notes.txt?"},
	}}
}

// sent is the part of a chat request body the tests look at, in any
// dialect (the Responses API's input messages read as messages).
type sent struct {
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
	Stop    []string `json:"stop"`
	Options struct {
		Stop []string `json:"stop"`
	} `json:"options"`
}

func sentTo(t *testing.T, srv *llmtest.Server, path string) []sent {
	t.Helper()
	var out []sent
	for _, r := range srv.RequestsTo(path) {
		var s sent
		r.JSON(t, &s)
		s.Stop = append(s.Stop, s.Options.Stop...)
		for _, it := range s.Input {
			if it.Type == "message" {
				m := struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				}{Role: it.Role}
				json.Unmarshal(it.Content, &m.Content)
				s.Messages = append(s.Messages, m)
			}
		}
		out = append(out, s)
	}
	return out
}

// checkPrompted checks that a request went by the prompted protocol.
func checkPrompted(t *testing.T, s sent) {
	t.Helper()
	if len(s.Tools) != 0 {
		t.Errorf("tools sent natively: %s", s.Tools)
	}
	if len(s.Messages) == 0 || s.Messages[0].Role != "system" || !strings.HasPrefix(s.Messages[0].Content, "You are Hearth.\n\n# Tools\n") ||
		!strings.Contains(s.Messages[0].Content, `<tool_call>{"name": "read_file", "arguments": {"path": "…"}}</tool_call>`) ||
		!strings.Contains(s.Messages[0].Content, "- glob: Find files.\n  pattern* string") {
		t.Errorf("system prompt: %+v", s.Messages)
	}
	// Decode ends the reply at <tool_response itself: a stop sequence
	// would also cut the reasoning, and a call's argument holding it.
	for _, x := range s.Stop {
		if strings.Contains(x, "tool_response") {
			t.Errorf("stop %q", s.Stop)
		}
	}
}

func checkCall(t *testing.T, r *llm.Response) {
	t.Helper()
	if len(r.Message.ToolCalls) != 1 {
		t.Fatalf("calls %+v, text %q", r.Message.ToolCalls, r.Message.Content)
	}
	tc := r.Message.ToolCalls[0]
	if tc.Name != "read_file" || string(tc.Args) != `{"path": "notes.txt"}` || !tc.FromText || tc.ID == "" || tc.ArgsError != "" {
		t.Errorf("call %+v", tc)
	}
	if r.Done == nil || r.Done.Reason != llm.FinishToolCalls {
		t.Errorf("done %+v", r.Done)
	}
}

func TestPromptedModeSendsNoToolsAndReadsTheCall(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Thinking("The user "), llmtest.Thinking("wants notes."),
				llmtest.Text("<tool_call>{\"name\": \"read_"), llmtest.Text("file\", \"arguments\": {\"path\": \"notes.txt\"}}</tool_"), llmtest.Text("call>")))
			p := prompted.New(d.new(srv), prompted.Options{Mode: prompted.Prompted})
			r, err := llm.Collect(p.Chat(context.Background(), request()))
			if err != nil {
				t.Fatal(err)
			}
			checkCall(t, r)
			if r.Message.Thinking != "The user wants notes." || r.Message.Content != "" {
				t.Errorf("thinking %q, content %q", r.Message.Thinking, r.Message.Content)
			}
			reqs := sentTo(t, srv, d.path)
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			checkPrompted(t, reqs[0])
			if dd := p.Decide(context.Background(), "m"); dd.Mode != prompted.Prompted || !strings.HasPrefix(dd.Reason, "configured") {
				t.Errorf("decision %+v", dd)
			}
		})
	}
}

func TestRequestWithoutToolsPassesThrough(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Text(callText)))
			p := prompted.New(d.new(srv), prompted.Options{Mode: prompted.Prompted})
			req := request()
			req.Tools = nil
			r, err := llm.Collect(p.Chat(context.Background(), req))
			if err != nil {
				t.Fatal(err)
			}
			if r.Message.Content != callText || len(r.Message.ToolCalls) != 0 {
				t.Errorf("reply %+v", r.Message)
			}
			s := sentTo(t, srv, d.path)[0]
			if s.Messages[0].Content != "You are Hearth." || len(s.Stop) != 0 {
				t.Errorf("request changed: %+v", s)
			}
		})
	}
}

func TestAutoGoesPromptedWhenTheServerSaysNoTools(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion"}})
	srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text(callText)), llmtest.OllamaStream("m", llmtest.Text(callText)))
	p := prompted.New(dialects[0].new(srv), prompted.Options{})
	for range 2 {
		r, err := llm.Collect(p.Chat(context.Background(), request()))
		if err != nil {
			t.Fatal(err)
		}
		checkCall(t, r)
	}
	reqs := sentTo(t, srv, "/api/chat")
	if len(reqs) != 2 {
		t.Fatalf("%d chat requests: a failed one first?", len(reqs))
	}
	for _, s := range reqs {
		checkPrompted(t, s)
	}
	if n := len(srv.RequestsTo("/api/show")); n != 1 {
		t.Errorf("/api/show asked %d times", n)
	}
	if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Prompted || d.Reason != "the server says this model cannot call tools" {
		t.Errorf("decision %+v", d)
	}
}

func TestAutoNativeWhenTheModelCallsTools(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m"})
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("m", llmtest.Call("read_file", `{"path":"notes.txt"}`)),
		llmtest.OpenAIStream("m", llmtest.Text("ok")))
	// Configuration says what the OpenAI-compatible server does not.
	inner := openai.New(openai.Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1,
		Models: map[string]openai.ModelConfig{"m": {Capabilities: []llm.Capability{llm.CapTools}}}})
	p := prompted.New(inner, prompted.Options{})
	for range 2 {
		if _, err := llm.Collect(p.Chat(context.Background(), request())); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sentTo(t, srv, "/v1/chat/completions") {
		if len(s.Tools) != 2 {
			t.Errorf("tools not sent natively: %+v", s)
		}
	}
	if n := len(srv.RequestsTo("/v1/models")); n != 1 {
		t.Errorf("the model described %d times, want once", n)
	}
	if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Native || d.Reason != "the server says this model calls tools" {
		t.Errorf("decision %+v", d)
	}
}

const vllmRefusal = `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`

func TestAutoRetriesARefusalPromptedAndRemembers(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m"})
	path := "/v1/chat/completions"
	srv.Enqueue(path,
		llmtest.JSONResponse(400, map[string]any{"object": "error", "message": vllmRefusal, "type": "BadRequestError", "param": nil, "code": 400}),
		llmtest.OpenAIStream("m", llmtest.Text("Let me read it.\n"), llmtest.Text(callText)),
		llmtest.OpenAIStream("m", llmtest.Text(callText)),
		llmtest.OpenAIStream("m", llmtest.Text(callText)),
	)
	file := filepath.Join(t.TempDir(), "tool-modes.json")
	var logs bytes.Buffer
	p := prompted.New(dialects[1].new(srv), prompted.Options{Memory: prompted.NewFileMemory(file, srv.OpenAIURL()),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	var kinds []llm.EventKind
	r, err := llm.Collect(func(yield func(llm.Event, error) bool) {
		for ev, err := range p.Chat(context.Background(), request()) {
			if err == nil {
				kinds = append(kinds, ev.Kind)
			}
			if !yield(ev, err) {
				return
			}
		}
	})
	if err != nil {
		t.Fatalf("the refusal was not retried: %v", err)
	}
	checkCall(t, r)
	if r.Message.Content != "Let me read it.\n" {
		t.Errorf("content %q", r.Message.Content)
	}
	if kinds[len(kinds)-1] != llm.EventDone {
		t.Errorf("kinds %v", kinds)
	}
	reqs := sentTo(t, srv, path)
	if len(reqs) != 2 || len(reqs[0].Tools) != 2 {
		t.Fatalf("requests: %+v", reqs)
	}
	checkPrompted(t, reqs[1])
	if !strings.Contains(logs.String(), "level=INFO") || !strings.Contains(logs.String(), "refused tools") {
		t.Errorf("not logged at Info: %q", logs.String())
	}

	// The same provider goes prompted straight away.
	if _, err := llm.Collect(p.Chat(context.Background(), request())); err != nil {
		t.Fatal(err)
	}
	d := p.Decide(context.Background(), "m")
	if d.Mode != prompted.Prompted || !strings.HasPrefix(d.Reason, "the server refused tools for this model (") || !strings.HasSuffix(d.Reason, "); remembered") {
		t.Errorf("decision %+v", d)
	}
	// So does a new one (a new run) reading the same file.
	p2 := prompted.New(dialects[1].new(srv), prompted.Options{Memory: prompted.NewFileMemory(file, srv.OpenAIURL())})
	if _, err := llm.Collect(p2.Chat(context.Background(), request())); err != nil {
		t.Fatal(err)
	}
	reqs = sentTo(t, srv, path)
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	checkPrompted(t, reqs[2])
	checkPrompted(t, reqs[3])
	if srv.Pending() != 0 {
		t.Errorf("%d scenarios left", srv.Pending())
	}
}

func TestOllamaRefusalIsRetriedPrompted(t *testing.T) {
	srv := llmtest.New(t)
	// No capabilities on /api/show: the server does not say.
	srv.Enqueue("/api/show", llmtest.JSONResponse(200, map[string]any{"template": "", "parameters": "", "model_info": map[string]any{}}))
	srv.Enqueue("/api/chat", llmtest.OllamaError(400, "registry.ollama.ai/library/m:latest does not support tools"),
		llmtest.OllamaStream("m", llmtest.Text(callText)))
	p := prompted.New(dialects[0].new(srv), prompted.Options{})
	if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Native || !strings.Contains(d.Reason, "does not say") {
		t.Errorf("decision before %+v", d)
	}
	r, err := llm.Collect(p.Chat(context.Background(), request()))
	if err != nil {
		t.Fatal(err)
	}
	checkCall(t, r)
	reqs := sentTo(t, srv, "/api/chat")
	if len(reqs) != 2 || len(reqs[0].Tools) != 2 {
		t.Fatalf("requests %+v", reqs)
	}
	checkPrompted(t, reqs[1])
}

func TestRefusalAfterEventsIsNotRetried(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m"})
	path := "/v1/chat/completions"
	srv.Enqueue(path, llmtest.OpenAIStream("m", llmtest.Text("Hello"), llmtest.StreamError("this model does not support tools")))
	p := prompted.New(dialects[1].new(srv), prompted.Options{})
	r, err := llm.Collect(p.Chat(context.Background(), request()))
	var le *llm.Error
	if !errors.As(err, &le) || !strings.Contains(le.Message, "does not support tools") {
		t.Fatalf("err %v", err)
	}
	if r.Message.Content != "Hello" {
		t.Errorf("content %q", r.Message.Content)
	}
	if n := len(srv.RequestsTo(path)); n != 1 {
		t.Errorf("%d requests: retried after events", n)
	}
	if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Native {
		t.Errorf("remembered: %+v", d)
	}
}

func TestNativeModeDoesNotRetry(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat", llmtest.OllamaError(400, "m does not support tools"))
	p := prompted.New(dialects[0].new(srv), prompted.Options{Mode: prompted.Native})
	if _, err := llm.Collect(p.Chat(context.Background(), request())); llm.CodeOf(err) != llm.CodeInvalidRequest {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.RequestsTo("/api/chat")); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("Reading. "), llmtest.Text(`<tool_call>{"name": "read_file", `), llmtest.Cut())
			sc.Disconnect, sc.Hang = false, true
			srv.Enqueue(d.path, sc)
			p := prompted.New(d.new(srv), prompted.Options{Mode: prompted.Prompted})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var text string
			var err error
			for ev, e := range p.Chat(ctx, request()) {
				if e != nil {
					err = e
					break
				}
				if ev.Kind == llm.EventToolCall {
					t.Fatalf("a call from a cancelled stream: %+v", ev.ToolCall)
				}
				text += ev.Text
				cancel()
			}
			if llm.CodeOf(err) != llm.CodeCancelled {
				t.Fatalf("err %v", err)
			}
			if !strings.HasPrefix(text, "Reading. ") {
				t.Errorf("text %q", text)
			}
		})
	}
}

func TestOptionalAbilitiesPassThrough(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}})
	p := prompted.New(dialects[0].new(srv), prompted.Options{})
	if p.Kind() != "ollama" {
		t.Errorf("kind %q", p.Kind())
	}
	ms, err := llm.Models(context.Background(), p)
	if err != nil || len(ms) != 1 || !ms[0].Has(llm.CapTools) {
		t.Errorf("models %+v, %v", ms, err)
	}
	if _, err := llm.Health(context.Background(), p); err != nil {
		t.Error(err)
	}
	// A provider without the abilities gives the usual error.
	bare := prompted.New(chatOnly{}, prompted.Options{})
	if _, err := llm.Embed(context.Background(), bare, "m", []string{"x"}); !errors.Is(err, errors.ErrUnsupported) || llm.CodeOf(err) != llm.CodeInvalidRequest {
		t.Errorf("embed: %v", err)
	}
	if _, err := llm.Describe(context.Background(), bare, "m"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("describe: %v", err)
	}
	if d := bare.Decide(context.Background(), "m"); d.Mode != prompted.Native {
		t.Errorf("decision %+v", d)
	}
}

type chatOnly struct{}

func (chatOnly) Kind() string { return "bare" }
func (chatOnly) Chat(context.Context, *llm.Request) llm.Stream {
	return func(func(llm.Event, error) bool) {}
}

func TestDecideFor(t *testing.T) {
	tools := &llm.ModelInfo{CapabilitiesKnown: true, Capabilities: []llm.Capability{llm.CapTools}}
	none := &llm.ModelInfo{CapabilitiesKnown: true}
	unknown := &llm.ModelInfo{}
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.Local)
	cases := []struct {
		mode      prompted.Mode
		info      *llm.ModelInfo
		refused   time.Time
		want      prompted.Mode
		reasonHas string
	}{
		{prompted.Native, none, at, prompted.Native, "configured"},
		{prompted.Prompted, tools, time.Time{}, prompted.Prompted, "configured"},
		{prompted.Auto, tools, at, prompted.Prompted, "the server refused tools for this model (2026-11-26); remembered"},
		{prompted.Auto, none, time.Time{}, prompted.Prompted, "the server says this model cannot call tools"},
		{prompted.Auto, tools, time.Time{}, prompted.Native, "the server says this model calls tools"},
		{prompted.Auto, unknown, time.Time{}, prompted.Native, "does not say"},
		{prompted.Auto, nil, time.Time{}, prompted.Native, "prompted if the server refuses them"},
	}
	for _, c := range cases {
		d := prompted.DecideFor(c.mode, c.info, c.refused)
		if d.Mode != c.want || !strings.Contains(d.Reason, c.reasonHas) {
			t.Errorf("DecideFor(%s, %+v, %v) = %+v", c.mode, c.info, c.refused, d)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]prompted.Mode{"": prompted.Auto, "auto": prompted.Auto, "Native": prompted.Native, " prompted ": prompted.Prompted} {
		if got, err := prompted.ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := prompted.ParseMode("text"); err == nil || !strings.Contains(err.Error(), "auto, native or prompted") {
		t.Errorf("err %v", err)
	}
}

// describer is a provider whose ModelInfo is scripted.
type describer struct {
	chatOnly
	calls   chan string
	release chan struct{}
	answer  func(ctx context.Context) (*llm.ModelInfo, error)
}

func (d *describer) ModelInfo(ctx context.Context, model string) (*llm.ModelInfo, error) {
	d.calls <- model
	if d.release != nil {
		<-d.release
	}
	return d.answer(ctx)
}

func TestDescribeIsCached(t *testing.T) {
	failing := &describer{calls: make(chan string, 100), answer: func(context.Context) (*llm.ModelInfo, error) {
		return nil, &llm.Error{Code: llm.CodeServer, Message: "down"}
	}}
	p := prompted.New(failing, prompted.Options{})
	for range 3 {
		if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Native {
			t.Fatalf("decision %+v", d)
		}
	}
	if n := len(failing.calls); n != 1 {
		t.Errorf("a failed Describe asked %d times, want once", n)
	}

	// A cancelled one is asked again.
	cancelling := &describer{calls: make(chan string, 100), answer: func(ctx context.Context) (*llm.ModelInfo, error) {
		if ctx.Err() != nil {
			return nil, &llm.Error{Code: llm.CodeCancelled, Err: ctx.Err()}
		}
		return &llm.ModelInfo{CapabilitiesKnown: true}, nil
	}}
	p = prompted.New(cancelling, prompted.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Decide(ctx, "m")
	if d := p.Decide(context.Background(), "m"); d.Mode != prompted.Prompted {
		t.Errorf("after a cancelled Describe: %+v", d)
	}
	p.Decide(context.Background(), "m")
	if n := len(cancelling.calls); n != 2 {
		t.Errorf("asked %d times, want 2", n)
	}

	// Callers at the same time wait for the one asking.
	slow := &describer{calls: make(chan string, 100), release: make(chan struct{}), answer: func(context.Context) (*llm.ModelInfo, error) {
		return &llm.ModelInfo{CapabilitiesKnown: true}, nil
	}}
	p = prompted.New(slow, prompted.Options{})
	results := make(chan prompted.Decision, 8)
	for range 8 {
		go func() { results <- p.Decide(context.Background(), "m") }()
	}
	<-slow.calls
	close(slow.release)
	for range 8 {
		if d := <-results; d.Mode != prompted.Prompted {
			t.Errorf("decision %+v", d)
		}
	}
	if n := len(slow.calls); n != 0 {
		t.Errorf("described %d more times", n)
	}
}

// TestModelInfoSavesAutoAQuestion: a model described through the wrapper
// (as Hearth does for the context window, before the first chat) is not
// described again for Auto's decision.
func TestModelInfoSavesAutoAQuestion(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion"}})
	p := prompted.New(ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), prompted.Options{})
	ctx := context.Background()
	if _, err := p.ModelInfo(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ctx, "m"); d.Mode != prompted.Prompted {
		t.Fatalf("%+v", d)
	}
	if n := len(srv.RequestsTo("/api/show")); n != 1 {
		t.Errorf("%d /api/show requests, want 1", n)
	}
}

// chatParts runs a prompted request against a fake Ollama server that
// streams parts, and gathers the reply.
func chatParts(t *testing.T, parts ...llmtest.Part) (calls []string, text, thinking string, reason llm.FinishReason) {
	t.Helper()
	srv := llmtest.New(t)
	srv.Enqueue("/api/chat", llmtest.OllamaStream("m", parts...))
	p := prompted.New(dialects[0].new(srv), prompted.Options{Mode: prompted.Prompted})
	r, err := llm.Collect(p.Chat(context.Background(), request()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range r.Message.ToolCalls {
		calls = append(calls, tc.Name)
	}
	if r.Done != nil {
		reason = r.Done.Reason
	}
	return calls, r.Message.Content, r.Message.Thinking, reason
}

func texts(s ...string) []llmtest.Part {
	var out []llmtest.Part
	for _, x := range s {
		out = append(out, llmtest.Text(x))
	}
	return out
}

// TestPromptedReplies runs the replies of review 19 through a provider:
// calls after a fence line (item 3), a call written in reasoning that
// streams as text (item 8), a reply that goes on to write a result
// (item 6).
func TestPromptedReplies(t *testing.T) {
	call := `{"name": "read_file", "arguments": {"path": "notes.txt"}}`
	for name, parts := range map[string][]llmtest.Part{
		"call wrapped in a bare fence":     texts("```", "\n", "<tool_call>", call, "</tool_call>", "\n", "```"),
		"call wrapped in a json fence":     texts("```json", "\n", "<tool_call>", call, "</tool_call>", "\n", "```"),
		"call after a code block":          texts("Run:\n", "```bash", "\n", "ls", "\n", "```", "\n", "<tool_call>", call, "</tool_call>"),
		"call after a code block, 1 chunk": texts("Run:\n```bash\nls\n```\n<tool_call>" + call + "</tool_call>"),
	} {
		if calls, text, _, _ := chatParts(t, parts...); len(calls) != 1 {
			t.Errorf("%s: %d calls; answer text %q", name, len(calls), text)
		}
	}

	calls, text, thinking, reason := chatParts(t, texts("The user wants notes. Maybe ", callText, "? No, I know it already.", "</think>", "It says hi.")...)
	if len(calls) != 0 || text != "It says hi." || reason != llm.FinishStop ||
		thinking != `The user wants notes. Maybe <tool_call>{"name": "read_file", "arguments": {"path":"notes.txt"}}</tool_call>? No, I know it already.` {
		t.Errorf("a call in reasoning: calls %v, text %q, thinking %q, reason %s", calls, text, thinking, reason)
	}

	calls, text, thinking, reason = chatParts(t, llmtest.Thinking("I must not write <tool_response> myself."),
		llmtest.Text(callText), llmtest.Text("\n<tool_"), llmtest.Text("response name=\"read_file\">\nhi\n</tool_response>"), llmtest.Text("It says hi."))
	if len(calls) != 1 || text != "" || thinking != "I must not write <tool_response> myself." || reason != llm.FinishToolCalls {
		t.Errorf("a reply that writes a result: calls %v, text %q, thinking %q, reason %s", calls, text, thinking, reason)
	}
}
