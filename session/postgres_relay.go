package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// relayChannel is the LISTEN/NOTIFY channel of the relay.
const relayChannel = "hearth_relay"

// maxNotify bounds a notification's payload (PostgreSQL's limit is 8000
// bytes): events that do not fit are read from turn_events instead.
const maxNotify = 7800

// Relay returns the store's Relay, starting it on first use: a goroutine
// that writes the turns this process runs, and one that listens for the
// others' on the presence connection.
func (p *Postgres) Relay() Relay {
	p.relayOnce.Do(func() {
		r := &pgRelay{p: p, from: NewID(), notes: make(chan Note, 4096), wake: make(chan struct{}, 1),
			log: p.Log}
		if r.log == nil {
			r.log = slog.New(slog.DiscardHandler)
		}
		r.ctx, r.stop = context.WithCancel(context.Background())
		// LISTEN before Relay returns, so that what the others publish
		// from then on is delivered (a caller reads the log, then follows
		// the notes). If it fails, the listener tries again, and says
		// that notes may have been missed.
		p.idMu.Lock()
		conn := p.presence
		p.idMu.Unlock()
		lctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
		_, err := conn.Exec(lctx, "LISTEN "+relayChannel)
		cancel()
		if err != nil {
			r.log.Warn("relay: LISTEN failed; trying again", "error", err)
		}
		r.wg.Add(2)
		go r.writeLoop()
		go r.listenLoop(conn, err == nil)
		p.relay = r
	})
	return p.relay
}

// pgRelay is the Relay of a Postgres store.
type pgRelay struct {
	p     *Postgres
	from  string // this process's mark on its notifications
	log   *slog.Logger
	notes chan Note
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu    sync.Mutex
	queue []relayRecord
	// queued counts the records ever queued, written those written (or
	// dropped); flushed is closed and replaced at each write.
	queued, written int
	flushed         chan struct{}
	wake            chan struct{}
}

// relayRecord is one queued record: a turn's start (sessionID set), an
// event (ev set) or its end (end set).
type relayRecord struct {
	turn, sessionID string
	ev              *TurnEvent
	end             bool
	reason          string
}

func (r *pgRelay) Instance() string { return r.p.instance }

func (r *pgRelay) close() {
	flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	r.Flush(flushCtx)
	cancel()
	r.stop()
	r.wg.Wait()
}

func (r *pgRelay) push(rec relayRecord) {
	r.mu.Lock()
	r.queue = append(r.queue, rec)
	r.queued++
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *pgRelay) BeginTurn(turnID, sessionID string) {
	r.push(relayRecord{turn: turnID, sessionID: sessionID})
}

func (r *pgRelay) AddEvent(turnID string, ev TurnEvent) {
	r.push(relayRecord{turn: turnID, ev: &ev})
}

func (r *pgRelay) EndTurn(turnID, reason string) {
	r.push(relayRecord{turn: turnID, end: true, reason: reason})
}

// Flush waits until every record queued before it is written (not for
// the records queued after: a busy process is never idle).
func (r *pgRelay) Flush(ctx context.Context) error {
	r.mu.Lock()
	target := r.queued
	r.mu.Unlock()
	for {
		r.mu.Lock()
		done := r.written >= target
		if r.flushed == nil {
			r.flushed = make(chan struct{})
		}
		ch := r.flushed
		r.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-r.ctx.Done():
			return errors.New("the relay is closed")
		}
	}
}

// writeLoop writes what is queued, all of it in one transaction each time
// (so that a busy process writes in large batches, not one event at a
// time).
func (r *pgRelay) writeLoop() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		batch := r.queue
		r.queue = nil
		r.mu.Unlock()
		if len(batch) > 0 {
			r.write(batch)
		}
		r.mu.Lock()
		r.written += len(batch)
		if r.flushed != nil {
			close(r.flushed)
			r.flushed = nil
		}
		more := len(r.queue) > 0
		r.mu.Unlock()
		if more {
			continue
		}
		select {
		case <-r.wake:
		case <-r.ctx.Done():
			return
		}
	}
}

// write writes a batch; when the batch fails (a session deleted while its
// turn ran), each turn's records are written on their own, so that one
// turn cannot hold up the others.
func (r *pgRelay) write(batch []relayRecord) {
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	err := r.writeTx(ctx, batch)
	if err == nil || ctx.Err() != nil {
		return
	}
	var order []string
	byTurn := map[string][]relayRecord{}
	for _, rec := range batch {
		if byTurn[rec.turn] == nil {
			order = append(order, rec.turn)
		}
		byTurn[rec.turn] = append(byTurn[rec.turn], rec)
	}
	for _, t := range order {
		if err := r.writeTx(ctx, byTurn[t]); err != nil {
			r.log.Warn("relay: the events of a turn could not be written; other instances will not see them", "turn", t, "error", err)
		}
	}
}

func (r *pgRelay) writeTx(ctx context.Context, batch []relayRecord) error {
	// One round trip: the transaction's BEGIN and COMMIT travel in the
	// batch with its statements (an error aborts the rest, and the pool
	// drops the connection left in the failed transaction).
	var b pgx.Batch
	b.Queue("BEGIN")
	// The log is a relay, not the record: the messages are (written by
	// Append, durably); so these writes need not wait for the disk.
	b.Queue("SET LOCAL synchronous_commit TO OFF")
	var evTurn, evType, evCall, evData []string
	var evSeq []int32
	var notes []string
	flushEvents := func() {
		if len(evTurn) == 0 {
			return
		}
		b.Queue(`INSERT INTO turn_events (turn_id, seq, type, call_id, data)
			SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[]) ON CONFLICT DO NOTHING`,
			evTurn, evSeq, evType, evCall, evData)
		evTurn, evSeq, evType, evCall, evData = nil, nil, nil, nil, nil
	}
	pid, start := r.p.identity()
	for i := 0; i < len(batch); i++ {
		rec := batch[i]
		switch {
		case rec.sessionID != "":
			flushEvents()
			// clock_timestamp, not now() (the transaction's start): turns
			// begun in one batch are ordered (LastTurn), and a turn that
			// ends in the batch it began in does not end before it began.
			b.Queue(`INSERT INTO turns (id, session_id, instance, pid, backend_start, started_at) VALUES ($1, $2, $3, $4, $5, clock_timestamp())
				ON CONFLICT (id) DO NOTHING`, rec.turn, pgText(rec.sessionID), r.p.instance, pid, start)
		case rec.end:
			flushEvents()
			b.Queue("UPDATE turns SET ended_at = clock_timestamp(), reason = $2 WHERE id = $1 AND ended_at IS NULL", rec.turn, rec.reason)
			notes = append(notes, r.header(NoteEnd, rec.turn, rec.reason))
		default:
			// A run of this turn's events: one insert, and notifications
			// of at most maxNotify bytes each.
			j := i
			for j < len(batch) && batch[j].ev != nil && batch[j].turn == rec.turn {
				j++
			}
			notes = append(notes, r.eventNotes(rec.turn, batch[i:j])...)
			for _, e := range batch[i:j] {
				evTurn = append(evTurn, e.turn)
				evSeq = append(evSeq, int32(e.ev.Seq))
				evType = append(evType, e.ev.Type)
				evCall = append(evCall, pgText(e.ev.CallID))
				evData = append(evData, pgText(string(e.ev.Data)))
			}
			i = j - 1
		}
	}
	flushEvents()
	if len(notes) > 0 {
		b.Queue("SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n", relayChannel, notes)
	}
	b.Queue("COMMIT")
	return r.p.pool.SendBatch(ctx, &b).Close()
}

// header starts a notification: "KIND FROM TURN ARG".
func (r *pgRelay) header(kind NoteKind, turn, arg string) string {
	return string(kind) + " " + r.from + " " + turn + " " + arg
}

// eventNotes packs a run of one turn's events into notifications: "e FROM
// TURN FIRST" and one event's JSON per line; an event too large for one
// becomes "e FROM TURN -LAST" (read it from the table).
func (r *pgRelay) eventNotes(turn string, recs []relayRecord) []string {
	var out []string
	var cur strings.Builder
	open := func(seq int) {
		cur.Reset()
		cur.WriteString(r.header(NoteEvents, turn, strconv.Itoa(seq)))
	}
	started := false
	for _, rec := range recs {
		data := pgText(string(rec.ev.Data))
		head := len(r.header(NoteEvents, turn, strconv.Itoa(rec.ev.Seq)))
		if head+1+len(data) > maxNotify || strings.ContainsRune(data, '\n') {
			if started {
				out = append(out, cur.String())
				started = false
			}
			out = append(out, r.header(NoteEvents, turn, "-"+strconv.Itoa(rec.ev.Seq)))
			continue
		}
		if started && cur.Len()+1+len(data) > maxNotify {
			out = append(out, cur.String())
			started = false
		}
		if !started {
			open(rec.ev.Seq)
			started = true
		}
		cur.WriteByte('\n')
		cur.WriteString(data)
	}
	if started {
		out = append(out, cur.String())
	}
	return out
}

// parseNote reads a notification; ok is false for one of this process's
// own, or one it cannot read.
func (r *pgRelay) parseNote(payload string) (Note, bool) {
	head, body, _ := strings.Cut(payload, "\n")
	f := strings.SplitN(head, " ", 4)
	if len(f) < 3 || len(f[0]) != 1 || f[1] == r.from {
		return Note{}, false
	}
	n := Note{Kind: NoteKind(f[0][0])}
	arg := ""
	if len(f) == 4 {
		arg = f[3]
	}
	switch n.Kind {
	case NoteEvents:
		n.Turn = f[2]
		seq, err := strconv.Atoi(arg)
		if err != nil {
			return Note{}, false
		}
		if seq < 0 {
			n.Last = -seq
			return n, true
		}
		for line := range strings.SplitSeq(body, "\n") {
			n.Events = append(n.Events, TurnEvent{Seq: seq, Type: eventType(line), Data: []byte(line)})
			seq++
		}
		n.Last = seq - 1
	case NoteEnd:
		n.Turn, n.Reason = f[2], arg
	case NoteMessage:
		n.Data = []byte(body)
	default:
		return Note{}, false
	}
	return n, true
}

// eventType reads the "type" of an event's JSON (the contract writes it
// first).
func eventType(data string) string {
	const key = `{"type":"`
	if !strings.HasPrefix(data, key) {
		return ""
	}
	rest := data[len(key):]
	if i := strings.IndexByte(rest, '"'); i >= 0 {
		return rest[:i]
	}
	return ""
}

// listenLoop delivers the others' notifications, received on the presence
// connection conn (LISTENing already when listening is set); when the
// connection breaks it connects again (with a new identity, which it moves
// this process's locks and turns to) and, once it LISTENs again, says
// that notes were missed (NoteResync: what a reader reads again then
// includes everything published before it, and the notes after it follow).
func (r *pgRelay) listenLoop(conn *pgx.Conn, listening bool) {
	defer r.wg.Done()
	defer close(r.notes)
	resync := !listening
	for r.ctx.Err() == nil {
		if !listening {
			if _, err := conn.Exec(r.ctx, "LISTEN "+relayChannel); err != nil {
				if r.ctx.Err() != nil {
					return
				}
				r.log.Warn("relay: LISTEN failed; connecting again", "error", err)
				conn = r.reconnect()
				continue
			}
			listening = true
			if resync {
				r.deliver(Note{Kind: NoteResync})
				resync = false
			}
		}
		n, err := conn.WaitForNotification(r.ctx)
		if err != nil {
			if r.ctx.Err() != nil {
				return
			}
			r.log.Warn("relay: the database connection broke; connecting again", "error", err)
			conn = r.reconnect()
			listening, resync = false, true
			continue
		}
		if note, ok := r.parseNote(n.Payload); ok {
			r.deliver(note)
		}
	}
}

func (r *pgRelay) deliver(n Note) {
	select {
	case r.notes <- n:
	case <-r.ctx.Done():
	}
}

// reconnect makes a new presence connection, retrying until the relay is
// closed, and moves this process's locks and turns to its identity.
func (r *pgRelay) reconnect() *pgx.Conn {
	delay := 100 * time.Millisecond
	for {
		conn, err := r.p.connectPresence(r.ctx)
		if err == nil {
			return conn
		}
		if r.ctx.Err() != nil {
			return r.p.presence
		}
		r.log.Warn("relay: connecting to the database", "error", err)
		select {
		case <-time.After(delay):
		case <-r.ctx.Done():
		}
		delay = min(2*delay, 5*time.Second)
	}
}

func (r *pgRelay) Notes() <-chan Note { return r.notes }

func (r *pgRelay) Send(ctx context.Context, data []byte) error {
	if bytes.IndexByte(data, 0) >= 0 {
		return errors.New("relay: a message cannot hold a NUL byte")
	}
	// The limit is on the text sent: invalid UTF-8 becomes U+FFFD, up to
	// three times its size.
	text := pgText(string(data))
	if len(text) > maxNotify {
		return fmt.Errorf("relay: a message of %d bytes is too large to send", len(text))
	}
	_, err := r.p.pool.Exec(ctx, "SELECT pg_notify($1, $2)", relayChannel, r.header(NoteMessage, "-", "")+"\n"+text)
	if err != nil {
		return fmt.Errorf("relay: sending a message: %w", r.p.connError(err))
	}
	return nil
}

const turnColumns = `t.id, t.session_id, t.instance, t.started_at, t.ended_at IS NOT NULL, COALESCE(t.ended_at, t.started_at), t.reason,
	EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.pid AND a.backend_start = t.backend_start), t.pid, t.backend_start`

func (r *pgRelay) scanTurn(row pgx.Row) (*TurnInfo, error) {
	var ti TurnInfo
	var pid int32
	var start time.Time
	err := row.Scan(&ti.ID, &ti.SessionID, &ti.Instance, &ti.StartedAt, &ti.Ended, &ti.EndedAt, &ti.Reason, &ti.Alive, &pid, &start)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !ti.Ended {
		ti.EndedAt = time.Time{}
	}
	myPid, myStart := r.p.identity()
	ti.Mine = pid == myPid && start.Equal(myStart)
	return &ti, nil
}

func (r *pgRelay) Turn(ctx context.Context, turnID string) (*TurnInfo, error) {
	ti, err := r.scanTurn(r.p.pool.QueryRow(ctx, "SELECT "+turnColumns+" FROM turns t WHERE t.id = $1", pgText(turnID)))
	if err != nil {
		return nil, fmt.Errorf("reading turn %s: %w", turnID, r.p.connError(err))
	}
	return ti, nil
}

func (r *pgRelay) Turns(ctx context.Context, turnIDs []string) ([]TurnInfo, error) {
	ids := make([]string, len(turnIDs))
	for i, id := range turnIDs {
		ids[i] = pgText(id)
	}
	rows, err := r.p.pool.Query(ctx, "SELECT "+turnColumns+" FROM turns t WHERE t.id = ANY($1)", ids)
	if err != nil {
		return nil, fmt.Errorf("reading turns: %w", r.p.connError(err))
	}
	defer rows.Close()
	var out []TurnInfo
	for rows.Next() {
		ti, err := r.scanTurn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *ti)
	}
	return out, rows.Err()
}

func (r *pgRelay) LastTurn(ctx context.Context, sessionID string) (*TurnInfo, error) {
	ti, err := r.scanTurn(r.p.pool.QueryRow(ctx, "SELECT "+turnColumns+" FROM turns t WHERE t.session_id = $1 ORDER BY t.started_at DESC, t.id LIMIT 1", pgText(sessionID)))
	if err != nil {
		return nil, fmt.Errorf("reading the turns of session %s: %w", sessionID, r.p.connError(err))
	}
	return ti, nil
}

func (r *pgRelay) TurnEvents(ctx context.Context, turnID string, after int) ([]TurnEvent, error) {
	rows, err := r.p.pool.Query(ctx, "SELECT seq, type, call_id, data FROM turn_events WHERE turn_id = $1 AND seq > $2 ORDER BY seq", pgText(turnID), after)
	if err != nil {
		return nil, fmt.Errorf("reading the events of turn %s: %w", turnID, r.p.connError(err))
	}
	defer rows.Close()
	var out []TurnEvent
	for rows.Next() {
		var ev TurnEvent
		var data string
		if err := rows.Scan(&ev.Seq, &ev.Type, &ev.CallID, &data); err != nil {
			return nil, err
		}
		ev.Data = []byte(data)
		out = append(out, ev)
	}
	return out, rows.Err()
}

func (r *pgRelay) ApprovalTurns(ctx context.Context, callID, sessionID string) ([]TurnInfo, error) {
	q := "SELECT DISTINCT " + turnColumns + ` FROM turn_events e JOIN turns t ON t.id = e.turn_id
		WHERE e.type = 'approval_required' AND e.call_id = $1 AND t.ended_at IS NULL`
	args := []any{pgText(callID)}
	if sessionID != "" {
		q += " AND t.session_id = $2"
		args = append(args, pgText(sessionID))
	}
	rows, err := r.p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("finding the approval of call %s: %w", callID, r.p.connError(err))
	}
	defer rows.Close()
	var out []TurnInfo
	for rows.Next() {
		ti, err := r.scanTurn(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *ti)
	}
	return out, rows.Err()
}

func (r *pgRelay) Abandon(ctx context.Context, turnID, reason string, events func(next int) []TurnEvent) ([]TurnEvent, error) {
	tx, err := r.p.pool.Begin(ctx)
	if err != nil {
		return nil, r.p.connError(err)
	}
	defer tx.Rollback(context.Background())
	var last int
	err = tx.QueryRow(ctx, `UPDATE turns t SET ended_at = now(), reason = $2
		WHERE t.id = $1 AND t.ended_at IS NULL
		AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.pid AND a.backend_start = t.backend_start)
		RETURNING (SELECT COALESCE(max(seq), 0) FROM turn_events WHERE turn_id = $1)`, pgText(turnID), reason).Scan(&last)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ending turn %s: %w", turnID, r.p.connError(err))
	}
	evs := events(last + 1)
	recs := make([]relayRecord, len(evs))
	for i := range evs {
		recs[i] = relayRecord{turn: turnID, ev: &evs[i]}
	}
	notes := r.eventNotes(turnID, recs)
	// Every process hears of it, this one too: it was not this one's turn.
	for i := range notes {
		notes[i] = strings.Replace(notes[i], " "+r.from+" ", " - ", 1)
	}
	notes = append(notes, string(NoteEnd)+" - "+turnID+" "+reason)
	for _, ev := range evs {
		if _, err := tx.Exec(ctx, "INSERT INTO turn_events (turn_id, seq, type, call_id, data) VALUES ($1, $2, $3, $4, $5)",
			pgText(turnID), ev.Seq, ev.Type, pgText(ev.CallID), pgText(string(ev.Data))); err != nil {
			return nil, fmt.Errorf("ending turn %s: %w", turnID, r.p.connError(err))
		}
	}
	if _, err := tx.Exec(ctx, "SELECT pg_notify($1, n) FROM unnest($2::text[]) AS n", relayChannel, notes); err != nil {
		return nil, fmt.Errorf("ending turn %s: %w", turnID, r.p.connError(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("ending turn %s: %w", turnID, r.p.connError(err))
	}
	return evs, nil
}

func (r *pgRelay) Purge(ctx context.Context, before time.Time) error {
	_, err := r.p.pool.Exec(ctx, `DELETE FROM turns t WHERE t.ended_at < $1
		OR (t.ended_at IS NULL AND t.started_at < $1
			AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = t.pid AND a.backend_start = t.backend_start))`, before)
	if err != nil {
		return fmt.Errorf("forgetting old turns: %w", r.p.connError(err))
	}
	return nil
}
