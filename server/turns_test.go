package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

func TestTurnStreamsTheEventContract(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Thinking("Let me look."), llmtest.Call("read_note", `{}`), llmtest.Usage(100, 7)),
		llmtest.OllamaStream("m", llmtest.Text("It says "), llmtest.Text("hi."), llmtest.Usage(130, 4)))
	st := f.turn(id, map[string]any{"message": "what does the note say?"})
	if st.resp.Header.Get("Hearth-Session-Id") != id || !strings.HasPrefix(st.resp.Header.Get("Hearth-Turn-Id"), "t-") {
		t.Errorf("headers %v", st.resp.Header)
	}
	frs := st.rest()
	want := []string{"session", "thinking_start", "thinking_delta", "thinking_end", "tool_call", "usage", "tool_result",
		"text_delta", "text_delta", "usage", "done"}
	if !slices.Equal(types(frs), want) {
		t.Fatalf("events %v\nwant   %v", types(frs), want)
	}
	turnID := st.resp.Header.Get("Hearth-Turn-Id")
	for i, fr := range frs {
		if fr.ID != fmt.Sprintf("%s.%d", turnID, i+1) {
			t.Errorf("event %d has id %q", i+1, fr.ID)
		}
	}
	// The data lines are exactly the contract's JSON (docs/events.md).
	exact := map[int]string{
		0:  `{"type":"session","session_id":"` + id + `","provider":"ollama","model":"m"}`,
		1:  `{"type":"thinking_start"}`,
		2:  `{"type":"thinking_delta","text":"Let me look."}`,
		4:  `{"type":"tool_call","id":"call_1","name":"read_note","args":{}}`,
		5:  `{"type":"usage","input_tokens":100,"output_tokens":7}`,
		6:  `{"type":"tool_result","id":"call_1","name":"read_note","ok":true,"output":"the note says hi"}`,
		10: `{"type":"done","reason":"stop","text":"It says hi."}`,
	}
	for i, w := range exact {
		if frs[i].Data != w {
			t.Errorf("event %d:\n got %s\nwant %s", i+1, frs[i].Data, w)
		}
	}
	// The session keeps the turn.
	var d sessionDetail
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if len(d.Messages) != 4 || d.Messages[3].Content != "It says hi." || d.InputTokens != 230 || len(d.ToolRuns) != 1 || d.RunningTurn != "" {
		t.Errorf("stored session: %+v", d)
	}
	if d.Title == "" {
		t.Error("no title after the first turn")
	}
}

func TestTurnContextReachesTheModelButIsNotKept(t *testing.T) {
	tests := []struct {
		name    string
		context any
		want    string
	}{
		{"string", "The user is looking at orders.csv", "The user is looking at orders.csv"},
		{"object", map[string]any{"view": "orders", "selection": []int{3, 4}}, `{"selection":[3,4],"view":"orders"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.newSession()
			f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Row 3 is late.")))
			f.turn(id, map[string]any{"message": "which row is late?", "context": tt.context}).rest()
			var sent struct {
				Messages []llm.Message `json:"messages"`
			}
			f.fake.RequestsTo("/api/chat")[0].JSON(t, &sent)
			found := false
			for _, m := range sent.Messages {
				found = found || strings.Contains(m.Content, tt.want)
			}
			if !found {
				t.Errorf("the model was not sent the context %q: %+v", tt.want, sent.Messages)
			}
			var d sessionDetail
			f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
			for _, m := range d.Messages {
				if strings.Contains(m.Content, tt.want) {
					t.Errorf("the session kept the context: %+v", m)
				}
			}
		})
	}
}

// A turn answers without asking for a title: the session has its first
// prompt's at once, and POST …/title asks the model for a better one,
// once.
func TestTitleInTheBackground(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Row 3 is late.")))
	f.turn(id, map[string]any{"message": "which row is late?\nthe csv"}).rest()
	if n := len(f.fake.RequestsTo("/api/chat")); n != 1 {
		t.Errorf("%d model requests in the turn: it must not wait on a title", n)
	}
	var se sessionJSON
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &se)
	if se.Title != "which row is late" {
		t.Errorf("title after the turn %q", se.Title)
	}
	f.fake.Enqueue("/api/chat", llmtest.OllamaError(500, "out of memory"))
	f.call("POST", "/v1/sessions/"+id+"/title", nil, http.StatusBadGateway, nil)
	f.fake.Enqueue("/api/chat", llmtest.OllamaWhole("m", llmtest.Text("Late rows")))
	f.call("POST", "/v1/sessions/"+id+"/title", map[string]any{"model": "m"}, http.StatusOK, &se)
	if se.Title != "Late rows" {
		t.Errorf("title %q", se.Title)
	}
	// Titled: no model call again.
	f.call("POST", "/v1/sessions/"+id+"/title", nil, http.StatusOK, &se)
	if n := len(f.fake.RequestsTo("/api/chat")); n != 3 || se.Title != "Late rows" {
		t.Errorf("%d model requests, title %q", n, se.Title)
	}
	f.call("POST", "/v1/sessions/s-nope/title", nil, http.StatusNotFound, nil)
}

func TestReconnectWithLastEventIDLosesNothing(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	parts := []llmtest.Part{}
	for i := range 8 {
		parts = append(parts, llmtest.Pause(20*time.Millisecond), llmtest.Text(fmt.Sprintf("w%d ", i)))
	}
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", parts...))
	st := f.turn(id, map[string]any{"message": "count"})
	first := []frame{st.must(), st.must(), st.must()}
	st.close() // the client goes away mid-turn
	eventually(t, "the stream handler ends", func() bool { return f.api.streams.Load() == 0 })

	rest := f.follow(id, first[2].ID).rest()
	got := append(first, rest...)
	if got[len(got)-1].Type != "done" || got[len(got)-1].str("text") != "w0 w1 w2 w3 w4 w5 w6 w7 " {
		t.Fatalf("the resumed stream did not end with the whole answer: %v", types(got))
	}
	// Nothing lost, nothing twice: the same events as a full replay.
	full := f.follow(id, "").rest()
	if len(full) != len(got) {
		t.Fatalf("resumed %d events, replay has %d", len(got), len(full))
	}
	for i := range full {
		if full[i].ID != got[i].ID || full[i].Data != got[i].Data {
			t.Errorf("event %d: resumed %s %s, replay %s %s", i, got[i].ID, got[i].Data, full[i].ID, full[i].Data)
		}
	}
	// The query parameter works as the header does (EventSource-less clients).
	req := f.request("GET", "/v1/sessions/"+id+"/events?last_event_id="+full[len(full)-2].ID, nil)
	resp := f.send(req)
	if tail := newStream(t, resp).rest(); len(tail) != 1 || tail[0].Type != "done" {
		t.Errorf("after the last-but-one event: %v", types(tail))
	}
}

func TestFollowErrors(t *testing.T) {
	f := newFixture(t)
	idle := f.newSession()
	ran := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	frs := f.turn(ran, map[string]any{"message": "hi"}).rest()
	last := frs[len(frs)-1].ID
	turnID, n, _ := parseEventID(last)
	tests := []struct {
		name, session, lastID string
		status                int
		code                  string
	}{
		{"no such session", "s-nope", "", 404, "not_found"},
		{"no turn yet", idle, "", 404, "no_turn"},
		{"malformed id", ran, "garbage", 400, "bad_request"},
		{"another turn", ran, "t-other.3", 410, "events_gone"},
		{"past the end", ran, fmt.Sprintf("%s.%d", turnID, n+5), 400, "bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := f.request("GET", "/v1/sessions/"+tt.session+"/events", nil)
			if tt.lastID != "" {
				req.Header.Set("Last-Event-ID", tt.lastID)
			}
			status, code, msg := f.errorCode(req)
			if status != tt.status || code != tt.code {
				t.Errorf("status %d %s (%s), want %d %s", status, code, msg, tt.status, tt.code)
			}
		})
	}
	// Evicted after KeepEvents: the client is told to reload.
	eventually(t, "the turn has an eviction timer", func() bool {
		f.api.mu.Lock()
		defer f.api.mu.Unlock()
		if tr := f.api.turns[ran]; tr.evict != nil {
			tr.evict.Reset(0)
			return true
		}
		return false
	})
	eventually(t, "the turn is forgotten", func() bool {
		f.api.mu.Lock()
		defer f.api.mu.Unlock()
		return f.api.turns[ran] == nil
	})
	req := f.request("GET", "/v1/sessions/"+ran+"/events", nil)
	req.Header.Set("Last-Event-ID", last)
	if status, code, _ := f.errorCode(req); status != 410 || code != "events_gone" {
		t.Errorf("after eviction: %d %s", status, code)
	}
}

func TestLongTurnKeepsItsLatestEvents(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.MaxTurnEvents = 400 })
	id := f.newSession()
	parts, answer := []llmtest.Part{}, ""
	for i := range 20 {
		parts = append(parts, llmtest.Text(fmt.Sprintf("word%d ", i)))
		answer += fmt.Sprintf("word%d ", i)
		if i == 0 {
			// The first events must still be kept when the client that
			// started the turn begins reading (under -race on a loaded
			// machine the whole turn can otherwise outrun it, and the
			// stream ends before its first event, as a lagging client's
			// does).
			parts = append(parts, llmtest.Pause(500*time.Millisecond))
		}
	}
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", parts...))
	st := f.turn(id, map[string]any{"message": "talk"})
	first := st.must()
	st.close() // the client goes; the turn talks on
	eventually(t, "the turn ends", func() bool {
		f.api.mu.Lock()
		defer f.api.mu.Unlock()
		return f.api.turns[id].finished()
	})
	// A replay starts at the oldest event kept, and ends as the turn did.
	kept := f.follow(id, "").rest()
	turnID, _, _ := parseEventID(first.ID)
	if last := kept[len(kept)-1]; len(kept) >= 23 || last.ID != turnID+".23" || last.str("text") != answer {
		t.Errorf("replay of %d events: %v, last %s", len(kept), types(kept), kept[len(kept)-1].Data)
	}
	// Resuming after an event no longer kept is refused; after a kept one
	// works.
	req := f.request("GET", "/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Last-Event-ID", first.ID)
	if status, code, _ := f.errorCode(req); status != 410 || code != "events_gone" {
		t.Errorf("resume after a dropped event: %d %s", status, code)
	}
	if tail := f.follow(id, kept[0].ID).rest(); len(tail) != len(kept)-1 {
		t.Errorf("resume after the oldest kept: %d events", len(tail))
	}
}

// hanging is a reply that streams "partial" and then nothing until the
// client goes.
func hanging() llmtest.Scenario {
	return llmtest.OllamaStream("m", llmtest.Text("partial"), llmtest.Pause(time.Hour), llmtest.Text(" never"))
}

func TestCancelEndsTheTurnAndKeepsThePartialReply(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat", hanging())
	st := f.turn(id, map[string]any{"message": "go"})
	st.until("text_delta")
	var se sessionJSON
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &se)
	if se.RunningTurn == "" {
		t.Error("running_turn is empty during the turn")
	}
	var res struct {
		TurnID   string `json:"turn_id"`
		Finished bool   `json:"finished"`
		Reason   string `json:"reason"`
	}
	f.call("POST", "/v1/sessions/"+id+"/cancel", nil, http.StatusOK, &res)
	if !res.Finished || res.Reason != "cancelled" || res.TurnID != st.resp.Header.Get("Hearth-Turn-Id") {
		t.Errorf("cancel answered %+v", res)
	}
	rest := st.rest()
	if last := rest[len(rest)-1]; last.Type != "done" || last.str("reason") != "cancelled" {
		t.Errorf("stream ended with %v", types(rest))
	}
	eventually(t, "the model request is dropped", func() bool { return f.fake.ClientsGone() == 1 })
	msgs, _ := f.store.Messages(context.Background(), id)
	if len(msgs) != 2 || msgs[1].Content != "partial" || !msgs[1].Partial {
		t.Errorf("stored %+v", msgs)
	}
	// Nothing runs now.
	if status, code, _ := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/cancel", nil)); status != 409 || code != "not_running" {
		t.Errorf("second cancel: %d %s", status, code)
	}
	if status, code, _ := f.errorCode(f.request("POST", "/v1/sessions/s-nope/cancel", nil)); status != 404 || code != "not_found" {
		t.Errorf("cancel of a missing session: %d %s", status, code)
	}
}

func TestBusySessionGets409(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat", hanging())
	st := f.turn(id, map[string]any{"message": "first"})
	st.until("text_delta")

	status, code, msg := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "second"}))
	if status != http.StatusConflict || code != "session_busy" || !strings.Contains(msg, "/cancel") {
		t.Errorf("second turn: %d %s %s", status, code, msg)
	}
	if status, code, _ := f.errorCode(f.request("DELETE", "/v1/sessions/"+id, nil)); status != http.StatusConflict || code != "session_busy" {
		t.Errorf("delete during a turn: %d %s", status, code)
	}
	f.call("POST", "/v1/sessions/"+id+"/cancel", nil, http.StatusOK, nil)
	st.rest()
	// The second message never reached the store or the model.
	msgs, _ := f.store.Messages(context.Background(), id)
	for _, m := range msgs {
		if m.Content == "second" {
			t.Error("the refused turn was stored")
		}
	}
	if n := len(f.fake.RequestsTo("/api/chat")); n != 1 {
		t.Errorf("%d model calls, want 1", n)
	}
	// Free again.
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	if frs := f.turn(id, map[string]any{"message": "third"}).rest(); frs[len(frs)-1].str("reason") != "stop" {
		t.Errorf("third turn: %v", types(frs))
	}
}

func TestTurnInASessionMadeElsewhere(t *testing.T) {
	f := newFixture(t)
	se := session.Session{Title: "from hearth run"} // not seen by the API yet
	if err := f.store.Create(context.Background(), &se); err != nil {
		t.Fatal(err)
	}
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	if frs := f.turn(se.ID, map[string]any{"message": "hi"}).rest(); frs[0].str("session_id") != se.ID {
		t.Errorf("events %v", types(frs))
	}
}

func TestBusyInAnotherProcessGets409(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	unlock, err := f.store.Lock(context.Background(), id) // as `hearth run --context` would
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	status, code, msg := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "hi"}))
	if status != http.StatusConflict || code != "session_busy" {
		t.Errorf("%d %s %s", status, code, msg)
	}
	unlock()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	f.turn(id, map[string]any{"message": "hi"}).rest()
}

func TestApprovals(t *testing.T) {
	tests := []struct {
		name     string
		answer   map[string]any
		wantOK   bool
		wantErr  string
		wantRuns int
	}{
		{"allow", map[string]any{"decision": "allow"}, true, "", 1},
		{"deny", map[string]any{"decision": "deny", "message": "not today"}, false, "the user denied this call: not today", 0},
		{"always", map[string]any{"decision": "always"}, true, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			id := f.newSession()
			f.fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.Call("write_note", `{"text":"hello"}`)),
				llmtest.OllamaStream("m", llmtest.Text("Done.")))
			st := f.turn(id, map[string]any{"message": "write hello"})
			frs := st.until("approval_required")
			ask := frs[len(frs)-1]
			if ask.str("id") != "call_1" || ask.str("name") != "write_note" || ask.str("reason") == "" {
				t.Errorf("approval_required: %s", ask.Data)
			}
			var ans map[string]string
			f.call("POST", "/v1/approvals/call_1", tt.answer, http.StatusOK, &ans)
			if ans["session_id"] != id || ans["decision"] != tt.answer["decision"] {
				t.Errorf("answer: %v", ans)
			}
			res := st.until("tool_result")
			r := res[len(res)-1]
			if ok, _ := r.ev["ok"].(bool); ok != tt.wantOK || r.str("error") != tt.wantErr {
				t.Errorf("tool_result %s", r.Data)
			}
			st.rest()
			if n := len(f.writes()); n != tt.wantRuns {
				t.Errorf("the tool ran %d times, want %d", n, tt.wantRuns)
			}
			// A second turn calling the tool again asks again, unless
			// the answer was "always".
			f.fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.Call("write_note", `{"text":"again"}`)),
				llmtest.OllamaStream("m", llmtest.Text("Done.")))
			st = f.turn(id, map[string]any{"message": "again"})
			next := st.must()
			for next.Type != "approval_required" && next.Type != "tool_result" {
				next = st.must()
			}
			asked := next.Type == "approval_required"
			if asked != (tt.answer["decision"] != "always") {
				t.Errorf("second turn asked=%v", asked)
			}
			if asked {
				f.call("POST", "/v1/approvals/call_1", map[string]any{"decision": "deny"}, http.StatusOK, nil)
			}
			st.rest()
		})
	}
}

func TestApprovalErrors(t *testing.T) {
	f := newFixture(t)
	a, b := f.newSession(), f.newSession()
	for range 2 {
		f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Call("write_note", `{"text":"x"}`)))
	}
	sa := f.turn(a, map[string]any{"message": "write"})
	sa.until("approval_required")
	sb := f.turn(b, map[string]any{"message": "write"})
	sb.until("approval_required")
	tests := []struct {
		name   string
		id     string
		body   any
		status int
		code   string
	}{
		{"bad decision", "call_1", map[string]any{"decision": "maybe"}, 400, "bad_request"},
		{"no body", "call_1", nil, 400, "bad_request"},
		{"unknown field", "call_1", map[string]any{"decision": "allow", "why": "x"}, 400, "bad_request"},
		{"unknown call", "call_9", map[string]any{"decision": "allow"}, 404, "no_approval"},
		{"two sessions wait on call_1", "call_1", map[string]any{"decision": "deny"}, 409, "ambiguous_approval"},
		{"other session", "call_1", map[string]any{"decision": "deny", "session_id": "s-nope"}, 404, "no_approval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, msg := f.errorCode(f.request("POST", "/v1/approvals/"+tt.id, tt.body))
			if status != tt.status || code != tt.code {
				t.Errorf("%d %s (%s), want %d %s", status, code, msg, tt.status, tt.code)
			}
		})
	}
	// session_id picks one.
	for _, s := range []string{a, b} {
		f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
		f.call("POST", "/v1/approvals/call_1", map[string]any{"decision": "deny", "session_id": s}, http.StatusOK, nil)
	}
	for _, st := range []*sseStream{sa, sb} {
		if frs := st.rest(); frs[len(frs)-1].str("reason") != "stop" {
			t.Errorf("turn ended with %v", types(frs))
		}
	}
	// Answered: nothing waits any more.
	if status, code, _ := f.errorCode(f.request("POST", "/v1/approvals/call_1", map[string]any{"decision": "allow", "session_id": a})); status != 404 || code != "no_approval" {
		t.Errorf("late answer: %d %s", status, code)
	}
}

func TestApprovalTimesOut(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.ApprovalTimeout = 50 * time.Millisecond })
	id := f.newSession()
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_note", `{"text":"x"}`)),
		llmtest.OllamaStream("m", llmtest.Text("I could not write it.")))
	frs := f.turn(id, map[string]any{"message": "write"}).rest()
	for _, fr := range frs {
		if fr.Type == "tool_result" && !strings.Contains(fr.str("error"), "no one answered within 50ms") {
			t.Errorf("tool_result %s", fr.Data)
		}
	}
	if len(f.writes()) != 0 {
		t.Error("the tool ran without approval")
	}
}

func TestTurnRequestErrors(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	tests := []struct {
		name, session string
		body          any
		status        int
		code          string
	}{
		{"empty message", id, map[string]any{"message": "  "}, 400, "bad_request"},
		{"no body", id, nil, 400, "bad_request"},
		{"not JSON", id, "message=hi", 400, "bad_request"},
		{"unknown field", id, map[string]any{"message": "hi", "prompt": "x"}, 400, "bad_request"},
		{"two objects", id, `{"message":"a"} {"message":"b"}`, 400, "bad_request"},
		{"no session", "s-nope", map[string]any{"message": "hi"}, 404, "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, msg := f.errorCode(f.request("POST", "/v1/sessions/"+tt.session+"/turns", tt.body))
			if status != tt.status || code != tt.code {
				t.Errorf("%d %s (%s), want %d %s", status, code, msg, tt.status, tt.code)
			}
		})
	}
	req := f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "hi"})
	req.Header.Set("Content-Type", "text/plain")
	if status, _, _ := f.errorCode(req); status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain body: %d", status)
	}
	// A refused request leaves the session free.
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	f.turn(id, map[string]any{"message": "hi"}).rest()
}

func TestTurnModelOverrideAndNoModel(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Model = "" })
	id := f.newSession()
	if status, code, _ := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "hi"})); status != 400 || code != "no_model" {
		t.Errorf("no model: %d %s", status, code)
	}
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("other", llmtest.Text("ok")))
	frs := f.turn(id, map[string]any{"message": "hi", "model": "other"}).rest()
	if frs[0].str("model") != "other" {
		t.Errorf("session event %s", frs[0].Data)
	}
	var sent struct {
		Model string `json:"model"`
	}
	f.fake.RequestsTo("/api/chat")[0].JSON(t, &sent)
	if sent.Model != "other" {
		t.Errorf("the model was asked for %q", sent.Model)
	}
}

func TestProviderErrorStreamsErrorThenDone(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaError(404, "model 'm' not found"))
	frs := f.turn(id, map[string]any{"message": "hi"}).rest()
	if got := types(frs); !slices.Equal(got, []string{"session", "error", "done"}) {
		t.Fatalf("events %v", got)
	}
	if frs[1].str("code") != "provider_model_not_found" || frs[2].str("reason") != "error" {
		t.Errorf("error %s, done %s", frs[1].Data, frs[2].Data)
	}
}

func TestCloseCancelsRunningTurns(t *testing.T) {
	f := newFixture(t)
	id := f.newSession()
	if n := f.api.Running(); n != 0 {
		t.Fatalf("Running() = %d before any turn", n)
	}
	f.fake.Enqueue("/api/chat", hanging())
	st := f.turn(id, map[string]any{"message": "go"})
	st.until("text_delta")
	if n := f.api.Running(); n != 1 {
		t.Fatalf("Running() = %d during a turn, want 1", n)
	}
	done := make(chan struct{})
	go func() { f.api.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return")
	}
	st.rest() // the stream ends
	if n := f.api.Running(); n != 0 {
		t.Errorf("Running() = %d after Close, want 0 (the turn is kept, finished)", n)
	}
	msgs, _ := f.store.Messages(context.Background(), id)
	if len(msgs) != 2 || !msgs[1].Partial {
		t.Errorf("stored %+v", msgs)
	}
	if status, code, _ := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "hi"})); status != 503 || code != "shutting_down" {
		t.Errorf("turn after Close: %d %s", status, code)
	}
}

func TestIdleStreamsGetKeepAlives(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Heartbeat = 10 * time.Millisecond })
	id := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Pause(100*time.Millisecond), llmtest.Text("late")))
	resp := f.send(f.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "wait"}))
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if n := strings.Count(string(data), ": keep-alive\n\n"); n < 2 || !strings.Contains(string(data), `"type":"done"`) {
		t.Errorf("%d keep-alives in\n%s", n, data)
	}
}

func TestContextText(t *testing.T) {
	// contextText keeps strings as they are and JSON values compact.
	for in, want := range map[string]string{`"a\nb"`: "a\nb", `null`: "", `{"a": [1, 2]}`: `{"a":[1,2]}`, `42`: "42"} {
		got, err := contextText(json.RawMessage(in))
		if err != nil || got != want {
			t.Errorf("contextText(%s) = %q, %v; want %q", in, got, err, want)
		}
	}
}
