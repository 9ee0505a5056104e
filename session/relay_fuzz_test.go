package session

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseNote feeds notification payloads to the parser (they come from
// other processes, through the database): it never panics, and what it
// reads of events is in order. It also checks the round trip: events
// packed by one process are read back whole by another.
func FuzzParseNote(f *testing.F) {
	f.Add("e other t-1 3\n{\"type\":\"text_delta\",\"text\":\"hi\"}\n{\"type\":\"done\"}", `{"type":"text_delta","text":"a"}`, 1)
	f.Add("e other t-1 -7", `{"type":"done","reason":"stop"}`, 5)
	f.Add("d other t-1 cancelled", "", 0)
	f.Add("m other - \n{\"op\":\"cancel\"}", "\x00\xff", 2)
	f.Add("e", "", -1)
	f.Add("e other t 99999999999999999999\nx", strings.Repeat("y", 9000), 3)
	f.Fuzz(func(t *testing.T, payload, data string, seq int) {
		reader := &pgRelay{from: "reader"}
		n, ok := reader.parseNote(payload)
		if ok && n.Kind == NoteEvents {
			for i := 1; i < len(n.Events); i++ {
				if n.Events[i].Seq != n.Events[i-1].Seq+1 {
					t.Fatalf("events out of order: %+v", n.Events)
				}
			}
		}

		if seq < 1 || seq > 1<<30 {
			return
		}
		writer := &pgRelay{from: "writer"}
		recs := []relayRecord{
			{turn: "t-x", ev: &TurnEvent{Seq: seq, Type: "text_delta", Data: []byte(data)}},
			{turn: "t-x", ev: &TurnEvent{Seq: seq + 1, Type: "done", Data: []byte(`{"type":"done"}`)}},
		}
		var got []TurnEvent
		last := 0
		for _, p := range writer.eventNotes("t-x", recs) {
			if len(p) > maxNotify+200 {
				t.Fatalf("a notification of %d bytes", len(p))
			}
			if _, own := writer.parseNote(p); own {
				t.Fatalf("a process read its own note: %q", p)
			}
			n, ok := reader.parseNote(p)
			if !ok || n.Kind != NoteEvents || n.Turn != "t-x" {
				t.Fatalf("%q: %+v %v", p, n, ok)
			}
			got = append(got, n.Events...)
			last = max(last, n.Last)
		}
		if last != seq+1 {
			t.Fatalf("last %d, want %d", last, seq+1)
		}
		for _, ev := range got {
			want := recs[ev.Seq-seq].ev.Data
			if !bytes.Equal(ev.Data, []byte(pgText(string(want)))) {
				t.Fatalf("event %d: %q, want %q", ev.Seq, ev.Data, want)
			}
		}
	})
}
