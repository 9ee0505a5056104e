package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

// pgMain runs the tests, then stops the PostgreSQL they may have started.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int { return pgtest.Main(p.m) }

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(pgMain{m},
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"))
}

const testToken = "test-token-0123456789abcdef"

// fixture is an API server over real HTTP, backed by the scripted fake
// model server, a SQLite store and two host tools: read_note (read-only)
// and write_note (an edit: it needs approval in the default mode).
type fixture struct {
	t      *testing.T
	fake   *llmtest.Server
	ws     string // the workspace
	store  *session.SQLite
	api    *Server
	hs     *httptest.Server
	client *http.Client
	port   string

	mu    sync.Mutex
	wrote []string // write_note calls
}

// setup is what a fixture is built from: the agent's configuration and
// the server's options.
type setup struct {
	hearth.Config
	Options
}

func newFixture(t *testing.T, opts ...func(*setup)) *fixture {
	t.Helper()
	f := &fixture{t: t, fake: llmtest.New(t), ws: t.TempDir()}
	f.fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	store, err := session.Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	store.LockTimeout = 200 * time.Millisecond
	f.store = store
	t.Cleanup(func() { store.Close() })
	type noteArgs struct {
		Text string `json:"text" jsonschema:"what to write"`
	}
	tools := []hearth.Tool{
		hearth.Func("read_note", "Read the note", hearth.ReadOnly, func(ctx context.Context, a struct{}) (string, error) {
			return "the note says hi", nil
		}),
		hearth.Func("write_note", "Write the note", hearth.Edit, func(ctx context.Context, a noteArgs) (string, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.wrote = append(f.wrote, a.Text)
			return "written", nil
		}),
	}
	o := setup{
		Config: hearth.Config{Provider: ollama.New(ollama.Options{BaseURL: f.fake.URL, NumCtx: 8192, MaxRetries: -1}), Model: "m",
			Tools: tools, Profile: hearth.Profile{Mode: hearth.ModeDefault, Tools: []string{"read_note", "write_note"}},
			Workspace: f.ws, Sandbox: hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}, Store: store, ContextLength: 32768},
		Options: Options{Token: testToken, AllowedHosts: []string{"hearth.test"},
			AllowedOrigins: []string{"https://app.example"}, ProviderURL: f.fake.URL, Version: "test"},
	}
	for _, fn := range opts {
		fn(&o)
	}
	bot, err := hearth.New(o.Config)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	api, err := New(bot, o.Options)
	if err != nil {
		t.Fatal(err)
	}
	f.api = api
	f.hs = httptest.NewServer(api)
	f.client = &http.Client{Transport: &http.Transport{}}
	u, _ := url.Parse(f.hs.URL)
	f.port = u.Port()
	t.Cleanup(func() {
		f.client.CloseIdleConnections()
		f.hs.Close()
	})
	t.Cleanup(func() { api.Close() }) // first: ends the turns and streams
	return f
}

func (f *fixture) writes() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.wrote...)
}

// request builds an authorised request; body is JSON-encoded unless it is
// a string or nil.
func (f *fixture) request(method, path string, body any) *http.Request {
	f.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, f.hs.URL+path, rd)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

func (f *fixture) send(req *http.Request) *http.Response {
	f.t.Helper()
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

// call makes a request, checks the status and decodes the JSON answer into
// out (if not nil).
func (f *fixture) call(method, path string, body any, want int, out any) {
	f.t.Helper()
	resp := f.send(f.request(method, path, body))
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		f.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, resp.StatusCode, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
}

// errorCode makes a request and returns its status and error code.
func (f *fixture) errorCode(req *http.Request) (int, string, string) {
	f.t.Helper()
	resp := f.send(req)
	defer resp.Body.Close()
	var e apiError
	data, _ := io.ReadAll(resp.Body)
	json.Unmarshal(data, &e)
	return resp.StatusCode, e.Error.Code, e.Error.Message
}

func (f *fixture) newSession() string {
	f.t.Helper()
	var se sessionJSON
	f.call("POST", "/v1/sessions", nil, http.StatusCreated, &se)
	return se.ID
}

// turn starts a turn and returns its event stream (the test reads it).
func (f *fixture) turn(id string, body any) *sseStream {
	f.t.Helper()
	resp := f.send(f.request("POST", "/v1/sessions/"+id+"/turns", body))
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.t.Fatalf("POST turns: status %d\n%s", resp.StatusCode, data)
	}
	return newStream(f.t, resp)
}

// follow opens GET /v1/sessions/{id}/events after lastID ("" for all).
func (f *fixture) follow(id, lastID string) *sseStream {
	f.t.Helper()
	req := f.request("GET", "/v1/sessions/"+id+"/events", nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp := f.send(req)
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		f.t.Fatalf("GET events: status %d\n%s", resp.StatusCode, data)
	}
	return newStream(f.t, resp)
}

// frame is one received Server-Sent Event.
type frame struct {
	ID   string
	Data string
	Type string
	ev   map[string]any
}

func (fr frame) str(k string) string { s, _ := fr.ev[k].(string); return s }

// sseStream reads an event stream.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
}

func newStream(t *testing.T, resp *http.Response) *sseStream {
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	s := &sseStream{t: t, resp: resp, br: bufio.NewReader(resp.Body)}
	t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event; io.EOF at the end of the stream.
func (s *sseStream) next() (frame, error) {
	var fr frame
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && line == "" && fr.Data == "" {
				return fr, io.EOF
			}
			return fr, fmt.Errorf("stream cut mid-event: %w (%q)", err, line)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if fr.Data == "" {
				continue // a retry: or comment block
			}
			if err := json.Unmarshal([]byte(fr.Data), &fr.ev); err != nil {
				return fr, fmt.Errorf("data is not JSON: %v: %s", err, fr.Data)
			}
			fr.Type = fr.str("type")
			return fr, nil
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry: "):
		case strings.HasPrefix(line, "id: "):
			fr.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			if fr.Data != "" {
				return fr, fmt.Errorf("two data lines in one event")
			}
			fr.Data = strings.TrimPrefix(line, "data: ")
		default:
			return fr, fmt.Errorf("unexpected line %q", line)
		}
	}
}

// must returns the next event, failing the test at the end of the stream.
func (s *sseStream) must() frame {
	s.t.Helper()
	fr, err := s.next()
	if err != nil {
		s.t.Fatalf("reading the stream: %v", err)
	}
	return fr
}

// until reads events up to and including the first of type typ.
func (s *sseStream) until(typ string) []frame {
	s.t.Helper()
	var out []frame
	for {
		fr := s.must()
		out = append(out, fr)
		if fr.Type == typ {
			return out
		}
	}
}

// rest reads the stream to its end.
func (s *sseStream) rest() []frame {
	s.t.Helper()
	var out []frame
	for {
		fr, err := s.next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			s.t.Fatal(err)
		}
		out = append(out, fr)
	}
}

func (s *sseStream) close() { s.resp.Body.Close() }

func types(frs []frame) []string {
	var out []string
	for _, fr := range frs {
		out = append(out, fr.Type)
	}
	return out
}

// eventually polls cond until it holds or a few seconds pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
