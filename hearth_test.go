package hearth_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/server"
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

// app is a host application with a configuration, a database and feature
// flags, exposed to the model as host tools.
type app struct {
	mu    sync.Mutex
	flags map[string]bool
	calls []string
}

type configArgs struct {
	Section string `json:"section,omitempty" jsonschema:"one section of the configuration"`
}

type queryArgs struct {
	SQL string `json:"sql" jsonschema:"one read-only SELECT statement"`
}

type flagArgs struct {
	Name string `json:"name" jsonschema:"the flag"`
	On   bool   `json:"on" jsonschema:"on or off"`
}

func (a *app) note(s string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, s)
}

func (a *app) ran() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.calls)
}

func (a *app) tools() []hearth.Tool {
	return []hearth.Tool{
		hearth.Func("get_app_config", "Return the app's configuration", hearth.ReadOnly, func(ctx context.Context, c configArgs) (string, error) {
			a.note("get_app_config")
			return `{"db_pool": 4, "cache": "off"}`, nil
		}),
		hearth.Func("query_database", "Run a read-only SQL query", hearth.ReadOnly, func(ctx context.Context, q queryArgs) (string, error) {
			a.note("query_database " + q.SQL)
			return "count\n1042", nil
		}),
		hearth.Func("set_feature_flag", "Turn a feature flag on or off", hearth.Edit, func(ctx context.Context, f flagArgs) (string, error) {
			a.note("set_feature_flag " + f.Name)
			a.mu.Lock()
			defer a.mu.Unlock()
			a.flags[f.Name] = f.On
			return "done", nil
		}),
	}
}

type fixture struct {
	fake *llmtest.Server
	app  *app
	bot  *hearth.Agent
}

func newFixture(t *testing.T, edit ...func(*hearth.Config)) *fixture {
	t.Helper()
	f := &fixture{fake: llmtest.New(t), app: &app{flags: map[string]bool{}}}
	f.fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	c := hearth.Config{Provider: ollama.New(ollama.Options{BaseURL: f.fake.URL, NumCtx: 8192, MaxRetries: -1}), Model: "m", Tools: f.app.tools()}
	for _, e := range edit {
		e(&c)
	}
	bot, err := hearth.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	f.bot = bot
	return f
}

func collect(t *testing.T, turn *hearth.Turn, answer func(ev hearth.Event)) []hearth.Event {
	t.Helper()
	var evs []hearth.Event
	for ev := range turn.Events() {
		evs = append(evs, ev)
		if ev.Type == hearth.EventApprovalRequired && answer != nil {
			answer(ev)
		}
	}
	return evs
}

func typesOf(evs []hearth.Event) []hearth.EventType {
	var out []hearth.EventType
	for _, ev := range evs {
		out = append(out, ev.Type)
	}
	return out
}

func TestTurnWithHostToolsAndContext(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("get_app_config", `{}`), llmtest.Call("query_database", `{"sql":"SELECT count(*) FROM orders"}`)),
		llmtest.OllamaStream("m", llmtest.Text("The pool is small for "), llmtest.Text("1042 orders."), llmtest.Usage(300, 9)),
		llmtest.OllamaStream("m", llmtest.Text("Raise db_pool to 16.")))
	ctx := context.Background()
	turn := f.bot.NewTurn(ctx, hearth.Request{Message: "Why is checkout slow?", Context: "Current page: /admin/orders"})
	evs := collect(t, turn, nil)
	res, err := turn.Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The pool is small for 1042 orders." || res.Reason != hearth.DoneStop || len(res.ToolCalls) != 2 || res.SessionID == "" {
		t.Errorf("result %+v", res)
	}
	if got := f.app.ran(); !slices.Equal(got, []string{"get_app_config", "query_database SELECT count(*) FROM orders"}) {
		t.Errorf("host tools ran: %v", got)
	}
	if evs[0].Type != hearth.EventSession || evs[len(evs)-1].Type != hearth.EventDone {
		t.Errorf("events %v", typesOf(evs))
	}
	// The model saw the context and the host tools' schemas.
	var sent struct {
		Messages []llm.Message
		Tools    []struct {
			Function struct {
				Name       string
				Parameters json.RawMessage
			}
		}
	}
	f.fake.RequestsTo("/api/chat")[0].JSON(t, &sent)
	if !strings.Contains(sent.Messages[len(sent.Messages)-1].Content, "Current page: /admin/orders") {
		t.Errorf("the model did not see the context: %+v", sent.Messages)
	}
	var names []string
	for _, tl := range sent.Tools {
		names = append(names, tl.Function.Name)
		if tl.Function.Name == "query_database" && !strings.Contains(string(tl.Function.Parameters), `"required":["sql"]`) {
			t.Errorf("inferred schema %s", tl.Function.Parameters)
		}
	}
	if !slices.Equal(names, []string{"get_app_config", "query_database", "set_feature_flag"}) {
		t.Errorf("tools offered: %v", names)
	}
	// The session keeps the message, not the context.
	msgs, err := f.bot.Store().Messages(ctx, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if strings.Contains(m.Content, "/admin/orders") {
			t.Errorf("the context was kept: %+v", m)
		}
	}
	if msgs[0].Content != "Why is checkout slow?" {
		t.Errorf("first message %+v", msgs[0])
	}
	// The next turn continues the session.
	res2, err := f.bot.NewTurn(ctx, hearth.Request{SessionID: res.SessionID, Message: "What should I change?"}).Result()
	if err != nil || res2.SessionID != res.SessionID || res2.Text != "Raise db_pool to 16." {
		t.Fatalf("second turn %+v %v", res2, err)
	}
	reqs := f.fake.RequestsTo("/api/chat")
	reqs[len(reqs)-1].JSON(t, &sent)
	if len(sent.Messages) != 6 || strings.Contains(sent.Messages[0].Content, "/admin/orders") {
		t.Errorf("second turn sent %+v", sent.Messages)
	}
}

func TestApprovals(t *testing.T) {
	tests := []struct {
		name     string
		answer   func(turn *hearth.Turn, id string) error
		async    bool // answered from another goroutine, after the loop body returned
		wantRun  bool
		wantErr  string
		askAgain bool
	}{
		{"allow", func(tr *hearth.Turn, id string) error { return tr.Approve(id, hearth.Allow) }, false, true, "", true},
		{"deny with a reason", func(tr *hearth.Turn, id string) error { return tr.Deny(id, "not in production") }, false, false, "the user denied this call: not in production", true},
		{"allow always", func(tr *hearth.Turn, id string) error { return tr.Approve(id, hearth.AllowAlways) }, false, true, "", false},
		{"from another goroutine", func(tr *hearth.Turn, id string) error { return tr.Approve(id, hearth.Allow) }, true, true, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			for range 2 {
				f.fake.Enqueue("/api/chat",
					llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"fast_checkout","on":true}`)),
					llmtest.OllamaStream("m", llmtest.Text("Done.")))
			}
			turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "turn on fast checkout"})
			var wg sync.WaitGroup
			evs := collect(t, turn, func(ev hearth.Event) {
				if ev.Name != "set_feature_flag" || ev.Reason == "" {
					t.Errorf("approval_required %+v", ev)
				}
				if !tt.async {
					if err := tt.answer(turn, ev.ID); err != nil {
						t.Error(err)
					}
					return
				}
				wg.Go(func() {
					time.Sleep(20 * time.Millisecond)
					if err := tt.answer(turn, ev.ID); err != nil {
						t.Error(err)
					}
				})
			})
			wg.Wait()
			var result hearth.Event
			for _, ev := range evs {
				if ev.Type == hearth.EventToolResult {
					result = ev
				}
			}
			if result.OK != tt.wantRun || result.Error != tt.wantErr {
				t.Errorf("tool_result %+v", result)
			}
			if ran := len(f.app.ran()) == 1; ran != tt.wantRun {
				t.Errorf("ran: %v", f.app.ran())
			}
			res, err := turn.Result()
			if err != nil {
				t.Fatal(err)
			}
			// The second turn of the session asks again unless "always".
			asked := false
			turn2 := f.bot.NewTurn(context.Background(), hearth.Request{SessionID: res.SessionID, Message: "again"})
			collect(t, turn2, func(ev hearth.Event) {
				asked = true
				turn2.Approve(ev.ID, hearth.Deny)
			})
			if asked != tt.askAgain {
				t.Errorf("asked again: %v", asked)
			}
		})
	}
}

func TestApproveErrors(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"x","on":true}`)),
		llmtest.OllamaStream("m", llmtest.Text("ok")))
	turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"})
	if err := turn.Approve("call_1", hearth.Allow); err == nil {
		t.Error("answered an approval never asked")
	}
	collect(t, turn, func(ev hearth.Event) {
		if err := turn.Approve(ev.ID, hearth.Allow); err != nil {
			t.Error(err)
		}
		if err := turn.Approve(ev.ID, hearth.Deny); err == nil || !strings.Contains(err.Error(), "already answered") {
			t.Errorf("second answer: %v", err)
		}
	})
	if err := turn.Approve("call_1", hearth.Allow); err == nil {
		t.Error("answered after the turn")
	}
	// A sequence ranges once.
	n := 0
	for range turn.Events() {
		n++
	}
	if n != 0 {
		t.Errorf("second range yielded %d events", n)
	}
}

// hanging streams "partial" and then nothing until the client goes.
func hanging() llmtest.Scenario {
	return llmtest.OllamaStream("m", llmtest.Text("partial"), llmtest.Pause(time.Hour), llmtest.Text(" never"))
}

func TestBreakCancelsTheTurn(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", hanging())
	turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"})
	for ev := range turn.Events() {
		if ev.Type == hearth.EventTextDelta {
			break
		}
	}
	// The reply would go on for an hour: a break that did not cancel the
	// turn would hang here, not end it cancelled.
	res, err := turn.Result()
	if err != nil || res.Reason != hearth.DoneCancelled {
		t.Fatalf("%+v %v", res, err)
	}
	msgs, _ := f.bot.Store().Messages(context.Background(), res.SessionID)
	if len(msgs) != 2 || msgs[1].Content != "partial" || !msgs[1].Partial {
		t.Errorf("stored %+v", msgs)
	}
	// The server sees the client go when its next write fails or its
	// request's context ends: shortly after, not at once.
	for deadline := time.Now().Add(time.Minute); f.fake.ClientsGone() != 1 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := f.fake.ClientsGone(); n != 1 {
		t.Errorf("the model request was not dropped (%d requests cut short)", n)
	}
}

func TestContextCancelEndsTheTurn(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"x","on":true}`)))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	turn := f.bot.NewTurn(ctx, hearth.Request{Message: "go"})
	var last hearth.Event
	for ev := range turn.Events() {
		if ev.Type == hearth.EventApprovalRequired {
			cancel() // nobody answers: the turn waits until its context ends
		}
		last = ev
	}
	if last.Type != hearth.EventDone || last.DoneReason != hearth.DoneCancelled {
		t.Errorf("last event %+v", last)
	}
	if len(f.app.ran()) != 0 {
		t.Error("the tool ran")
	}
}

func TestResultAloneRefusesWhatNeedsApproval(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"x","on":true}`)),
		llmtest.OllamaStream("m", llmtest.Text("I could not change the flag.")))
	res, err := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"}).Result()
	if err != nil || res.Text != "I could not change the flag." {
		t.Fatalf("%+v %v", res, err)
	}
	if len(f.app.ran()) != 0 {
		t.Error("the tool ran without approval")
	}
}

func TestBusySession(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", hanging())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := f.bot.NewTurn(ctx, hearth.Request{SessionID: "s-busy", Message: "first"})
	started := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range first.Events() {
			if ev.Type == hearth.EventTextDelta {
				close(started)
			}
		}
	}()
	<-started
	_, err := f.bot.NewTurn(context.Background(), hearth.Request{SessionID: "s-busy", Message: "second"}).Result()
	if !errors.Is(err, session.ErrBusy) {
		t.Errorf("second turn: %v", err)
	}
	cancel()
	<-done
	if res, _ := first.Result(); res.Reason != hearth.DoneCancelled {
		t.Errorf("first turn %+v", res)
	}
}

func TestProviderFailureIsAnError(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", llmtest.OllamaError(404, "model 'm' not found"))
	res, err := f.bot.NewTurn(context.Background(), hearth.Request{Message: "hi"}).Result()
	if llm.CodeOf(err) != llm.CodeModelNotFound || res == nil || res.Reason != hearth.DoneError {
		t.Errorf("%+v %v", res, err)
	}
}

func TestNewErrors(t *testing.T) {
	type withChan struct {
		C chan int `json:"c"`
	}
	provider := hearth.Ollama("http://127.0.0.1:1")
	tests := []struct {
		name string
		c    hearth.Config
		want string
	}{
		{"no provider", hearth.Config{Model: "m"}, "no provider"},
		{"bad mode", hearth.Config{Provider: provider, Model: "m", Profile: hearth.Profile{Mode: "careful"}}, "unknown approval mode"},
		{"schema cannot be inferred", hearth.Config{Provider: provider, Model: "m", Tools: []hearth.Tool{
			hearth.Func("bad", "bad", hearth.ReadOnly, func(ctx context.Context, a withChan) (string, error) { return "", nil })}}, "inferring the argument schema"},
		{"two tools, one name", hearth.Config{Provider: provider, Model: "m", Tools: []hearth.Tool{
			hearth.Func("t", "t", hearth.ReadOnly, func(ctx context.Context, a configArgs) (string, error) { return "", nil }),
			hearth.Func("t", "t", hearth.ReadOnly, func(ctx context.Context, a configArgs) (string, error) { return "", nil })}}, "t"},
		{"profile names a missing tool", hearth.Config{Provider: provider, Model: "m", Profile: hearth.Profile{Name: "mine", Tools: []string{"query_*"}}}, `"query_*" matches no tool`},
		{"workspace missing", hearth.Config{Provider: provider, Model: "m", Workspace: "/nonexistent/dir"}, "workspace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bot, err := hearth.New(tt.c)
			if err == nil {
				bot.Close()
				t.Fatal("New succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q, want %q", err, tt.want)
			}
		})
	}
	// An agent without a model serves turns that name one (the HTTP API's
	// clients may); a turn that names none fails, saying what to do.
	bot, err := hearth.New(hearth.Config{Provider: provider})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	if _, err := bot.NewTurn(context.Background(), hearth.Request{Message: "hi"}).Result(); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("a turn without a model: %v", err)
	}
}

func TestProfiles(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("hello"), 0o644)
	a := &app{flags: map[string]bool{}}
	tests := []struct {
		name    string
		profile hearth.Profile
		ws      string
		want    []string
	}{
		{"API profile: host tools", hearth.Profile{}, "", []string{"get_app_config", "query_database", "set_feature_flag"}},
		{"API profile with a workspace: read-only built-ins too", hearth.Profile{}, ws,
			[]string{"read_file", "read_many_files", "list_directory", "glob", "grep_search", "get_app_config", "query_database", "set_feature_flag", "update_plan"}},
		{"chosen tools", hearth.Profile{Tools: []string{"get_*", "query_database"}}, "", []string{"get_app_config", "query_database"}},
		{"all but one", hearth.Profile{Tools: []string{"*", "!set_feature_flag"}}, "", []string{"get_app_config", "query_database", "update_plan"}},
		{"no tools", hearth.Profile{Tools: []string{}}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bot, err := hearth.New(hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Model: "m", Tools: a.tools(), Profile: tt.profile, Workspace: tt.ws})
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close()
			if got := bot.Tools(); !slices.Equal(got, tt.want) {
				t.Errorf("tools %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTemporaryStoreIsRemoved(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("hi")))
	res, err := f.bot.NewTurn(context.Background(), hearth.Request{Message: "hi"}).Result()
	if err != nil {
		t.Fatal(err)
	}
	path := f.bot.Store().(*session.SQLite).Path()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	f.bot.Close()
	if _, err := os.Stat(filepath.Dir(path)); !os.IsNotExist(err) {
		t.Errorf("%s is still there", path)
	}
	if _, err := f.bot.NewTurn(context.Background(), hearth.Request{SessionID: res.SessionID, Message: "hi"}).Result(); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("turn after Close: %v", err)
	}
}

// TestNewServerServesHostTools: the HTTP API of an embedded agent offers
// its host tools.
func TestNewServerServesHostTools(t *testing.T) {
	f := newFixture(t)
	token := server.NewToken()
	api, err := server.New(f.bot, server.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(api)
	client := &http.Client{Transport: &http.Transport{}}
	defer func() {
		api.Close()
		client.CloseIdleConnections()
		hs.Close()
	}()
	call := func(method, path, body string) string {
		req, _ := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		return string(data)
	}
	if h := call("GET", "/v1/health", ""); !strings.Contains(h, `"tools":["get_app_config","query_database","set_feature_flag"]`) {
		t.Errorf("health %s", h)
	}
	var se struct{ ID string }
	json.Unmarshal([]byte(call("POST", "/v1/sessions", "")), &se)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("get_app_config", `{}`)),
		llmtest.OllamaStream("m", llmtest.Text("The cache is off.")))
	stream := call("POST", "/v1/sessions/"+se.ID+"/turns", `{"message":"is the cache on?"}`)
	if !strings.Contains(stream, `"type":"tool_result","id":"call_1","name":"get_app_config","ok":true`) ||
		!strings.Contains(stream, `{"type":"done","reason":"stop","text":"The cache is off."}`) {
		t.Errorf("stream:\n%s", stream)
	}
}

// TestSessionModeAndUnattended: the session's mode decides, during a turn
// too (a waiting approval that the new mode allows is answered by the
// runtime); an unattended turn streams its events and refuses what needs
// an answer at once; an approval nobody answers times out denied.
func TestSessionModeAndUnattended(t *testing.T) {
	flag := llmtest.Call("set_feature_flag", `{"name":"fast_checkout","on":true}`)
	t.Run("mode switched while an approval waits", func(t *testing.T) {
		f := newFixture(t)
		f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", flag), llmtest.OllamaStream("m", llmtest.Text("Done.")))
		turn := f.bot.NewTurn(context.Background(), hearth.Request{SessionID: "s1", Message: "go"})
		asked := ""
		evs := collect(t, turn, func(ev hearth.Event) {
			asked = ev.ID
			if w := turn.Waiting(); len(w) != 1 || w[0] != ev.ID {
				t.Errorf("waiting %v", w)
			}
			if err := turn.Session().SetMode(hearth.ModeAutoEdit); err != nil {
				t.Error(err)
			}
		})
		if len(f.app.ran()) != 1 || f.bot.Session("s1").Mode() != hearth.ModeAutoEdit {
			t.Fatalf("ran %v, mode %s; events %v", f.app.ran(), f.bot.Session("s1").Mode(), typesOf(evs))
		}
		if err := turn.Approve(asked, hearth.Allow); asked == "" || !errors.Is(err, hearth.ErrNoApproval) {
			t.Errorf("answering after the mode did: %v", err)
		}
		if err := f.bot.Session("s1").SetMode("careful"); err == nil {
			t.Error("an unknown mode was taken")
		}
	})
	t.Run("unattended", func(t *testing.T) {
		f := newFixture(t)
		f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", flag), llmtest.OllamaStream("m", llmtest.Text("Could not.")))
		turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go", Unattended: true})
		var result hearth.Event
		evs := collect(t, turn, func(hearth.Event) {})
		for _, ev := range evs {
			if ev.Type == hearth.EventToolResult {
				result = ev
			}
		}
		if len(f.app.ran()) != 0 || result.OK || !strings.Contains(result.Error, "cannot ask") {
			t.Errorf("ran %v, result %+v", f.app.ran(), result)
		}
	})
	t.Run("approval timeout", func(t *testing.T) {
		f := newFixture(t)
		f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", flag), llmtest.OllamaStream("m", llmtest.Text("No one answered.")))
		turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go", ApprovalTimeout: 10 * time.Millisecond})
		var result hearth.Event
		for _, ev := range collect(t, turn, nil) {
			if ev.Type == hearth.EventToolResult {
				result = ev
			}
		}
		if len(f.app.ran()) != 0 || !strings.Contains(result.Error, "no one answered within 10ms") {
			t.Errorf("ran %v, result %+v", f.app.ran(), result)
		}
	})
}

// TestHostToolNamedUpdatePlan: a program that registers its own
// update_plan keeps it; Hearth's plan tool steps aside.
func TestHostToolNamedUpdatePlan(t *testing.T) {
	type todo struct {
		Item string `json:"item"`
	}
	mine := hearth.Func("update_plan", "The app's own to-do list", hearth.ReadOnly, func(ctx context.Context, a todo) (string, error) { return "noted", nil })
	srv := llmtest.New(t)
	a, err := hearth.New(hearth.Config{Provider: hearth.Ollama(srv.URL), Model: "m", Tools: []hearth.Tool{mine}, Workspace: t.TempDir(),
		Profile: hearth.Profile{Tools: []string{"*"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sp, _, ok := a.ToolSpec("update_plan")
	if !ok || sp.Description != "The app's own to-do list" {
		t.Errorf("update_plan is %+v", sp)
	}
}
