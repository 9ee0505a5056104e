package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestRequestsKeepTheCachedPrefix runs a session over three `hearth run
// --context` processes (tool calls, a failing one with "&&" and "<" in its
// arguments, reasoning) and checks
// that every request begins with the one before: the same system prompt,
// tools and options, and the earlier messages rendered the same. Ollama and
// llama.cpp reuse their cache of the previous prompt only as far as the new
// one starts with the same tokens: a change here (the tools' order, how a
// stored message is sent back, a fact that changes between runs put before
// the history) would make a local model evaluate the whole conversation
// again on every turn. docs/benchmarks.md has what that costs on a real
// Ollama.
func TestRequestsKeepTheCachedPrefix(t *testing.T) {
	for _, d := range []struct {
		name, path string
		flags      func(e *e2e) []string
		stream     func(parts ...llmtest.Part) llmtest.Scenario
	}{
		{"ollama", "/api/chat", func(*e2e) []string { return nil },
			func(p ...llmtest.Part) llmtest.Scenario { return llmtest.OllamaStream("m", p...) }},
		{"openai", "/v1/chat/completions", func(e *e2e) []string { return []string{"--provider", "openai", "--base-url", e.srv.OpenAIURL()} },
			func(p ...llmtest.Part) llmtest.Scenario { return llmtest.OpenAIStream("m", p...) }},
	} {
		t.Run(d.name, func(t *testing.T) {
			e := newE2E(t)
			os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("alpha\n"), 0o644)
			os.WriteFile(filepath.Join(e.ws, "b.txt"), []byte("beta\n"), 0o644)
			e.srv.Enqueue(d.path,
				d.stream(llmtest.Thinking("I should read it."), llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(1500, 9)),
				d.stream(llmtest.Text("It says alpha."), llmtest.Usage(1530, 4)),
				d.stream(llmtest.Call("read_file", `{"file_path":"missing && <x>.txt"}`), llmtest.Usage(1560, 9)),
				d.stream(llmtest.Call("read_file", `{"file_path":"b.txt", "limit": 5}`), llmtest.Usage(1590, 9)),
				d.stream(llmtest.Thinking("Both read."), llmtest.Text("It says beta."), llmtest.Usage(1620, 4)),
				d.stream(llmtest.Text("You are welcome."), llmtest.Usage(1650, 4)))
			for i, prompt := range []string{"what does a.txt say?", "and b.txt?", "thanks"} {
				args := append(d.flags(e), "run", "--context", "s1", prompt)
				if code, out, errOut := e.run("", args...); code != 0 {
					t.Fatalf("run %d: exit %d\n%s\n%s", i+1, code, out, errOut)
				}
			}
			reqs := e.srv.RequestsTo(d.path)
			if len(reqs) != 6 {
				t.Fatalf("%d requests, want 6", len(reqs))
			}
			var prev map[string]any
			for i, r := range reqs {
				var body map[string]any
				if err := json.Unmarshal(r.Body, &body); err != nil {
					t.Fatal(err)
				}
				if prev != nil {
					if diff := prefixDiff(prev, body); diff != "" {
						t.Errorf("request %d does not begin with request %d: %s\nrequest %d: %s\nrequest %d: %s", i+1, i, diff, i, reqs[i-1].Body, i+1, r.Body)
					}
				}
				prev = body
			}
		})
	}
}

// prefixDiff says how next fails to begin with prev: every field but the
// messages the same, and prev's messages the first of next's.
func prefixDiff(prev, next map[string]any) string {
	for k, v := range prev {
		if k != "messages" && !reflect.DeepEqual(v, next[k]) {
			return fmt.Sprintf("%q changed: %v → %v", k, v, next[k])
		}
	}
	for k := range next {
		if _, ok := prev[k]; !ok && k != "messages" {
			return fmt.Sprintf("%q added", k)
		}
	}
	pm, _ := prev["messages"].([]any)
	nm, _ := next["messages"].([]any)
	if len(nm) <= len(pm) {
		return fmt.Sprintf("%d messages after %d", len(nm), len(pm))
	}
	for i := range pm {
		if !reflect.DeepEqual(pm[i], nm[i]) {
			a, _ := json.Marshal(pm[i])
			b, _ := json.Marshal(nm[i])
			return fmt.Sprintf("message %d was %s, is %s", i, a, b)
		}
	}
	return ""
}
