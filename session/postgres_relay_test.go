package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
)

// The Relay of the PostgreSQL store, between stores opened on one database
// as several processes would: A runs turns, B (and C) follow them.

// relayPair opens two stores on a new database, as processes "A" and "B",
// with a session s1, and starts their relays.
func relayPair(t *testing.T) (url string, a, b *Postgres, ra, rb Relay) {
	t.Helper()
	url = pgtest.URL(t)
	a, b = openPostgresAs(t, url, "A"), openPostgresAs(t, url, "B")
	if err := a.Create(context.Background(), &Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	return url, a, b, a.Relay(), b.Relay()
}

// nextNote returns r's next note. The 10 s bound only detects a hang (a
// note that never comes): nothing here asserts how long anything takes.
func nextNote(t *testing.T, r Relay) Note {
	t.Helper()
	select {
	case n, ok := <-r.Notes():
		if !ok {
			t.Fatal("the notes were closed")
		}
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no note")
	}
	return Note{}
}

// event makes a turn's event as the server records it: its JSON, with
// the type first.
func event(seq int, typ string, fields map[string]any) TurnEvent {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(fields)
	data := fmt.Sprintf(`{"type":%q,%s`, typ, strings.TrimPrefix(strings.TrimSpace(b.String()), "{"))
	if len(fields) == 0 {
		data = fmt.Sprintf(`{"type":%q}`, typ)
	}
	ev := TurnEvent{Seq: seq, Type: typ, Data: []byte(data)}
	if c, ok := fields["call_id"].(string); ok {
		ev.CallID = c
	}
	return ev
}

// sameEvents compares events as notes carry them (Seq, Type, Data; a
// note does not carry CallID).
func sameEvents(got, want []TurnEvent) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i].Seq != want[i].Seq || got[i].Type != want[i].Type || string(got[i].Data) != string(want[i].Data) {
			return false
		}
	}
	return true
}

// followTurn reads r's notes until turn's end and returns the events they
// carried (those too large for a note read with TurnEvents, as a reader
// does) and the end's reason. Any other note fails t.
func followTurn(t *testing.T, r Relay, turn string) ([]TurnEvent, string) {
	t.Helper()
	var got []TurnEvent
	for {
		n := nextNote(t, r)
		if n.Turn != turn {
			t.Fatalf("a note of another turn: %+v", n)
		}
		switch n.Kind {
		case NoteEvents:
			if len(n.Events) == 0 {
				more, err := r.TurnEvents(context.Background(), turn, len(got))
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range more {
					if ev.Seq <= n.Last {
						got = append(got, ev)
					}
				}
				continue
			}
			if n.Events[0].Seq != len(got)+1 || n.Last != n.Events[len(n.Events)-1].Seq {
				t.Fatalf("events %d…%d (last %d) after %d", n.Events[0].Seq, n.Events[len(n.Events)-1].Seq, n.Last, len(got))
			}
			got = append(got, n.Events...)
		case NoteEnd:
			return got, n.Reason
		default:
			t.Fatalf("unexpected note %+v", n)
		}
	}
}

// TestRelayEvents: what A records of a turn reaches B in order, exactly as
// sent, then its end; A does not hear itself; the log says who ran it and
// how it ended.
func TestRelayEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, a, _, ra, rb := relayPair(t)
	if ra.Instance() != a.Instance() || rb.Instance() == ra.Instance() {
		t.Fatalf("instances %q %q", ra.Instance(), rb.Instance())
	}
	ra.BeginTurn("t1", "s1")
	var sent []TurnEvent
	texts := []string{"plain", "é 🔥 日本", `quote " backslash \ slash /`, "a && b <tag>", "line\nbreak\ttab", strings.Repeat("long ", 80)}
	for i := range 200 {
		ev := event(i+1, "text_delta", map[string]any{"text": texts[i%len(texts)]})
		sent = append(sent, ev)
		ra.AddEvent("t1", ev)
	}
	ra.EndTurn("t1", "stop")
	got, reason := followTurn(t, rb, "t1")
	if !sameEvents(got, sent) || reason != "stop" {
		t.Fatalf("B got %d events (%q), want %d", len(got), reason, len(sent))
	}
	// A hears B, and nothing of its own: a listener gets notifications
	// in the order they were committed, and A's were committed before
	// B's (B has heard them all), so any of A's would come first.
	if err := rb.Send(ctx, []byte("ping from B")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, ra); n.Kind != NoteMessage || string(n.Data) != "ping from B" {
		t.Fatalf("A's first note: %+v", n)
	}

	for _, r := range []Relay{ra, rb} {
		ti, err := r.Turn(ctx, "t1")
		if err != nil || ti == nil {
			t.Fatal(ti, err)
		}
		if ti.ID != "t1" || ti.SessionID != "s1" || ti.Instance != a.Instance() || !ti.Ended || ti.Reason != "stop" || !ti.Alive ||
			ti.Mine != (r == ra) || ti.StartedAt.IsZero() || ti.EndedAt.Before(ti.StartedAt) {
			t.Errorf("turn %+v", ti)
		}
		if last, err := r.LastTurn(ctx, "s1"); err != nil || last == nil || !reflect.DeepEqual(last, ti) {
			t.Errorf("last turn %+v %v", last, err)
		}
		evs, err := r.TurnEvents(ctx, "t1", 0)
		if err != nil || !reflect.DeepEqual(evs, sent) {
			t.Errorf("turn events: %d, %v", len(evs), err)
		}
		if evs, err := r.TurnEvents(ctx, "t1", 198); err != nil || !reflect.DeepEqual(evs, sent[198:]) {
			t.Errorf("events after 198: %+v %v", evs, err)
		}
		if evs, err := r.TurnEvents(ctx, "t1", 200); err != nil || len(evs) != 0 {
			t.Errorf("events after the last: %+v %v", evs, err)
		}
	}
	if ti, err := rb.Turn(ctx, "t-none"); ti != nil || err != nil {
		t.Errorf("a turn that is not: %+v %v", ti, err)
	}
	if ti, err := rb.LastTurn(ctx, "s-none"); ti != nil || err != nil {
		t.Errorf("the last turn of a session that is not: %+v %v", ti, err)
	}
}

// TestRelayRunningTurn: a turn that has not ended is running, its process
// alive; its end is read as it comes.
func TestRelayRunningTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, a, _, ra, rb := relayPair(t)
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", event(1, "text_delta", map[string]any{"text": "hi"}))
	if n := nextNote(t, rb); n.Kind != NoteEvents || n.Turn != "t1" || len(n.Events) != 1 || n.Last != 1 {
		t.Fatalf("%+v", n)
	}
	ti, err := rb.Turn(ctx, "t1")
	if err != nil || ti == nil || ti.Ended || !ti.EndedAt.IsZero() || ti.Reason != "" || !ti.Alive || ti.Instance != a.Instance() {
		t.Fatalf("running turn %+v %v", ti, err)
	}
	ra.EndTurn("t1", "cancelled")
	if n := nextNote(t, rb); n.Kind != NoteEnd || n.Turn != "t1" || n.Reason != "cancelled" {
		t.Fatalf("%+v", n)
	}
	if ti, _ := rb.Turn(ctx, "t1"); ti == nil || !ti.Ended || ti.Reason != "cancelled" {
		t.Errorf("ended turn %+v", ti)
	}
}

// TestRelayLastTurn: a session's last turn is the one begun last, even
// when the two were written together.
func TestRelayLastTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	for i := range 5 {
		ra.BeginTurn(fmt.Sprintf("t%d", i), "s1")
		ra.EndTurn(fmt.Sprintf("t%d", i), "stop")
	}
	ra.BeginTurn("t5", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if ti, err := rb.LastTurn(ctx, "s1"); err != nil || ti == nil || ti.ID != "t5" || ti.Ended {
		t.Errorf("last turn %+v %v", ti, err)
	}
}

// TestRelayLargeEvents: an event too large for a notification (or that
// cannot share one: a raw line break) comes as a note without events that
// says up to where to read; TurnEvents has it whole.
func TestRelayLargeEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	sent := []TurnEvent{
		event(1, "text_delta", map[string]any{"text": "before"}),
		event(2, "tool_output", map[string]any{"output": strings.Repeat("0123456789", 900)}),
		{Seq: 3, Type: "pretty", Data: []byte("{\"type\":\"pretty\",\n  \"a\": 1\n}")},
		event(4, "text_delta", map[string]any{"text": "after"}),
	}
	if len(sent[1].Data) <= 8000 {
		t.Fatal("not large")
	}
	ra.BeginTurn("t1", "s1")
	for _, ev := range sent {
		ra.AddEvent("t1", ev)
	}
	ra.EndTurn("t1", "stop")
	want := []struct {
		events []TurnEvent
		last   int
	}{{sent[:1], 1}, {nil, 2}, {nil, 3}, {sent[3:], 4}}
	for i, w := range want {
		n := nextNote(t, rb)
		if n.Kind != NoteEvents || n.Turn != "t1" || n.Last != w.last || !sameEvents(n.Events, w.events) {
			t.Fatalf("note %d: %+v", i, n)
		}
	}
	if n := nextNote(t, rb); n.Kind != NoteEnd {
		t.Fatalf("%+v", n)
	}
	evs, err := rb.TurnEvents(ctx, "t1", 1)
	if err != nil || !reflect.DeepEqual(evs, sent[1:]) {
		t.Errorf("%v %d events", err, len(evs))
	}
}

// TestRelayInvalidText: an event's JSON holds text, and PostgreSQL's text
// neither NUL nor invalid UTF-8: they are replaced, in the note and in the
// log alike, and the turn goes on.
func TestRelayInvalidText(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", TurnEvent{Seq: 1, Type: "tool_output", Data: []byte("{\"type\":\"tool_output\",\"output\":\"a\xffb\x00c\"}")})
	ra.AddEvent("t1", event(2, "text_delta", map[string]any{"text": "ok"}))
	ra.EndTurn("t1", "stop")
	const want = "{\"type\":\"tool_output\",\"output\":\"a\uFFFDb\uFFFDc\"}"
	got, reason := followTurn(t, rb, "t1")
	if len(got) != 2 || string(got[0].Data) != want || got[0].Type != "tool_output" || reason != "stop" {
		t.Fatalf("%+v %q", got, reason)
	}
	if evs, err := rb.TurnEvents(ctx, "t1", 0); err != nil || len(evs) != 2 || string(evs[0].Data) != want {
		t.Errorf("%+v %v", evs, err)
	}
}

// TestRelayApprovals: a running turn is found by the call its approval
// asks about; an ended one is not.
func TestRelayApprovals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, a, b, ra, rb := relayPair(t)
	if err := a.Create(ctx, &Session{ID: "s2"}); err != nil {
		t.Fatal(err)
	}
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", event(1, "tool_call", map[string]any{"call_id": "call_7"}))
	ra.AddEvent("t1", event(2, "approval_required", map[string]any{"call_id": "call_7", "tool": "run_shell_command"}))
	ra.BeginTurn("t2", "s2")
	ra.AddEvent("t2", event(1, "approval_required", map[string]any{"call_id": "call_7"}))
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ids := func(callID, sessionID string) string {
		t.Helper()
		turns, err := rb.ApprovalTurns(ctx, callID, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, ti := range turns {
			if ti.Ended || !ti.Alive || ti.Instance != a.Instance() {
				t.Errorf("%+v", ti)
			}
			out = append(out, ti.ID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ call, session, want string }{
		{"call_7", "s1", "t1"},
		{"call_7", "s2", "t2"},
		{"call_7", "s3", ""},
		{"call_8", "", ""},
	} {
		if got := ids(tc.call, tc.session); got != tc.want {
			t.Errorf("%s of %q: %q, want %q", tc.call, tc.session, got, tc.want)
		}
	}
	if got := ids("call_7", ""); got != "t1 t2" && got != "t2 t1" {
		t.Errorf("call_7 of any session: %q", got)
	}
	if evs, _ := rb.TurnEvents(ctx, "t1", 1); len(evs) != 1 || evs[0].CallID != "call_7" || evs[0].Type != "approval_required" {
		t.Errorf("%+v", evs)
	}
	ra.EndTurn("t1", "stop")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids("call_7", ""); got != "t2" {
		t.Errorf("after t1's end: %q", got)
	}
	_ = b
}

// TestRelayAbandon: a turn whose process is gone is ended by another,
// with the events it gives numbered after the last, and every process
// hears of it; while the process lives, Abandon does nothing.
func TestRelayAbandon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, _, ra, rb := relayPair(t)
	ra.BeginTurn("t1", "s1")
	var sent []TurnEvent
	for i := range 3 {
		ev := event(i+1, "text_delta", map[string]any{"text": fmt.Sprint(i)})
		sent = append(sent, ev)
		ra.AddEvent("t1", ev)
	}
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// C starts following now: it has not heard t1's events.
	c := openPostgresAs(t, u, "C")
	rc := c.Relay()

	called := false
	lost := func(next int) []TurnEvent {
		called = true
		if next != 4 {
			t.Errorf("next %d", next)
		}
		return []TurnEvent{
			event(next, "error", map[string]any{"message": "the process running this turn is gone"}),
			event(next+1, "done", map[string]any{"reason": "lost"}),
		}
	}
	if evs, err := rb.Abandon(ctx, "t1", "lost", lost); evs != nil || err != nil || called {
		t.Fatalf("while A lives: %+v %v, called %v", evs, err, called)
	}
	if evs, err := rb.Abandon(ctx, "t-none", "lost", lost); evs != nil || err != nil || called {
		t.Fatalf("a turn that is not: %+v %v", evs, err)
	}
	if ti, _ := rb.Turn(ctx, "t1"); ti == nil || ti.Ended || !ti.Alive {
		t.Fatalf("Abandon ended a live turn: %+v", ti)
	}

	// A dies in the middle of the turn. A SIGKILL cannot be sent to a
	// part of this test process; what the others see of it is A's
	// presence connection ending with the turn not ended, and that is
	// what closing A without EndTurn does (Close flushes what A queued,
	// which a kill would lose, but it was flushed already). Ending the
	// presence connection from outside (pg_terminate_backend) would not
	// do: A's relay, alive, connects again and keeps its turn (see
	// TestRelayReconnect).
	a.Close()
	eventually(t, "A's turn to be seen dead", func() bool {
		ti, err := rb.Turn(ctx, "t1")
		return err == nil && ti != nil && !ti.Alive
	})
	evs, err := rb.Abandon(ctx, "t1", "lost", lost)
	if err != nil || !called || len(evs) != 2 || evs[0].Seq != 4 || evs[1].Seq != 5 {
		t.Fatalf("%+v %v", evs, err)
	}
	sent = append(sent, evs...)
	ti, err := rb.Turn(ctx, "t1")
	if err != nil || ti == nil || !ti.Ended || ti.Reason != "lost" || ti.Alive || ti.Instance != a.Instance() {
		t.Errorf("abandoned turn %+v %v", ti, err)
	}
	if all, err := rc.TurnEvents(ctx, "t1", 0); err != nil || !reflect.DeepEqual(all, sent) {
		t.Errorf("events %+v %v", all, err)
	}
	// C hears of it, as notes (the first it gets); so does B, which
	// abandoned it, after A's own events.
	if n := nextNote(t, rc); n.Kind != NoteEvents || n.Turn != "t1" || n.Last != 5 || !sameEvents(n.Events, sent[3:]) {
		t.Errorf("C's first note %+v", n)
	}
	if n := nextNote(t, rc); n.Kind != NoteEnd || n.Turn != "t1" || n.Reason != "lost" {
		t.Errorf("C's second note %+v", n)
	}
	if got, reason := followTurn(t, rb, "t1"); !sameEvents(got, sent) || reason != "lost" {
		t.Errorf("B heard %+v %q", got, reason)
	}
	// Once ended, it is not abandoned again.
	called = false
	if evs, err := rc.Abandon(ctx, "t1", "lost", lost); evs != nil || err != nil || called {
		t.Errorf("again: %+v %v", evs, err)
	}
}

// TestRelaySend: a message reaches the others as it was sent.
func TestRelaySend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	for _, data := range []string{
		`{"op":"cancel","turn":"t1"}`,
		"two\nlines, é",
		"",
		strings.Repeat("x", maxNotify),
	} {
		if err := ra.Send(ctx, []byte(data)); err != nil {
			t.Fatalf("%.40q: %v", data, err)
		}
		if n := nextNote(t, rb); n.Kind != NoteMessage || string(n.Data) != data {
			t.Errorf("%.40q: %+v", data, n)
		}
	}
	if err := ra.Send(ctx, []byte("bad \xff byte")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Kind != NoteMessage || string(n.Data) != "bad \uFFFD byte" {
		t.Errorf("%+v", n)
	}
	for _, data := range []string{"nul\x00", strings.Repeat("x", maxNotify+1), strings.Repeat("\xff.", maxNotify/2)} {
		if err := ra.Send(ctx, []byte(data)); err == nil || !strings.Contains(err.Error(), "too large") && !strings.Contains(err.Error(), "NUL") {
			t.Errorf("%.20q: %v", data, err)
		}
	}
	// B hears nothing more (its next note is A's next message).
	if err := ra.Send(ctx, []byte("last")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); string(n.Data) != "last" {
		t.Errorf("%+v", n)
	}
}

// TestRelayPurge: Purge forgets turns that ended before the cutoff, and
// those of processes that are gone begun before it; the running turns of
// live processes stay.
func TestRelayPurge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, _, _, ra, rb := relayPair(t)
	ra.BeginTurn("ended", "s1")
	ra.AddEvent("ended", event(1, "text_delta", map[string]any{"text": "x"}))
	ra.EndTurn("ended", "stop")
	ra.BeginTurn("running", "s1")
	ra.AddEvent("running", event(1, "text_delta", map[string]any{"text": "y"}))
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// D runs a turn and dies (see TestRelayAbandon).
	d := openPostgresAs(t, u, "D")
	d.Relay().BeginTurn("orphan", "s1")
	if err := d.Relay().Flush(ctx); err != nil {
		t.Fatal(err)
	}
	d.Close()
	eventually(t, "D's turn to be seen dead", func() bool {
		ti, err := rb.Turn(ctx, "orphan")
		return err == nil && ti != nil && !ti.Alive
	})
	exists := func(id string) bool {
		t.Helper()
		ti, err := rb.Turn(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return ti != nil
	}
	// The database's clock and this process's are one machine's; an
	// hour either way is well clear of the turns' times.
	if err := rb.Purge(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !exists("ended") || !exists("running") || !exists("orphan") {
		t.Error("a turn newer than the cutoff was purged")
	}
	if err := rb.Purge(ctx, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if exists("ended") || exists("orphan") || !exists("running") {
		t.Errorf("after the purge: ended %v orphan %v running %v", exists("ended"), exists("orphan"), exists("running"))
	}
	if evs, err := rb.TurnEvents(ctx, "ended", 0); err != nil || len(evs) != 0 {
		t.Errorf("events of a purged turn: %+v %v", evs, err)
	}
	if evs, err := rb.TurnEvents(ctx, "running", 0); err != nil || len(evs) != 1 {
		t.Errorf("events of a running turn: %+v %v", evs, err)
	}
	if ti, _ := rb.LastTurn(ctx, "s1"); ti == nil || ti.ID != "running" {
		t.Errorf("last turn %+v", ti)
	}
}

// TestRelayFlush: when Flush returns, what was recorded is in the log.
func TestRelayFlush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	if err := ra.Flush(ctx); err != nil {
		t.Fatalf("nothing to flush: %v", err)
	}
	for round := range 3 {
		turn := fmt.Sprintf("t%d", round)
		ra.BeginTurn(turn, "s1")
		for i := range 300 {
			ra.AddEvent(turn, event(i+1, "text_delta", map[string]any{"text": fmt.Sprint(i)}))
		}
		ra.EndTurn(turn, "stop")
		if err := ra.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		evs, err := rb.TurnEvents(ctx, turn, 0)
		if err != nil || len(evs) != 300 || evs[299].Seq != 300 {
			t.Fatalf("after Flush: %d events %v", len(evs), err)
		}
		if ti, _ := rb.Turn(ctx, turn); ti == nil || !ti.Ended {
			t.Fatalf("after Flush: %+v", ti)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ra.AddEvent("t0", event(301, "late", nil))
	if err := ra.Flush(cctx); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled flush: %v", err)
	}
}

// TestRelayBadTurn: a record that cannot be written (a turn of a session
// that does not exist) is dropped without holding up the others written
// with it.
func TestRelayBadTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, _, _, ra, rb := relayPair(t)
	ra.BeginTurn("bad", "s-none")
	ra.AddEvent("bad", event(1, "text_delta", nil))
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", event(1, "text_delta", map[string]any{"text": "ok"}))
	ra.EndTurn("t1", "stop")
	got, reason := followTurn(t, rb, "t1")
	if len(got) != 1 || reason != "stop" {
		t.Errorf("%+v %q", got, reason)
	}
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if ti, err := rb.Turn(ctx, "bad"); ti != nil || err != nil {
		t.Errorf("%+v %v", ti, err)
	}
}

// TestRelayReconnect: when A's presence connection is cut (A lives: the
// server ended the connection, the network failed), A's relay connects
// again, keeps its locks and turns, and says notes may have been missed;
// then it hears the others again.
func TestRelayReconnect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, b, ra, rb := relayPair(t)
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	ra.BeginTurn("t1", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	old, _ := a.identity()
	terminate(t, pgConn(t, u), old)
	if n := nextNote(t, ra); n.Kind != NoteResync {
		t.Fatalf("%+v", n)
	}
	if pid, _ := a.identity(); pid == old {
		t.Fatal("the same identity")
	}
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), a.Instance()) {
		t.Errorf("A's lock was lost: %v", err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Alive || ti.Mine {
		t.Errorf("A's turn looks dead: %+v %v", ti, err)
	}
	if ti, err := ra.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Mine {
		t.Errorf("A's turn is not A's: %+v %v", ti, err)
	}
	if evs, err := rb.Abandon(ctx, "t1", "lost", func(int) []TurnEvent { return nil }); evs != nil || err != nil {
		t.Errorf("abandoned: %+v %v", evs, err)
	}
	if err := rb.Send(ctx, []byte("still there?")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, ra); n.Kind != NoteMessage || string(n.Data) != "still there?" {
		t.Errorf("%+v", n)
	}
	ra.AddEvent("t1", event(1, "text_delta", map[string]any{"text": "on"}))
	ra.EndTurn("t1", "stop")
	if got, reason := followTurn(t, rb, "t1"); len(got) != 1 || reason != "stop" {
		t.Errorf("%+v %q", got, reason)
	}
	unlock()
	if _, err := b.Lock(ctx, "s1"); err != nil {
		t.Errorf("after unlock: %v", err)
	}
}

func TestRelayOf(t *testing.T) {
	t.Parallel()
	if r := RelayOf(open(t)); r != nil {
		t.Errorf("SQLite has a relay: %v", r)
	}
	p := openPostgres(t, pgtest.URL(t))
	r := RelayOf(p)
	if r == nil || r != p.Relay() || r.Instance() != p.Instance() {
		t.Errorf("%v", r)
	}
}
