package llm_test

// Integration tests against a real Ollama server, over the three dialects
// Hearth speaks to it: the native API (llm/ollama), the OpenAI-compatible
// /v1/chat/completions (llm/openai) and the Responses API, /v1/responses
// (llm/responses). They run only when HEARTH_OLLAMA_URL is set:
//
//	../shared/ollama-peer/up.sh      # build (first time) and start the peer
//	scripts/peer-models.sh           # add the scripted models these tests use
//	HEARTH_OLLAMA_URL=http://127.0.0.1:11555 go test -race ./llm/ -run Integration -v
//
// The models are tiny: `tiny` (random weights, deterministic with a seed),
// `tiny-tools` (always writes a <tool_call> for get_weather, which Ollama
// parses itself when tools are offered), and the scripted `tiny-fenced` and
// `tiny-think` made by scripts/peer-models.sh. A test whose model is missing
// skips and says how to create it.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/responses"
)

const (
	// liveEnv names the variable that enables these tests.
	liveEnv = "HEARTH_OLLAMA_URL"
	// liveVersion is the Ollama version ../shared/ollama-peer builds.
	liveVersion = "0.17.4"
	// liveTimeout bounds every call, so that nothing can hang.
	liveTimeout = 60 * time.Second
)

// What the peer's models are, as its Modelfile and GGUF files say.
const (
	liveModelfileNumCtx = 2048 // PARAMETER num_ctx in the Modelfile
	liveTrainedNumCtx   = 4096 // llama.context_length in model_info
)

// Tools offered in the tests. tiny-tools and tiny-fenced call get_weather.
var (
	liveWeatherTool = llm.ToolSpec{
		Name:        "get_weather",
		Description: "Get the current weather for a city",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`),
	}
	liveTimeTool = llm.ToolSpec{
		Name:        "get_time",
		Description: "Get the current time in a city",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
	}
)

// livePeerURL returns the server's address, or skips the test.
func livePeerURL(t *testing.T) string {
	t.Helper()
	u := strings.TrimRight(strings.TrimSpace(os.Getenv(liveEnv)), "/")
	if u == "" {
		t.Skipf("integration test against a real Ollama: set %s=http://127.0.0.1:11555 to run it "+
			"(start the server with ../shared/ollama-peer/up.sh, then run scripts/peer-models.sh)", liveEnv)
	}
	return u
}

var (
	liveTagsOnce sync.Once
	liveTagsList []string
	liveTagsErr  error
)

// liveServerModels lists the server's models with a plain GET /api/tags (not
// through the code under test), once per run.
func liveServerModels(t *testing.T, base string) []string {
	t.Helper()
	liveTagsOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/tags", nil)
		if err != nil {
			liveTagsErr = err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			liveTagsErr = err
			return
		}
		defer resp.Body.Close()
		var r struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if resp.StatusCode != http.StatusOK {
			liveTagsErr = fmt.Errorf("GET /api/tags: %s", resp.Status)
			return
		}
		if liveTagsErr = json.NewDecoder(resp.Body).Decode(&r); liveTagsErr == nil {
			for _, m := range r.Models {
				liveTagsList = append(liveTagsList, m.Name)
			}
		}
	})
	if liveTagsErr != nil {
		t.Fatalf("%s=%s, but the server does not answer (%v): is it up? (../shared/ollama-peer/up.sh)", liveEnv, base, liveTagsErr)
	}
	return liveTagsList
}

// liveNeedModels skips the test unless the server has every named model.
func liveNeedModels(t *testing.T, base string, names ...string) {
	t.Helper()
	have := liveServerModels(t, base)
	for _, n := range names {
		if !liveHasModel(have, n) {
			t.Skipf("model %q is not on the server at %s (it has %v): create the scripted models with scripts/peer-models.sh", n, base, have)
		}
	}
}

// liveHasModel reports whether names holds model, with or without Ollama's
// implicit ":latest" tag.
func liveHasModel(names []string, model string) bool {
	for _, n := range names {
		if n == model || strings.TrimSuffix(n, ":latest") == model {
			return true
		}
	}
	return false
}

// liveDialect is one way of talking to the server.
type liveDialect struct {
	name   string // "native", "v1" or "responses"
	native bool
	base   string
	p      llm.Provider
}

// liveDialects returns a provider for each dialect. Retries are off, so
// that a failure shows as it happened.
func liveDialects(t *testing.T) []liveDialect {
	t.Helper()
	base := livePeerURL(t)
	liveServerModels(t, base)
	return []liveDialect{
		{name: "native", native: true, base: base, p: ollama.New(ollama.Options{BaseURL: base, MaxRetries: -1})},
		{name: "v1", base: base + "/v1", p: openai.New(openai.Options{BaseURL: base + "/v1", MaxRetries: -1})},
		{name: "responses", base: base + "/v1", p: responses.New(responses.Options{BaseURL: base + "/v1", MaxRetries: -1})},
	}
}

// seeded makes req repeatable: by its seed, or, on the Responses API,
// which has no seed (Ollama's takes none), by greedy sampling.
func (d liveDialect) seeded(req *llm.Request, seed int) *llm.Request {
	if d.name == "responses" {
		req.Temperature = livePtr(0.0)
		return req
	}
	req.Seed = livePtr(seed)
	return req
}

// liveCtx returns a context bounded by liveTimeout and ended with the test.
func liveCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), liveTimeout)
	t.Cleanup(cancel)
	return ctx
}

func livePtr[T any](v T) *T { return &v }

func liveUser(s string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: s}} }

// liveChat drains one Chat stream, checks that it keeps the stream contract
// (see liveCheckStream), and gathers the reply with llm.Collect.
func liveChat(t *testing.T, p llm.Provider, req *llm.Request) (*llm.Response, []llm.Event, error) {
	t.Helper()
	type item struct {
		ev  llm.Event
		err error
	}
	var items []item
	for ev, err := range p.Chat(liveCtx(t), req) {
		items = append(items, item{ev, err})
	}
	var evs []llm.Event
	var streamErr error
	for i, it := range items {
		if it.err != nil {
			if i != len(items)-1 {
				t.Errorf("stream yielded %d more item(s) after its error %v", len(items)-1-i, it.err)
			}
			streamErr = it.err
			continue
		}
		evs = append(evs, it.ev)
	}
	liveCheckStream(t, evs, streamErr)
	resp, err := llm.Collect(func(yield func(llm.Event, error) bool) {
		for _, it := range items {
			if !yield(it.ev, it.err) {
				return
			}
		}
	})
	if !errors.Is(err, streamErr) {
		t.Errorf("Collect returned %v, the stream ended with %v", err, streamErr)
	}
	return resp, evs, err
}

// liveCheckStream checks the order the llm.Stream contract gives: text,
// thinking and tool calls, then at most one usage, then exactly one done,
// last; no done when the stream failed; every event with its payload.
func liveCheckStream(t *testing.T, evs []llm.Event, err error) {
	t.Helper()
	var done, usage int
	for i, ev := range evs {
		switch ev.Kind {
		case llm.EventText, llm.EventThinking:
			if ev.Text == "" {
				t.Errorf("event %d: empty %v event", i, ev.Kind)
			}
		case llm.EventToolCall:
			if ev.ToolCall == nil {
				t.Errorf("event %d: tool_call event without its call", i)
			}
		case llm.EventThinkingReclassified:
			// At most one, after text only: it takes that text back.
			if ev.Text == "" || liveCount(evs[:i], llm.EventText) == 0 ||
				liveCount(evs[:i], llm.EventThinking)+liveCount(evs[:i], llm.EventToolCall)+liveCount(evs[:i], llm.EventThinkingReclassified) > 0 {
				t.Errorf("event %d: thinking_reclassified %q where it cannot be", i, ev.Text)
			}
		case llm.EventUsage:
			usage++
			if ev.Usage == nil {
				t.Errorf("event %d: usage event without usage", i)
			}
		case llm.EventDone:
			done++
			if ev.Done == nil {
				t.Errorf("event %d: done event without its payload", i)
			}
			if i != len(evs)-1 {
				t.Errorf("event %d: done is not the last event (%d follow)", i, len(evs)-1-i)
			}
		default:
			t.Errorf("event %d: unknown kind %v", i, ev.Kind)
		}
		if (ev.Kind == llm.EventText || ev.Kind == llm.EventThinking || ev.Kind == llm.EventToolCall) && usage+done > 0 {
			t.Errorf("event %d: %v after usage or done", i, ev.Kind)
		}
	}
	if usage > 1 {
		t.Errorf("%d usage events, want at most one", usage)
	}
	switch {
	case err == nil && done != 1:
		t.Errorf("stream ended without error but with %d done events, want exactly 1", done)
	case err != nil && done != 0:
		t.Errorf("stream failed (%v) after a done event", err)
	}
}

// liveCount returns how many events of kind k evs holds.
func liveCount(evs []llm.Event, k llm.EventKind) int {
	n := 0
	for _, ev := range evs {
		if ev.Kind == k {
			n++
		}
	}
	return n
}

// liveLLMError returns err as an *llm.Error, failing the test if it is not one.
func liveLLMError(t *testing.T, err error) *llm.Error {
	t.Helper()
	var le *llm.Error
	if !errors.As(err, &le) {
		t.Fatalf("error %v (%T) is not an *llm.Error", err, err)
	}
	return le
}

func liveSameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// liveStreamModes runs a subtest per streaming mode.
var liveStreamModes = []struct {
	name     string
	noStream bool
}{{"stream", false}, {"nostream", true}}

// liveCheckReply checks a successful plain answer: text, a done with a finish
// reason the reply can have, and token counts.
func liveCheckReply(t *testing.T, resp *llm.Response, evs []llm.Event, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if resp.Message.Content == "" {
		t.Error("reply has no content")
	}
	if liveCount(evs, llm.EventText) == 0 {
		t.Error("no text event")
	}
	if resp.Done == nil {
		t.Fatal("no done event")
	}
	if r := resp.Done.Reason; r != llm.FinishStop && r != llm.FinishLength {
		t.Errorf("finish reason %q, want stop or length", r)
	}
	if resp.Done.PromptTruncated {
		t.Error("done says the prompt was truncated; it is far shorter than the window")
	}
	if resp.Usage == nil {
		t.Fatal("no usage reported")
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("usage %+v, want both counts > 0", *resp.Usage)
	}
}

// TestIntegrationHealth checks the health check and, on the native API, the
// version the server reports.
func TestIntegrationHealth(t *testing.T) {
	for _, d := range liveDialects(t) {
		t.Run(d.name, func(t *testing.T) {
			info, err := llm.Health(liveCtx(t), d.p)
			if err != nil {
				t.Fatalf("Health: %v", err)
			}
			if info.Kind != d.p.Kind() {
				t.Errorf("Kind %q, want %q", info.Kind, d.p.Kind())
			}
			if info.BaseURL != d.base {
				t.Errorf("BaseURL %q, want %q", info.BaseURL, d.base)
			}
			if info.Latency <= 0 {
				t.Errorf("Latency %v, want > 0", info.Latency)
			}
			if d.native && info.Version != liveVersion {
				t.Errorf("Version %q, want %q", info.Version, liveVersion)
			}
		})
	}
}

// TestIntegrationChat checks plain chat, streamed and not, with a fixed seed.
func TestIntegrationChat(t *testing.T) {
	for _, d := range liveDialects(t) {
		t.Run(d.name, func(t *testing.T) {
			liveNeedModels(t, d.base, "tiny")
			req := func(seed int, noStream bool) *llm.Request {
				return d.seeded(&llm.Request{Model: "tiny", Messages: liveUser("Hello, who are you?"), NoStream: noStream}, seed)
			}
			texts := map[bool]string{}
			for _, m := range liveStreamModes {
				t.Run(m.name, func(t *testing.T) {
					resp, evs, err := liveChat(t, d.p, req(7, m.noStream))
					liveCheckReply(t, resp, evs, err)
					if n := liveCount(evs, llm.EventText); !m.noStream && n < 2 {
						t.Errorf("streamed reply came as %d text event(s), want several", n)
					}
					if n := liveCount(evs, llm.EventToolCall) + liveCount(evs, llm.EventThinking); n != 0 {
						t.Errorf("%d tool call or thinking events in a plain reply", n)
					}
					texts[m.noStream] = resp.Message.Content
					t.Logf("reply: %q (%+v, %+v)", resp.Message.Content, *resp.Done, resp.Usage)
				})
			}
			if len(texts) == 2 && texts[false] != texts[true] {
				t.Errorf("same seed, different text:\nstreamed     %q\nnot streamed %q", texts[false], texts[true])
			}
			if d.name == "responses" {
				return // no seed to vary
			}
			// Another seed gives another reply: the seed reached the sampler.
			resp, _, err := liveChat(t, d.p, req(8, false))
			if err != nil {
				t.Fatalf("chat with seed 8: %v", err)
			}
			if texts[false] != "" && resp.Message.Content == texts[false] {
				t.Errorf("seeds 7 and 8 gave the same text %q: is the seed sent?", resp.Message.Content)
			}
		})
	}
}

// TestIntegrationModels checks the model list and what the native API says
// about a model.
func TestIntegrationModels(t *testing.T) {
	base := livePeerURL(t)
	liveNeedModels(t, base, "tiny", "tiny-tools")

	// checkOllamaModel checks what /api/show says of the peer's models.
	checkOllamaModel := func(t *testing.T, m *llm.ModelInfo, window int) {
		t.Helper()
		if !m.CapabilitiesKnown {
			t.Error("CapabilitiesKnown is false; /api/show lists capabilities")
		}
		if !m.Has(llm.CapTools) {
			t.Errorf("capabilities %v lack tools", m.Capabilities)
		}
		if m.Has(llm.CapThinking) {
			t.Errorf("capabilities %v claim thinking", m.Capabilities)
		}
		if m.ContextLength != window {
			t.Errorf("ContextLength %d, want %d", m.ContextLength, window)
		}
		if m.TrainedContextLength != liveTrainedNumCtx {
			t.Errorf("TrainedContextLength %d, want %d", m.TrainedContextLength, liveTrainedNumCtx)
		}
		if m.Family != "llama" {
			t.Errorf("Family %q, want llama", m.Family)
		}
	}

	t.Run("native/Models", func(t *testing.T) {
		p := ollama.New(ollama.Options{BaseURL: base, MaxRetries: -1})
		ms, err := p.Models(liveCtx(t))
		if err != nil {
			t.Fatalf("Models: %v", err)
		}
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		for _, want := range []string{"tiny", "tiny-tools"} {
			i := -1
			for j, n := range names {
				if liveHasModel([]string{n}, want) {
					i = j
				}
			}
			if i < 0 {
				t.Errorf("Models lists %v, no %s", names, want)
				continue
			}
			m := ms[i]
			checkOllamaModel(t, &m, liveModelfileNumCtx)
			if m.Size <= 0 || m.ModifiedAt.IsZero() {
				t.Errorf("%s: Size %d, ModifiedAt %v: want both from /api/tags", m.Name, m.Size, m.ModifiedAt)
			}
		}
	})

	for _, tc := range []struct {
		name   string
		model  string
		numCtx int
		window int
	}{
		{"tiny", "tiny", 0, liveModelfileNumCtx},
		{"tiny-tools", "tiny-tools", 0, liveModelfileNumCtx},
		{"tagged name", "tiny:latest", 0, liveModelfileNumCtx},
		{"NumCtx option wins over the Modelfile", "tiny", 1024, 1024},
	} {
		t.Run("native/ModelInfo/"+tc.name, func(t *testing.T) {
			p := ollama.New(ollama.Options{BaseURL: base, MaxRetries: -1, NumCtx: tc.numCtx})
			m, err := p.ModelInfo(liveCtx(t), tc.model)
			if err != nil {
				t.Fatalf("ModelInfo(%q): %v", tc.model, err)
			}
			if m.Name != tc.model {
				t.Errorf("Name %q, want %q", m.Name, tc.model)
			}
			checkOllamaModel(t, m, tc.window)
		})
	}

	t.Run("v1/Models", func(t *testing.T) {
		p := openai.New(openai.Options{BaseURL: base + "/v1", MaxRetries: -1})
		ms, err := p.Models(liveCtx(t))
		if err != nil {
			t.Fatalf("Models: %v", err)
		}
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
			if m.CapabilitiesKnown {
				t.Errorf("%s: CapabilitiesKnown with nothing configured", m.Name)
			}
		}
		for _, want := range []string{"tiny", "tiny-tools"} {
			if !liveHasModel(names, want) {
				t.Errorf("Models lists %v, no %s", names, want)
			}
		}
	})

	// Ollama's /v1/models names every model with its tag ("tiny:latest"),
	// but chat takes the bare name as well, and so should ModelInfo.
	for _, model := range []string{"tiny:latest", "tiny"} {
		t.Run("v1/ModelInfo/"+model, func(t *testing.T) {
			p := openai.New(openai.Options{BaseURL: base + "/v1", MaxRetries: -1, Models: map[string]openai.ModelConfig{
				model: {Capabilities: []llm.Capability{llm.CapTools}, ContextLength: liveModelfileNumCtx},
			}})
			m, err := p.ModelInfo(liveCtx(t), model)
			if err != nil {
				t.Fatalf("ModelInfo(%q): %v (yet chat with %q works on this server)", model, err, model)
			}
			if !m.CapabilitiesKnown || !m.Has(llm.CapTools) || m.ContextLength != liveModelfileNumCtx {
				t.Errorf("ModelInfo(%q) = %+v, want the configured tools capability and context length", model, *m)
			}
		})
	}
}

// TestIntegrationUnknownModel checks that a model the server lacks is
// reported as such, with the models it has.
func TestIntegrationUnknownModel(t *testing.T) {
	const missing = "no-such-model"
	for _, d := range liveDialects(t) {
		liveNeedModels(t, d.base, "tiny", "tiny-tools")
		check := func(t *testing.T, err error, op string) {
			t.Helper()
			if err == nil {
				t.Fatal("no error for a model the server does not have")
			}
			le := liveLLMError(t, err)
			if le.Code != llm.CodeModelNotFound {
				t.Errorf("Code %q, want %q (error: %v)", le.Code, llm.CodeModelNotFound, err)
			}
			if le.Retryable {
				t.Error("a missing model is marked retryable")
			}
			if le.Provider != d.p.Kind() || le.Op != op {
				t.Errorf("Provider %q Op %q, want %q %q", le.Provider, le.Op, d.p.Kind(), op)
			}
			if !strings.Contains(le.Message, missing) {
				t.Errorf("Message %q does not name the model", le.Message)
			}
			for _, want := range []string{"tiny", "tiny-tools"} {
				if !liveHasModel(le.Available, want) {
					t.Errorf("Available %v does not list %s", le.Available, want)
				}
			}
		}
		for _, m := range liveStreamModes {
			t.Run(d.name+"/chat/"+m.name, func(t *testing.T) {
				resp, evs, err := liveChat(t, d.p, &llm.Request{Model: missing, Messages: liveUser("hi"), NoStream: m.noStream})
				check(t, err, "chat")
				if len(evs) != 0 || resp.Done != nil {
					t.Errorf("events %v before the error", evs)
				}
				if le := liveLLMError(t, err); le.Status != http.StatusNotFound {
					t.Errorf("Status %d, want 404", le.Status)
				}
			})
		}
		t.Run(d.name+"/ModelInfo", func(t *testing.T) {
			_, err := llm.Describe(liveCtx(t), d.p, missing)
			check(t, err, "show model")
		})
	}
}

// TestIntegrationToolCalls checks tool calls: those Ollama parsed out of the
// model's text itself, those Hearth must find in the text, and text that is
// no call.
func TestIntegrationToolCalls(t *testing.T) {
	type call struct {
		name, args string
		fromText   bool
	}
	tests := []struct {
		name  string
		model string
		tools []llm.ToolSpec
		// nativeOnly restricts a case to the native API.
		nativeOnly bool
		want       *call  // the one call expected, or nil for none
		text       string // what the content must hold when no call is made
	}{
		{
			name:  "parsed by Ollama",
			model: "tiny-tools", tools: []llm.ToolSpec{liveWeatherTool},
			want: &call{name: "get_weather", args: `{"city":"Paris"}`},
		},
		{
			name:  "parsed by Ollama among several tools",
			model: "tiny-tools", tools: []llm.ToolSpec{liveTimeTool, liveWeatherTool},
			want: &call{name: "get_weather", args: `{"city":"Paris"}`},
		},
		{
			// Nothing offered: the <tool_call> stays text, and is no call.
			name:  "no tools offered",
			model: "tiny-tools", nativeOnly: true,
			text: "<tool_call>",
		},
		{
			// Ollama's parser for this template looks for <tool_call> only.
			name:  "fenced JSON found by Hearth",
			model: "tiny-fenced", tools: []llm.ToolSpec{liveWeatherTool},
			want: &call{name: "get_weather", args: `{"city":"Paris"}`, fromText: true},
		},
		{
			// A fenced object naming a tool that was not offered is text.
			name:  "fenced JSON naming a tool not offered",
			model: "tiny-fenced", tools: []llm.ToolSpec{liveTimeTool},
			text: "```json\n{\"name\": \"get_weather\"",
		},
	}
	for _, d := range liveDialects(t) {
		for _, tc := range tests {
			if tc.nativeOnly && !d.native {
				continue
			}
			for _, m := range liveStreamModes {
				t.Run(d.name+"/"+tc.name+"/"+m.name, func(t *testing.T) {
					liveNeedModels(t, d.base, tc.model)
					resp, evs, err := liveChat(t, d.p, &llm.Request{Model: tc.model, Messages: liveUser("What is the weather in Paris?"),
						Tools: tc.tools, NoStream: m.noStream})
					if err != nil {
						t.Fatalf("chat: %v", err)
					}
					if resp.Done == nil {
						t.Fatal("no done event")
					}
					if resp.Usage == nil || resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
						t.Errorf("usage %+v, want both counts > 0", resp.Usage)
					}
					calls := resp.Message.ToolCalls
					if tc.want == nil {
						if len(calls) != 0 {
							t.Errorf("tool calls %+v, want none", calls)
						}
						if resp.Done.Reason != llm.FinishStop {
							t.Errorf("finish reason %q, want stop", resp.Done.Reason)
						}
						if !strings.Contains(resp.Message.Content, tc.text) {
							t.Errorf("content %q does not hold %q", resp.Message.Content, tc.text)
						}
						return
					}
					if n := liveCount(evs, llm.EventToolCall); n != 1 || len(calls) != 1 {
						t.Fatalf("%d tool call events (%+v), want exactly 1", n, calls)
					}
					c := calls[0]
					if c.ID == "" {
						t.Error("tool call has no ID")
					}
					if c.Name != tc.want.name {
						t.Errorf("tool %q, want %q", c.Name, tc.want.name)
					}
					if !liveSameJSON(c.Args, []byte(tc.want.args)) {
						t.Errorf("args %s, want %s", c.Args, tc.want.args)
					}
					if c.FromText != tc.want.fromText {
						t.Errorf("FromText %v, want %v", c.FromText, tc.want.fromText)
					}
					if c.Repaired || c.ArgsError != "" {
						t.Errorf("args marked Repaired=%v ArgsError=%q; they are valid JSON", c.Repaired, c.ArgsError)
					}
					if resp.Done.Reason != llm.FinishToolCalls {
						t.Errorf("finish reason %q, want tool_calls", resp.Done.Reason)
					}
					if s := strings.TrimSpace(resp.Message.Content); s != "" {
						t.Errorf("content %q beside the call, want none", s)
					}
				})
			}
		}
	}
}

// TestIntegrationToolChoiceNone checks that ToolChoiceNone makes no call on
// the native API, where Hearth implements it by not sending the tools: the
// model then writes its <tool_call> as text, and that must stay text. (On
// /v1 Hearth sends tool_choice "none", which Ollama 0.17.4 ignores: it
// parses and returns the call all the same, so /v1 is only logged.)
func TestIntegrationToolChoiceNone(t *testing.T) {
	for _, d := range liveDialects(t) {
		for _, m := range liveStreamModes {
			t.Run(d.name+"/"+m.name, func(t *testing.T) {
				liveNeedModels(t, d.base, "tiny-tools")
				resp, _, err := liveChat(t, d.p, &llm.Request{Model: "tiny-tools", Messages: liveUser("What is the weather in Paris?"),
					Tools: []llm.ToolSpec{liveWeatherTool}, ToolChoice: llm.ToolChoiceNone, NoStream: m.noStream})
				if err != nil {
					t.Fatalf("chat: %v", err)
				}
				if !d.native {
					t.Logf("server behaviour: tool_choice none gave calls %+v, finish %+v", resp.Message.ToolCalls, resp.Done)
					return
				}
				if len(resp.Message.ToolCalls) != 0 {
					t.Errorf("ToolChoiceNone, yet tool calls %+v were made (content %q)", resp.Message.ToolCalls, resp.Message.Content)
				}
				if !strings.Contains(resp.Message.Content, "<tool_call>") {
					t.Errorf("content %q: want the model's <tool_call> text", resp.Message.Content)
				}
				if resp.Done == nil || resp.Done.Reason != llm.FinishStop {
					t.Errorf("done %+v, want finish reason stop", resp.Done)
				}
			})
		}
	}
}

// TestIntegrationThinkTags checks that a <think> block the model writes in
// its text (Ollama leaves it there for a model without the thinking
// capability) comes out as thinking, apart from the answer.
func TestIntegrationThinkTags(t *testing.T) {
	for _, d := range liveDialects(t) {
		for _, m := range liveStreamModes {
			t.Run(d.name+"/"+m.name, func(t *testing.T) {
				liveNeedModels(t, d.base, "tiny-think")
				resp, evs, err := liveChat(t, d.p, &llm.Request{Model: "tiny-think", Messages: liveUser("hi"), NoStream: m.noStream})
				if err != nil {
					t.Fatalf("chat: %v", err)
				}
				if want := "The user greets me. I should greet back."; resp.Message.Thinking != want {
					t.Errorf("thinking %q, want %q", resp.Message.Thinking, want)
				}
				if want := "Hello there!"; resp.Message.Content != want {
					t.Errorf("content %q, want %q", resp.Message.Content, want)
				}
				for _, ev := range evs {
					if ev.Kind == llm.EventText {
						t.Errorf("text event %q before any thinking", ev.Text)
					}
					if ev.Kind == llm.EventThinking {
						break
					}
				}
				if resp.Done == nil || resp.Done.Reason != llm.FinishStop {
					t.Errorf("done %+v, want finish reason stop", resp.Done)
				}
			})
		}
	}
}

// TestIntegrationLoneThinkClose: a model whose template opened <think> in
// the prompt writes its reasoning and a lone </think> (Ollama leaves both in
// the content for a model without the thinking capability, natively and on
// /v1): the reasoning comes out as thinking, the answer alone as content,
// first by reclassifying the streamed text, then (the provider remembers the
// model) as thinking from the start.
func TestIntegrationLoneThinkClose(t *testing.T) {
	for _, d := range liveDialects(t) {
		liveNeedModels(t, d.base, "tiny-lone-think")
		moved := 0
		for _, m := range liveStreamModes {
			for round := 1; round <= 2; round++ {
				t.Run(fmt.Sprintf("%s/%s/%d", d.name, m.name, round), func(t *testing.T) {
					resp, evs, err := liveChat(t, d.p, &llm.Request{Model: "tiny-lone-think", Messages: liveUser("hi"), NoStream: m.noStream})
					if err != nil {
						t.Fatalf("chat: %v", err)
					}
					if want := "The user greets me. I should greet back."; resp.Message.Thinking != want {
						t.Errorf("thinking %q, want %q", resp.Message.Thinking, want)
					}
					if want := "Hello there!"; resp.Message.Content != want {
						t.Errorf("content %q, want %q", resp.Message.Content, want)
					}
					moved += liveCount(evs, llm.EventThinkingReclassified)
				})
			}
		}
		// Streamed first, the reply is reclassified once; never again.
		if moved != 1 {
			t.Errorf("%s: %d reclassifications, want 1", d.name, moved)
		}
	}
}

// TestIntegrationToolRoundTrip sends a conversation holding an assistant
// tool call and its result back to the server.
func TestIntegrationToolRoundTrip(t *testing.T) {
	const question = "What is the weather in Paris?"
	for _, d := range liveDialects(t) {
		t.Run(d.name+"/given history", func(t *testing.T) {
			liveNeedModels(t, d.base, "tiny")
			req := func(msgs []llm.Message) *llm.Request {
				return d.seeded(&llm.Request{Model: "tiny", Messages: msgs, Tools: []llm.ToolSpec{liveWeatherTool}, MaxTokens: 16}, 7)
			}
			first, _, err := liveChat(t, d.p, req(liveUser(question)))
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			history := append(liveUser(question),
				llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{
					{ID: "call_1", Name: "get_weather", Args: json.RawMessage(`{"city":"Paris"}`)},
				}},
				llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "get_weather", Content: "18C and sunny"},
			)
			resp, evs, err := liveChat(t, d.p, req(history))
			if err != nil {
				t.Fatalf("the server refused the history: %v", err)
			}
			if resp.Done == nil {
				t.Fatal("no done event")
			}
			if liveCount(evs, llm.EventText)+liveCount(evs, llm.EventToolCall) == 0 {
				t.Error("no answer to the tool result")
			}
			// The prompt grew by the call and its result.
			if first.Usage == nil || resp.Usage == nil || resp.Usage.InputTokens <= first.Usage.InputTokens {
				t.Errorf("input tokens %+v after the tool result, %+v before: the history did not reach the prompt", resp.Usage, first.Usage)
			}
		})
		t.Run(d.name+"/agent loop", func(t *testing.T) {
			liveNeedModels(t, d.base, "tiny-tools")
			req := &llm.Request{Model: "tiny-tools", Messages: liveUser(question), Tools: []llm.ToolSpec{liveWeatherTool}}
			first, _, err := liveChat(t, d.p, req)
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			if len(first.Message.ToolCalls) != 1 {
				t.Fatalf("first turn made calls %+v, want one", first.Message.ToolCalls)
			}
			c := first.Message.ToolCalls[0]
			req.Messages = append(req.Messages, first.Message,
				llm.Message{Role: llm.RoleTool, ToolCallID: c.ID, ToolName: c.Name, Content: `{"temperature_c": 18, "sky": "sunny"}`})
			second, _, err := liveChat(t, d.p, req)
			if err != nil {
				t.Fatalf("the server refused the history: %v", err)
			}
			// A scripted model says the same thing every turn.
			if len(second.Message.ToolCalls) != 1 || second.Message.ToolCalls[0].Name != "get_weather" || second.Message.ToolCalls[0].ID == "" {
				t.Errorf("second turn made calls %+v, want one get_weather call with an ID", second.Message.ToolCalls)
			}
			if first.Usage == nil || second.Usage == nil || second.Usage.InputTokens <= first.Usage.InputTokens {
				t.Errorf("input tokens %+v on the second turn, %+v on the first: the history did not reach the prompt", second.Usage, first.Usage)
			}
		})
	}
}

// TestIntegrationThink checks the think parameter on a model that cannot
// think. The native API refuses it (so does /v1 for a reasoning effort):
// the refusal comes back as invalid_request, in the server's own words.
// On /v1 Hearth asks for thinking without a level through
// chat_template_kwargs, which Ollama ignores: the reply is then a plain
// answer, and must come back as one, not as thinking.
func TestIntegrationThink(t *testing.T) {
	tests := []struct {
		name    string
		only    string // a dialect's name restricts a case to it
		think   llm.Think
		refused bool
	}{
		{name: "on", only: "native", think: llm.Think{Enabled: true}, refused: true},
		{name: "on", only: "v1", think: llm.Think{Enabled: true}},
		{name: "level", only: "native", think: llm.Think{Enabled: true, Level: "high"}, refused: true},
		{name: "level", only: "v1", think: llm.Think{Enabled: true, Level: "high"}, refused: true},
		// Ollama 0.17.4's /v1/responses reads no reasoning setting at
		// all (openai.FromResponsesRequest): a plain answer comes back.
		{name: "on", only: "responses", think: llm.Think{Enabled: true}},
		{name: "level", only: "responses", think: llm.Think{Enabled: true, Level: "high"}},
		{name: "off", think: llm.Think{Enabled: false}},
	}
	for _, d := range liveDialects(t) {
		for _, tc := range tests {
			if tc.only != "" && tc.only != d.name {
				continue
			}
			for _, m := range liveStreamModes {
				t.Run(d.name+"/"+tc.name+"/"+m.name, func(t *testing.T) {
					liveNeedModels(t, d.base, "tiny")
					think := tc.think
					resp, evs, err := liveChat(t, d.p, d.seeded(&llm.Request{Model: "tiny", Messages: liveUser("hi"),
						MaxTokens: 8, Think: &think, NoStream: m.noStream}, 7))
					if !tc.refused {
						liveCheckReply(t, resp, evs, err)
						if resp.Message.Thinking != "" {
							t.Errorf("a model that cannot think gave thinking %q beside content %q (%d thinking, %d text events)",
								resp.Message.Thinking, resp.Message.Content, liveCount(evs, llm.EventThinking), liveCount(evs, llm.EventText))
						}
						return
					}
					if err == nil {
						t.Fatalf("no error; reply %q", resp.Message.Content)
					}
					le := liveLLMError(t, err)
					if le.Code != llm.CodeInvalidRequest {
						t.Errorf("Code %q, want %q (error: %v)", le.Code, llm.CodeInvalidRequest, err)
					}
					if !strings.Contains(le.Message, "does not support thinking") {
						t.Errorf("Message %q lost the server's own text", le.Message)
					}
					if le.Status != http.StatusBadRequest || le.Retryable {
						t.Errorf("Status %d Retryable %v, want 400 and not retryable", le.Status, le.Retryable)
					}
					if len(evs) != 0 {
						t.Errorf("events %v before the error", evs)
					}
				})
			}
		}
	}
}

// TestIntegrationEmbed checks embeddings over both dialects (the peer's
// models embed, though they are not embedding models).
func TestIntegrationEmbed(t *testing.T) {
	for _, d := range liveDialects(t) {
		t.Run(d.name, func(t *testing.T) {
			liveNeedModels(t, d.base, "tiny")
			vs, err := llm.Embed(liveCtx(t), d.p, "tiny", []string{"hello", "world"})
			if err != nil {
				t.Fatalf("Embed: %v", err)
			}
			if len(vs) != 2 || len(vs[0]) == 0 || len(vs[0]) != len(vs[1]) {
				t.Fatalf("got %d vectors of lengths %v, want 2 of one non-zero length", len(vs), liveLens(vs))
			}
			if reflect.DeepEqual(vs[0], vs[1]) {
				t.Error("two different inputs gave the same vector")
			}
		})
		t.Run(d.name+"/unknown model", func(t *testing.T) {
			_, err := llm.Embed(liveCtx(t), d.p, "no-such-model", []string{"hello"})
			if err == nil {
				t.Fatal("no error for a model the server does not have")
			}
			le := liveLLMError(t, err)
			if le.Code != llm.CodeModelNotFound || !liveHasModel(le.Available, "tiny") {
				t.Errorf("Code %q Available %v, want %q listing tiny", le.Code, le.Available, llm.CodeModelNotFound)
			}
		})
	}
}

func liveLens(vs [][]float32) []int {
	out := make([]int, len(vs))
	for i, v := range vs {
		out[i] = len(v)
	}
	return out
}

// TestIntegrationContextLength checks a prompt longer than the window on the
// native API: refused by default, truncated and flagged when allowed.
func TestIntegrationContextLength(t *testing.T) {
	base := livePeerURL(t)
	liveNeedModels(t, base, "tiny")
	// About 3000 tokens for the peer's byte-level tokenizer, > num_ctx 2048.
	long := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 80)
	req := func(noStream bool) *llm.Request {
		return &llm.Request{Model: "tiny", Messages: liveUser(long), Seed: livePtr(7), MaxTokens: 4, NoStream: noStream}
	}
	for _, m := range liveStreamModes {
		t.Run("refused/"+m.name, func(t *testing.T) {
			p := ollama.New(ollama.Options{BaseURL: base, MaxRetries: -1})
			_, evs, err := liveChat(t, p, req(m.noStream))
			if err == nil {
				t.Fatal("an overlong prompt was accepted")
			}
			le := liveLLMError(t, err)
			if le.Code != llm.CodeContextLength {
				t.Errorf("Code %q, want %q (error: %v)", le.Code, llm.CodeContextLength, err)
			}
			if !strings.Contains(le.Message, "context length") {
				t.Errorf("Message %q lost the server's own text", le.Message)
			}
			if len(evs) != 0 {
				t.Errorf("events %v before the error", evs)
			}
		})
	}
	t.Run("allowed", func(t *testing.T) {
		p := ollama.New(ollama.Options{BaseURL: base, MaxRetries: -1, AllowTruncation: true})
		resp, _, err := liveChat(t, p, req(false))
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
		if resp.Done == nil || !resp.Done.PromptTruncated {
			t.Errorf("done %+v (usage %+v), want PromptTruncated", resp.Done, resp.Usage)
		}
	})
}

// liveGentleClient returns an HTTP client for a provider whose streams are
// cut short (a cancel, a break), and a count of the chat responses the
// provider has closed.
//
// It exists because of a bug in the peer's Ollama (0.17.4): when a client
// goes away while the model is still generating, the chat handler returns
// but its generating goroutine stays blocked for ever on an unbuffered
// channel send (server/routes.go, `ch <- res`, called from
// llm.(*llmServer).Completion) while holding the model's only slot (the
// runner's semaphore); every later request to that model then waits in
// sem.Acquire until the server is restarted. A goroutine dump of a wedged
// server shows exactly that. So that the tests cannot wedge the shared
// peer, this client never hangs up mid-reply: the provider sees what it
// would see on a cancel (a read that fails with the context's error as soon
// as the context is done) and on Close (the body is closed, counted), while
// underneath, the rest of the reply is read to its end and thrown away.
func liveGentleClient(t *testing.T) (*http.Client, *atomic.Int64) {
	var closed atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(wg.Wait)
	return &http.Client{Transport: &gentleTransport{closed: &closed, wg: &wg}}, &closed
}

type gentleTransport struct {
	closed *atomic.Int64
	wg     *sync.WaitGroup
}

func (g *gentleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(req.URL.Path, "/chat") && !strings.HasSuffix(req.URL.Path, "/chat/completions") && !strings.HasSuffix(req.URL.Path, "/responses") {
		return http.DefaultTransport.RoundTrip(req) // not a reply (the native provider's /api/show)
	}
	// The connection must not follow the caller's context, which the
	// transport would close on a cancel: the caller's cancel reaches the
	// provider through gentleBody instead. (These tests cancel only after
	// the first event, when the headers have come.)
	dctx, dcancel := context.WithTimeout(context.WithoutCancel(req.Context()), liveTimeout)
	resp, err := http.DefaultTransport.RoundTrip(req.Clone(dctx))
	if err != nil {
		dcancel()
		return nil, err
	}
	// From here on the body is read in the background to its end
	// (bounded by liveTimeout) whatever the caller does.
	pr, pw := io.Pipe()
	raw := resp.Body
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		defer dcancel()
		defer raw.Close()
		stop := time.AfterFunc(liveTimeout, func() {
			raw.Close()
			pr.CloseWithError(errors.New("the reply did not end within the time limit"))
		})
		defer stop.Stop()
		_, err := io.Copy(pw, raw)
		pw.CloseWithError(err)
		io.Copy(io.Discard, raw) // once the reader has gone
	}()
	resp.Body = &gentleBody{ctx: req.Context(), pr: pr, closed: g.closed}
	return resp, nil
}

// gentleBody is what the provider reads: the reply, until its context ends.
type gentleBody struct {
	ctx    context.Context
	pr     *io.PipeReader
	closed *atomic.Int64
	once   sync.Once
}

func (b *gentleBody) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	type result struct {
		n   int
		err error
	}
	buf := make([]byte, len(p))
	done := make(chan result, 1)
	go func() {
		n, err := b.pr.Read(buf)
		done <- result{n, err}
	}()
	select {
	case r := <-done:
		copy(p, buf[:r.n])
		return r.n, r.err
	case <-b.ctx.Done():
		// The pending read ends when the next piece comes or the pipe is
		// closed; its data is dropped, as a closed connection drops it.
		return 0, b.ctx.Err()
	}
}

// Close lets the background reader drain the rest of the reply.
func (b *gentleBody) Close() error {
	b.once.Do(func() {
		b.closed.Add(1)
		b.pr.CloseWithError(errors.New("closed by the provider"))
	})
	return nil
}

// liveGentle returns the dialect's provider with a gentle client (see
// liveGentleClient), and its count of closed bodies.
func liveGentle(t *testing.T, d liveDialect) (llm.Provider, *atomic.Int64) {
	hc, closed := liveGentleClient(t)
	switch d.name {
	case "native":
		return ollama.New(ollama.Options{BaseURL: d.base, MaxRetries: -1, HTTPClient: hc}), closed
	case "responses":
		return responses.New(responses.Options{BaseURL: d.base, MaxRetries: -1, HTTPClient: hc}), closed
	}
	return openai.New(openai.Options{BaseURL: d.base, MaxRetries: -1, HTTPClient: hc}), closed
}

// TestIntegrationCancel checks that a stream cancelled mid-reply or before
// its first byte ends with CodeCancelled instead of the reply, and that
// breaking out of the loop ends the stream and closes the response. How
// soon is not asserted (a loaded machine makes any bound wrong); a stream
// that did not end would run into liveTimeout.
func TestIntegrationCancel(t *testing.T) {
	// Seed 1 makes tiny tell a long story (about 170 tokens) on the native
	// API and /v1, so the reply is still coming when the context is
	// cancelled; on the Responses API, which has no seed, greedy sampling
	// makes it write some 95 tokens after "Once upon a time". At most 200
	// tokens: the gentle client reads the rest of a cut reply.
	story := func(d liveDialect) *llm.Request {
		if d.name == "responses" {
			return &llm.Request{Model: "tiny", Messages: liveUser("Once upon a time"), Temperature: livePtr(0.0), MaxTokens: 200}
		}
		return &llm.Request{Model: "tiny", Messages: liveUser("Tell me a long story."), Seed: livePtr(1),
			Temperature: livePtr(0.8), MaxTokens: 200}
	}
	// checkCancelled checks the end of a cancelled stream.
	checkCancelled := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("the stream ended without an error")
		}
		le := liveLLMError(t, err)
		if le.Code != llm.CodeCancelled {
			t.Errorf("Code %q, want %q (error: %v)", le.Code, llm.CodeCancelled, err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(%v, context.Canceled) is false", err)
		}
		if le.Retryable {
			t.Error("a cancelled call is marked retryable")
		}
	}

	for _, d := range liveDialects(t) {
		liveNeedModels(t, d.base, "tiny")

		t.Run(d.name+"/mid-stream", func(t *testing.T) {
			p, closed := liveGentle(t, d)
			// The whole reply may, rarely, be read before the cancel takes
			// effect; then try again.
			for attempt := 1; attempt <= 3; attempt++ {
				ctx, cancel := context.WithCancel(liveCtx(t))
				cancelled := false
				var after int
				var streamErr error
				for ev, err := range p.Chat(ctx, story(d)) {
					if err != nil {
						streamErr = err
						break
					}
					if !cancelled {
						cancel()
						cancelled = true
						continue
					}
					after++
					if ev.Kind == llm.EventDone {
						t.Logf("attempt %d: the reply was complete before the cancel took effect", attempt)
					}
				}
				cancel()
				if !cancelled {
					t.Fatalf("no event before the stream ended (%v)", streamErr)
				}
				if closed.Load() != int64(attempt) {
					t.Errorf("%d response(s) closed after %d stream(s)", closed.Load(), attempt)
				}
				if streamErr == nil && attempt < 3 {
					continue
				}
				t.Logf("%d event(s) after the cancel", after)
				checkCancelled(t, streamErr)
				return
			}
		})

		t.Run(d.name+"/before the first byte", func(t *testing.T) {
			// A long prompt the server has not cached takes it over a
			// second to evaluate before it sends anything.
			prompt := fmt.Sprintf("%d %s", time.Now().UnixNano(), strings.Repeat("Pack my box with five dozen liquor jugs. ", 30))
			ctx, cancel := context.WithCancel(liveCtx(t))
			defer cancel()
			var cancelled atomic.Bool
			timer := time.AfterFunc(200*time.Millisecond, func() {
				cancelled.Store(true)
				cancel()
			})
			defer timer.Stop()
			var evs []llm.Event
			var streamErr error
			for ev, err := range d.p.Chat(ctx, &llm.Request{Model: "tiny", Messages: liveUser(prompt), MaxTokens: 4}) {
				if err != nil {
					streamErr = err
					break
				}
				evs = append(evs, ev)
			}
			if !cancelled.Load() || len(evs) > 0 {
				t.Skipf("the server answered within 200ms (%d events, %v): nothing to cancel before the first byte", len(evs), streamErr)
			}
			checkCancelled(t, streamErr)
		})

		t.Run(d.name+"/break", func(t *testing.T) {
			p, closed := liveGentle(t, d)
			events := 0
			for _, err := range p.Chat(liveCtx(t), story(d)) {
				if err != nil {
					t.Fatalf("chat: %v", err)
				}
				events++
				break
			}
			if events != 1 {
				t.Fatalf("%d events", events)
			}
			// The provider closed the response as the loop ended (a
			// stream left open would hold the server's only slot).
			if n := closed.Load(); n != 1 {
				t.Errorf("%d responses closed when the loop ended, want 1", n)
			}
			// The provider is still usable, and the server free.
			resp, evs, err := liveChat(t, p, d.seeded(&llm.Request{Model: "tiny", Messages: liveUser("hi"), MaxTokens: 8}, 7))
			liveCheckReply(t, resp, evs, err)
		})
	}
}
