package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// chatBody is what the tests read of a chat request, in either dialect.
type chatBody struct {
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	Stop    []string `json:"stop"`
	Options struct {
		Stop []string `json:"stop"`
	} `json:"options"`
}

func readChat(t *testing.T, body []byte) chatBody {
	t.Helper()
	var c chatBody
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("a chat request that is not JSON: %v\n%s", err, body)
	}
	return c
}

var toolResponse = regexp.MustCompile(`(?s)<tool_response name="read_file">\n(.*?)\n</tool_response>`)

// promptedModel answers as a model without tool calling does when Hearth
// drives it by the prompted protocol: a request that carries tools is
// refused, as Ollama refuses it for such a model (refuse); otherwise it
// writes its call to read_file as text, and once the result is in the
// conversation it answers with what the file says.
func promptedModel(stream func(string, ...llmtest.Part) llmtest.Scenario, refuse llmtest.Scenario) func(llmtest.Request) (llmtest.Scenario, bool) {
	return func(r llmtest.Request) (llmtest.Scenario, bool) {
		var c chatBody
		if json.Unmarshal(r.Body, &c) != nil || len(c.Messages) == 0 {
			return llmtest.Scenario{}, false
		}
		if len(c.Tools) > 0 {
			return refuse, true
		}
		last := c.Messages[len(c.Messages)-1].Content
		if m := toolResponse.FindStringSubmatch(last); m != nil {
			return stream("np", llmtest.Thinking("The file answers it."), llmtest.Text("The notes say: "), llmtest.Text(strings.TrimSpace(m[1]))), true
		}
		return stream("np", llmtest.Text("I will read it.\n<tool_call>"), llmtest.Text(`{"name": "read_file", "arguments": {"file_path": "notes.txt"}}`), llmtest.Text("</tool_call>")), true
	}
}

// TestPromptedProtocol: a model that cannot call tools is driven by the
// prompted protocol with no setting: on Ollama's native API because
// /api/show says it has no tools capability (no request is refused
// first); on the OpenAI dialect, whose server says nothing, after the
// server refuses the tools once, in the same turn, and from then on
// without asking (remembered in the data directory). The tools are
// described in the system prompt, the call is read from the text, the
// result goes back in the protocol's form, and the answer holds what the
// file says.
func TestPromptedProtocol(t *testing.T) {
	for _, d := range []struct {
		name, path string
		flags      []string
		stream     func(string, ...llmtest.Part) llmtest.Scenario
		refuse     llmtest.Scenario
		refusals   int // requests refused in the first run
	}{
		{"ollama", "/api/chat", nil, llmtest.OllamaStream,
			llmtest.OllamaError(400, `registry.ollama.ai/library/np:latest does not support tools`), 0},
		{"openai", "/v1/chat/completions", []string{"--provider", "openai"}, llmtest.OpenAIStream,
			llmtest.OpenAIError(400, "registry.ollama.ai/library/np:latest does not support tools", "api_error", ""), 1},
	} {
		t.Run(d.name, func(t *testing.T) {
			e := newE2E(t)
			e.srv.AddModel(llmtest.Model{Name: "np", Capabilities: []string{"completion"}, ContextLength: 32768})
			e.srv.Respond(d.path, promptedModel(d.stream, d.refuse))
			os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("the secret word is kettle\n"), 0o644)
			flags := append(dialectArgs(d.flags, e), "-m", "np", "run", "what is the secret word?")
			code, out, errOut := e.run("", flags...)
			if code != 0 || strings.TrimSpace(out) != "The notes say: the secret word is kettle" {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			reqs := e.srv.RequestsTo(d.path)
			if len(reqs) != 2+d.refusals {
				t.Fatalf("%d chat requests, want %d", len(reqs), 2+d.refusals)
			}
			for i, r := range reqs {
				c := readChat(t, r.Body)
				if i < d.refusals {
					if len(c.Tools) == 0 {
						t.Errorf("request %d: the first request of an unknown model goes native", i)
					}
					continue
				}
				// (No stop sequence: a reply that starts to write a
				// result is cut by Hearth, not by the server.)
				stop := append(c.Stop, c.Options.Stop...)
				if len(c.Tools) != 0 || c.Messages[0].Role != "system" || !strings.Contains(c.Messages[0].Content, "<tool_call>") ||
					!strings.Contains(c.Messages[0].Content, "read_file") || len(stop) != 0 {
					t.Errorf("request %d is not prompted: %d tools, stop %v, system prompt:\n%.400s", i, len(c.Tools), stop, c.Messages[0].Content)
				}
			}
			// The second request has the call as the model wrote it and
			// the result in the protocol's form, as a user message.
			c := readChat(t, reqs[len(reqs)-1].Body)
			n := len(c.Messages)
			if c.Messages[n-2].Role != "assistant" || !strings.Contains(c.Messages[n-2].Content, `<tool_call>{"name": "read_file", "arguments": {"file_path":"notes.txt"}}</tool_call>`) ||
				c.Messages[n-1].Role != "user" || !strings.Contains(c.Messages[n-1].Content, "<tool_response name=\"read_file\">\nthe secret word is kettle") {
				t.Errorf("the conversation sent back:\n%+v", c.Messages[n-2:])
			}

			// A second run asks no question the first answered: the
			// refusal is remembered.
			before := len(reqs)
			code, out, errOut = e.run("", dialectArgs(d.flags, e, "-m", "np", "run", "and again?")...)
			if code != 0 || !strings.Contains(out, "kettle") {
				t.Fatalf("second run: exit %d\n%s\n%s", code, out, errOut)
			}
			for i, r := range e.srv.RequestsTo(d.path)[before:] {
				if c := readChat(t, r.Body); len(c.Tools) != 0 {
					t.Errorf("second run, request %d carries tools: the refusal was not remembered", i)
				}
			}
			if d.refusals > 0 {
				mem, err := os.ReadFile(filepath.Join(e.home, "tool-modes.json"))
				if err != nil || !strings.Contains(string(mem), `"np"`) {
					t.Errorf("the refusal is not in the data directory: %v %s", err, mem)
				}
			}
		})
	}
}

// dialectArgs joins the dialect's flags (pointed at the fake) and the rest.
func dialectArgs(dialect []string, e *e2e, rest ...string) []string {
	out := append([]string(nil), dialect...)
	if len(dialect) > 0 {
		out = append(out, "--base-url", e.srv.OpenAIURL())
	}
	return append(out, rest...)
}

// TestToolModeFlag: --tool-mode native sends tools whatever the model
// says; --tool-mode prompted describes them for a model that calls tools;
// a bad value is a usage error that says the three values.
func TestToolModeFlag(t *testing.T) {
	e := newE2E(t)
	e.srv.AddModel(llmtest.Model{Name: "np", Capabilities: []string{"completion"}, ContextLength: 32768})
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("np", llmtest.Text("native")))
	if code, out, errOut := e.run("", "-m", "np", "--tool-mode", "native", "run", "hi"); code != 0 || !strings.Contains(out, "native") {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	if c := readChat(t, e.srv.RequestsTo("/api/chat")[0].Body); len(c.Tools) == 0 {
		t.Error("--tool-mode native sent no tools")
	}
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("prompted")))
	if code, out, errOut := e.run("", "--tool-mode", "prompted", "run", "hi"); code != 0 || !strings.Contains(out, "prompted") {
		t.Fatalf("exit %d %s %s", code, out, errOut)
	}
	if c := readChat(t, e.srv.RequestsTo("/api/chat")[1].Body); len(c.Tools) != 0 || !strings.Contains(c.Messages[0].Content, "<tool_call>") {
		t.Errorf("--tool-mode prompted: %d tools", len(c.Tools))
	}
	code, _, errOut := e.run("", "--tool-mode", "text", "run", "hi")
	if code != 2 || !strings.Contains(errOut, `unknown tool mode "text": use auto, native or prompted`) {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// recordingProxy stands between hearth and a real Ollama and keeps each
// chat request's body and the status it got.
type recordingProxy struct {
	*httptest.Server
	mu   sync.Mutex
	seen []proxied
}

type proxied struct {
	path   string
	body   []byte
	status int
}

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if !strings.HasSuffix(pr.Out.URL.Path, "/chat") && !strings.HasSuffix(pr.Out.URL.Path, "/completions") {
				return
			}
			body, _ := io.ReadAll(pr.Out.Body)
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			p.mu.Lock()
			p.seen = append(p.seen, proxied{path: pr.Out.URL.Path, body: body})
			p.mu.Unlock()
		},
		ModifyResponse: func(r *http.Response) error {
			if strings.HasSuffix(r.Request.URL.Path, "/chat") || strings.HasSuffix(r.Request.URL.Path, "/completions") {
				p.mu.Lock()
				p.seen[len(p.seen)-1].status = r.StatusCode
				p.mu.Unlock()
			}
			return nil
		},
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func (p *recordingProxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.seen...)
}

// TestPeerPromptedProtocol runs the real binary against a real Ollama and
// a scripted model without tool support (PEER_TOOLS=0: /api/show says
// "completion" only, and Ollama refuses a request with tools), which
// writes its call to read_file as text in Hearth's protocol. On the
// native API Hearth goes prompted from the capabilities, with no refused
// request; on /v1 the first request is refused, and the turn goes on
// prompted. The file is read, its content goes back to the model (which,
// scripted, calls again: --max-turns 2 ends the turn there). A model
// whose calls are not JSON is corrected, then stopped at the limit with a
// clear error. (A scripted peer model says the same thing every time, so
// it cannot answer with what it read; TestPromptedProtocol, on the fake,
// covers the answer.)
func TestPeerPromptedProtocol(t *testing.T) {
	target := os.Getenv("HEARTH_OLLAMA_URL")
	if target == "" {
		t.Skip("set HEARTH_OLLAMA_URL (scripts/test.sh starts ../shared/ollama-peer and sets it) to run against a real Ollama")
	}
	for _, m := range []string{"tiny-prompted", "tiny-garbled"} {
		resp, err := http.Post(target+"/api/show", "application/json", strings.NewReader(`{"model":"`+m+`"}`))
		if err != nil {
			t.Fatalf("HEARTH_OLLAMA_URL=%s does not answer: %v", target, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the peer has no model %s: run scripts/peer-models.sh", m)
		}
	}
	e := newE2E(t)
	os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("the secret word is kettle\n"), 0o644)
	run := func(proxy *recordingProxy, args ...string) (int, []map[string]any) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := e.cmd(ctx, "", args...)
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+proxy.URL)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		var evs []map[string]any
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(line), &ev) != nil {
				t.Fatalf("not an event: %q\nstderr: %s", line, errb.String())
			}
			evs = append(evs, ev)
		}
		return cmd.ProcessState.ExitCode(), evs
	}
	of := func(evs []map[string]any, typ string) []map[string]any {
		var out []map[string]any
		for _, ev := range evs {
			if ev["type"] == typ {
				out = append(out, ev)
			}
		}
		return out
	}

	for _, d := range []struct {
		name     string
		flags    []string
		refusals int
	}{
		{"native API", nil, 0},
		{"v1", []string{"--provider", "openai"}, 1},
	} {
		t.Run(d.name, func(t *testing.T) {
			proxy := newRecordingProxy(t, target)
			args := append([]string{}, d.flags...)
			if len(d.flags) > 0 {
				args = append(args, "--base-url", proxy.URL+"/v1")
			}
			args = append(args, "-m", "tiny-prompted", "run", "--max-turns", "2", "-o", "stream-json", "what is the secret word?")
			code, evs := run(proxy, args...)
			results := of(evs, "tool_result")
			if len(results) != 2 || results[0]["ok"] != true || !strings.Contains(results[0]["output"].(string), "kettle") {
				t.Fatalf("exit %d, results %v\nevents %v", code, results, evs)
			}
			if dones := of(evs, "done"); len(dones) != 1 || dones[0]["reason"] != "max_turns" || of(evs, "error") != nil {
				t.Errorf("the end: %v", evs[len(evs)-2:])
			}
			reqs := proxy.requests()
			if len(reqs) != 2+d.refusals {
				t.Fatalf("%d chat requests, want %d", len(reqs), 2+d.refusals)
			}
			for i, r := range reqs {
				c := readChat(t, r.body)
				switch {
				case i < d.refusals && (len(c.Tools) == 0 || r.status != http.StatusBadRequest):
					t.Errorf("request %d: %d tools, status %d: want the tools refused", i, len(c.Tools), r.status)
				case i >= d.refusals && (len(c.Tools) != 0 || r.status != http.StatusOK || !strings.Contains(c.Messages[0].Content, "<tool_call>")):
					t.Errorf("request %d: %d tools, status %d: not prompted", i, len(c.Tools), r.status)
				}
			}
			last := readChat(t, reqs[len(reqs)-1].body)
			if m := last.Messages[len(last.Messages)-1]; m.Role != "user" || !strings.Contains(m.Content, "the secret word is kettle") {
				t.Errorf("the result was not sent back: %+v", m)
			}
		})
	}

	t.Run("malformed calls", func(t *testing.T) {
		proxy := newRecordingProxy(t, target)
		code, evs := run(proxy, "-m", "tiny-garbled", "run", "-o", "stream-json", "what is the secret word?")
		results := of(evs, "tool_result")
		errs := of(evs, "error")
		if code != 1 || len(results) != 3 || len(errs) != 1 || errs[0]["code"] != "unreadable_tool_calls" || len(of(evs, "done")) != 1 {
			t.Fatalf("exit %d\nevents %v", code, evs)
		}
		for _, r := range results {
			if r["ok"] != false || !strings.Contains(r["error"].(string), "could not be read") || !strings.Contains(r["error"].(string), `<tool_call>{"name": "read_file"`) {
				t.Errorf("correction: %v", r)
			}
		}
		reqs := proxy.requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests", len(reqs))
		}
		if c := readChat(t, reqs[2].body); !strings.Contains(c.Messages[len(c.Messages)-1].Content, "could not be read") {
			t.Errorf("the correction did not reach the model: %+v", c.Messages[len(c.Messages)-1])
		}
	})
}
