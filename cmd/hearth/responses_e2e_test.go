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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// responsesBody is what the tests read of a Responses API request.
type responsesBody struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Store  *bool  `json:"store"`
	Tools  []struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		Strict *bool  `json:"strict"`
	} `json:"tools"`
	Input []struct {
		Type      string `json:"type"`
		Role      string `json:"role"`
		Content   any    `json:"content"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Output    string `json:"output"`
	} `json:"input"`
}

func readResponses(t *testing.T, body []byte) responsesBody {
	t.Helper()
	var b responsesBody
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("a Responses request that is not JSON: %v\n%s", err, body)
	}
	return b
}

// checkStateless checks what every request of a turn must be on the
// Responses API: streamed, stored nowhere, the tools strict false, the
// conversation whole (a system message first, then the user's), and,
// after the first, the call and its output paired by call_id.
func checkStateless(t *testing.T, bodies [][]byte, file string) {
	t.Helper()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2 (the call, then the answer)", len(bodies))
	}
	for i, raw := range bodies {
		b := readResponses(t, raw)
		if !b.Stream || b.Store == nil || *b.Store || len(b.Input) < 2 || b.Input[0].Role != "system" || b.Input[1].Role != "user" {
			t.Errorf("request %d: stream %v store %v, input starts %+v", i, b.Stream, b.Store, b.Input[:min(2, len(b.Input))])
		}
		for _, tl := range b.Tools {
			if tl.Type != "function" || tl.Strict == nil || *tl.Strict {
				t.Errorf("request %d: tool %+v: want a function tool, strict false", i, tl)
			}
		}
	}
	last := readResponses(t, bodies[1])
	var call, out int
	for i, it := range last.Input {
		switch it.Type {
		case "function_call":
			call = i
		case "function_call_output":
			out = i
		}
	}
	c, o := last.Input[call], last.Input[out]
	if call == 0 || out != call+1 || c.Name != "read_file" || !strings.Contains(c.Arguments, "notes.txt") || c.CallID == "" || o.CallID != c.CallID || !strings.Contains(o.Output, file) {
		t.Errorf("the second request does not carry the call and its output, paired: %+v then %+v", c, o)
	}
}

// TestResponsesProvider: --provider responses drives a turn over the
// Responses API of the scripted fake: the model calls read_file, the file
// goes back as a function_call_output, and the answer is printed.
func TestResponsesProvider(t *testing.T) {
	e := newE2E(t)
	os.WriteFile(filepath.Join(e.ws, "notes.txt"), []byte("the secret word is kettle\n"), 0o644)
	e.srv.Enqueue("/v1/responses",
		llmtest.ResponsesStream("m", llmtest.Thinking("I should read it."), llmtest.Call("read_file", `{"file_path":"notes.txt"}`)),
		llmtest.ResponsesStream("m", llmtest.Text("The secret word is "), llmtest.Text("kettle.")))
	code, out, errOut := e.run("", "--provider", "responses", "--base-url", e.srv.URL+"/v1", "run", "what is the secret word?")
	if code != 0 || out != "The secret word is kettle.\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	var bodies [][]byte
	for _, r := range e.srv.RequestsTo("/v1/responses") {
		bodies = append(bodies, r.Body)
	}
	checkStateless(t, bodies, "kettle")
	if n := len(e.srv.RequestsTo("/api/chat")); n != 0 {
		t.Errorf("%d requests to Ollama's native API", n)
	}

	// A server without the Responses API (llama.cpp's, an older Ollama):
	// the error says what to do.
	e.srv.Always("/old/v1/responses", llmtest.Scenario{Status: http.StatusNotFound, Chunks: []llmtest.Chunk{{Data: "404 page not found"}}})
	code, _, errOut = e.run("", "--provider", "responses", "--base-url", e.srv.URL+"/old/v1", "run", "hi")
	if code == 0 || !strings.Contains(errOut, "--provider openai") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// modelSwitch stands between hearth and a real Ollama on /v1/responses:
// it keeps each request's body and status, and sends a request whose
// conversation holds a tool's output to answerer instead of the model
// asked for. A scripted peer model says the same thing every turn; this
// makes one model of two, which reads a file and then answers.
type modelSwitch struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   [][]byte
	statuses []int
}

func newModelSwitch(t *testing.T, target, answerer string) *modelSwitch {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	m := &modelSwitch{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			if !strings.HasSuffix(pr.Out.URL.Path, "/responses") {
				return
			}
			body, _ := io.ReadAll(pr.Out.Body)
			m.mu.Lock()
			m.bodies = append(m.bodies, body)
			m.mu.Unlock()
			var req map[string]any
			if json.Unmarshal(body, &req) == nil && bytes.Contains(body, []byte(`"function_call_output"`)) {
				req["model"] = answerer
				body, _ = json.Marshal(req)
			}
			pr.Out.Body = io.NopCloser(bytes.NewReader(body))
			pr.Out.ContentLength = int64(len(body))
			pr.Out.Header.Set("Content-Length", strconv.Itoa(len(body)))
		},
		ModifyResponse: func(r *http.Response) error {
			if strings.HasSuffix(r.Request.URL.Path, "/responses") {
				m.mu.Lock()
				m.statuses = append(m.statuses, r.StatusCode)
				m.mu.Unlock()
			}
			return nil
		},
	}
	m.Server = httptest.NewServer(rp)
	t.Cleanup(m.Close)
	return m
}

// TestPeerResponses runs the real binary with --provider responses against
// a real Ollama's /v1/responses (../shared/ollama-peer; Ollama 0.17.4): the
// scripted tiny-reader calls read_file (Ollama parses its <tool_call> into
// a function_call item), Hearth reads the file and sends it back as a
// function_call_output with the whole conversation, and the answer
// (tiny-answer's "Done.", see modelSwitch) ends the turn.
func TestPeerResponses(t *testing.T) {
	target := os.Getenv("HEARTH_OLLAMA_URL")
	if target == "" {
		t.Skip("set HEARTH_OLLAMA_URL (scripts/test.sh starts ../shared/ollama-peer and sets it) to run against a real Ollama")
	}
	for _, m := range []string{"tiny-reader", "tiny-answer"} {
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
	proxy := newModelSwitch(t, target, "tiny-answer")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := e.cmd(ctx, "", "--provider", "responses", "--base-url", proxy.URL+"/v1", "-m", "tiny-reader",
		"run", "-o", "stream-json", "what is the secret word?")
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
	of := func(typ string) []map[string]any {
		var got []map[string]any
		for _, ev := range evs {
			if ev["type"] == typ {
				got = append(got, ev)
			}
		}
		return got
	}
	calls, results, dones := of("tool_call"), of("tool_result"), of("done")
	if code := cmd.ProcessState.ExitCode(); code != 0 || len(calls) != 1 || calls[0]["name"] != "read_file" || len(results) != 1 ||
		results[0]["ok"] != true || !strings.Contains(results[0]["output"].(string), "kettle") {
		t.Fatalf("exit %d, calls %v, results %v\nevents %v\nstderr %s", code, calls, results, evs, errb.String())
	}
	if len(dones) != 1 || dones[0]["reason"] != "stop" || strings.TrimSpace(dones[0]["text"].(string)) != "Done." || of("error") != nil {
		t.Errorf("the end: %v", evs[max(0, len(evs)-2):])
	}
	if s := of("session"); len(s) != 1 || s[0]["provider"] != "responses" {
		t.Errorf("session event %v: want provider responses", s)
	}
	proxy.mu.Lock()
	bodies, statuses := proxy.bodies, proxy.statuses
	proxy.mu.Unlock()
	for i, st := range statuses {
		if st != http.StatusOK {
			t.Errorf("request %d: status %d", i, st)
		}
	}
	checkStateless(t, bodies, "kettle")
}
