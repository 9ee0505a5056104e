// Package openaigo compares Hearth's OpenAI-compatible stream decoding with
// the official SDK's (github.com/openai/openai-go/v3) on the same bytes, in
// one run. It is a module of its own so that Hearth does not depend on the
// SDK. Run: cd bench/openaigo && go test -bench . -benchmem
package openaigo

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	hopenai "github.com/hearth-agent/hearth/llm/openai"
)

const chunks = 2000

type replay struct{ body []byte }

func (r *replay) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(r.body)), Request: req}, nil
}

func body() []byte {
	parts := []llmtest.Part{llmtest.Thinking("Let me look.")}
	words := []string{"The ", "answer ", "is ", "in ", "the ", "file ", "`main.go`", ", line ", "42", ".\n"}
	for i := range chunks {
		parts = append(parts, llmtest.Text(words[i%len(words)]))
	}
	return []byte(llmtest.OpenAIStream("m", parts...).Body())
}

func perChunk(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunks), "ns/chunk")
}

func BenchmarkHearth(b *testing.B) {
	p := hopenai.New(hopenai.Options{BaseURL: "http://bench/v1", HTTPClient: &http.Client{Transport: &replay{body()}}})
	req := &llm.Request{Model: "m"}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for ev, err := range p.Chat(context.Background(), req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventText {
				n++
			}
		}
		if n != chunks {
			b.Fatalf("%d chunks", n)
		}
	}
	perChunk(b)
}

func BenchmarkOpenAIGo(b *testing.B) {
	c := openai.NewClient(option.WithBaseURL("http://bench/v1"), option.WithAPIKey("x"),
		option.WithHTTPClient(&http.Client{Transport: &replay{body()}}))
	params := openai.ChatCompletionNewParams{Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
	b.ReportAllocs()
	for b.Loop() {
		s := c.Chat.Completions.NewStreaming(context.Background(), params)
		n := 0
		for s.Next() {
			ch := s.Current()
			if len(ch.Choices) > 0 && ch.Choices[0].Delta.Content != "" {
				n++
			}
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
		if n != chunks {
			b.Fatalf("%d chunks", n)
		}
	}
	perChunk(b)
}
