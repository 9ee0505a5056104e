package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
)

// Serving one store from several processes (session.Relay, PostgreSQL):
// each process records the events of the turns it runs in the store, and
// any process can serve a turn's stream from there. A process that streams
// another's turn keeps a mirror of it: a turn like its own, without a
// runtime turn, filled from the store and then from the notifications the
// owner publishes. A cancel or an approval for another's turn is a
// message to every process; the owner acts on it and replies.

// Timings of the relay.
const (
	// checkEvery is how often running mirrors ask whether their owner
	// still lives.
	checkEvery = time.Second
	// purgeEvery is how often turns older than KeepEvents are removed.
	purgeEvery = time.Minute
	// replyWait bounds the wait for the owner of a turn to answer a
	// message.
	replyWait = 10 * time.Second
	// lostReason is the reason recorded for a turn whose process died.
	lostReason = "lost"
)

// relayMsg is a message between processes: a request ("cancel",
// "approve") to the owner of turn Turn, or its "reply".
type relayMsg struct {
	Op       string          `json:"op"`
	Turn     string          `json:"turn,omitempty"`
	Call     string          `json:"call,omitempty"`
	Decision string          `json:"decision,omitempty"`
	Message  string          `json:"message,omitempty"`
	ReplyTo  string          `json:"reply_to,omitempty"`
	Status   int             `json:"status,omitempty"`
	Body     json.RawMessage `json:"body,omitempty"`
}

// startRelay starts following the other processes.
func (s *Server) startRelay() {
	s.remote = map[string]*turn{}
	s.replies = map[string]chan relayMsg{}
	s.relayDone = make(chan struct{})
	go s.follow()
}

// follow applies what the other processes publish, checks that the owners
// of running mirrors live, and purges old turns.
func (s *Server) follow() {
	defer close(s.relayDone)
	check := time.NewTicker(checkEvery)
	defer check.Stop()
	purge := time.NewTicker(purgeEvery)
	defer purge.Stop()
	notes := s.relay.Notes()
	for {
		select {
		case n, ok := <-notes:
			if !ok {
				return
			}
			s.note(n)
		case <-check.C:
			s.checkMirrors()
		case <-purge.C:
			// Off this loop: the notes must not wait for a large DELETE.
			if s.purging.CompareAndSwap(false, true) {
				s.background(func() {
					defer s.purging.Store(false)
					ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
					defer cancel()
					if err := s.relay.Purge(ctx, time.Now().Add(-s.o.KeepEvents)); err != nil {
						s.log.Warn("relay", "error", err)
					}
				})
			}
		case <-s.ctx.Done():
			return
		}
	}
}

// background runs f in a goroutine that Close waits for.
func (s *Server) background(f func()) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f()
	}()
}

func (s *Server) mirrorOf(turnID string) *turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.remote[turnID]
}

// note applies one notification.
func (s *Server) note(n session.Note) {
	switch n.Kind {
	case session.NoteEvents:
		t := s.mirrorOf(n.Turn)
		if t == nil {
			return
		}
		t.mu.Lock()
		gap := false
		if len(n.Events) == 0 {
			gap = n.Last >= t.next
		}
		for _, ev := range n.Events {
			if ev.Seq < t.next {
				continue
			}
			if ev.Seq > t.next {
				gap = true
				break
			}
			t.addFrameLocked(ev.Type, ev.Data)
		}
		t.mu.Unlock()
		if gap {
			s.refillLater(t, false)
		}
	case session.NoteEnd:
		if t := s.mirrorOf(n.Turn); t != nil {
			s.refillLater(t, true)
		}
	case session.NoteResync:
		s.mu.Lock()
		for _, t := range s.remote {
			s.refillLater(t, false)
		}
		s.mu.Unlock()
	case session.NoteMessage:
		var m relayMsg
		if json.Unmarshal(n.Data, &m) != nil {
			return
		}
		if m.Op == "reply" {
			s.mu.Lock()
			ch := s.replies[m.ReplyTo]
			s.mu.Unlock()
			if ch != nil {
				select {
				case ch <- m:
				default:
				}
			}
			return
		}
		s.background(func() { s.serveRequest(m) })
	}
}

// refillLater refills a mirror in the background: at most one refill
// waits per mirror (a gap seen by many notes costs one read), and one that
// knows the turn ended is never lost.
func (s *Server) refillLater(t *turn, ended bool) {
	t.mu.Lock()
	if ended {
		t.endPending = true
	}
	pending := t.refillPending
	t.refillPending = true
	t.mu.Unlock()
	if pending {
		return
	}
	s.background(func() {
		t.mu.Lock()
		t.refillPending = false
		ended := t.endPending
		t.mu.Unlock()
		s.refill(t, ended)
	})
}

// refill reads a mirror's events it lacks from the store; ended says the
// owner reported the turn's end, which is marked once they are in.
func (s *Server) refill(t *turn, ended bool) {
	t.refillMu.Lock()
	defer t.refillMu.Unlock()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	t.mu.Lock()
	after, done := t.next-1, t.done
	t.mu.Unlock()
	if done {
		return
	}
	evs, err := s.relay.TurnEvents(ctx, t.id, after)
	if err != nil {
		s.log.Warn("relay: reading a turn's events", "turn", t.id, "error", err)
		return
	}
	if !ended {
		if info, err := s.relay.Turn(ctx, t.id); err == nil && info != nil && info.Ended {
			ended = true
			// Events written before the end may have come since.
			if more, err := s.relay.TurnEvents(ctx, t.id, after+len(evs)); err == nil {
				evs = append(evs, more...)
			}
		}
	}
	t.mu.Lock()
	for _, ev := range evs {
		if ev.Seq == t.next {
			t.addFrameLocked(ev.Type, ev.Data)
		}
	}
	if ended {
		t.markDoneLocked()
	}
	t.mu.Unlock()
	if ended {
		s.mirrorFinished(t)
	}
}

// checkMirrors ends the mirrors of turns whose process is gone (killed,
// or cut off from the database): the store records the end, once, for
// every process. Only mirrors that heard nothing for a while are checked
// (one query for all of them), off the goroutine that applies the notes.
func (s *Server) checkMirrors() {
	if !s.checking.CompareAndSwap(false, true) {
		return // the last check is still running
	}
	s.mu.Lock()
	var quiet []*turn
	var ids []string
	for _, t := range s.remote {
		t.mu.Lock()
		if !t.done && time.Since(t.heard) >= checkEvery {
			quiet = append(quiet, t)
			ids = append(ids, t.id)
		}
		t.mu.Unlock()
	}
	s.mu.Unlock()
	if len(quiet) == 0 {
		s.checking.Store(false)
		return
	}
	s.background(func() {
		defer s.checking.Store(false)
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		defer cancel()
		infos, err := s.relay.Turns(ctx, ids)
		if err != nil {
			s.log.Warn("relay: checking turns", "error", err)
			return
		}
		byID := map[string]*session.TurnInfo{}
		for i := range infos {
			byID[infos[i].ID] = &infos[i]
		}
		for _, t := range quiet {
			s.settle(ctx, t, byID[t.id])
		}
	})
}

// checkMirror checks one mirror's turn.
func (s *Server) checkMirror(ctx context.Context, t *turn) {
	info, err := s.relay.Turn(ctx, t.id)
	if err != nil {
		s.log.Warn("relay: checking a turn", "turn", t.id, "error", err)
		return
	}
	s.settle(ctx, t, info)
}

// settle ends a mirror whose turn ended (or is gone from the log), ending
// the turn first if its process is gone.
func (s *Server) settle(ctx context.Context, t *turn, info *session.TurnInfo) {
	switch {
	case info == nil || info.Ended:
		s.refill(t, true)
	case !info.Alive:
		s.abandonRemote(ctx, info)
		s.refill(t, true)
	default:
		t.mu.Lock()
		t.heard = time.Now()
		t.mu.Unlock()
	}
}

// abandonRemote ends a turn whose process is gone, with an error and a
// done event in its stream.
func (s *Server) abandonRemote(ctx context.Context, info *session.TurnInfo) {
	msg := fmt.Sprintf("the turn was lost: %s, which ran it, stopped before it ended; what it saved is in the session", info.Instance)
	_, err := s.relay.Abandon(ctx, info.ID, lostReason, func(next int) []session.TurnEvent {
		var out []session.TurnEvent
		for i, ev := range []agent.Event{
			{Type: agent.EventError, Code: agent.CodeAgentError, Error: msg},
			{Type: agent.EventDone, DoneReason: agent.DoneError},
		} {
			data, _ := ev.MarshalJSON()
			out = append(out, session.TurnEvent{Seq: next + i, Type: string(ev.Type), Data: data})
		}
		return out
	})
	if err != nil {
		s.log.Warn("relay: ending a lost turn", "turn", info.ID, "error", err)
	}
}

// mirror returns the mirror of another process's turn, making it (filled
// from the store) if this process has none.
func (s *Server) mirror(ctx context.Context, info *session.TurnInfo) (*turn, error) {
	s.mu.Lock()
	if t := s.remote[info.ID]; t != nil {
		s.mu.Unlock()
		return t, nil
	}
	t := &turn{s: s, id: info.ID, session: info.SessionID, first: 1, next: 1, wake: make(chan struct{}), remote: true}
	t.ctx, t.cancel = context.WithCancel(s.ctx)
	s.remote[info.ID] = t
	s.mu.Unlock()
	evs, err := s.relay.TurnEvents(ctx, info.ID, 0)
	if err != nil {
		s.mu.Lock()
		delete(s.remote, info.ID)
		s.mu.Unlock()
		return nil, err
	}
	t.mu.Lock()
	for _, ev := range evs {
		if ev.Seq == t.next {
			t.addFrameLocked(ev.Type, ev.Data)
		}
	}
	t.mu.Unlock()
	// Its end may have been announced before the mirror was listed to
	// hear it: ask once more.
	s.checkMirror(ctx, t)
	return t, nil
}

// mirrorFinished forgets a mirror after KeepEvents.
func (s *Server) mirrorFinished(t *turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.remote[t.id] != t || t.evict != nil {
		return
	}
	t.evict = time.AfterFunc(s.o.KeepEvents, func() {
		s.mu.Lock()
		if s.remote[t.id] == t {
			delete(s.remote, t.id)
		}
		s.mu.Unlock()
	})
}

// remoteTurn returns the turn of session id that another process runs or
// ran last (nil when there is none, or it is this process's, or it ended
// over KeepEvents ago). A turn whose process is gone is ended first.
func (s *Server) remoteTurn(ctx context.Context, id string) (*session.TurnInfo, error) {
	if s.relay == nil {
		return nil, nil
	}
	info, err := s.relay.LastTurn(ctx, id)
	if err != nil || info == nil {
		return nil, err
	}
	if info.Mine {
		s.mu.Lock()
		_, local := s.turns[id]
		s.mu.Unlock()
		if local {
			return nil, nil
		}
	}
	if !info.Ended && !info.Alive {
		s.abandonRemote(ctx, info)
		if info, err = s.relay.Turn(ctx, info.ID); err != nil || info == nil {
			return nil, err
		}
	}
	if info.Ended && time.Since(info.EndedAt) > s.o.KeepEvents {
		return nil, nil
	}
	return info, nil
}

// request sends a message to the owner of a turn and waits for its
// reply.
func (s *Server) request(ctx context.Context, m relayMsg) (relayMsg, error) {
	m.ReplyTo = session.NewID()
	ch := make(chan relayMsg, 1)
	s.mu.Lock()
	s.replies[m.ReplyTo] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.replies, m.ReplyTo)
		s.mu.Unlock()
	}()
	data, _ := json.Marshal(m)
	if err := s.relay.Send(ctx, data); err != nil {
		return relayMsg{}, err
	}
	timer := time.NewTimer(replyWait)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-timer.C:
		return relayMsg{}, errors.New("the instance running the turn did not answer")
	case <-ctx.Done():
		return relayMsg{}, ctx.Err()
	}
}

// serveRequest acts on a request for a turn this process runs, and
// replies; a request for another's turn is not this process's to answer.
func (s *Server) serveRequest(m relayMsg) {
	s.mu.Lock()
	var t *turn
	for _, lt := range s.turns {
		if lt.id == m.Turn {
			t = lt
		}
	}
	s.mu.Unlock()
	if t == nil {
		return
	}
	reply := relayMsg{Op: "reply", ReplyTo: m.ReplyTo, Turn: t.id}
	switch m.Op {
	case "cancel":
		if !t.running() {
			reply.Status = http.StatusConflict
			break
		}
		t.cancel()
		reply.Status = http.StatusAccepted
	case "approve":
		var body any
		reply.Status, body = s.answer(t, m.Call, m.Decision, m.Message)
		reply.Body, _ = json.Marshal(body)
	default:
		return
	}
	data, _ := json.Marshal(reply)
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	if err := s.relay.Send(ctx, data); err != nil {
		s.log.Warn("relay: replying", "error", err)
	}
}
