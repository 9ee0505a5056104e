package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// A model whose chat template opens <think> in the prompt, served by Ollama
// without knowing it as a thinking model: its reasoning comes as content,
// ended by a lone </think> (cut here across two chunks).
const (
	loneReasoning = "The user asks what is in a.txt.\nI will answer.\n"
	loneAnswer    = "It says hello."
)

func loneReply() llmtest.Scenario {
	return llmtest.OllamaStream("r1",
		llmtest.Text("The user asks"), llmtest.Text(" what is in a.txt.\n"), llmtest.Text("I will answer.\n</th"),
		llmtest.Text("ink>\n\n"), llmtest.Text("It says "), llmtest.Text("hello."), llmtest.Usage(1500, 30))
}

func newLoneEnv(t *testing.T) *runEnv {
	r := newRunEnv(t)
	r.srv.AddModel(llmtest.Model{Name: "r1", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	// Any other model call (a title) gets a plain answer.
	r.srv.Always("/api/chat", llmtest.OllamaStream("r1", llmtest.Text("A title")))
	return r
}

// TestRunLoneCloseFinalState: each output format ends with the answer only;
// stream-json carries thinking_reclassified just after the text it takes
// back; the stored session holds the reasoning as thinking.
func TestRunLoneCloseFinalState(t *testing.T) {
	r := newLoneEnv(t)
	r.srv.Enqueue("/api/chat", loneReply())
	code, out, errOut := r.run(t, "run", "-m", "r1", "--context", "s-lone1", "what is in a.txt?")
	if code != 0 || out != loneAnswer+"\n" {
		t.Errorf("text: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}

	code, out, _ = r.run(t, "sessions", "export", "s-lone1")
	var exp struct {
		Messages []struct{ Role, Content, Thinking string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Messages) != 2 {
		t.Fatalf("sessions export: %d %q", code, out)
	}
	if m := exp.Messages[1]; m.Role != "assistant" || m.Content != loneAnswer || m.Thinking != loneReasoning {
		t.Errorf("stored reply: %+v", m)
	}

	r.srv.Enqueue("/api/chat", loneReply())
	code, out, _ = r.run(t, "run", "-m", "r1", "-o", "json", "what is in a.txt?")
	var j jsonResult
	if err := json.Unmarshal([]byte(out), &j); code != 0 || err != nil || j.Response != loneAnswer {
		t.Errorf("json: exit %d %v\n%s", code, err, out)
	}

	r.srv.Enqueue("/api/chat", loneReply())
	code, out, _ = r.run(t, "run", "-m", "r1", "-o", "stream-json", "what is in a.txt?")
	if code != 0 {
		t.Fatalf("stream-json: exit %d", code)
	}
	// A consumer that follows the contract: the answer it shows, the
	// reasoning it shows.
	var answer, reasoning strings.Builder
	var types []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev struct{ Type, Text string }
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		if len(types) == 0 || types[len(types)-1] != ev.Type {
			types = append(types, ev.Type)
		}
		switch ev.Type {
		case "text_delta":
			answer.WriteString(ev.Text)
		case "thinking_delta":
			reasoning.WriteString(ev.Text)
		case "thinking_reclassified":
			if !strings.HasSuffix(answer.String(), ev.Text) {
				t.Errorf("reclassified %q is not what was shown: %q", ev.Text, answer.String())
			}
			shown := answer.String()
			answer.Reset()
			answer.WriteString(strings.TrimSuffix(shown, ev.Text))
			reasoning.WriteString(ev.Text)
		case "done":
			if ev.Text != loneAnswer {
				t.Errorf("done.text %q", ev.Text)
			}
		}
	}
	if want := "session text_delta thinking_reclassified thinking_end text_delta usage done"; strings.Join(types, " ") != want {
		t.Errorf("events:\n got %s\nwant %s", strings.Join(types, " "), want)
	}
	if answer.String() != loneAnswer || reasoning.String() != loneReasoning {
		t.Errorf("a consumer shows the answer %q and the reasoning %q", answer.String(), reasoning.String())
	}
}

// TestRunLoneCloseVerbose: the activity view shows the reasoning as
// reasoning, not as what the model said; stdout has the answer alone.
func TestRunLoneCloseVerbose(t *testing.T) {
	r := newLoneEnv(t)
	r.srv.Enqueue("/api/chat", loneReply())
	code, out, errOut := r.run(t, "run", "-m", "r1", "--verbose", "what is in a.txt?")
	if code != 0 || out != loneAnswer+"\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "[thinking] The user asks what is in a.txt.\n           I will answer.\n") {
		t.Errorf("stderr lacks the reasoning:\n%s", errOut)
	}
	if strings.Contains(errOut, "[model]") || strings.Contains(errOut, "</think>") || strings.Contains(errOut, loneAnswer) {
		t.Errorf("stderr shows the reasoning as said, or the answer:\n%s", errOut)
	}
}

// TestRunTemplateOpensThink: the model's template (from /api/show) opens
// the block, so the reasoning streams as reasoning from the start.
func TestRunTemplateOpensThink(t *testing.T) {
	r := newLoneEnv(t)
	r.srv.AddModel(llmtest.Model{Name: "r1-tmpl", Capabilities: []string{"completion", "tools"}, ContextLength: 32768,
		Template: "{{- range .Messages }}<｜{{ .Role }}｜>{{ .Content }}{{ end }}<｜Assistant｜><think>\n"})
	r.srv.Enqueue("/api/chat", loneReply())
	code, out, _ := r.run(t, "run", "-m", "r1-tmpl", "-o", "stream-json", "what is in a.txt?")
	if code != 0 || strings.Contains(out, "thinking_reclassified") || strings.Contains(out, `"type":"text_delta","text":"The user`) {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, `{"type":"thinking_start"}`+"\n"+`{"type":"thinking_delta","text":"The user asks"}`) ||
		!strings.Contains(out, `{"type":"done","reason":"stop","text":"It says hello."}`) {
		t.Errorf("stream:\n%s", out)
	}
}
