package agent

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/fs"
)

// peer returns the real Ollama of ../shared/ollama-peer, or skips.
func peer(t *testing.T, model string) string {
	t.Helper()
	url := os.Getenv("HEARTH_OLLAMA_URL")
	if url == "" {
		t.Skip("set HEARTH_OLLAMA_URL (scripts/test.sh starts ../shared/ollama-peer and sets it) to run against a real Ollama")
	}
	resp, err := http.Post(url+"/api/show", "application/json", strings.NewReader(`{"model":"`+model+`"}`))
	if err != nil {
		t.Fatalf("HEARTH_OLLAMA_URL=%s does not answer: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Skipf("model %s missing on the peer: run scripts/peer-models.sh", model)
	}
	return url
}

func TestIntegrationRealToolCallFedBack(t *testing.T) {
	url := peer(t, "tiny-read")
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the secret word is kettle\n"), 0o644)
	ws, _ := sandbox.New(root)
	// The tiny model's tokenizer spends a token per byte: offer only the
	// tool it uses, so the prompt fits its 2,048-token window.
	all, _ := tool.NewRegistry(fs.Tools(ws, tool.NewSeen(), fs.Limits{})...)
	reg, err := all.Select(tool.Profile{Name: "read", Tools: []string{"read_file"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []llm.Provider{
		ollama.New(ollama.Options{BaseURL: url, MaxRetries: -1}),
		openai.New(openai.Options{BaseURL: url + "/v1", MaxRetries: -1}),
	} {
		t.Run(p.Kind(), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			a := &Agent{Provider: p, Model: "tiny-read", Tools: reg, MaxTurns: 20}
			rec := &recorder{}
			res := a.Run(ctx, user("what is the secret word?"), rec.emit)
			// The scripted model reads notes.txt every turn: the loop runs
			// the real tool, sends the result back, and the repeated-call
			// cut-off ends it cleanly.
			if res.Reason != DoneError || !strings.Contains(res.Err.Error(), "same call 6 times") {
				t.Fatalf("%+v", res)
			}
			results := rec.results()
			if len(results) != 6 || !results[0].OK || !strings.Contains(results[0].Output, "kettle") {
				t.Fatalf("results: %+v", results)
			}
			var toolMsgs int
			for _, m := range res.Messages {
				if m.Role == llm.RoleTool && strings.Contains(m.Content, "kettle") && m.ToolCallID != "" && m.ToolName == "read_file" {
					toolMsgs++
				}
			}
			if toolMsgs != 6 {
				t.Errorf("%d tool results kept in the history", toolMsgs)
			}
			if res.Usage.InputTokens == 0 {
				t.Error("no usage from the real server")
			}
		})
	}
}

func TestIntegrationUnknownToolAndTurnLimit(t *testing.T) {
	url := peer(t, "tiny-tools")
	ws, _ := sandbox.New(t.TempDir())
	all, _ := tool.NewRegistry(fs.Tools(ws, tool.NewSeen(), fs.Limits{})...)
	reg, _ := all.Select(tool.Profile{Name: "read", Tools: []string{"read_file", "glob"}})
	p := ollama.New(ollama.Options{BaseURL: url, MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// tiny-tools always calls get_weather, which is not offered. Ollama
	// 0.17's own parser swallows a call to a tool that was not offered: the
	// reply arrives empty (content "", finish stop), so Hearth never sees
	// the call. The turn must still end cleanly. (Unknown tools that do
	// reach Hearth are answered with an error result: TestBadCallsGoBack…)
	a := &Agent{Provider: p, Model: "tiny-tools", Tools: reg}
	rec := &recorder{}
	res := a.Run(ctx, user("weather?"), rec.emit)
	if res.Reason != DoneStop || res.Text != "" || len(res.Messages) != 1 || len(rec.results()) != 0 {
		t.Fatalf("%+v", res)
	}

	// With get_weather offered and a turn limit below the cut-off.
	weather := tool.MustFunc("get_weather", "weather", tool.ReadOnly, func(ctx context.Context, a struct {
		City string `json:"city"`
	}) (string, error) {
		return "18C in " + a.City, nil
	})
	reg2, _ := tool.NewRegistry(weather)
	a = &Agent{Provider: p, Model: "tiny-tools", Tools: reg2, MaxTurns: 2}
	rec = &recorder{}
	res = a.Run(ctx, user("weather?"), rec.emit)
	if res.Reason != DoneMaxTurns || len(rec.results()) != 2 || rec.results()[0].Output != "18C in Paris" {
		t.Fatalf("%+v %+v", res, rec.results())
	}
}
