package llm_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/responses"
)

// replay is an http.RoundTripper answering every request with the same
// body from memory, so that a benchmark measures the provider layer and not
// the network.
type replay struct {
	body  []byte
	ctype string
}

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {r.ctype}},
		Body: io.NopCloser(bytes.NewReader(r.body)), Request: req}, nil
}

// streamParts is a reply of n text chunks of a few tokens each, like a model
// streaming an answer, with some reasoning first.
func streamParts(n int) []llmtest.Part {
	words := []string{"The ", "answer ", "is ", "in ", "the ", "file ", "`main.go`", ", line ", "42", ".\n"}
	parts := []llmtest.Part{llmtest.Thinking("Let me look.")}
	for i := range n {
		parts = append(parts, llmtest.Text(words[i%len(words)]))
	}
	return parts
}

func benchStream(b *testing.B, p llm.Provider, chunks int, tools bool) {
	req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Content: "where is the answer?"}}}
	if tools {
		req.Tools = []llm.ToolSpec{{Name: "read_file"}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for ev, err := range p.Chat(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventText {
				n++
			}
		}
		if n < chunks {
			b.Fatalf("got %d text events, want %d", n, chunks)
		}
	}
	b.StopTimer()
	// Per-chunk figures: the metrics the target is stated in.
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

const benchChunks = 2000

// BenchmarkDecodeOllama measures /api/chat NDJSON decoding per chunk.
func BenchmarkDecodeOllama(b *testing.B) {
	for _, tools := range []bool{false, true} {
		name := "text"
		if tools {
			name = "text+tool-scan"
		}
		b.Run(name, func(b *testing.B) {
			sc := llmtest.OllamaStream("m", streamParts(benchChunks)...)
			p := ollama.New(ollama.Options{BaseURL: "http://bench", NumCtx: 4096,
				HTTPClient: &http.Client{Transport: &replay{body: []byte(sc.Body()), ctype: "application/x-ndjson"}}})
			benchStream(b, p, benchChunks, tools)
		})
	}
}

// BenchmarkDecodeOpenAI measures /v1/chat/completions SSE decoding per chunk.
func BenchmarkDecodeOpenAI(b *testing.B) {
	for _, tools := range []bool{false, true} {
		name := "text"
		if tools {
			name = "text+tool-scan"
		}
		b.Run(name, func(b *testing.B) {
			sc := llmtest.OpenAIStream("m", streamParts(benchChunks)...)
			p := openai.New(openai.Options{BaseURL: "http://bench/v1",
				HTTPClient: &http.Client{Transport: &replay{body: []byte(sc.Body()), ctype: "text/event-stream"}}})
			benchStream(b, p, benchChunks, tools)
		})
	}
}

// BenchmarkDecodeResponses measures /v1/responses SSE decoding per chunk
// (each event several times the size of a chat completion chunk).
func BenchmarkDecodeResponses(b *testing.B) {
	for _, tools := range []bool{false, true} {
		name := "text"
		if tools {
			name = "text+tool-scan"
		}
		b.Run(name, func(b *testing.B) {
			sc := llmtest.ResponsesStream("m", streamParts(benchChunks)...)
			p := responses.New(responses.Options{BaseURL: "http://bench/v1",
				HTTPClient: &http.Client{Transport: &replay{body: []byte(sc.Body()), ctype: "text/event-stream"}}})
			benchStream(b, p, benchChunks, tools)
		})
	}
}

// BenchmarkDecodeOpenAIToolArgs measures a tool call whose arguments stream
// in 2,000 small pieces (the assembly path).
func BenchmarkDecodeOpenAIToolArgs(b *testing.B) {
	args := `{"path":"` + strings.Repeat("a", benchChunks*4) + `"}`
	sc := llmtest.Dialect{ArgPieces: 4}.Stream("m", llmtest.Call("write_file", args))
	p := openai.New(openai.Options{BaseURL: "http://bench/v1",
		HTTPClient: &http.Client{Transport: &replay{body: []byte(sc.Body()), ctype: "text/event-stream"}}})
	req := &llm.Request{Model: "m", Tools: []llm.ToolSpec{{Name: "write_file"}}}
	pieces := len(args) / 4
	b.ReportAllocs()
	for b.Loop() {
		res, err := llm.Collect(p.Chat(context.Background(), req))
		if err != nil || len(res.Message.ToolCalls) != 1 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*pieces), "ns/chunk")
}
