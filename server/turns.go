package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
)

// Timings of event streams.
const (
	// writeTimeout bounds one write to a stream: a client that stops
	// reading is dropped instead of holding a goroutine.
	writeTimeout = 30 * time.Second
	// finishWait is how long a new turn, or a delete, waits for the
	// previous turn to finish once its done event was sent (it may still be
	// saving, or asking the model for a title).
	finishWait = 30 * time.Second
	// cancelWait is how long POST …/cancel waits for the turn to end.
	cancelWait = 10 * time.Second
	// startFlushWait bounds the wait for a new turn to be recorded in a
	// shared store before its stream is answered.
	startFlushWait = 2 * time.Second
	// catchUpWait bounds the wait of a client that reconnects through
	// another server for events that server has not heard of yet.
	catchUpWait = 5 * time.Second
	// maxRelayedMessage bounds a denial's message sent to another server
	// (a notification carries at most 8000 bytes).
	maxRelayedMessage = 6000
)

// turn is one turn of a session, running or recently finished, with the
// events it produced: kept so that a client that lost its connection can
// reconnect and get what it missed.
type turn struct {
	s       *Server
	id      string
	session string
	ctx     context.Context
	cancel  context.CancelFunc
	ht      *hearth.Turn // the runtime's turn, set before it runs

	mu     sync.Mutex
	frames [][]byte // encoded SSE frames; frames[i] has seq first+i
	first  int      // seq of frames[0]
	next   int      // seq of the next event (events count from 1)
	size   int      // bytes in frames
	// doneSeq is the seq of the done event (0 until it is sent); reason
	// its reason.
	doneSeq int
	reason  agent.DoneReason
	// done is set when the turn has returned; err is why it could not
	// start (only when it sent no event).
	done bool
	err  error
	// wake is closed and replaced whenever something changes.
	wake chan struct{}

	evict *time.Timer // forgets the finished turn; guarded by s.mu

	// remote marks the mirror of another process's turn (see relay.go);
	// refillMu serialises its reads from the store.
	remote   bool
	refillMu sync.Mutex
	heard    time.Time // when the mirror last heard of its turn
	// refillPending and endPending: a refill is queued (refillLater),
	// and it is to mark the turn ended.
	refillPending, endPending bool
}

func (s *Server) newTurn(sessionID string) *turn {
	t := &turn{s: s, id: newTurnID(), session: sessionID, first: 1, next: 1, wake: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(s.ctx)
	return t
}

func newTurnID() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	var b [10]byte
	rand.Read(b[:])
	out := []byte("t-")
	for _, c := range b {
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}

// running reports whether the turn has events still to come.
func (t *turn) running() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.doneSeq == 0 && !t.done
}

// finished reports whether the turn has returned.
func (t *turn) finished() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.done
}

// waitFinished waits up to d for the turn to return.
func (t *turn) waitFinished(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		done, wake := t.done, t.wake
		t.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		case <-timer.C:
			return false
		}
	}
}

// emit records one event of the turn and wakes its streams.
func (t *turn) emit(ev agent.Event) {
	t.mu.Lock()
	t.appendLocked(ev)
	t.mu.Unlock()
}

func (t *turn) appendLocked(ev agent.Event) {
	data, err := ev.MarshalJSON() // compact already: no second pass
	if err != nil {
		t.s.log.Error("encoding an event", "type", ev.Type, "error", err)
		return
	}
	seq := t.addFrameLocked(string(ev.Type), data)
	if r := t.s.relay; r != nil {
		if seq == 1 {
			r.BeginTurn(t.id, t.session)
		}
		rec := session.TurnEvent{Seq: seq, Type: string(ev.Type), Data: data}
		if ev.Type == agent.EventApprovalRequired {
			rec.CallID = ev.ID
		}
		r.AddEvent(t.id, rec)
		if seq > 1 && ev.Type != agent.EventDone && t.ctx.Err() == nil && r.Lost(t.id) {
			// Another server judged this one gone (it was cut off from
			// the database) and ended the turn for everyone: stop it
			// here too, rather than run on unseen.
			t.s.log.Warn("relay: another server ended this turn as lost; cancelling it", "turn", t.id)
			t.cancel()
		}
	}
}

// addFrameLocked adds an event (its type and JSON) as the turn's next SSE
// frame, wakes the streams, and returns its seq.
func (t *turn) addFrameLocked(typ string, data []byte) int {
	seq := t.next
	t.next++
	frame := make([]byte, 0, len(data)+len(t.id)+20)
	frame = append(frame, "id: "...)
	frame = append(frame, t.id...)
	frame = append(frame, '.')
	frame = strconv.AppendInt(frame, int64(seq), 10)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, data...)
	frame = append(frame, "\n\n"...)
	t.frames = append(t.frames, frame)
	t.size += len(frame)
	if t.remote {
		t.heard = time.Now()
	}
	for t.size > t.s.o.MaxTurnEvents && len(t.frames) > 1 {
		t.size -= len(t.frames[0])
		t.frames[0] = nil
		t.frames = t.frames[1:]
		t.first++
	}
	if typ == string(agent.EventDone) {
		var d struct {
			Reason agent.DoneReason `json:"reason"`
		}
		json.Unmarshal(data, &d)
		t.doneSeq, t.reason = seq, d.Reason
	}
	t.broadcastLocked()
	return seq
}

// markDoneLocked marks the turn returned.
func (t *turn) markDoneLocked() {
	if !t.done {
		t.done = true
		t.broadcastLocked()
	}
}

func (t *turn) broadcastLocked() {
	close(t.wake)
	t.wake = make(chan struct{})
}

// finish marks the turn returned. A turn that sent events but no done (it
// panicked) gets an error and a done, so that every stream ends in the
// contract's way.
func (t *turn) finish(err error) {
	t.mu.Lock()
	if t.next > 1 && t.doneSeq == 0 {
		msg := "the turn ended unexpectedly"
		if err != nil {
			msg += ": " + err.Error()
		}
		t.appendLocked(agent.Event{Type: agent.EventError, Code: agent.CodeAgentError, Error: msg})
		t.appendLocked(agent.Event{Type: agent.EventDone, DoneReason: agent.DoneError})
	}
	if t.next == 1 {
		t.err = err
		if t.err == nil {
			t.err = errors.New("the turn ended before it started")
		}
	}
	started, reason := t.next > 1, t.reason
	t.mu.Unlock()
	if r := t.s.relay; r != nil && started {
		// The end is in the shared store before any stream ends, so that
		// a client that then asks another instance finds the turn over.
		r.EndTurn(t.id, string(reason))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := r.Flush(ctx); err != nil {
			t.s.log.Warn("relay: recording a turn's end", "turn", t.id, "error", err)
		}
		cancel()
	}
	t.mu.Lock()
	t.done = true
	t.broadcastLocked()
	t.mu.Unlock()
}

// turnRequest is the body of POST /v1/sessions/{id}/turns.
type turnRequest struct {
	// Message is the user's message.
	Message string `json:"message"`
	// Context is shown to the model with this turn only, and not kept in
	// the session: a string, or any JSON value (sent as its JSON text).
	Context json.RawMessage `json:"context,omitempty"`
	// Model, when set, answers this turn instead of the server's model.
	Model string `json:"model,omitempty"`
}

const turnExample = `{"message": "why does the build fail?", "context": "the user is looking at build.log"}`

// contextText turns the context field into the text the model sees.
func contextText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "", err
	}
	return b.String(), nil
}

func (s *Server) postTurn(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body turnRequest
	if !decodeJSON(w, r, &body, false, turnExample) {
		return
	}
	if strings.TrimSpace(body.Message) == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "the message is empty: send "+turnExample)
		return
	}
	ctxText, err := contextText(body.Context)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "context: "+err.Error())
		return
	}
	ws, err := s.sessionWorkspace(r.Context(), id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	a := s.agentFor(w, r.Context(), ws)
	if a == nil {
		return
	}
	if a.Model() == "" && body.Model == "" {
		writeError(w, http.StatusBadRequest, "no_model", `no model is chosen: send "model" with the turn (GET /v1/models lists them), or start hearth serve with --model`)
		return
	}
	t, busy, err := s.startTurn(r.Context(), id)
	switch {
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "shutting_down", err.Error())
		return
	case busy != nil:
		s.busy(w, id, busy.id)
		return
	}
	if err := s.exists(r.Context(), id); err != nil {
		s.abandon(t)
		s.storeError(w, id, err)
		return
	}
	if s.relay != nil {
		// Another process may run a turn in this session (the store's
		// lock would refuse this one too, after waiting for it).
		info, err := s.remoteTurn(r.Context(), id)
		if err != nil {
			s.abandon(t)
			s.storeError(w, id, err)
			return
		}
		if info != nil && !info.Ended {
			s.abandon(t)
			writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf(
				"session %s is running turn %s on %s: wait for it to end (follow it with GET /v1/sessions/%s/events), or cancel it (POST /v1/sessions/%s/cancel)",
				id, info.ID, info.Instance, id, id))
			return
		}
	}
	// Made before the turn runs, and before any handler can look for its
	// approvals.
	ht := a.NewTurn(t.ctx, hearth.Request{SessionID: t.session, Message: body.Message, Context: ctxText,
		Model: body.Model, ApprovalTimeout: s.o.ApprovalTimeout})
	s.mu.Lock()
	t.ht = ht
	s.mu.Unlock()
	go s.run(t)

	// Answer once the turn has begun (the session is locked and the
	// message saved), so that a failure to start gets a status code.
	if !t.waitStarted(r.Context()) {
		return
	}
	t.mu.Lock()
	started, startErr := t.next > 1, t.err
	t.mu.Unlock()
	if !started {
		switch {
		case errors.Is(startErr, session.ErrBusy):
			writeError(w, http.StatusConflict, "session_busy", startErr.Error())
		case errors.Is(startErr, session.ErrNotFound):
			s.storeError(w, id, startErr)
		default:
			writeError(w, http.StatusInternalServerError, "turn_failed", "the turn could not start: "+startErr.Error())
		}
		return
	}
	if s.relay != nil {
		// The turn is in the shared store before its client hears of it
		// (the client may go to another instance next), unless the store
		// is slow: the turn runs anyway.
		ctx, cancel := context.WithTimeout(r.Context(), startFlushWait)
		if err := s.relay.Flush(ctx); err != nil {
			s.log.Warn("relay: recording a turn's start", "turn", t.id, "error", err)
		}
		cancel()
	}
	s.stream(w, r, t, 0)
}

func (s *Server) busy(w http.ResponseWriter, id, turnID string) {
	writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf(
		"session %s is running turn %s: wait for it to end (follow it with GET /v1/sessions/%s/events), or cancel it (POST /v1/sessions/%s/cancel)",
		id, turnID, id, id))
}

var errClosed = errors.New("the server is shutting down: start hearth serve again")

// startTurn reserves the session for a new turn. A turn that is still
// running is returned as busy; one that only finishes (its done event was
// sent) is waited for.
func (s *Server) startTurn(ctx context.Context, id string) (t, busy *turn, err error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, errClosed
		}
		old := s.turns[id]
		if old != nil && !old.finished() {
			s.mu.Unlock()
			if old.running() || !old.waitFinished(ctx, finishWait) {
				return nil, old, nil
			}
			continue
		}
		if old != nil && old.evict != nil {
			old.evict.Stop()
		}
		t := s.newTurn(id)
		s.turns[id] = t
		s.wg.Add(1)
		s.mu.Unlock()
		return t, nil, nil
	}
}

// abandon releases a turn reserved by startTurn that will not run.
func (s *Server) abandon(t *turn) {
	s.mu.Lock()
	if s.turns[t.session] == t {
		delete(s.turns, t.session)
	}
	s.mu.Unlock()
	t.cancel()
	s.wg.Done()
}

// waitStarted waits until the turn has sent an event or returned; false
// if the client or the server went first.
func (t *turn) waitStarted(ctx context.Context) bool {
	for {
		t.mu.Lock()
		ok, wake := t.next > 1 || t.done, t.wake
		t.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return false
		case <-t.s.ctx.Done():
			return false
		}
	}
}

// run performs the turn in its own goroutine: it belongs to the session,
// not to the connection that asked for it.
func (s *Server) run(t *turn) {
	var err error
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("turn panicked", "session", t.session, "turn", t.id, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("internal error: %v", p)
		}
		t.finish(err)
		s.finished(t)
		s.wg.Done()
	}()
	s.mu.Lock()
	ht := t.ht
	s.mu.Unlock()
	for ev := range ht.Events() {
		t.emit(ev)
	}
	res, runErr := ht.Result()
	switch {
	case res == nil:
		err = runErr // it could not start
	case runErr != nil && res.Reason != agent.DoneError:
		// The turn ran and its events went out; the store failed on
		// the way.
		s.log.Error("turn", "session", t.session, "turn", t.id, "error", runErr)
	}
}

// finished forgets a turn that could not start at once, and one that ran
// after KeepEvents.
func (s *Server) finished(t *turn) {
	t.cancel()
	t.mu.Lock()
	startFailed := t.next == 1
	t.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns[t.session] != t {
		return
	}
	if startFailed || s.closed {
		delete(s.turns, t.session)
		return
	}
	t.evict = time.AfterFunc(s.o.KeepEvents, func() {
		s.mu.Lock()
		if s.turns[t.session] == t {
			delete(s.turns, t.session)
		}
		s.mu.Unlock()
	})
}

// stream sends the turn's events after seq `after` as Server-Sent Events,
// live, until the turn returns or the client or the server goes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, t *turn, after int) {
	s.streams.Add(1)
	defer s.streams.Add(-1)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Hearth-Turn-Id", t.id)
	h.Set("Hearth-Session-Id", t.session)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	deadline := func() { rc.SetWriteDeadline(time.Now().Add(writeTimeout)) }
	deadline()
	if _, err := io.WriteString(w, "retry: 1000\n\n"); err != nil || rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(s.o.Heartbeat)
	defer tick.Stop()
	cursor := after
	var batch [][]byte
	for {
		t.mu.Lock()
		if cursor+1 < t.first {
			// Dropped while this client lagged: end the stream; a
			// reconnect is told the events are gone.
			t.mu.Unlock()
			return
		}
		batch = append(batch[:0], t.frames[cursor+1-t.first:]...)
		cursor = t.next - 1
		// The stream ends when the turn has returned: by then everything
		// is saved (the title too), so a client that reloads the session
		// finds it whole.
		end := t.done
		wake := t.wake
		t.mu.Unlock()
		if len(batch) > 0 {
			deadline()
			for _, f := range batch {
				if _, err := w.Write(f); err != nil {
					return
				}
			}
			if rc.Flush() != nil {
				return
			}
			clear(batch)
		}
		if end {
			return
		}
		select {
		case <-wake:
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C:
			deadline()
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		}
	}
}

// parseEventID reads an event id, "TURN.SEQ".
func parseEventID(s string) (turnID string, seq int, ok bool) {
	i := strings.LastIndexByte(s, '.')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return s[:i], n, true
}

func (s *Server) getEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	last := r.Header.Get("Last-Event-ID")
	if last == "" {
		last = r.URL.Query().Get("last_event_id")
	}
	tid, after := "", 0
	if last != "" {
		var ok bool
		if tid, after, ok = parseEventID(last); !ok {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("Last-Event-ID %q is not an event id of this API (TURN.SEQ, as sent in the id: field)", last))
			return
		}
	}
	t, err := s.findTurn(r.Context(), id, tid)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	switch {
	case t == nil && last != "":
		writeError(w, http.StatusGone, "events_gone", fmt.Sprintf("the events of turn %s are no longer kept (it ended over %s ago, or another turn began): reload the session with GET /v1/sessions/%s", tid, s.o.KeepEvents, id))
		return
	case t == nil:
		if _, err := s.store.Get(r.Context(), id); err != nil {
			s.storeError(w, id, err)
			return
		}
		writeError(w, http.StatusNotFound, "no_turn", fmt.Sprintf("no turn is running in session %s, nor ended recently: start one with POST /v1/sessions/%s/turns, or read the history with GET /v1/sessions/%s", id, id, id))
		return
	}
	if t.remote && after > 0 {
		// The client saw events of the owner that this mirror has not
		// heard of yet: wait for them, briefly.
		t.waitFor(r.Context(), after, catchUpWait)
	}
	t.mu.Lock()
	first, next, done, doneSeq := t.first, t.next, t.done, t.doneSeq
	t.mu.Unlock()
	if t.remote && after > next-1 && done && doneSeq > 0 {
		// The owner died with events that never reached the store (the
		// client saw them): the end is what is left to send.
		after = doneSeq - 1
	}
	switch {
	case after > next-1:
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("Last-Event-ID %q is past the last event of turn %s (%d)", last, t.id, next-1))
		return
	case after < first-1 && last != "":
		writeError(w, http.StatusGone, "events_gone", fmt.Sprintf("the events of turn %s before %d are no longer kept (the turn is very long): reload the session with GET /v1/sessions/%s", t.id, first, id))
		return
	case after < first-1:
		after = first - 1
	}
	s.stream(w, r, t, after)
}

// waitFor waits up to d for the turn to have event seq, or to return.
func (t *turn) waitFor(ctx context.Context, seq int, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		ok, wake := t.next > seq || t.done, t.wake
		t.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// findTurn returns the turn of session id to stream: turn tid when it is
// given, else the session's running or last kept turn; run by this process
// or, when the store is shared, by another (a mirror of it). Nil when
// there is none.
func (s *Server) findTurn(ctx context.Context, id, tid string) (*turn, error) {
	s.mu.Lock()
	t := s.turns[id]
	s.mu.Unlock()
	if t != nil && (tid == "" && s.relay == nil || t.id == tid) {
		return t, nil
	}
	if s.relay == nil {
		return nil, nil
	}
	var info *session.TurnInfo
	var err error
	if tid != "" {
		info, err = s.relay.Turn(ctx, tid)
		// A turn that just began on another server may not be in the
		// store yet (its start is written in the background): wait for
		// it, briefly, before calling its events gone.
		for wait := time.Now().Add(catchUpWait); err == nil && info == nil && time.Now().Before(wait); {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			info, err = s.relay.Turn(ctx, tid)
		}
		if err == nil && info != nil && (info.SessionID != id || info.Ended && time.Since(info.EndedAt) > s.o.KeepEvents) {
			info = nil
		}
	} else {
		info, err = s.remoteTurn(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	if info == nil || t != nil && info.ID == t.id {
		return t, nil
	}
	if t != nil && tid == "" && !t.finished() {
		return t, nil // this process's running turn is the session's
	}
	return s.mirror(ctx, info)
}

func (s *Server) cancelTurn(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	t := s.turns[id]
	s.mu.Unlock()
	if (t == nil || !t.running()) && s.relay != nil {
		// Another process may run it.
		info, err := s.remoteTurn(r.Context(), id)
		if err != nil {
			s.storeError(w, id, err)
			return
		}
		if info != nil && !info.Ended {
			reply, err := s.request(r.Context(), relayMsg{Op: "cancel", Turn: info.ID})
			if err != nil {
				writeError(w, http.StatusBadGateway, "relay_failed", fmt.Sprintf("turn %s runs on %s, which could not be asked to cancel it: %v", info.ID, info.Instance, err))
				return
			}
			if reply.Status == http.StatusAccepted {
				if t, err = s.mirror(r.Context(), info); err != nil {
					s.storeError(w, id, err)
					return
				}
			}
		}
	}
	if t == nil || t.remote && t.finished() || !t.remote && !t.running() {
		if _, err := s.store.Get(r.Context(), id); err != nil {
			s.storeError(w, id, err)
			return
		}
		writeError(w, http.StatusConflict, "not_running", fmt.Sprintf("no turn is running in session %s", id))
		return
	}
	t.cancel()
	finished := t.waitFinished(r.Context(), cancelWait)
	t.mu.Lock()
	reason := t.reason
	t.mu.Unlock()
	status := http.StatusOK
	if !finished {
		status = http.StatusAccepted
	}
	writeJSON(w, status, map[string]any{"session_id": id, "turn_id": t.id, "finished": finished, "reason": reason})
}

// approvalBody is the body of POST /v1/approvals/{id}.
type approvalBody struct {
	Decision string `json:"decision"`
	// Message goes to the model with a denial (why, what to do instead).
	Message string `json:"message,omitempty"`
	// SessionID picks the approval when two sessions wait on the same
	// call id.
	SessionID string `json:"session_id,omitempty"`
}

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body approvalBody
	if !decodeJSON(w, r, &body, false, `{"decision": "allow"}`) {
		return
	}
	if _, ok := decisions[body.Decision]; !ok {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(`decision %q: use "allow", "deny" or "always" (allow this tool for the rest of the session)`, body.Decision))
		return
	}
	s.mu.Lock()
	var found []*turn
	for _, t := range s.turns {
		if t.ht != nil && (body.SessionID == "" || t.session == body.SessionID) && slices.Contains(t.ht.Waiting(), id) {
			found = append(found, t)
		}
	}
	s.mu.Unlock()
	if len(found) == 0 && s.relay != nil {
		// Another process's turn may be waiting for it.
		turns, err := s.relay.ApprovalTurns(r.Context(), id, body.SessionID)
		if err != nil {
			s.storeError(w, body.SessionID, err)
			return
		}
		turns = slices.DeleteFunc(turns, func(ti session.TurnInfo) bool {
			if !ti.Alive {
				// Its process is gone: end it, for every follower, rather
				// than wait for an answer that cannot come.
				s.abandonRemote(r.Context(), &ti)
			}
			return ti.Mine || !ti.Alive
		})
		switch len(turns) {
		case 0:
		case 1:
			if len(body.Message) > maxRelayedMessage {
				writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the message is %d bytes; an approval answered through another server (turn %s runs on %s) carries at most %d", len(body.Message), turns[0].ID, turns[0].Instance, maxRelayedMessage))
				return
			}
			reply, err := s.request(r.Context(), relayMsg{Op: "approve", Turn: turns[0].ID, Call: id, Decision: body.Decision, Message: body.Message})
			if err == nil && (reply.Status < 200 || reply.Status > 599 || len(reply.Body) == 0) {
				err = fmt.Errorf("it answered status %d", reply.Status)
			}
			if err != nil {
				writeError(w, http.StatusBadGateway, "relay_failed", fmt.Sprintf("turn %s waits for this approval on %s, which could not be reached: %v", turns[0].ID, turns[0].Instance, err))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(reply.Status)
			w.Write(append(reply.Body, '\n'))
			return
		default:
			writeError(w, http.StatusConflict, "ambiguous_approval", fmt.Sprintf(`several sessions wait for an approval of call %s: add "session_id" to the body`, id))
			return
		}
	}
	switch {
	case len(found) > 1:
		writeError(w, http.StatusConflict, "ambiguous_approval", fmt.Sprintf(`several sessions wait for an approval of call %s: add "session_id" to the body`, id))
		return
	case len(found) == 0 && body.SessionID != "":
		// Answered already, or never asked: the turn says which.
		s.mu.Lock()
		t := s.turns[body.SessionID]
		s.mu.Unlock()
		if t != nil && t.ht != nil && t.running() {
			found = append(found, t)
		}
	case len(found) == 0:
		s.mu.Lock()
		for _, t := range s.turns {
			if t.ht != nil && t.running() && t.ht.Answered(id) {
				found = append(found, t)
			}
		}
		s.mu.Unlock()
	}
	if len(found) != 1 {
		writeError(w, http.StatusNotFound, "no_approval", fmt.Sprintf("no approval is waiting for call %s: it was answered, timed out, or its turn ended", id))
		return
	}
	status, out := s.answer(found[0], id, body.Decision, body.Message)
	writeJSON(w, status, out)
}

// decisions are the answers to an approval.
var decisions = map[string]agent.Decision{"allow": agent.Allow, "deny": agent.Deny, "always": agent.AllowAlways}

// answer answers the approval of call id in turn t, this process's, and
// returns the response: its status and body.
func (s *Server) answer(t *turn, id, decision, message string) (int, any) {
	d, ok := decisions[decision]
	if !ok || t.ht == nil {
		return http.StatusBadRequest, apiError{errorBody{Code: "bad_request", Message: fmt.Sprintf("decision %q", decision)}}
	}
	var err error
	if d == agent.Deny {
		err = t.ht.Deny(id, message)
	} else {
		err = t.ht.Approve(id, d)
	}
	switch {
	case errors.Is(err, hearth.ErrAnswered):
		return http.StatusConflict, apiError{errorBody{Code: "already_answered", Message: fmt.Sprintf("the approval of call %s was already answered", id)}}
	case err != nil:
		return http.StatusNotFound, apiError{errorBody{Code: "no_approval", Message: fmt.Sprintf("no approval is waiting for call %s: it was answered, timed out, or its turn ended", id)}}
	}
	return http.StatusOK, map[string]string{"id": id, "session_id": t.session, "turn_id": t.id, "decision": decision}
}
