// Package llmtest is a scripted fake model server for tests. It speaks the
// wire formats Hearth uses (Ollama's native NDJSON API, OpenAI-compatible
// chat completions and the Responses API, both SSE), replays scenarios chunk
// by chunk with delays, errors and disconnects, and records every request it
// gets.
//
// Scenarios come from three places: builders that render one script of
// text, thinking and tool calls in any dialect (OllamaStream,
// OpenAIStream, ResponsesStream, …), raw transcripts of real servers kept under testdata
// (LoadTranscript), and hand-made Scenario values.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chunk is one piece of a response body, written and flushed on its own
// after Delay.
type Chunk struct {
	Data  string
	Delay time.Duration
}

// Scenario is what the server sends for one request.
type Scenario struct {
	// Status defaults to 200.
	Status int
	// Header is sent with the response; Content-Type is guessed from the
	// body when not set.
	Header http.Header
	// HeaderDelay holds back the status line and headers, as Ollama does
	// while it loads a model.
	HeaderDelay time.Duration
	// Chunks make up the body.
	Chunks []Chunk
	// Disconnect drops the connection after the chunks, without ending the
	// response properly (a crashed server).
	Disconnect bool
	// Hang keeps the response open after the chunks, sending nothing, until
	// the client goes away (a stuck server).
	Hang bool
}

// Body returns the whole body of the scenario.
func (s Scenario) Body() string {
	var b strings.Builder
	for _, c := range s.Chunks {
		b.WriteString(c.Data)
	}
	return b.String()
}

// Split returns a copy of s whose body is cut into the given pieces: each
// offset (into the whole body) starts a new chunk. Offsets out of range are
// ignored.
func (s Scenario) Split(offsets ...int) Scenario {
	body := s.Body()
	sort.Ints(offsets)
	var chunks []Chunk
	prev := 0
	for _, o := range offsets {
		if o <= prev || o >= len(body) {
			continue
		}
		chunks = append(chunks, Chunk{Data: body[prev:o]})
		prev = o
	}
	chunks = append(chunks, Chunk{Data: body[prev:]})
	s.Chunks = chunks
	return s
}

// Request is one request the server got.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// JSON decodes the request body into v, failing the test on error.
func (r Request) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("request body of %s is not JSON: %v\n%s", r.Path, err, r.Body)
	}
}

// Server is the fake. Create it with New; it is closed when the test ends.
type Server struct {
	*httptest.Server

	mu       sync.Mutex
	queues   map[string][]Scenario
	fallback map[string]Scenario
	choosers map[string]func(Request) (Scenario, bool)
	requests []Request
	models   []Model
	version  string
	gone     int
}

// Model is a model the server has: listed on /api/tags and /v1/models,
// described on /api/show.
type Model struct {
	Name string
	// Capabilities as Ollama names them: "completion", "tools",
	// "thinking", "vision", "embedding".
	Capabilities []string
	// ContextLength goes into model_info as llama.context_length.
	ContextLength int
	// NumCtx, when set, appears as a Modelfile parameter.
	NumCtx int
	// Template is the model's chat template (Go text/template), as
	// /api/show sends it; empty means a plain ChatML one.
	Template string
}

// New starts a server that will be closed when t ends.
func New(t testing.TB) *Server {
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

// NewServer starts a server outside a test (an example, a benchmark
// harness); the caller closes it.
func NewServer() *Server {
	s := &Server{queues: map[string][]Scenario{}, fallback: map[string]Scenario{},
		choosers: map[string]func(Request) (Scenario, bool){}, version: "0.17.4"}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// OllamaURL is the base URL for the ollama provider.
func (s *Server) OllamaURL() string { return s.URL }

// OpenAIURL is the base URL for the openai provider.
func (s *Server) OpenAIURL() string { return s.URL + "/v1" }

// Enqueue adds scenarios for requests to path, served in order, one per
// request. When the queue is empty the path's chooser (see Respond) is
// asked, then the path's fallback (see Always) is used, then the built-in
// model endpoints, and otherwise the request gets a 500 saying no scenario
// was left.
func (s *Server) Enqueue(path string, scs ...Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queues[path] = append(s.queues[path], scs...)
}

// Always serves sc for every request to path whose queue is empty.
func (s *Server) Always(path string, sc Scenario) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback[path] = sc
}

// Respond makes the server choose the scenario for a request to path from
// the request itself: choose gets each request whose queue is empty and
// returns what to send, or false to leave it to the fallback (Always) and
// the built-in endpoints. It is for fakes driven from outside the test, such
// as a browser clicking through the web UI, where requests come in no
// known order and the reply depends on what was asked. choose runs on the
// request's goroutine, possibly on several at once; a later call replaces
// it.
func (s *Server) Respond(path string, choose func(Request) (Scenario, bool)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.choosers[path] = choose
}

// AddModel adds a model to the built-in model endpoints.
func (s *Server) AddModel(m Model) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = append(s.models, m)
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestsTo returns the requests received for one path.
func (s *Server) RequestsTo(path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// Pending reports how many enqueued scenarios were not used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, q := range s.queues {
		n += len(q)
	}
	return n
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	var sc Scenario
	found := false
	choose := s.choosers[r.URL.Path]
	fb, hasFallback := s.fallback[r.URL.Path]
	if q := s.queues[r.URL.Path]; len(q) > 0 {
		sc, s.queues[r.URL.Path], found = q[0], q[1:], true
		choose = nil
	}
	s.mu.Unlock()
	if choose != nil {
		sc, found = choose(req)
	}
	if !found && hasFallback {
		sc, found = fb, true
	}
	if !found {
		var ok bool
		if sc, ok = s.builtin(r.URL.Path, body); !ok {
			sc = JSONResponse(http.StatusInternalServerError, map[string]string{"error": "llmtest: no scenario left for " + r.URL.Path})
		}
	}
	s.play(w, r, sc)
}

// ClientsGone reports how many responses were cut short because the client
// closed the connection (a cancelled request, a consumer that stopped).
func (s *Server) ClientsGone() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gone
}

func (s *Server) clientGone() {
	s.mu.Lock()
	s.gone++
	s.mu.Unlock()
}

func (s *Server) play(w http.ResponseWriter, r *http.Request, sc Scenario) {
	ctx := r.Context()
	if !sleep(ctx.Done(), sc.HeaderDelay) {
		s.clientGone()
		return
	}
	for k, v := range sc.Header {
		w.Header()[k] = v
	}
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", guessType(sc.Body()))
	}
	status := sc.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	rc := http.NewResponseController(w)
	rc.Flush()
	for _, c := range sc.Chunks {
		if !sleep(ctx.Done(), c.Delay) {
			s.clientGone()
			return
		}
		if _, err := io.WriteString(w, c.Data); err != nil {
			s.clientGone()
			return
		}
		if rc.Flush() != nil {
			s.clientGone()
			return
		}
	}
	switch {
	case sc.Disconnect:
		panic(http.ErrAbortHandler) // the server drops the connection
	case sc.Hang:
		<-ctx.Done()
		s.clientGone()
	}
}

func sleep(done <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}

func guessType(body string) string {
	switch {
	case strings.HasPrefix(body, "data:") || strings.HasPrefix(body, "event:") || strings.HasPrefix(body, ":"):
		return "text/event-stream"
	case strings.Count(strings.TrimSpace(body), "\n") > 0 && strings.HasPrefix(body, "{"):
		return "application/x-ndjson"
	}
	return "application/json; charset=utf-8"
}

// builtin answers the model endpoints from the models added with AddModel.
func (s *Server) builtin(path string, body []byte) (Scenario, bool) {
	s.mu.Lock()
	models := append([]Model(nil), s.models...)
	version := s.version
	s.mu.Unlock()
	find := func() (Model, bool) {
		var req struct {
			Model string `json:"model"`
			Name  string `json:"name"`
		}
		json.Unmarshal(body, &req)
		name := req.Model
		if name == "" {
			name = req.Name
		}
		for _, m := range models {
			if m.Name == name || m.Name == name+":latest" || strings.TrimSuffix(m.Name, ":latest") == name {
				return m, true
			}
		}
		return Model{}, false
	}
	switch path {
	case "/api/version":
		return JSONResponse(200, map[string]string{"version": version}), true
	case "/api/tags":
		var list []map[string]any
		for _, m := range models {
			list = append(list, map[string]any{"name": m.Name, "model": m.Name, "size": 1000,
				"modified_at": "2026-11-21T16:25:56.713347395Z",
				"details":     map[string]any{"format": "gguf", "family": "llama", "parameter_size": "377K", "quantization_level": "F16"}})
		}
		return JSONResponse(200, map[string]any{"models": list}), true
	case "/api/show":
		m, ok := find()
		if !ok {
			return OllamaError(404, fmt.Sprintf("model '%s' not found", modelName(body))), true
		}
		params := "stop                           \"<|im_end|>\""
		if m.NumCtx > 0 {
			params = fmt.Sprintf("num_ctx                        %d\n%s", m.NumCtx, params)
		}
		info := map[string]any{"general.architecture": "llama", "general.parameter_count": 376960}
		if m.ContextLength > 0 {
			info["llama.context_length"] = m.ContextLength
		}
		tmpl := m.Template
		if tmpl == "" {
			tmpl = "{{- range .Messages }}<|im_start|>{{ .Role }}\n{{ .Content }}<|im_end|>\n{{ end }}<|im_start|>assistant\n"
		}
		return JSONResponse(200, map[string]any{"template": tmpl, "parameters": params, "model_info": info, "capabilities": m.Capabilities,
			"details": map[string]any{"format": "gguf", "family": "llama", "parameter_size": "377K", "quantization_level": "F16"}}), true
	case "/v1/models":
		var list []map[string]any
		for _, m := range models {
			list = append(list, map[string]any{"id": m.Name, "object": "model", "created": 1795278356, "owned_by": "library"})
		}
		return JSONResponse(200, map[string]any{"object": "list", "data": list}), true
	}
	return Scenario{}, false
}

func modelName(body []byte) string {
	var req struct {
		Model string `json:"model"`
	}
	json.Unmarshal(body, &req)
	return req.Model
}

// JSONResponse is a scenario answering v as JSON with the given status.
func JSONResponse(status int, v any) Scenario {
	var b bytes.Buffer
	json.NewEncoder(&b).Encode(v)
	return Scenario{Status: status, Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, Chunks: []Chunk{{Data: b.String()}}}
}

// OllamaError is an error as Ollama sends it: {"error":"…"}.
func OllamaError(status int, msg string) Scenario {
	return JSONResponse(status, map[string]string{"error": msg})
}

// OpenAIError is an error as OpenAI sends it: {"error":{"message":…}}.
func OpenAIError(status int, msg, typ, code string) Scenario {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	return JSONResponse(status, map[string]any{"error": e})
}
