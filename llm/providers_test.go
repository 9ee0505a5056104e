package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/responses"
)

func TestMain(m *testing.M) {
	// Idle keep-alive connections of the shared HTTP transport are not
	// leaks; anything else left running is.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"))
}

// timeouts are the knobs the tests turn on both providers.
type timeouts struct {
	idle, first time.Duration
	retries     int
	// memory reaches the fake without a socket (llmtest.InMemory), for
	// tests in a synctest bubble.
	memory bool
}

// client is the HTTP client of a provider for t.
func (t timeouts) client(srv *llmtest.Server) *http.Client {
	if t.memory {
		return srv.InMemory()
	}
	return nil
}

// wireDialect runs one behaviour against one wire format.
type wireDialect struct {
	name   string
	path   string
	new    func(srv *llmtest.Server, t timeouts) llm.Provider
	stream func(model string, parts ...llmtest.Part) llmtest.Scenario
	whole  func(model string, parts ...llmtest.Part) llmtest.Scenario
}

var wireDialects = []wireDialect{
	{
		name: "ollama", path: "/api/chat",
		new: func(srv *llmtest.Server, t timeouts) llm.Provider {
			return ollama.New(ollama.Options{BaseURL: srv.URL, Model: "m", NumCtx: 8192,
				IdleTimeout: t.idle, FirstByteTimeout: t.first, MaxRetries: t.retries, HTTPClient: t.client(srv)})
		},
		stream: llmtest.OllamaStream, whole: llmtest.OllamaWhole,
	},
	{
		name: "openai", path: "/v1/chat/completions",
		new: func(srv *llmtest.Server, t timeouts) llm.Provider {
			return openai.New(openai.Options{BaseURL: srv.OpenAIURL(), Model: "m",
				IdleTimeout: t.idle, FirstByteTimeout: t.first, MaxRetries: t.retries, HTTPClient: t.client(srv)})
		},
		stream: llmtest.OpenAIStream, whole: llmtest.OpenAIWhole,
	},
	{
		name: "responses", path: "/v1/responses",
		new: func(srv *llmtest.Server, t timeouts) llm.Provider {
			return responses.New(responses.Options{BaseURL: srv.OpenAIURL(), Model: "m",
				IdleTimeout: t.idle, FirstByteTimeout: t.first, MaxRetries: t.retries, HTTPClient: t.client(srv)})
		},
		stream: llmtest.ResponsesStream, whole: llmtest.ResponsesWhole,
	},
}

var noRetry = timeouts{retries: -1}

func fakeChat(t *testing.T, p llm.Provider, req *llm.Request) (*llm.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if req == nil {
		req = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	}
	return llm.Collect(p.Chat(ctx, req))
}

func withTools(names ...string) *llm.Request {
	req := &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "weather?"}}}
	for _, n := range names {
		req.Tools = append(req.Tools, llm.ToolSpec{Name: n, Description: "d", Parameters: json.RawMessage(`{"type":"object"}`)})
	}
	return req
}

func TestScriptedRepliesBothDialects(t *testing.T) {
	parts := []llmtest.Part{
		llmtest.Thinking("Let me "), llmtest.Thinking("think."),
		llmtest.Text("It is "), llmtest.Text("sunny."),
		llmtest.Call("get_weather", `{"city":"Paris"}`),
		llmtest.Call("get_time", `{"tz":"Europe/Paris"}`),
		llmtest.Usage(120, 30),
	}
	for _, d := range wireDialects {
		for _, whole := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nostream=%v", d.name, whole), func(t *testing.T) {
				srv := llmtest.New(t)
				sc := d.stream("m", parts...)
				if whole {
					sc = d.whole("m", parts...)
				}
				srv.Enqueue(d.path, sc)
				req := withTools("get_weather", "get_time")
				req.NoStream = whole
				res, err := fakeChat(t, d.new(srv, noRetry), req)
				if err != nil {
					t.Fatal(err)
				}
				m := res.Message
				if m.Thinking != "Let me think." || m.Content != "It is sunny." {
					t.Errorf("thinking %q content %q", m.Thinking, m.Content)
				}
				if len(m.ToolCalls) != 2 || m.ToolCalls[0].Name != "get_weather" || string(m.ToolCalls[1].Args) != `{"tz":"Europe/Paris"}` ||
					m.ToolCalls[0].ID != "call_1" || m.ToolCalls[1].ID != "call_2" {
					t.Errorf("calls = %+v", m.ToolCalls)
				}
				if res.Done == nil || res.Done.Reason != llm.FinishToolCalls {
					t.Errorf("done = %+v", res.Done)
				}
				if res.Usage == nil || *res.Usage != (llm.Usage{InputTokens: 120, OutputTokens: 30}) {
					t.Errorf("usage = %+v", res.Usage)
				}
				var body map[string]any
				srv.RequestsTo(d.path)[0].JSON(t, &body)
				if body["stream"] != !whole {
					t.Errorf("stream = %v, want %v", body["stream"], !whole)
				}
			})
		}
	}
}

// TestToolArgumentsSplitAtEveryOffset streams one call's arguments cut into
// two pieces at every offset, and also the body cut at every byte.
func TestToolArgumentsSplitAtEveryOffset(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every offset, over a real HTTP server: seconds (the race stage runs it)")
	}
	args := `{"path":"src/main.go","line":12,"note":"ünïcode \"quoted\" {braces}"}`
	srv := llmtest.New(t)
	p := wireDialects[1].new(srv, noRetry)
	for k := 1; k < len(args); k++ {
		// The arguments arrive as deltas of k bytes each.
		sc := llmtest.Dialect{ArgPieces: k}.Stream("m", llmtest.Call("read_file", args))
		srv.Enqueue("/v1/chat/completions", sc)
		res, err := fakeChat(t, p, withTools("read_file"))
		if err != nil {
			t.Fatalf("pieces of %d: %v", k, err)
		}
		if len(res.Message.ToolCalls) != 1 || !jsonEqual(res.Message.ToolCalls[0].Args, []byte(args)) {
			t.Fatalf("pieces of %d: calls = %+v", k, res.Message.ToolCalls)
		}
	}
	for _, d := range wireDialects {
		sc := d.stream("m", llmtest.Call("read_file", args))
		body := sc.Body()
		for off := 1; off < len(body); off++ {
			srv.Enqueue(d.path, sc.Split(off))
			res, err := fakeChat(t, d.new(srv, noRetry), withTools("read_file"))
			if err != nil || len(res.Message.ToolCalls) != 1 || !jsonEqual(res.Message.ToolCalls[0].Args, []byte(args)) {
				t.Fatalf("%s body split at %d: %+v %v", d.name, off, res.Message.ToolCalls, err)
			}
		}
	}
}

// TestThinkTagSplitAtEveryOffset sends <think>…</think> in the content, cut
// into two chunks at every offset, over both wires.
func TestThinkTagSplitAtEveryOffset(t *testing.T) {
	content := "<think>The user wants 2+2.</think>\n\nIt is 4."
	for _, d := range wireDialects {
		srv := llmtest.New(t)
		p := d.new(srv, noRetry)
		for k := 0; k <= len(content); k++ {
			srv.Enqueue(d.path, d.stream("m", llmtest.Text(content[:k]), llmtest.Text(content[k:])))
			res, err := fakeChat(t, p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Message.Thinking != "The user wants 2+2." || res.Message.Content != "It is 4." {
				t.Fatalf("%s split at %d: thinking %q content %q", d.name, k, res.Message.Thinking, res.Message.Content)
			}
		}
	}
}

func TestTextToolCallsOnlyWhenToolsOffered(t *testing.T) {
	text := "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	for _, d := range wireDialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			p := d.new(srv, noRetry)
			srv.Enqueue(d.path, d.stream("m", llmtest.Text(text[:15]), llmtest.Text(text[15:])))
			res, err := fakeChat(t, p, withTools("get_weather"))
			if err != nil || len(res.Message.ToolCalls) != 1 || !res.Message.ToolCalls[0].FromText || res.Message.Content != "" || res.Done.Reason != llm.FinishToolCalls {
				t.Fatalf("with tools: %+v %+v %v", res.Message, res.Done, err)
			}
			srv.Enqueue(d.path, d.stream("m", llmtest.Text(text)))
			res, err = fakeChat(t, p, nil)
			if err != nil || len(res.Message.ToolCalls) != 0 || res.Message.Content != text {
				t.Fatalf("without tools: %+v %v", res.Message, err)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}()
	t.Run("connection refused", func(t *testing.T) {
		for _, p := range []llm.Provider{
			ollama.New(ollama.Options{BaseURL: "http://" + closed, Model: "m", MaxRetries: -1}),
			openai.New(openai.Options{BaseURL: "http://" + closed + "/v1", Model: "m", MaxRetries: -1}),
			responses.New(responses.Options{BaseURL: "http://" + closed + "/v1", Model: "m", MaxRetries: -1}),
		} {
			_, err := fakeChat(t, p, nil)
			var le *llm.Error
			if !errors.As(err, &le) || le.Code != llm.CodeUnreachable || !le.Retryable {
				t.Fatalf("%s: %v", p.Kind(), err)
			}
			if p.Kind() == "ollama" && !strings.Contains(err.Error(), "ollama serve") {
				t.Errorf("hint missing: %v", err)
			}
			if p.Kind() != "ollama" && !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
				t.Errorf("hint missing: %v", err)
			}
		}
	})
	cases := []struct {
		name      string
		ollama    llmtest.Scenario
		openai    llmtest.Scenario
		code      llm.Code
		message   string
		retryable bool
	}{
		{"auth", llmtest.OllamaError(401, "unauthorized"), llmtest.OpenAIError(401, "Incorrect API key provided: sk-abc.", "invalid_request_error", "invalid_api_key"), llm.CodeAuth, "unauthorized|Incorrect API key", false},
		{"context length", llmtest.OllamaError(400, "the input length exceeds the context length"),
			llmtest.OpenAIError(400, "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.", "invalid_request_error", "context_length_exceeded"), llm.CodeContextLength, "context length", false},
		{"server 500", llmtest.OllamaError(500, "llama runner process has terminated"), llmtest.OpenAIError(500, "internal error", "server_error", ""), llm.CodeServer, "runner|internal", true},
		{"tools unsupported", llmtest.OllamaError(400, "registry.ollama.ai/library/gemma:2b does not support tools"), llmtest.OpenAIError(400, "tools are not supported", "invalid_request_error", ""), llm.CodeInvalidRequest, "support", false},
		{"malformed chunk", llmtest.Scenario{Chunks: []llmtest.Chunk{{Data: "{\"message\": {\"content\": \"a\"}}\n{oops\n"}}, Header: map[string][]string{"Content-Type": {"application/x-ndjson"}}},
			llmtest.Scenario{Chunks: []llmtest.Chunk{{Data: "data: {oops\n\n"}}}, llm.CodeBadResponse, "malformed", false},
	}
	for _, tc := range cases {
		for _, d := range wireDialects {
			t.Run(tc.name+"/"+d.name, func(t *testing.T) {
				srv := llmtest.New(t)
				sc := tc.ollama
				if d.name != "ollama" {
					sc = tc.openai // the Responses API fails the same way
				}
				srv.Enqueue(d.path, sc)
				_, err := fakeChat(t, d.new(srv, noRetry), nil)
				var le *llm.Error
				if !errors.As(err, &le) || le.Code != tc.code || le.Retryable != tc.retryable {
					t.Fatalf("got %#v, want code %s retryable %v", err, tc.code, tc.retryable)
				}
				if !matchesAny(le.Error(), tc.message) {
					t.Errorf("message %q lacks the server's own words (%s)", le.Error(), tc.message)
				}
			})
		}
	}
}

func matchesAny(s, alts string) bool {
	for _, a := range strings.Split(alts, "|") {
		if strings.Contains(s, a) {
			return true
		}
	}
	return false
}

func TestUnknownModelListsAvailable(t *testing.T) {
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "qwen3:4b", Capabilities: []string{"completion", "tools", "thinking"}})
	srv.AddModel(llmtest.Model{Name: "llama3.2:3b", Capabilities: []string{"completion", "tools"}})
	srv.Enqueue("/api/chat", llmtest.OllamaError(404, "model 'nope' not found"))
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIError(404, "The model `nope` does not exist.", "invalid_request_error", "model_not_found"))
	for _, p := range []llm.Provider{
		ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}),
		openai.New(openai.Options{BaseURL: srv.OpenAIURL(), MaxRetries: -1}),
	} {
		_, err := fakeChat(t, p, &llm.Request{Model: "nope", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}})
		var le *llm.Error
		if !errors.As(err, &le) || le.Code != llm.CodeModelNotFound {
			t.Fatalf("%s: %v", p.Kind(), err)
		}
		if strings.Join(le.Available, ",") != "llama3.2:3b,qwen3:4b" {
			t.Errorf("%s: available = %v", p.Kind(), le.Available)
		}
		if p.Kind() == "ollama" && !strings.Contains(le.Hint, "ollama pull nope") {
			t.Errorf("hint = %q", le.Hint)
		}
	}
}

func TestRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits out Retry-After delays (the race stage runs it)")
	}
	for _, d := range wireDialects {
		t.Run(d.name+"/503 then success", func(t *testing.T) {
			srv := llmtest.New(t)
			busy := llmtest.OllamaError(503, "server busy")
			busy.Header.Set("Retry-After", "0.01")
			srv.Enqueue(d.path, busy, d.stream("m", llmtest.Text("ok")))
			res, err := fakeChat(t, d.new(srv, timeouts{retries: 2}), nil)
			if err != nil || res.Message.Content != "ok" || len(srv.RequestsTo(d.path)) != 2 {
				t.Fatalf("%v %+v, %d requests", err, res, len(srv.RequestsTo(d.path)))
			}
		})
		t.Run(d.name+"/429 honours Retry-After", func(t *testing.T) {
			srv := llmtest.New(t)
			limited := llmtest.OpenAIError(429, "Rate limit reached", "tokens", "rate_limit_exceeded")
			limited.Header.Set("Retry-After", "0.2")
			srv.Enqueue(d.path, limited, d.stream("m", llmtest.Text("ok")))
			start := time.Now()
			res, err := fakeChat(t, d.new(srv, timeouts{retries: 1}), nil)
			if err != nil || res.Message.Content != "ok" {
				t.Fatal(err)
			}
			if waited := time.Since(start); waited < 200*time.Millisecond {
				t.Errorf("retried after %v, before the 0.2 s the server asked for", waited)
			}
		})
		t.Run(d.name+"/429 asking too long is not retried", func(t *testing.T) {
			srv := llmtest.New(t)
			limited := llmtest.OpenAIError(429, "Rate limit reached", "tokens", "")
			limited.Header.Set("Retry-After", "3600")
			srv.Enqueue(d.path, limited)
			_, err := fakeChat(t, d.new(srv, timeouts{retries: 3}), nil)
			var le *llm.Error
			if !errors.As(err, &le) || le.Code != llm.CodeRateLimited || le.RetryAfter != time.Hour || len(srv.RequestsTo(d.path)) != 1 {
				t.Fatalf("%#v after %d requests", err, len(srv.RequestsTo(d.path)))
			}
		})
		t.Run(d.name+"/never after output", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Text("partial "), llmtest.StreamError("runner crashed")), d.stream("m", llmtest.Text("second")))
			res, err := fakeChat(t, d.new(srv, timeouts{retries: 3}), nil)
			if llm.CodeOf(err) != llm.CodeServer || res.Message.Content != "partial " || len(srv.RequestsTo(d.path)) != 1 {
				t.Fatalf("%v, content %q, %d requests", err, res.Message.Content, len(srv.RequestsTo(d.path)))
			}
		})
		t.Run(d.name+"/stream error before output is retried", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.StreamError("model runner has unexpectedly stopped")), d.stream("m", llmtest.Text("ok")))
			res, err := fakeChat(t, d.new(srv, timeouts{retries: 1}), nil)
			if err != nil || res.Message.Content != "ok" {
				t.Fatalf("%v %+v", err, res)
			}
		})
	}
}

func TestTruncatedStreams(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name+"/dies mid-answer", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Thinking("hmm"), llmtest.Text("The answer"), llmtest.Cut()))
			res, err := fakeChat(t, d.new(srv, timeouts{retries: 3}), nil)
			if llm.CodeOf(err) != llm.CodeBadResponse || res.Message.Content != "The answer" || res.Message.Thinking != "hmm" {
				t.Fatalf("%v, %+v", err, res.Message)
			}
			if n := len(srv.RequestsTo(d.path)); n != 1 {
				t.Errorf("%d requests: a stream that produced output must not be retried", n)
			}
		})
	}
}

// chatFor collects a reply with no deadline of the test's own: in a synctest
// bubble, the provider's timeouts are what end a silent server.
func chatFor(p llm.Provider, req *llm.Request) (*llm.Response, error) {
	if req == nil {
		req = &llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	}
	return llm.Collect(p.Chat(context.Background(), req))
}

// TestSilenceTimeouts runs the watchdog at its real values (the defaults: 2
// minutes of silence in a stream, 10 minutes for the first byte) in a
// synctest bubble, where the fake's pauses and the watchdog's timers run on
// a fake clock: minutes pass at once, and the moment each timeout fires is
// exact, whatever the machine's load.
func TestSilenceTimeouts(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name+"/goes silent", func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("The answer"))
			sc.Chunks = sc.Chunks[:1]
			sc.Hang = true
			srv.Enqueue(d.path, sc)
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				res, err := chatFor(d.new(srv, timeouts{retries: -1, memory: true}), nil)
				if llm.CodeOf(err) != llm.CodeServer || !strings.Contains(err.Error(), "stopped sending") || res.Message.Content != "The answer" {
					t.Fatalf("%v, %+v", err, res.Message)
				}
				if waited := time.Since(start); waited != wire.DefaultIdleTimeout {
					t.Errorf("ended after %v of silence, want the idle timeout %v", waited, wire.DefaultIdleTimeout)
				}
			})
		})
		t.Run(d.name+"/slow first byte is not dead", func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("loaded"))
			sc.HeaderDelay = 9 * time.Minute // a large model loading: longer than the idle timeout
			srv.Enqueue(d.path, sc)
			synctest.Test(t, func(t *testing.T) {
				res, err := chatFor(d.new(srv, timeouts{retries: -1, memory: true}), nil)
				if err != nil || res.Message.Content != "loaded" {
					t.Fatalf("%v %+v", err, res)
				}
			})
		})
		t.Run(d.name+"/nothing at all", func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, llmtest.Scenario{HeaderDelay: time.Hour})
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				_, err := chatFor(d.new(srv, timeouts{retries: -1, memory: true}), nil)
				if llm.CodeOf(err) != llm.CodeServer || !strings.Contains(err.Error(), "sent nothing") {
					t.Fatalf("%v", err)
				}
				if waited := time.Since(start); waited != wire.DefaultFirstByteTimeout {
					t.Errorf("ended after %v, want the first-byte timeout %v", waited, wire.DefaultFirstByteTimeout)
				}
			})
		})
		t.Run(d.name+"/configured", func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("a"))
			sc.Chunks = sc.Chunks[:1]
			sc.Hang = true
			srv.Enqueue(d.path, sc)
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				_, err := chatFor(d.new(srv, timeouts{idle: 45 * time.Second, retries: -1, memory: true}), nil)
				if llm.CodeOf(err) != llm.CodeServer || time.Since(start) != 45*time.Second {
					t.Fatalf("%v after %v", err, time.Since(start))
				}
			})
		})
	}
}

func TestCancellationClosesTheConnection(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name+"/context", func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("first"))
			sc.Chunks = sc.Chunks[:1]
			sc.Hang = true
			srv.Enqueue(d.path, sc)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var got []llm.Event
			var err error
			for ev, e := range d.new(srv, noRetry).Chat(ctx, &llm.Request{}) {
				if e != nil {
					err = e
					break
				}
				got = append(got, ev)
				cancel()
			}
			if llm.CodeOf(err) != llm.CodeCancelled || !errors.Is(err, context.Canceled) || len(got) != 1 {
				t.Fatalf("%v, %d events", err, len(got))
			}
			waitFor(t, func() bool { return srv.ClientsGone() == 1 })
		})
		t.Run(d.name+"/consumer stops", func(t *testing.T) {
			srv := llmtest.New(t)
			sc := d.stream("m", llmtest.Text("a"), llmtest.Text("b"))
			sc.Hang = true
			srv.Enqueue(d.path, sc)
			n := 0
			for _, err := range d.new(srv, noRetry).Chat(context.Background(), &llm.Request{}) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				break
			}
			if n != 1 {
				t.Fatalf("%d events", n)
			}
			waitFor(t, func() bool { return srv.ClientsGone() == 1 })
		})
	}
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second) // a hang detector only
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 60s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSlowConsumerIsNotBlamedOnTheServer holds each event longer than the
// idle timeout while the server streams steadily (a synctest bubble: the
// fake's pauses and the consumer's are on the fake clock).
func TestSlowConsumerIsNotBlamedOnTheServer(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			parts := []llmtest.Part{}
			for range 5 {
				parts = append(parts, llmtest.Pause(20*time.Second), llmtest.Text("x"))
			}
			srv.Enqueue(d.path, d.stream("m", parts...))
			synctest.Test(t, func(t *testing.T) {
				p := d.new(srv, timeouts{retries: -1, memory: true})
				n := 0
				for _, err := range p.Chat(context.Background(), &llm.Request{}) {
					if err != nil {
						t.Fatalf("after %d events: %v", n, err)
					}
					n++
					time.Sleep(5 * time.Minute) // a slow terminal: longer than the idle timeout
				}
			})
		})
	}
}

// TestToolCallSilenceIsTolerated: Ollama sends nothing while it collects a
// tool call, which can take minutes on a CPU; with tools offered the idle
// allowance is the long first-byte one.
func TestToolCallSilenceIsTolerated(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Thinking("I will write the file."), llmtest.Pause(5*time.Minute), llmtest.Call("write_file", `{"path":"a"}`)))
			// Without tools the idle timeout holds.
			srv.Enqueue(d.path, d.stream("m", llmtest.Text("a"), llmtest.Pause(5*time.Minute), llmtest.Text("b")))
			synctest.Test(t, func(t *testing.T) {
				p := d.new(srv, timeouts{retries: -1, memory: true})
				res, err := chatFor(p, withTools("write_file"))
				if err != nil || len(res.Message.ToolCalls) != 1 {
					t.Fatalf("%v %+v", err, res)
				}
				if _, err := chatFor(p, nil); llm.CodeOf(err) != llm.CodeServer {
					t.Fatalf("no tools: %v", err)
				}
			})
		})
	}
}

// TestPartialAnswerKeptOnError: text the normaliser held back (a fenced
// block that might have been a call) comes out as text when the stream dies.
func TestPartialAnswerKeptOnError(t *testing.T) {
	for _, d := range wireDialects {
		t.Run(d.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue(d.path, d.stream("m", llmtest.Text("Here:\n```json\n{\"name\": \"Ada\", "), llmtest.Cut()))
			res, err := fakeChat(t, d.new(srv, noRetry), withTools("get_weather"))
			if llm.CodeOf(err) != llm.CodeBadResponse || res.Message.Content != "Here:\n```json\n{\"name\": \"Ada\", " || len(res.Message.ToolCalls) != 0 {
				t.Fatalf("%v %+v", err, res.Message)
			}
		})
	}
}

// TestLengthCutCallsAreNotGuessed: a reply cut by the length limit in the
// middle of a call's arguments does not become a call with guessed
// arguments.
func TestLengthCutCallsAreNotGuessed(t *testing.T) {
	srv := llmtest.New(t)
	p := wireDialects[1].new(srv, noRetry)
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("m", llmtest.Call("write_file", `{"path":"a.txt","content":["x"`), llmtest.Finish("length")))
	res, err := fakeChat(t, p, withTools("write_file"))
	if err != nil || len(res.Message.ToolCalls) != 1 || res.Message.ToolCalls[0].ArgsError == "" || res.Done.Reason != llm.FinishLength {
		t.Fatalf("%v %+v %+v", err, res.Message.ToolCalls, res.Done)
	}
	// A call written as text and cut off stays text.
	srv.Enqueue("/v1/chat/completions", llmtest.OpenAIStream("m", llmtest.Text("<tool_call>{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.txt\"}}"), llmtest.Finish("length")))
	res, err = fakeChat(t, p, withTools("write_file"))
	if err != nil || len(res.Message.ToolCalls) != 0 || !strings.HasPrefix(res.Message.Content, "<tool_call>") {
		t.Fatalf("%v %+v", err, res.Message)
	}
}

func TestWrongServerAnswers(t *testing.T) {
	for _, d := range wireDialects {
		srv := llmtest.New(t)
		page := llmtest.Scenario{Header: map[string][]string{"Content-Type": {"text/html"}}, Chunks: []llmtest.Chunk{{Data: "<!doctype html><html><body>Open WebUI</body></html>\n"}}}
		srv.Enqueue(d.path, page)
		_, err := fakeChat(t, d.new(srv, noRetry), nil)
		var le *llm.Error
		if !errors.As(err, &le) || !strings.Contains(le.Message, "web page") || le.Hint == "" {
			t.Errorf("%s: %v", d.name, err)
		}
	}
}
