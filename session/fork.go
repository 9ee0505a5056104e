package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// What Fork and Truncate decide the same way in both stores: which
// messages are live again once the summaries after a seq are gone, and
// which tool runs go with a fork's messages.

// errNegativeSeq is Truncate's error for a seq below 0.
var errNegativeSeq = errors.New("the seq to keep messages up to is negative")

// forkCut is the seq a fork through through copies messages up to: all of
// them when through <= 0.
func forkCut(through int) int {
	if through <= 0 || through > math.MaxInt32 {
		return math.MaxInt32 // seq is a 32-bit integer in PostgreSQL
	}
	return through
}

// checkDetail says whether a checkpoint's Detail can be stored: none, or
// JSON (which Checkpoint's own JSON embeds as it is).
func checkDetail(c *Checkpoint) error {
	if len(c.Detail) > 0 && !json.Valid(c.Detail) {
		return fmt.Errorf("its detail is not JSON: %.40q", c.Detail)
	}
	return nil
}

// archiveOp names what SetArchived does, for its errors.
func archiveOp(archived bool) string {
	if archived {
		return "archive"
	}
	return "unarchive"
}

// compactMark is what liveAgain reads of a stored message.
type compactMark struct {
	seq                int
	compacted, summary bool
	before             int
}

// place is a message's place in the conversation (InOrder's), doubled to
// stay an integer: a summary placed before seq b stands between b-1 and
// b; any other message (a summary placed nowhere included) at its seq.
func (m compactMark) place() int {
	if m.summary && m.before > 0 {
		return 2*m.before - 1
	}
	return 2 * m.seq
}

// liveAgain returns the seqs of the compacted messages of marks (a
// session's messages, what is left of them after a Truncate or copied by a
// Fork) that no summary among marks stands for any more: a compaction
// replaces the start of the conversation, up to where its summary is
// placed, so a compacted message stays compacted while a summary other
// than itself is placed after it; the others are live again (the summary
// that replaced them is gone). A summary compacted by a later summary is a
// message like any other here.
func liveAgain(marks []compactMark) []int {
	// The two last places of a summary, so that a summary is not taken
	// for its own cover.
	first, second := -1, -1
	firstSeq := 0
	for _, m := range marks {
		if !m.summary {
			continue
		}
		switch p := m.place(); {
		case p > first:
			second, first, firstSeq = first, p, m.seq
		case p > second:
			second = p
		}
	}
	var out []int
	for _, m := range marks {
		if !m.compacted {
			continue
		}
		cover := first
		if m.summary && m.seq == firstSeq {
			cover = second
		}
		if cover <= m.place() {
			out = append(out, m.seq)
		}
	}
	return out
}

// callMark is what forkRuns reads of a stored message: its seq, when it
// was stored, and the ids of the calls it makes (an assistant's) or
// answers (a tool result's).
type callMark struct {
	seq       int
	assistant bool
	calls     []string
	at        time.Time
}

// runMark is what forkRuns reads of a stored tool run.
type runMark struct {
	id     int64
	callID string
	at     time.Time
}

// forkRuns returns the ids, in order, of the tool runs of a session (runs,
// in order) that a fork of its messages (msgs, in order) up to seq last
// takes: those of the calls made or answered in them. Servers reuse call ids from one reply to the next
// ("call_0"), so a run of an id that a later reply, not copied, calls again
// is taken only when it was recorded before that reply was stored (a
// call's run is recorded after the reply that makes it).
func forkRuns(msgs []callMark, last int, runs []runMark) []int64 {
	copied := map[string]bool{}
	for _, m := range msgs {
		if m.seq <= last {
			for _, c := range m.calls {
				copied[c] = true
			}
		}
	}
	// The first reply after last that calls each copied id again.
	again := map[string]time.Time{}
	for _, m := range msgs {
		if m.seq <= last || !m.assistant {
			continue
		}
		for _, c := range m.calls {
			if _, seen := again[c]; copied[c] && !seen {
				again[c] = m.at
			}
		}
	}
	var out []int64
	for _, r := range runs {
		if !copied[r.callID] {
			continue
		}
		if t, ok := again[r.callID]; ok && !r.at.Before(t) {
			continue
		}
		out = append(out, r.id)
	}
	return out
}

// forkDefaults fills what into leaves empty from the session forked, src,
// and marks it a fork of src through seq last, made at t.
func forkDefaults(into *Session, src *Session, last int, t time.Time) {
	if into.ID == "" {
		into.ID = NewID()
	}
	if into.Title == "" {
		into.Title = src.Title
	}
	if into.Provider == "" {
		into.Provider = src.Provider
	}
	if into.Model == "" {
		into.Model = src.Model
	}
	if into.Workspace == "" {
		into.Workspace = src.Workspace
	}
	into.ForkOf, into.ForkSeq = src.ID, last
	into.CreatedAt, into.UpdatedAt = t, t
}
