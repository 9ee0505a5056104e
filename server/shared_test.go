package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// sharedFixtures returns n API servers ("instances") on one PostgreSQL
// database, each with its own store (its own connections, as separate
// processes would have), agent and scripted model; opts apply to each.
func sharedFixtures(t *testing.T, n int, opts ...func(*setup)) []*fixture {
	t.Helper()
	url := pgtest.URL(t)
	var out []*fixture
	for range n {
		st, err := session.OpenPostgres(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		st.LockTimeout = 200 * time.Millisecond
		t.Cleanup(func() { st.Close() })
		out = append(out, newFixture(t, append(opts, func(s *setup) { s.Config.Store = st })...))
	}
	return out
}

// slowAnswer is a reply in n chunks with pauses, long enough for other
// instances to join its stream.
func slowAnswer(n int) llmtest.Scenario {
	var parts []llmtest.Part
	for i := range n {
		parts = append(parts, llmtest.Pause(20*time.Millisecond), llmtest.Text(strings.Repeat("w", i%3+1)+" "))
	}
	return llmtest.OllamaStream("m", parts...)
}

func datas(frs []frame) []string {
	var out []string
	for _, fr := range frs {
		out = append(out, fr.ID+" "+fr.Data)
	}
	return out
}

// TestSharedStoreStreamsThroughAnyInstance: a turn run by A is streamed
// whole by B, from the start, and by C from a Last-Event-ID; B refuses a
// second turn in the session with who runs it; every instance then sees
// the stored session.
func TestSharedStoreStreamsThroughAnyInstance(t *testing.T) {
	fx := sharedFixtures(t, 3)
	a, b, c := fx[0], fx[1], fx[2]
	id := a.newSession()
	a.fake.Enqueue("/api/chat", slowAnswer(30))
	own := a.turn(id, map[string]any{"message": "count"})
	first := own.until("text_delta")

	// B follows the running turn from its first event.
	viaB := b.follow(id, "")
	// B cannot start another turn in it: A runs one.
	code, errCode, msg := b.errorCode(b.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "again"}))
	if code != http.StatusConflict || errCode != "session_busy" || !strings.Contains(msg, "hearth on ") {
		t.Errorf("second turn on B: %d %s %s", code, errCode, msg)
	}
	var detail sessionDetail
	c.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &detail)
	if detail.RunningTurn != own.resp.Header.Get("Hearth-Turn-Id") {
		t.Errorf("C says the running turn is %q", detail.RunningTurn)
	}

	all := append(first, own.rest()...)
	if all[len(all)-1].Type != "done" || all[len(all)-1].str("reason") != "stop" {
		t.Fatalf("A's stream: %v", types(all))
	}
	gotB := viaB.rest()
	if !slices.Equal(datas(gotB), datas(all)) {
		t.Errorf("B streamed\n%s\nA streamed\n%s", strings.Join(datas(gotB), "\n"), strings.Join(datas(all), "\n"))
	}
	// C resumes after the 5th event.
	gotC := c.follow(id, all[4].ID).rest()
	if !slices.Equal(datas(gotC), datas(all[5:])) {
		t.Errorf("C from %s streamed\n%s", all[4].ID, strings.Join(datas(gotC), "\n"))
	}
	// Without Last-Event-ID, the last turn is still there for a while.
	if got := c.follow(id, "").rest(); len(got) != len(all) {
		t.Errorf("C's replay has %d events, want %d", len(got), len(all))
	}
	// The session is whole from any instance, and B can continue it.
	detail = sessionDetail{}
	b.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &detail)
	if len(detail.Messages) != 2 || detail.Messages[1].Content != all[len(all)-1].str("text") || detail.RunningTurn != "" {
		t.Fatalf("stored: %+v", detail)
	}
	b.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Again.")))
	if frs := b.turn(id, map[string]any{"message": "again"}).rest(); frs[len(frs)-1].str("text") != "Again." {
		t.Errorf("B's turn: %v", datas(frs))
	}
	// An unknown turn id is gone everywhere.
	code, errCode, _ = c.errorCode(func() *http.Request {
		req := c.request("GET", "/v1/sessions/"+id+"/events", nil)
		req.Header.Set("Last-Event-ID", "t-nosuchturn.3")
		return req
	}())
	if code != http.StatusGone || errCode != "events_gone" {
		t.Errorf("unknown turn: %d %s", code, errCode)
	}
}

// TestSharedStoreCancelFromAnotherInstance: C cancels the turn A runs; the
// partial reply is kept, and every stream ends with done/cancelled.
func TestSharedStoreCancelFromAnotherInstance(t *testing.T) {
	fx := sharedFixtures(t, 3)
	a, b, c := fx[0], fx[1], fx[2]
	id := a.newSession()
	a.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Partial "), llmtest.Pause(time.Hour), llmtest.Text("never")))
	own := a.turn(id, map[string]any{"message": "go"})
	own.until("text_delta")
	viaB := b.follow(id, "")
	var res struct {
		TurnID   string `json:"turn_id"`
		Finished bool   `json:"finished"`
		Reason   string `json:"reason"`
	}
	c.call("POST", "/v1/sessions/"+id+"/cancel", nil, http.StatusOK, &res)
	if !res.Finished || res.Reason != "cancelled" || res.TurnID != own.resp.Header.Get("Hearth-Turn-Id") {
		t.Errorf("cancel through C: %+v", res)
	}
	for name, st := range map[string]*sseStream{"A": own, "B": viaB} {
		frs := st.rest()
		if len(frs) == 0 || frs[len(frs)-1].Type != "done" || frs[len(frs)-1].str("reason") != "cancelled" {
			t.Errorf("%s's stream ends %v", name, datas(frs))
		}
	}
	var d sessionDetail
	c.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if len(d.Messages) != 2 || !d.Messages[1].Partial || d.Messages[1].Content != "Partial " {
		t.Errorf("stored: %+v", d.Messages)
	}
	// Nothing runs now: a second cancel says so.
	code, errCode, _ := b.errorCode(b.request("POST", "/v1/sessions/"+id+"/cancel", nil))
	if code != http.StatusConflict || errCode != "not_running" {
		t.Errorf("second cancel: %d %s", code, errCode)
	}
}

// TestSharedStoreApprovalsFromAnotherInstance: the approvals of a turn A
// runs are answered through B (allow) and C (deny, with a message that
// reaches the model); a second answer is refused; deleting the session is
// refused everywhere while the turn runs.
func TestSharedStoreApprovalsFromAnotherInstance(t *testing.T) {
	fx := sharedFixtures(t, 3)
	a, b, c := fx[0], fx[1], fx[2]
	id := a.newSession()
	a.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("c-one", "write_note", `{"text":"one"}`)),
		llmtest.OllamaStream("m", llmtest.CallID("c-two", "write_note", `{"text":"two"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	own := a.turn(id, map[string]any{"message": "write twice"})
	viaB := b.follow(id, "")
	ask := viaB.until("approval_required")
	call1 := ask[len(ask)-1].str("id")

	code, errCode, _ := c.errorCode(c.request("DELETE", "/v1/sessions/"+id, nil))
	if code != http.StatusConflict || errCode != "session_busy" {
		t.Errorf("delete while it runs: %d %s", code, errCode)
	}
	var ok map[string]string
	b.call("POST", "/v1/approvals/"+call1, map[string]any{"decision": "allow"}, http.StatusOK, &ok)
	if ok["session_id"] != id || ok["decision"] != "allow" {
		t.Errorf("allow through B: %v", ok)
	}
	ask = viaB.until("approval_required")
	// The first call again: answered already.
	code, errCode, _ = c.errorCode(c.request("POST", "/v1/approvals/"+call1, map[string]any{"decision": "deny", "session_id": id}))
	if code != http.StatusConflict || errCode != "already_answered" {
		t.Errorf("second answer: %d %s", code, errCode)
	}
	call2 := ask[len(ask)-1].str("id")
	c.call("POST", "/v1/approvals/"+call2, map[string]any{"decision": "deny", "message": "not that"}, http.StatusOK, nil)
	frs := own.rest()
	if frs[len(frs)-1].str("text") != "Done." {
		t.Fatalf("A's stream: %v", datas(frs))
	}
	if w := a.writes(); !slices.Equal(w, []string{"one"}) {
		t.Errorf("writes %v, want only the allowed one", w)
	}
	// The model was told why the second was refused.
	last := a.fake.RequestsTo("/api/chat")
	if body := string(last[len(last)-1].Body); !strings.Contains(body, "not that") {
		t.Errorf("the denial's message did not reach the model: %s", body)
	}
	code, errCode, _ = b.errorCode(b.request("POST", "/v1/approvals/nosuchcall", map[string]any{"decision": "allow"}))
	if code != http.StatusNotFound || errCode != "no_approval" {
		t.Errorf("unknown call: %d %s", code, errCode)
	}
}

// TestSharedStoreDeleteSeenEverywhere: a session deleted through one
// server is gone for the others, which knew it: a turn there is 404, not
// a new empty session under the old id.
func TestSharedStoreDeleteSeenEverywhere(t *testing.T) {
	fx := sharedFixtures(t, 2)
	a, b := fx[0], fx[1]
	id := a.newSession()
	a.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, nil) // a knows it now
	b.call("DELETE", "/v1/sessions/"+id, nil, http.StatusNoContent, nil)
	code, errCode, _ := a.errorCode(a.request("POST", "/v1/sessions/"+id+"/turns", map[string]any{"message": "hi"}))
	if code != http.StatusNotFound || errCode != "not_found" {
		t.Errorf("turn in a session deleted elsewhere: %d %s", code, errCode)
	}
	a.call("GET", "/v1/sessions/"+id, nil, http.StatusNotFound, nil)
}
