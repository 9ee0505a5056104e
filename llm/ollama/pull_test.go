package ollama

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// pullStream is an /api/pull answer as Ollama streams it.
func pullStream(lines ...string) llmtest.Scenario { return llmtest.NDJSON(lines...) }

// layer is the progress of one layer as Ollama reports it: the first line
// has no "completed" (Ollama omits a zero), then the bytes as they arrive.
func layer(digest string, total int64, parts int) []string {
	short := strings.TrimPrefix(digest, "sha256:")[:12]
	out := []string{fmt.Sprintf(`{"status":"pulling %s","digest":"%s","total":%d}`, short, digest, total)}
	for i := 1; i <= parts; i++ {
		out = append(out, fmt.Sprintf(`{"status":"pulling %s","digest":"%s","total":%d,"completed":%d}`, short, digest, total, total*int64(i)/int64(parts)))
	}
	return out
}

const (
	weights  = "sha256:163553aea1b1de62de7c5eb2ef5afb756b4b3133308d9ae7e42e951d8d696ef5"
	template = "sha256:ae370d884f108d16e7cc8fd5259ebc5773a0afa6e078b11f4ed7e39a27e0dfc4"
)

func goodPull() llmtest.Scenario {
	lines := []string{`{"status":"pulling manifest"}`}
	lines = append(lines, layer(weights, 2497279808, 4)...)
	lines = append(lines, layer(template, 1723, 1)...)
	lines = append(lines, `{"status":"verifying sha256 digest"}`, `{"status":"writing manifest"}`, `{"status":"success"}`)
	return pullStream(lines...)
}

func TestPull(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/pull", goodPull())
	p := New(Options{BaseURL: srv.URL})
	var got []PullProgress
	if err := p.Pull(context.Background(), "qwen3:4b", func(pp PullProgress) { got = append(got, pp) }); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	srv.RequestsTo("/api/pull")[0].JSON(t, &body)
	if body["model"] != "qwen3:4b" || body["stream"] != true {
		t.Errorf("request: %v", body)
	}
	if len(got) != 11 || got[0].Status != "pulling manifest" || got[len(got)-1].Status != "success" {
		t.Fatalf("progress: %+v", got)
	}
	if l := got[4]; l.Status != "pulling 163553aea1b1" || l.Digest != weights || l.Total != 2497279808 || l.Completed != 2497279808*3/4 {
		t.Errorf("layer progress: %+v", l)
	}
}

func TestPullErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		sc       llmtest.Scenario
		code     llm.Code
		message  string
		hint     string
		progress int
	}{
		{"unknown model", pullStream(`{"status":"pulling manifest"}`, `{"error":"pull model manifest: file does not exist"}`),
			llm.CodeModelNotFound, "file does not exist", "ollama.com/library", 1},
		{"invalid name", llmtest.OllamaError(400, "invalid model name"), llm.CodeModelNotFound, "invalid model name", "ollama.com/library", 0},
		{"registry unreachable midway", pullStream(append(append([]string{`{"status":"pulling manifest"}`}, layer(weights, 2497279808, 2)[:2]...),
			`{"error":"max retries exceeded: Get \"https://dd20bb891979d25aebc8bec07b2b3bbc.r2.cloudflarestorage.com/ollama/docker/registry/v2/blobs/sha256/16/163553aea1b1\": read tcp 192.168.1.20:51234->172.66.0.235:443: read: connection reset by peer"}`)...),
			llm.CodeServer, "connection reset", "could not reach its registry", 3},
		{"no space", pullStream(`{"status":"pulling manifest"}`, `{"error":"write /usr/share/ollama/.ollama/models/blobs/sha256-163553aea1b1-partial-3: no space left on device"}`),
			llm.CodeServer, "no space left", "disk", 1},
		{"stream cut before success", pullStream(append([]string{`{"status":"pulling manifest"}`}, layer(weights, 100, 1)...)...),
			llm.CodeBadResponse, "before it said it was done", "resumes", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(t)
			srv.Enqueue("/api/pull", tc.sc)
			n := 0
			err := New(Options{BaseURL: srv.URL}).Pull(ctx, "qwen3:4b", func(PullProgress) { n++ })
			le, ok := err.(*llm.Error)
			if !ok || le.Code != tc.code || !strings.Contains(le.Message, tc.message) || !strings.Contains(le.Hint, tc.hint) {
				t.Fatalf("got %#v", err)
			}
			if n != tc.progress {
				t.Errorf("%d progress calls, want %d", n, tc.progress)
			}
			// A pull that has begun is not started again behind the
			// user's back.
			if r := len(srv.RequestsTo("/api/pull")); r != 1 {
				t.Errorf("%d pull requests", r)
			}
		})
	}

	// Ollama not running keeps its own hint, not the registry's.
	err := New(Options{BaseURL: "http://127.0.0.1:1"}).Pull(ctx, "qwen3:4b", nil)
	if le, ok := err.(*llm.Error); !ok || le.Code != llm.CodeUnreachable || !strings.Contains(le.Hint, "ollama serve") {
		t.Errorf("unreachable: %#v", err)
	}
}

func TestPullCancelled(t *testing.T) {
	srv := llmtest.New(t)
	sc := pullStream(append([]string{`{"status":"pulling manifest"}`}, layer(weights, 2497279808, 2)[:2]...)...)
	sc.Hang = true // a download that goes on
	srv.Enqueue("/api/pull", sc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := New(Options{BaseURL: srv.URL}).Pull(ctx, "qwen3:4b", func(pp PullProgress) {
		if pp.Completed > 0 {
			cancel() // Ctrl-C during the download
		}
	})
	if llm.CodeOf(err) != llm.CodeCancelled {
		t.Fatalf("got %v", err)
	}
	// The server sees the client go: Ollama then stops downloading.
	for deadline := time.Now().Add(30 * time.Second); srv.ClientsGone() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the connection was not closed")
		}
	}
}
