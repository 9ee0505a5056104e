package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

type sse struct{ event, data, err string }

func readSSE(r io.Reader) ([]sse, error) {
	d := NewSSE(r)
	var out []sse
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, sse{string(ev.Event), string(ev.Data), string(ev.Error)})
	}
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []sse
	}{
		{"openai", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []sse{{"", `{"a":1}`, ""}, {"", "[DONE]", ""}}},
		{"no space after colon", "data:{\"a\":1}\n\n", []sse{{"", `{"a":1}`, ""}}},
		{"crlf", "data: x\r\n\r\ndata: y\r\n\r\n", []sse{{"", "x", ""}, {"", "y", ""}}},
		{"multi-line data", "data: a\ndata: b\n\n", []sse{{"", "a\nb", ""}}},
		{"comments and retry skipped", ": keep-alive\nretry: 100\ndata: x\n\n", []sse{{"", "x", ""}}},
		{"event type", "event: error\ndata: {\"message\":\"boom\"}\n\n", []sse{{"error", `{"message":"boom"}`, ""}}},
		{"llama.cpp error field", "error: {\"code\":400}\n\ndata: [DONE]\n\n", []sse{{"", "", `{"code":400}`}, {"", "[DONE]", ""}}},
		{"last event without blank line", "data: x\n\ndata: y", []sse{{"", "x", ""}, {"", "y", ""}}},
		{"blank lines only", "\n\n\n", nil},
		{"empty data line kept", "data:\ndata: x\n\n", []sse{{"", "\nx", ""}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), iotest.OneByteReader(strings.NewReader(tc.in)), iotest.DataErrReader(strings.NewReader(tc.in))} {
				got, err := readSSE(r)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tc.want) {
					t.Fatalf("got %+v, want %+v", got, tc.want)
				}
				for i := range got {
					if got[i] != tc.want[i] {
						t.Fatalf("event %d: got %+v, want %+v", i, got[i], tc.want[i])
					}
				}
			}
		})
	}
}

func TestLongLines(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	got, err := readSSE(strings.NewReader("data: " + big + "\n\n"))
	if err != nil || len(got) != 1 || got[0].data != big {
		t.Fatalf("long line: %v, %d events", err, len(got))
	}
	huge := strings.Repeat("x", MaxLine+10)
	if _, err := readSSE(strings.NewReader("data: " + huge + "\n\n")); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestNDJSON(t *testing.T) {
	in := "{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}"
	for _, r := range []io.Reader{strings.NewReader(in), iotest.OneByteReader(strings.NewReader(in))} {
		d := NewNDJSON(r)
		var got []string
		for {
			line, err := d.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(line))
		}
		if strings.Join(got, "|") != `{"a":1}|{"b":2}|{"c":3}` {
			t.Fatalf("got %q", got)
		}
	}
}

func TestParseErrorBody(t *testing.T) {
	tests := []struct{ in, msg, code string }{
		{`{"error":"model 'x' not found"}`, "model 'x' not found", ""},
		{`{"error":{"message":"Incorrect API key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, "Incorrect API key", "invalid_api_key"},
		{`{"error":{"code":400,"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}`, "the request exceeds the available context size", "exceed_context_size_error"},
		{`{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`, "This model's maximum context length is 4096 tokens.", "400"},
		{`{"detail":"Not Found"}`, "Not Found", ""},
		{`{"message":"Model unloaded"}`, "Model unloaded", ""},
		{`upstream connect error`, "upstream connect error", ""},
		{``, "", ""},
	}
	for _, tc := range tests {
		msg, code := ParseErrorBody([]byte(tc.in))
		if msg != tc.msg || code != tc.code {
			t.Errorf("ParseErrorBody(%s) = %q, %q; want %q, %q", tc.in, msg, code, tc.msg, tc.code)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"1"}}, 250 * time.Millisecond},
		{http.Header{"Retry-After": {now.Add(30 * time.Second).Format(http.TimeFormat)}}, 30 * time.Second},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := RetryAfter(tc.h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.h, got, tc.want)
		}
	}
}

func FuzzSSE(f *testing.F) {
	for _, s := range []string{"data: {\"a\":1}\n\ndata: [DONE]\n\n", "event: error\ndata: x\n\n", "error: {}\n\n", ": c\r\ndata:\r\n\r\n", "data: a\ndata: b"} {
		f.Add(s, uint8(1))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		whole, err1 := readSSE(strings.NewReader(in))
		pieces, err2 := readSSE(&chunky{s: in, n: int(step%7) + 1})
		if (err1 == nil) != (err2 == nil) || len(whole) != len(pieces) {
			t.Fatalf("chunking changed the result: %v/%v %d/%d", err1, err2, len(whole), len(pieces))
		}
		for i := range whole {
			if whole[i] != pieces[i] {
				t.Fatalf("event %d differs: %+v vs %+v", i, whole[i], pieces[i])
			}
			if strings.ContainsAny(whole[i].event, "\n") {
				t.Fatalf("event type holds a newline: %q", whole[i].event)
			}
		}
	})
}

func FuzzNDJSON(f *testing.F) {
	for _, s := range []string{"{\"a\":1}\n{\"b\":2}\n", "\r\n\r\n{}", "{\"error\":\"x\"}"} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, in string, step uint8) {
		read := func(r io.Reader) []string {
			d := NewNDJSON(r)
			var out []string
			for {
				line, err := d.Next()
				if err != nil {
					return out
				}
				if len(bytes.TrimSpace(line)) == 0 || bytes.ContainsRune(line, '\n') {
					t.Fatalf("bad line %q", line)
				}
				out = append(out, string(line))
			}
		}
		a, b := read(strings.NewReader(in)), read(&chunky{s: in, n: int(step%5) + 1})
		if strings.Join(a, "\x00") != strings.Join(b, "\x00") {
			t.Fatalf("chunking changed the lines: %q vs %q", a, b)
		}
	})
}

// chunky returns its input n bytes at a time.
type chunky struct {
	s string
	n int
}

func (c *chunky) Read(p []byte) (int, error) {
	if c.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.n)], c.s)
	c.s = c.s[n:]
	return n, nil
}

func TestLoadingServerIsWaitedFor(t *testing.T) {
	c := &Client{Target: Target{Provider: "openai"}, Retry: Retry{Max: 1, Base: time.Millisecond}}
	attempts := 0
	err := c.Do(context.Background(), func() (bool, error) {
		attempts++
		if attempts < 6 {
			return false, c.FromStatus("chat", 503, http.Header{}, []byte(`{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`))
		}
		return false, nil
	})
	if err != nil || attempts != 6 {
		t.Fatalf("%v after %d attempts: a server loading a model must be waited for", err, attempts)
	}
	attempts = 0
	err = c.Do(context.Background(), func() (bool, error) {
		attempts++
		return false, c.FromStatus("chat", 500, http.Header{}, []byte(`{"error":"boom"}`))
	})
	if err == nil || attempts != 2 {
		t.Fatalf("other failures: %v after %d attempts, want Max+1", err, attempts)
	}
}

func TestHints(t *testing.T) {
	tg := Target{Provider: "ollama", BaseURL: "http://x", WrongServerHint: "check the address"}
	if e := tg.Malformed("chat", []byte("<!doctype html><html>"), errors.New("bad")); !strings.Contains(e.Message, "web page") || e.Hint != "check the address" {
		t.Errorf("html: %+v", e)
	}
	if e := tg.FromStatus("chat", 404, nil, []byte("404 page not found")); e.Hint != "check the address" {
		t.Errorf("404: %+v", e)
	}
	if e := tg.FromStatus("chat", 500, nil, []byte(`{"error":"llama runner process has terminated: cudaMalloc failed: out of memory"}`)); !strings.Contains(e.Hint, "smaller model") {
		t.Errorf("oom: %+v", e)
	}
	if e := tg.FromStatus("chat", 400, nil, []byte(`{"error":"registry.ollama.ai/library/gemma:2b does not support tools"}`)); !strings.Contains(e.Hint, "cannot call tools") {
		t.Errorf("tools: %+v", e)
	}
}

// A prompt over the window is told how to fix it on its own server.
func TestContextLengthHints(t *testing.T) {
	for _, tc := range []struct {
		provider, body, want string
	}{
		{"ollama", `{"error":"the input length exceeds the context length"}`, "num_ctx"},
		{"openai", `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","code":400}`, "--max-model-len"},
	} {
		tg := Target{Provider: tc.provider}
		e := tg.FromStatus("chat", 400, nil, []byte(tc.body))
		if e.Code != llm.CodeContextLength || !strings.Contains(e.Hint, tc.want) || !strings.Contains(e.Hint, "/compress") {
			t.Errorf("%s over the window: %+v", tc.provider, e)
		}
		if e := tg.FromStream("chat", "the input length exceeds the context length", ""); e.Code != llm.CodeContextLength || !strings.Contains(e.Hint, tc.want) {
			t.Errorf("%s over the window, in the stream: %+v", tc.provider, e)
		}
	}
}

func TestDeadlineIsNotCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	<-ctx.Done()
	e := Target{Provider: "ollama"}.FromTransport(ctx, "chat", ctx.Err())
	if e.Code == llm.CodeCancelled || !errors.Is(e, context.DeadlineExceeded) {
		t.Errorf("%+v", e)
	}
}
