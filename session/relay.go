package session

import (
	"context"
	"time"
)

// Relay is what a store shared by several processes (PostgreSQL) offers
// so that they serve each other's turns: a log of the events of recent
// turns that any of them can read and follow, and messages between them
// (a cancel, an approval). A store of one process (SQLite) has none: its
// server keeps the events in memory.
//
// The process that runs a turn records it (BeginTurn, AddEvent, EndTurn);
// the others read it (Turn, TurnEvents) and follow it through Notes.
type Relay interface {
	// Instance names this process to the others ("hearth on HOST (pid
	// N)").
	Instance() string

	// BeginTurn, AddEvent and EndTurn record what happens to a turn this
	// process runs. They do not wait: the records are written in order, in
	// batches, and published to the other processes as they are written.
	// A record that cannot be written yet (the database is unreachable) is
	// kept and written again, in order, until it is or the relay is
	// closed. Records are dropped only for a turn that can no longer be
	// recorded (see Lost), and, past a bound on memory, the oldest events
	// waiting (never a turn's start or end); both are logged. They never
	// stop the turn.
	BeginTurn(turnID, sessionID string)
	AddEvent(turnID string, ev TurnEvent)
	EndTurn(turnID, reason string)
	// Flush waits until everything recorded so far is written (or
	// dropped, as above). It returns ctx's error if that is not so when
	// ctx ends, and an error if the relay is closed first.
	Flush(ctx context.Context) error
	// Lost reports whether the relay stopped recording turn turnID:
	// another process ended it (it took this one for dead: cut off from
	// the database for longer than the grace period, it abandoned the
	// turn), or the turn's session is gone. Its later records are
	// dropped; the turn itself goes on until its runner stops it.
	Lost(turnID string) bool

	// Turn returns a turn by id (nil if the log has none).
	Turn(ctx context.Context, turnID string) (*TurnInfo, error)
	// Turns returns the turns of the given ids that the log has.
	Turns(ctx context.Context, turnIDs []string) ([]TurnInfo, error)
	// LastTurn returns a session's most recent turn (nil if none).
	LastTurn(ctx context.Context, sessionID string) (*TurnInfo, error)
	// TurnEvents returns a turn's events after seq after, in order.
	TurnEvents(ctx context.Context, turnID string, after int) ([]TurnEvent, error)
	// ApprovalTurns returns the running turns that asked for approval of
	// call callID (of session sessionID when it is not "").
	ApprovalTurns(ctx context.Context, callID, sessionID string) ([]TurnInfo, error)
	// Abandon ends a turn whose process is gone (killed, or cut off from
	// the database for longer than a grace period): it records the events
	// that events returns (numbered from next) and the end, and publishes
	// them. It returns them, or nil when the turn had ended or its process
	// is alive.
	Abandon(ctx context.Context, turnID, reason string, events func(next int) []TurnEvent) ([]TurnEvent, error)
	// Purge forgets turns that ended before before, and those whose
	// process is gone that began before it (the cutoff is taken as an
	// age, on the database's clock); and the locks of processes that are
	// gone.
	Purge(ctx context.Context, before time.Time) error

	// Send publishes a message to the other processes.
	Send(ctx context.Context, data []byte) error
	// Notes delivers what the other processes publish: their turns'
	// events and ends, and their messages. It has one reader.
	Notes() <-chan Note
}

// RelayOf returns the Relay of a store shared by several processes, or nil
// for one that is not.
func RelayOf(s Store) Relay {
	if r, ok := s.(interface{ Relay() Relay }); ok {
		return r.Relay()
	}
	return nil
}

// TurnEvent is one event of a turn as a Relay keeps it.
type TurnEvent struct {
	// Seq numbers the turn's events from 1.
	Seq int
	// Type is the event's type ("text_delta"); CallID the call an
	// approval_required asks about.
	Type, CallID string
	// Data is the event's JSON, in the event contract (docs/events.md).
	Data []byte
}

// TurnInfo is a turn as a Relay knows it.
type TurnInfo struct {
	ID, SessionID string
	// Instance names the process that runs (or ran) it.
	Instance  string
	StartedAt time.Time
	// Ended says the turn returned, at EndedAt, for Reason ("stop",
	// "cancelled", …; "lost" when its process died).
	Ended   bool
	EndedAt time.Time
	Reason  string
	// Alive says the process that runs it is still connected, or was a
	// moment ago (within a grace period: it may be connecting again);
	// Mine that it is this process (this store).
	Alive, Mine bool
}

// NoteKind says what a Note carries.
type NoteKind byte

// The kinds of Note.
const (
	// NoteEvents carries events of a turn: Events, or, when they were too
	// large to send, none and Last (read them with TurnEvents).
	NoteEvents NoteKind = 'e'
	// NoteEnd says turn Turn returned, for Reason.
	NoteEnd NoteKind = 'd'
	// NoteMessage carries Data sent with Send.
	NoteMessage NoteKind = 'm'
	// NoteResync says notes may have been missed (the connection to the
	// database was lost): read what is needed again.
	NoteResync NoteKind = 'r'
)

// Note is what another process published.
type Note struct {
	Kind   NoteKind
	Turn   string
	Events []TurnEvent
	Last   int
	Reason string
	Data   []byte
}
