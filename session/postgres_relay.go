package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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

// Bounds of the relay.
const (
	// maxQueued bounds the records waiting to be written (the database
	// is unreachable, or slow). Past it the oldest events waiting are
	// dropped, a tenth of them at a time, and logged: a turn's start and
	// end never are, so every turn still begins and ends in the log, but
	// the followers of those turns miss the dropped events.
	maxQueued = 100_000
	// maxBatch bounds the records written in one transaction.
	maxBatch = 5000
	// maxPendingNotes bounds the notifications received and not yet read
	// from Notes: past it they are dropped, and the reader gets a
	// NoteResync instead (it reads again what it needs).
	maxPendingNotes = 10_000
	// slowWrite is how long records wait before a warning says so.
	slowWrite = 5 * time.Second
)

// Relay returns the store's Relay, starting it on first use: a goroutine
// that writes the turns this process runs; the presence keeper LISTENs
// for the others' (Relay returns once the LISTEN is in effect, or after
// 10 s: then the first note, once it is, is a NoteResync).
func (p *Postgres) Relay() Relay {
	p.relayOnce.Do(func() {
		p.readLog()
		r := &pgRelay{p: p, from: NewID(), notes: make(chan Note, 4096), wake: make(chan struct{}, 1),
			nwake: make(chan struct{}, 1), log: p.Log, next: 1, front: 1,
			running: map[string]bool{}, dead: map[string]string{}}
		if r.log == nil {
			r.log = slog.New(slog.DiscardHandler)
		}
		r.ctx, r.stop = context.WithCancel(context.Background())
		r.wg.Add(2)
		go r.writeLoop()
		go r.pump()
		// LISTEN before Relay returns, so that what the others publish
		// from then on is delivered (a caller reads the log, then follows
		// the notes).
		ready := make(chan struct{})
		p.mu.Lock()
		p.relay, p.listen, p.listenReady = r, true, ready
		p.mu.Unlock()
		p.poke()
		select {
		case <-ready:
		case <-p.kdone: // closed
		case <-time.After(10 * time.Second):
			p.mu.Lock()
			if !p.listenOK {
				p.listenLate = true
				r.log.Warn("relay: LISTEN is not in effect yet; trying again")
			}
			p.mu.Unlock()
		}
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

	mu sync.Mutex
	// queue holds the records to write, oldest first, after those of the
	// batch being written (inflight).
	queue, inflight []relayRecord
	// Records are numbered from 1 as they are queued: next is the next
	// number, front the first not yet written (nor dropped). changed is
	// closed and replaced when front moves or the relay closes.
	next, front int
	changed     chan struct{}
	closed      bool
	wake        chan struct{}
	// running are the turns begun here whose end is not written yet;
	// dead those no longer recorded (Lost): "lost" (another process ended
	// it), or "gone" (it is not in the log: its session was deleted).
	// dead is kept for the process's life (such turns are rare), so that
	// Lost answers after the turn's end too.
	running map[string]bool
	dead    map[string]string
	// shed counts the events dropped to bound memory, not logged yet.
	shed     int
	shedSaid time.Time

	// The notifications received, waiting for the reader of notes.
	nmu      sync.Mutex
	npending []Note
	nclosed  bool
	nwake    chan struct{}
}

// relayRecord is one queued record: a turn's start (sessionID set), an
// event (ev set) or its end (end set).
type relayRecord struct {
	n               int
	at              time.Time
	turn, sessionID string
	ev              *TurnEvent
	end             bool
	reason          string
}

func (r *pgRelay) Instance() string { return r.p.instance }

// close stops the relay: when clean, after writing what is queued (for
// up to 5 s).
func (r *pgRelay) close(clean bool) {
	if clean {
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r.Flush(flushCtx)
		cancel()
	}
	r.stop()
	r.wg.Wait()
	r.mu.Lock()
	r.closed = true
	left := len(r.inflight) + len(r.queue)
	r.changedLocked()
	r.mu.Unlock()
	r.nmu.Lock()
	r.nclosed = true
	r.nmu.Unlock()
	if left > 0 && clean {
		r.log.Warn("relay: closed with records not written; other instances will not see them", "records", left)
	}
}

// changedLocked wakes the Flushes.
func (r *pgRelay) changedLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

func (r *pgRelay) push(rec relayRecord) {
	r.mu.Lock()
	if _, dead := r.dead[rec.turn]; dead || r.closed {
		r.mu.Unlock()
		return
	}
	rec.n, rec.at = r.next, time.Now()
	r.next++
	if rec.sessionID != "" {
		r.running[rec.turn] = true
	}
	r.queue = append(r.queue, rec)
	if len(r.queue) > maxQueued {
		r.shedLocked()
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// shedLocked drops the oldest tenth of the events waiting in the queue
// (never a turn's start or end), to bound memory while the database
// cannot be written; they are logged (at most every 10 s).
func (r *pgRelay) shedLocked() {
	drop := maxQueued / 10
	kept := make([]relayRecord, 0, len(r.queue))
	for _, rec := range r.queue {
		if drop > 0 && rec.ev != nil {
			drop--
			r.shed++
			continue
		}
		kept = append(kept, rec)
	}
	r.queue = kept
	r.frontLocked()
	if time.Since(r.shedSaid) > 10*time.Second {
		r.log.Warn("relay: too many records wait to be written; the oldest events were dropped (other instances will miss them)", "dropped", r.shed)
		r.shed, r.shedSaid = 0, time.Now()
	}
}

// frontLocked moves front to the first record not written yet.
func (r *pgRelay) frontLocked() {
	front := r.next
	if len(r.inflight) > 0 {
		front = min(front, r.inflight[0].n)
	}
	if len(r.queue) > 0 {
		front = min(front, r.queue[0].n)
	}
	if front != r.front {
		r.front = front
		r.changedLocked()
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

// Lost says whether the relay stopped recording turn turnID: another
// process ended it (it took this one for dead), or its session is gone.
func (r *pgRelay) Lost(turnID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, dead := r.dead[turnID]
	return dead
}

// runningTurns returns the turns begun here whose end is not written.
func (r *pgRelay) runningTurns() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.running))
	for t := range r.running {
		out = append(out, t)
	}
	return out
}

// Flush waits until every record queued before it is written (or
// dropped: a turn no longer recorded, or events shed to bound memory),
// not for the records queued after (a busy process is never idle). It
// returns ctx's error if they are not written by the time ctx ends, and
// an error if the relay is closed first.
func (r *pgRelay) Flush(ctx context.Context) error {
	r.mu.Lock()
	target := r.next - 1
	r.mu.Unlock()
	for {
		r.mu.Lock()
		done, closed := r.front > target, r.closed
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		if done {
			return nil
		}
		if closed {
			return errors.New("relay: closed with records not written")
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeLoop writes what is queued, in batches of up to maxBatch records,
// each in one transaction (so that a busy process writes in large
// batches, not one event at a time). A batch that fails is written again
// (after 100 ms, doubling up to 2 s), ahead of the records queued since,
// until it is written or the relay is closed.
func (r *pgRelay) writeLoop() {
	defer r.wg.Done()
	var batch []relayRecord
	attempt := 0
	delay := 100 * time.Millisecond
	warned := false
	for {
		r.mu.Lock()
		if len(batch) == 0 {
			n := min(len(r.queue), maxBatch)
			batch = slices.Clone(r.queue[:n])
			r.queue = slices.Delete(r.queue, 0, n)
			batch = slices.DeleteFunc(batch, func(rec relayRecord) bool { _, dead := r.dead[rec.turn]; return dead })
			r.inflight = batch
			r.frontLocked()
			attempt = 0
		}
		r.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-r.wake:
				continue
			case <-r.ctx.Done():
				return
			}
		}
		attempt++
		rest, res, err := r.write(batch, attempt)
		r.mu.Lock()
		written := map[int]bool{}
		for _, rec := range batch {
			written[rec.n] = true
		}
		for _, rec := range rest {
			delete(written, rec.n)
		}
		// A turn found ended by another process while this one runs it
		// (its end not written yet) is lost.
		var lost []string
		for turn, reason := range res.ended {
			if r.running[turn] && reason == pgLost {
				lost = append(lost, turn)
			}
		}
		for _, rec := range batch {
			if written[rec.n] && rec.end {
				delete(r.running, rec.turn)
			}
		}
		r.dropLocked(lost, pgLost)
		r.dropLocked(res.gone, "gone")
		batch = slices.DeleteFunc(rest, func(rec relayRecord) bool { _, dead := r.dead[rec.turn]; return dead })
		r.inflight = batch
		r.frontLocked()
		r.mu.Unlock()
		for _, t := range lost {
			r.log.Warn("relay: another process ended a turn of this one, taking it for dead; it is no longer recorded", "turn", t)
		}
		for _, t := range res.gone {
			r.log.Warn("relay: a turn is no longer in the log (its session was deleted); it is no longer recorded", "turn", t)
		}
		for _, t := range res.conflicts {
			r.log.Warn("relay: events of a turn were in the log already; they were not written again", "turn", t)
		}
		if err == nil {
			if warned {
				r.log.Info("relay: the records waiting were written")
			}
			delay, warned = 100*time.Millisecond, false
			continue
		}
		if r.ctx.Err() != nil {
			return
		}
		if len(batch) > 0 && !warned && time.Since(batch[0].at) > slowWrite {
			r.log.Warn("relay: records wait to be written; trying again", "records", len(batch), "waiting", time.Since(batch[0].at).Round(time.Second), "error", err)
			warned = true
		}
		select {
		case <-time.After(delay):
		case <-r.ctx.Done():
			return
		}
		delay = min(2*delay, 2*time.Second)
	}
}

// dropLocked stops recording the given turns (Lost): their records still
// queued are dropped, and those queued later.
func (r *pgRelay) dropLocked(turns []string, reason string) {
	if len(turns) == 0 {
		return
	}
	for _, t := range turns {
		r.dead[t] = reason
		delete(r.running, t)
	}
	r.queue = slices.DeleteFunc(r.queue, func(rec relayRecord) bool { _, dead := r.dead[rec.turn]; return dead })
}

// writeResult says what a batch written found of its turns.
type writeResult struct {
	// ended are the turns ended before the batch (turn → reason): its
	// records of them were not written.
	ended map[string]string
	// gone are the turns not in the log (their session was deleted, or
	// never was): their records were not written.
	gone []string
	// conflicts are turns some of whose events were in the log already.
	conflicts []string
}

// write writes a batch and returns the records still to write: none, or
// (after an error that is not the batch's fault, returned) those of the
// turns not written yet, in order. When a turn's session is deleted as
// the batch is written (a foreign key violation), each turn is written on
// its own, so that the others are; that turn is gone.
func (r *pgRelay) write(batch []relayRecord, attempt int) ([]relayRecord, writeResult, error) {
	ctx, cancel := context.WithTimeout(r.ctx, 30*time.Second)
	defer cancel()
	res, err := r.writeTx(ctx, batch, attempt)
	if err == nil {
		return nil, res, nil
	}
	if !isPgCode(err, "23503") {
		return batch, res, err
	}
	var order []string
	byTurn := map[string][]relayRecord{}
	for _, rec := range batch {
		if byTurn[rec.turn] == nil {
			order = append(order, rec.turn)
		}
		byTurn[rec.turn] = append(byTurn[rec.turn], rec)
	}
	res = writeResult{ended: map[string]string{}}
	for i, t := range order {
		one, err := r.writeTx(ctx, byTurn[t], attempt)
		switch {
		case err == nil:
			for k, v := range one.ended {
				res.ended[k] = v
			}
			res.gone = append(res.gone, one.gone...)
			res.conflicts = append(res.conflicts, one.conflicts...)
		case isPgCode(err, "23503"):
			res.gone = append(res.gone, t)
		default:
			left := map[string]bool{}
			for _, t := range order[i:] {
				left[t] = true
			}
			return slices.DeleteFunc(slices.Clone(batch), func(rec relayRecord) bool { return !left[rec.turn] }), res, err
		}
	}
	return nil, res, nil
}

// writeTx writes a batch in one transaction, in two round trips. The
// first locks the rows of the batch's turns (FOR SHARE: no one else ends
// one, with Abandon, until this commits) and reads which have ended; the
// second writes the records of the others and publishes them. Events are
// inserted only for turns in the log, and counted (a row that was there
// already is not written again: after an attempt whose commit was not
// confirmed, those are this process's own).
func (r *pgRelay) writeTx(ctx context.Context, batch []relayRecord, attempt int) (writeResult, error) {
	res := writeResult{ended: map[string]string{}}
	c, err := r.p.pool.Acquire(ctx)
	if err != nil {
		return res, err
	}
	// A connection left in a transaction (an error) is closed, not
	// reused.
	defer c.Release()
	// The identity written into a turn's row stays this process's until
	// the transaction ends (see Postgres.idRW); taken before any row is
	// locked.
	r.p.idRW.RLock()
	defer r.p.idRW.RUnlock()
	pid, start := r.p.pid, r.p.start
	var turns []string
	durable := false
	for _, rec := range batch {
		if !slices.Contains(turns, rec.turn) {
			turns = append(turns, rec.turn)
		}
		durable = durable || rec.sessionID != "" || rec.end
	}
	var b pgx.Batch
	b.Queue("BEGIN")
	if !durable {
		// The events are a relay, not the record: the messages are
		// (written by Append, durably); so these writes need not wait for
		// the disk. A turn's start and end do: a turn whose end is lost
		// would look running.
		b.Queue("SET LOCAL synchronous_commit TO OFF")
	}
	b.Queue("SELECT id, ended_at IS NOT NULL, reason FROM turns WHERE id = ANY($1) ORDER BY id FOR SHARE", turns).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id, reason string
			var ended bool
			if err := rows.Scan(&id, &ended, &reason); err != nil {
				return err
			}
			if ended {
				res.ended[id] = reason
			}
		}
		return rows.Err()
	})
	if err := c.SendBatch(ctx, &b).Close(); err != nil {
		return res, err
	}
	b = pgx.Batch{}
	var evTurn, evType, evCall, evData []string
	var evSeq []int32
	sent := map[string]int{}
	written := map[string]int{}
	var notes, noteTurns []string
	flushEvents := func() {
		if len(evTurn) == 0 {
			return
		}
		b.Queue(`INSERT INTO turn_events (turn_id, seq, type, call_id, data)
			SELECT u.* FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[]) AS u(turn_id, seq, type, call_id, data)
			WHERE EXISTS (SELECT 1 FROM turns t WHERE t.id = u.turn_id)
			ON CONFLICT DO NOTHING RETURNING turn_id`,
			evTurn, evSeq, evType, evCall, evData).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var t string
				if err := rows.Scan(&t); err != nil {
					return err
				}
				written[t]++
			}
			return rows.Err()
		})
		evTurn, evSeq, evType, evCall, evData = nil, nil, nil, nil, nil
	}
	for i := 0; i < len(batch); i++ {
		rec := batch[i]
		if _, ended := res.ended[rec.turn]; ended {
			continue
		}
		switch {
		case rec.sessionID != "":
			flushEvents()
			// clock_timestamp, not now() (the transaction's start): turns
			// begun in one batch are ordered (LastTurn), and a turn that
			// ends in the batch it began in does not end before it began.
			// A turn of a session that is gone is not written (it is
			// then gone).
			b.Queue(`INSERT INTO turns (id, session_id, instance, pid, backend_start, started_at)
				SELECT $1, $2, $3, $4, $5, clock_timestamp() WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $2)
				ON CONFLICT (id) DO NOTHING`, rec.turn, pgText(rec.sessionID), r.p.instance, pid, start)
		case rec.end:
			flushEvents()
			b.Queue("UPDATE turns SET ended_at = clock_timestamp(), reason = $2 WHERE id = $1 AND ended_at IS NULL", rec.turn, rec.reason)
			notes = append(notes, r.header(NoteEnd, rec.turn, rec.reason))
			noteTurns = append(noteTurns, rec.turn)
		default:
			// A run of this turn's events: one insert, and notifications
			// of at most maxNotify bytes each.
			j := i
			for j < len(batch) && batch[j].ev != nil && batch[j].turn == rec.turn {
				j++
			}
			for _, n := range r.eventNotes(rec.turn, batch[i:j]) {
				notes = append(notes, n)
				noteTurns = append(noteTurns, rec.turn)
			}
			for _, e := range batch[i:j] {
				evTurn = append(evTurn, e.turn)
				evSeq = append(evSeq, int32(e.ev.Seq))
				evType = append(evType, e.ev.Type)
				evCall = append(evCall, pgText(e.ev.CallID))
				evData = append(evData, pgText(string(e.ev.Data)))
				sent[e.turn]++
			}
			i = j - 1
		}
	}
	flushEvents()
	if len(notes) > 0 {
		// The notes of a turn not in the log are not sent. (A CASE, not a
		// WHERE, which the planner may make a join: the notes go in the
		// order of the array.)
		b.Queue(`SELECT CASE WHEN EXISTS (SELECT 1 FROM turns t WHERE t.id = x.turn) THEN pg_notify($1, x.n) END
			FROM unnest($2::text[], $3::text[]) AS x(n, turn)`, relayChannel, notes, noteTurns)
	}
	present := map[string]bool{}
	b.Queue("SELECT id FROM turns WHERE id = ANY($1)", turns).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			present[id] = true
		}
		return rows.Err()
	})
	b.Queue("COMMIT")
	if err := c.SendBatch(ctx, &b).Close(); err != nil {
		return res, err
	}
	for _, t := range turns {
		if _, ended := res.ended[t]; !ended && !present[t] {
			res.gone = append(res.gone, t)
		}
	}
	if attempt == 1 {
		for _, t := range turns {
			if present[t] && written[t] < sent[t] {
				res.conflicts = append(res.conflicts, t)
			}
		}
	}
	return res, nil
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

// enqueue hands a note to the pump, which delivers it to Notes: the
// keeper never waits for the reader. Past maxPendingNotes waiting, they
// are dropped for a NoteResync.
func (r *pgRelay) enqueue(n Note) {
	r.nmu.Lock()
	if r.nclosed {
		r.nmu.Unlock()
		return
	}
	if len(r.npending) >= maxPendingNotes {
		r.npending = []Note{{Kind: NoteResync}}
		r.log.Warn("relay: notifications were not read in time; the reader will read the log again")
	}
	r.npending = append(r.npending, n)
	r.nmu.Unlock()
	select {
	case r.nwake <- struct{}{}:
	default:
	}
}

// pump delivers the notes the keeper received, in order, until the relay
// is closed; then it closes Notes.
func (r *pgRelay) pump() {
	defer r.wg.Done()
	defer close(r.notes)
	for {
		r.nmu.Lock()
		ns := r.npending
		r.npending = nil
		r.nmu.Unlock()
		for _, n := range ns {
			select {
			case r.notes <- n:
			case <-r.ctx.Done():
				return
			}
		}
		if len(ns) > 0 {
			continue
		}
		select {
		case <-r.nwake:
		case <-r.ctx.Done():
			return
		}
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

// turnColumns are the columns of a turn (t) that scanTurn reads.
func (r *pgRelay) turnColumns() string {
	return `t.id, t.session_id, t.instance, t.started_at, t.ended_at IS NOT NULL, COALESCE(t.ended_at, t.started_at), t.reason, ` +
		r.p.alive("t") + `, t.pid, t.backend_start`
}

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
	ti, err := r.scanTurn(r.p.pool.QueryRow(ctx, "SELECT "+r.turnColumns()+" FROM turns t WHERE t.id = $1", pgText(turnID)))
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
	rows, err := r.p.pool.Query(ctx, "SELECT "+r.turnColumns()+" FROM turns t WHERE t.id = ANY($1)", ids)
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
	ti, err := r.scanTurn(r.p.pool.QueryRow(ctx, "SELECT "+r.turnColumns()+" FROM turns t WHERE t.session_id = $1 ORDER BY t.started_at DESC, t.id LIMIT 1", pgText(sessionID)))
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
	q := "SELECT DISTINCT " + r.turnColumns() + ` FROM turn_events e JOIN turns t ON t.id = e.turn_id
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
	var one int
	err = tx.QueryRow(ctx, `UPDATE turns t SET ended_at = now(), reason = $2
		WHERE t.id = $1 AND t.ended_at IS NULL
		AND NOT `+r.p.alive("t")+`
		RETURNING 1`, pgText(turnID), reason).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ending turn %s: %w", turnID, r.p.connError(err))
	}
	// The last seq is read by a statement of its own, after the UPDATE
	// has the row: the owner's writer holds the row (FOR SHARE) while it
	// writes events, and the UPDATE's own snapshot, taken before it
	// waited, would miss them. No event of the owner comes after: the
	// writer reads the turn ended, and stops recording it.
	var last int
	if err := tx.QueryRow(ctx, "SELECT COALESCE(max(seq), 0) FROM turn_events WHERE turn_id = $1", pgText(turnID)).Scan(&last); err != nil {
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

// Purge forgets the turns that ended before before, and those of dead
// processes begun before it (before is made an age, compared with the
// database's clock: the hosts' clocks may differ from it); the lock rows
// of dead holders; and the rows of processes not seen for pgForget.
func (r *pgRelay) Purge(ctx context.Context, before time.Time) error {
	age := time.Since(before).Microseconds()
	var b pgx.Batch
	b.Queue(`DELETE FROM turns t WHERE t.ended_at < now() - $1::bigint * interval '1 microsecond'
		OR (t.ended_at IS NULL AND t.started_at < now() - $1::bigint * interval '1 microsecond' AND NOT `+r.p.alive("t")+`)`, age)
	b.Queue(`DELETE FROM session_locks l WHERE NOT ` + r.p.alive("l"))
	b.Queue(`DELETE FROM hearth_instances WHERE seen_at < now() - $1::bigint * interval '1 microsecond'`, pgForget.Microseconds())
	if err := r.p.pool.SendBatch(ctx, &b).Close(); err != nil {
		return fmt.Errorf("forgetting old turns: %w", r.p.connError(err))
	}
	return nil
}
