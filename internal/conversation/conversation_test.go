package conversation

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// watched checks, whenever the model is called, that the store already holds
// the user's message.
type watched struct {
	llm.Provider
	t     *testing.T
	store session.Store
	id    *string
	seen  []int
}

func (w *watched) Chat(ctx context.Context, req *llm.Request) llm.Stream {
	if *w.id != "" {
		msgs, err := w.store.Messages(ctx, *w.id)
		if err != nil {
			w.t.Errorf("model called before the session exists: %v", err)
		}
		w.seen = append(w.seen, len(msgs))
	}
	return w.Provider.Chat(ctx, req)
}

type fixture struct {
	srv   *llmtest.Server
	store *session.SQLite
	a     *agent.Agent
	ran   []string
}

func newFixture(t *testing.T) *fixture {
	srv := llmtest.New(t)
	store, err := session.Open(context.Background(), filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	f := &fixture{srv: srv, store: store}
	reg, _ := tool.NewRegistry(tool.MustFunc("read_file", "read", tool.ReadOnly, func(ctx context.Context, a struct {
		Path string `json:"path"`
	}) (string, error) {
		f.ran = append(f.ran, a.Path)
		return "content of " + a.Path, nil
	}))
	f.a = &agent.Agent{Provider: ollama.New(ollama.Options{BaseURL: srv.URL, NumCtx: 8192, MaxRetries: -1}), Model: "m", Tools: reg}
	return f
}

func (f *fixture) turn(t *testing.T, id, prompt string) (*Outcome, []agent.Event, error) {
	var evs []agent.Event
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: id, Provider: "ollama", Model: "m", Workspace: "/w"},
		Prompt: llm.Message{Content: prompt}}
	out, err := tr.Run(context.Background(), func(e agent.Event) { evs = append(evs, e) })
	return out, evs, err
}

func TestTwoStepConversation(t *testing.T) {
	f := newFixture(t)
	id := ""
	w := &watched{Provider: f.a.Provider, t: t, store: f.store, id: &id}
	f.a.Provider = w
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"path":"error.log"}`), llmtest.Usage(100, 5)),
		llmtest.OllamaStream("m", llmtest.Text("The log shows a nil map."), llmtest.Usage(150, 8)))
	out, evs, err := f.turn(t, "", "analyze error.log")
	if err != nil || out.Reason != agent.DoneStop || !out.Created || !strings.HasPrefix(out.SessionID, "s-") {
		t.Fatalf("%+v %v", out, err)
	}
	if evs[0].Type != agent.EventSession || evs[0].SessionID != out.SessionID || evs[0].Provider != "ollama" {
		t.Errorf("first event %+v", evs[0])
	}
	id = out.SessionID

	// Second step: the history comes back from the store.
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Fixed: initialise the map.")))
	out2, _, err := f.turn(t, id, "fix the error")
	if err != nil || out2.Created || out2.Text != "Fixed: initialise the map." {
		t.Fatalf("%+v %v", out2, err)
	}
	if len(w.seen) != 1 || w.seen[0] != 5 {
		t.Errorf("messages in the store when the model was called: %v (want the 4 of turn one and the new prompt)", w.seen)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	reqs := f.srv.RequestsTo("/api/chat")
	reqs[len(reqs)-1].JSON(t, &body)
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m["role"].(string))
	}
	if strings.Join(roles, ",") != "user,assistant,tool,assistant,user" {
		t.Errorf("history sent: %v", roles)
	}
	msgs, _ := f.store.Messages(context.Background(), id)
	if len(msgs) != 6 || msgs[1].ToolCalls[0].Name != "read_file" || msgs[2].ToolName != "read_file" || msgs[1].Tokens != 5 || msgs[3].Tokens != 8 {
		t.Errorf("stored: %+v", msgs)
	}
	runs, _ := f.store.ToolRuns(context.Background(), id)
	if len(runs) != 1 || !runs[0].OK || runs[0].Name != "read_file" || string(runs[0].Args) != `{"path":"error.log"}` {
		t.Errorf("tool runs: %+v", runs)
	}
	s, _ := f.store.Get(context.Background(), id)
	if s.InputTokens != 250+26 || s.Title != "analyze error.log" || s.Workspace != "/w" {
		t.Errorf("session: %+v", s)
	}
}

func TestProviderDiesMidAnswer(t *testing.T) {
	f := newFixture(t)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Thinking("let me"), llmtest.Text("The answer is 4"), llmtest.Cut()))
	out, _, err := f.turn(t, "s1", "2+2?")
	if err != nil || out.Reason != agent.DoneError {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(context.Background(), "s1")
	if len(msgs) != 3 || msgs[0].Content != "2+2?" || msgs[1].Content != "The answer is 4" || !msgs[1].Partial || msgs[1].Thinking != "let me" {
		t.Fatalf("stored: %+v", msgs)
	}
	// Why it failed is recorded after the partial reply.
	if !msgs[2].Failure || !strings.HasPrefix(msgs[2].Content, "Provider request failed: ") {
		t.Errorf("failure record: %+v", msgs[2])
	}
}

// TestFailedTurnIsKeptAndRetried: a turn whose model server cannot be
// reached keeps the message, a record of the failure and a title from the
// prompt; a Retry runs the same message again, sending the model neither
// the message twice nor the failure, and needs an unanswered message.
func TestFailedTurnIsKeptAndRetried(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.srv.Enqueue("/api/chat", llmtest.OllamaError(500, "model runner has unexpectedly stopped"))
	out, _, err := f.turn(t, "s1", "why does the build fail?")
	if err != nil || out.Reason != agent.DoneError {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(ctx, "s1")
	if len(msgs) != 2 || msgs[0].Content != "why does the build fail?" || !msgs[1].Failure || !strings.Contains(msgs[1].Content, "model runner has unexpectedly stopped") {
		t.Fatalf("stored: %+v", msgs)
	}
	if s, _ := f.store.Get(ctx, "s1"); s.Title != "why does the build fail" {
		t.Errorf("title %q", s.Title)
	}

	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("A missing import.")))
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: "s1"}, Retry: true}
	out, err = tr.Run(ctx, func(agent.Event) {})
	if err != nil || out.Reason != agent.DoneStop || out.Text != "A missing import." {
		t.Fatalf("retry: %+v %v", out, err)
	}
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	reqs := f.srv.RequestsTo("/api/chat")
	reqs[len(reqs)-1].JSON(t, &body)
	var sent []string
	for _, m := range body.Messages {
		sent = append(sent, m.Role+":"+m.Content)
	}
	if strings.Join(sent, "|") != "user:why does the build fail?" {
		t.Errorf("the retry sent %q", sent)
	}
	msgs, _ = f.store.Messages(ctx, "s1")
	if len(msgs) != 3 || msgs[2].Content != "A missing import." || msgs[2].Failure {
		t.Errorf("stored: %+v", msgs)
	}
	// Nothing is left to retry, nor in a session that does not exist.
	for _, id := range []string{"s1", "s-none"} {
		tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: id}, Retry: true}
		if _, err := tr.Run(ctx, func(agent.Event) {}); !errors.Is(err, ErrNothingToRetry) {
			t.Errorf("%s: %v", id, err)
		}
	}
	if _, err := f.store.Get(ctx, "s-none"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a retry created a session: %v", err)
	}
	// A new message after a failed turn: the failure is not sent either.
	f.srv.Enqueue("/api/chat", llmtest.OllamaError(500, "boom"), llmtest.OllamaStream("m", llmtest.Text("Hello again.")))
	f.turn(t, "s2", "first")
	if _, _, err := f.turn(t, "s2", "second"); err != nil {
		t.Fatal(err)
	}
	reqs = f.srv.RequestsTo("/api/chat")
	reqs[len(reqs)-1].JSON(t, &body)
	sent = sent[:0]
	for _, m := range body.Messages {
		sent = append(sent, m.Role+":"+m.Content)
	}
	if strings.Join(sent, "|") != "user:first|assistant:(no reply)|user:second" {
		t.Errorf("sent %q", sent)
	}
}

func TestCancelKeepsWhatCame(t *testing.T) {
	f := newFixture(t)
	sc := llmtest.OllamaStream("m", llmtest.Text("partial"))
	sc.Chunks = sc.Chunks[:1]
	sc.Hang = true
	f.srv.Enqueue("/api/chat", sc)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: "s1"}, Prompt: llm.Message{Content: "go"}}
	out, err := tr.Run(ctx, func(e agent.Event) {
		if e.Type == agent.EventTextDelta {
			cancel()
		}
	})
	if err != nil || out.Reason != agent.DoneCancelled {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(context.Background(), "s1")
	if len(msgs) != 2 || msgs[1].Content != "partial" || !msgs[1].Partial {
		t.Fatalf("stored: %+v", msgs)
	}
}

func TestBusySession(t *testing.T) {
	f := newFixture(t)
	f.store.LockTimeout = 50 * time.Millisecond
	unlock, _ := f.store.Lock(context.Background(), "s1")
	defer unlock()
	_, _, err := f.turn(t, "s1", "hi")
	if !errors.Is(err, session.ErrBusy) {
		t.Fatalf("%v", err)
	}
	if _, err := f.store.Get(context.Background(), "s1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("a busy turn wrote: %v", err)
	}
}

// A turn never waits on a title: the session is titled from its prompt
// at once, and the per-turn context is sent after the prompt's text,
// never stored.
func TestProvisionalTitleAndContext(t *testing.T) {
	f := newFixture(t)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Paris.")))
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: "s1"}, Prompt: llm.Message{Content: "capital of France?\nsay it briefly"}, Context: "The user is looking at france.md"}
	if _, err := tr.Run(context.Background(), func(agent.Event) {}); err != nil {
		t.Fatal(err)
	}
	if n := len(f.srv.RequestsTo("/api/chat")); n != 1 {
		t.Errorf("%d model requests: a turn must not ask for a title", n)
	}
	s, _ := f.store.Get(context.Background(), "s1")
	if s.Title != "capital of France" {
		t.Errorf("title %q", s.Title)
	}
	var body struct {
		Messages []map[string]any `json:"messages"`
	}
	f.srv.RequestsTo("/api/chat")[0].JSON(t, &body)
	if len(body.Messages) != 1 || !strings.HasPrefix(body.Messages[0]["content"].(string), "capital of France?\nsay it briefly\n\nContext") || !strings.HasSuffix(body.Messages[0]["content"].(string), "france.md") {
		t.Errorf("context not sent after the prompt: %+v", body.Messages)
	}
	msgs, _ := f.store.Messages(context.Background(), "s1")
	for _, m := range msgs {
		if strings.Contains(m.Content, "france.md") {
			t.Errorf("context was stored: %+v", m)
		}
	}
}

// Title asks the model once the session has an answer, with the
// conversation as its next turn would send it, and keeps a title that is
// not the provisional one.
func TestTitle(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		setup   func(f *fixture)
		reply   *llmtest.Scenario // the title request's answer; nil: no request expected
		want    string
		wantErr bool
	}{
		{name: "provisional", reply: ptr(llmtest.OllamaWhole("m", llmtest.Text("\"Capital of France.\"\n"))), want: "Capital of France"},
		{name: "user renamed", setup: func(f *fixture) { f.store.Rename(ctx, "s1", "mine") }, want: "mine"},
		{name: "no text", reply: ptr(llmtest.OllamaWhole("m", llmtest.Call("read_file", `{"path":"x"}`))), want: "capital", wantErr: true},
		{name: "server error", reply: ptr(llmtest.OllamaError(500, "boom")), want: "capital", wantErr: true},
		{name: "cut at the limit", reply: ptr(llmtest.OllamaWhole("m", llmtest.Text("Okay, the user asks about a capital, so I"), llmtest.Finish("length"))), want: "capital", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Call("read_file", `{"path":"a"}`)), llmtest.OllamaStream("m", llmtest.Text("Paris.")))
			if _, _, err := f.turn(t, "s1", "capital?"); err != nil {
				t.Fatal(err)
			}
			if tc.setup != nil {
				tc.setup(f)
			}
			if tc.reply != nil {
				f.srv.Enqueue("/api/chat", *tc.reply)
			}
			got, err := Title(ctx, f.store, f.a, "s1", nil)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("Title: %q, %v; want %q (error %v)", got, err, tc.want, tc.wantErr)
			}
			if s, _ := f.store.Get(ctx, "s1"); s.Title != tc.want {
				t.Errorf("stored title %q", s.Title)
			}
			reqs := f.srv.RequestsTo("/api/chat")
			if tc.reply == nil {
				if len(reqs) != 2 {
					t.Errorf("%d requests: the model was asked for a title the session has", len(reqs))
				}
				return
			}
			// The title request begins with the turn's last request
			// (system, history, tools, options), its reply after.
			var last, title map[string]any
			reqs[1].JSON(t, &last)
			reqs[len(reqs)-1].JSON(t, &title)
			lm, tm := last["messages"].([]any), title["messages"].([]any)
			if len(tm) != len(lm)+2 || !reflect.DeepEqual(tm[:len(lm)], lm) || !reflect.DeepEqual(title["tools"], last["tools"]) || !reflect.DeepEqual(title["options"].(map[string]any)["num_ctx"], last["options"].(map[string]any)["num_ctx"]) {
				t.Errorf("the title request does not begin with the conversation's:\n%s\n%s", reqs[1].Body, reqs[len(reqs)-1].Body)
			}
		})
	}
	t.Run("unanswered", func(t *testing.T) {
		f := newFixture(t)
		f.store.Create(ctx, &session.Session{ID: "s2", Title: "hi"})
		f.store.Append(ctx, "s2", session.Message{Message: llm.Message{Role: llm.RoleUser, Content: "hi"}})
		if got, err := Title(ctx, f.store, f.a, "s2", nil); err != nil || got != "hi" || len(f.srv.Requests()) != 0 {
			t.Errorf("%q %v, %d requests", got, err, len(f.srv.Requests()))
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestCompressionIsStored(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.store.Create(ctx, &session.Session{ID: "s1"})
	big := strings.Repeat("old detail ", 60)
	for range 6 {
		f.store.Append(ctx, "s1", session.Message{Message: llm.Message{Role: llm.RoleUser, Content: big}}, session.Message{Message: llm.Message{Role: llm.RoleAssistant, Content: big}})
	}
	f.a.ContextLength = 1000
	f.srv.Enqueue("/api/chat", llmtest.OllamaWhole("m", llmtest.Text("- old details")), llmtest.OllamaStream("m", llmtest.Text("ok")))
	out, _, err := f.turn(t, "s1", "and now?")
	if err != nil || out.Reason != agent.DoneStop {
		t.Fatalf("%+v %v", out, err)
	}
	msgs, _ := f.store.Messages(ctx, "s1")
	h := session.History(msgs)
	if !strings.HasPrefix(h[0].Content, agent.SummaryPrefix) || h[len(h)-1].Content != "ok" || h[len(h)-2].Content != "and now?" {
		t.Errorf("history after compression: %d messages, first %q", len(h), h[0].Content)
	}
	compacted := 0
	for _, m := range msgs {
		if m.Compacted {
			compacted++
		}
	}
	if compacted == 0 || len(h) >= len(msgs) {
		t.Errorf("%d compacted of %d", compacted, len(msgs))
	}
}

func TestFallbackTitle(t *testing.T) {
	for in, want := range map[string]string{
		"analyze error.log":         "analyze error.log",
		"  ## Fix this!\nmore":      "Fix this",
		"":                          "Untitled",
		strings.Repeat("word ", 30): strings.TrimSpace(strings.Repeat("word ", 12)) + "…",
	} {
		if got := ProvisionalTitle(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

// TestSecondCompressionKeepsWhatIsKept compresses twice across turns: no
// message the model still had may vanish from the saved history.
func TestSecondCompressionKeepsWhatIsKept(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.a.ContextLength = 1000
	big := strings.Repeat("old detail ", 60)
	f.store.Create(ctx, &session.Session{ID: "s1"})
	for range 6 {
		f.store.Append(ctx, "s1", session.Message{Message: llm.Message{Role: llm.RoleUser, Content: big}}, session.Message{Message: llm.Message{Role: llm.RoleAssistant, Content: big}})
	}
	// A long answer, so that turn 2 crosses the threshold again.
	f.srv.Enqueue("/api/chat", llmtest.OllamaWhole("m", llmtest.Text("- first summary")), llmtest.OllamaStream("m", llmtest.Text(strings.Repeat(big, 3))))
	if out, _, err := f.turn(t, "s1", "and now?"); err != nil || out.Reason != agent.DoneStop {
		t.Fatalf("turn 1: %+v %v", out, err)
	}
	f.srv.Enqueue("/api/chat", llmtest.OllamaWhole("m", llmtest.Text("- second summary")), llmtest.OllamaStream("m", llmtest.Text("ok")))
	if out, _, err := f.turn(t, "s1", "and then?"); err != nil || out.Reason != agent.DoneStop {
		t.Fatalf("turn 2: %+v %v", out, err)
	}
	msgs, _ := f.store.Messages(ctx, "s1")
	h := session.History(msgs)
	var got []string
	for _, m := range h {
		got = append(got, m.Content[:min(len(m.Content), 20)])
	}
	// The second request must be reproducible from the store: what the
	// model saw in turn 2 (the summary, then the kept messages, the
	// prompt) is the saved history before turn 2's answer.
	reqs := f.srv.RequestsTo("/api/chat")
	var body struct {
		Messages []llm.Message `json:"messages"`
	}
	reqs[len(reqs)-1].JSON(t, &body)
	sent := body.Messages[:0]
	for _, m := range body.Messages {
		if m.Content != "(no reply)" { // added for alternation, never stored
			sent = append(sent, m)
		}
	}
	body.Messages = sent
	if len(h) != len(body.Messages)+1 {
		t.Fatalf("saved history has %d messages, the model saw %d (+1 answer): %v", len(h), len(body.Messages), got)
	}
	for i, m := range body.Messages {
		if h[i].Content != m.Content {
			t.Fatalf("message %d differs: saved %q, sent %q", i, h[i].Content, m.Content)
		}
	}
	if !strings.Contains(h[0].Content, "second summary") || h[len(h)-2].Content != "and then?" {
		t.Errorf("history: %v", got)
	}
}
