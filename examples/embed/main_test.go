package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestExampleEndToEnd runs the example against the fake model server: the
// model reads the config and the orders, asks to turn a flag on, the user
// answers on standard input, and the model answers.
func TestExampleEndToEnd(t *testing.T) {
	tests := []struct {
		name     string
		stdin    string
		args     []string
		wantFlag bool
	}{
		{"the user approves", "y\n", nil, true},
		{"the user refuses", "n\n", nil, false},
		{"-yes", "", []string{"-yes"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := llmtest.New(t)
			fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
			fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.Thinking("Look first."), llmtest.Call("get_app_config", `{}`), llmtest.Call("query_database", `{"table":"orders","status":"pending"}`)),
				llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"fast_checkout","on":true}`)),
				llmtest.OllamaStream("m", llmtest.Text("Two orders were pending; fast_checkout should help."), llmtest.Usage(500, 12)))
			var out, errOut bytes.Buffer
			args := append([]string{"-base-url", fake.URL, "-model", "m"}, tt.args...)
			code := run(context.Background(), append(args, "why are orders pending?"), strings.NewReader(tt.stdin), &out, &errOut)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
			}
			if got := strings.TrimSpace(out.String()); got != "Two orders were pending; fast_checkout should help." {
				t.Errorf("stdout %q", got)
			}
			if !strings.Contains(errOut.String(), "[get_app_config {}]") || !strings.Contains(errOut.String(), "fast_checkout="+map[bool]string{true: "true", false: "false"}[tt.wantFlag]) {
				t.Errorf("stderr:\n%s", errOut.String())
			}
			// The model was sent the page as context, and the rows.
			var sent struct{ Messages []llm.Message }
			reqs := fake.RequestsTo("/api/chat")
			reqs[1].JSON(t, &sent)
			all := ""
			for _, m := range sent.Messages {
				all += m.Content + "\n"
			}
			if !strings.Contains(all, "/admin/orders") || !strings.Contains(all, "1042,pending,5.50") {
				t.Errorf("the model was sent:\n%s", all)
			}
		})
	}
}
