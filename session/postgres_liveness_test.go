package session

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hearth-agent/hearth/internal/pgtest"
)

// Liveness of the processes sharing a PostgreSQL store (a presence
// connection, and a heartbeat with a grace period), and what the store
// and its relay do so that nothing of a live process is lost: a presence
// connection that breaks, an unlock or a relay write that fails. The
// grace period is a field (Grace) of the store that judges: a test sets
// it long (an hour) where a process must be seen alive however slowly the
// test runs, and short where it waits for a process to be seen dead.

// identityRow reads the pid of the row of table (session_locks, turns)
// whose key column is key.
func identityRow(t *testing.T, c *pgx.Conn, table, column, key string) int32 {
	t.Helper()
	var pid int32
	if err := c.QueryRow(context.Background(), "SELECT pid FROM "+table+" WHERE "+column+" = $1", key).Scan(&pid); err != nil {
		t.Fatalf("%s %s: %v", table, key, err)
	}
	return pid
}

// TestPostgresPresenceBlip: when a live process's presence connection
// ends (and it cannot connect again for a while), the others still take
// it for alive, within the grace period: they do not take its lock nor
// abandon its turn. Once it connects again, its lock and its turn are its
// own (moved to its new connection), and the turn goes on.
func TestPostgresPresenceBlip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, b, ra, rb := relayPair(t)
	c := pgConn(t, u)
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", event(1, "text_delta", map[string]any{"text": "before"}))
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Kind != NoteEvents || n.Last != 1 {
		t.Fatalf("%+v", n)
	}
	old, _ := a.identity()
	b.Grace = time.Hour // A lives however long this takes
	b.LockTimeout = 50 * time.Millisecond
	a.noReconnect.Store(true)
	terminate(t, c, old)

	// A is cut off: its presence connection is gone, its heartbeat recent.
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), a.Instance()) {
		t.Errorf("B's lock while A is cut off: %v", err)
	}
	if h, err := b.Holder(ctx, "s1"); err != nil || h != a.Instance() {
		t.Errorf("holder while A is cut off: %q %v", h, err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Alive || ti.Ended {
		t.Errorf("A's turn while A is cut off: %+v %v", ti, err)
	}
	if evs, err := rb.Abandon(ctx, "t1", "lost", func(int) []TurnEvent { return nil }); evs != nil || err != nil {
		t.Errorf("abandoned while A is cut off: %+v %v", evs, err)
	}

	a.noReconnect.Store(false)
	if n := nextNote(t, ra); n.Kind != NoteResync {
		t.Fatalf("A's note after connecting again: %+v", n)
	}
	pid, _ := a.identity()
	if pid == old {
		t.Fatal("the same identity")
	}
	if got := identityRow(t, c, "session_locks", "session_id", "s1"); got != pid {
		t.Errorf("A's lock is held by %d, A is %d", got, pid)
	}
	if got := identityRow(t, c, "turns", "id", "t1"); got != pid {
		t.Errorf("A's turn is run by %d, A is %d", got, pid)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM hearth_instances WHERE pid = $1", old).Scan(&n); err != nil || n != 0 {
		t.Errorf("the old identity's row: %d %v", n, err)
	}
	// Alive now through its new connection, however short B's grace.
	b.Grace = time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
		t.Errorf("B's lock after A connected again: %v", err)
	}
	if ti, err := ra.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Mine || !ti.Alive {
		t.Errorf("A's turn is not A's: %+v %v", ti, err)
	}
	ra.AddEvent("t1", event(2, "text_delta", map[string]any{"text": "after"}))
	ra.EndTurn("t1", "stop")
	if n := nextNote(t, rb); n.Kind != NoteEvents || n.Turn != "t1" || len(n.Events) != 1 || n.Events[0].Seq != 2 {
		t.Errorf("%+v", n)
	}
	if n := nextNote(t, rb); n.Kind != NoteEnd || n.Reason != "stop" {
		t.Errorf("%+v", n)
	}
	if ra.Lost("t1") {
		t.Error("lost")
	}
	unlock()
	b.LockTimeout = 10 * time.Second // a hang bound
	if _, err := b.Lock(ctx, "s1"); err != nil {
		t.Errorf("after A's unlock: %v", err)
	}
}

// TestRelayKilled: the turn of a process that is killed (kill: its
// connections end, nothing is ended or released) is alive for the others
// until its last heartbeat is older than their grace period; then it is
// abandoned.
func TestRelayKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, a, b, ra, rb := relayPair(t)
	ra.BeginTurn("t1", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	a.kill()
	b.Grace = time.Hour
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Alive {
		t.Errorf("within the grace period: %+v %v", ti, err)
	}
	lost := func(next int) []TurnEvent {
		return []TurnEvent{event(next, "done", map[string]any{"reason": "lost"})}
	}
	if evs, err := rb.Abandon(ctx, "t1", "lost", lost); evs != nil || err != nil {
		t.Errorf("abandoned within the grace period: %+v %v", evs, err)
	}
	b.Grace = 100 * time.Millisecond
	eventually(t, "A's turn to be seen dead", func() bool {
		ti, err := rb.Turn(ctx, "t1")
		return err == nil && ti != nil && !ti.Alive
	})
	if evs, err := rb.Abandon(ctx, "t1", "lost", lost); len(evs) != 1 || err != nil {
		t.Errorf("abandon: %+v %v", evs, err)
	}
}

// TestRelayAbandonedWhileCutOff: a process cut off from the database for
// longer than the others' grace period is taken for dead, and its turn
// abandoned. Once it connects again, its writer finds the turn ended by
// another: it stops recording it (Lost), writes none of its later events
// over the abandoned turn's (and publishes none), and the log keeps the
// abandoned turn as the others saw it end.
func TestRelayAbandonedWhileCutOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, b, ra, rb := relayPair(t)
	c := pgConn(t, u)
	ra.BeginTurn("t1", "s1")
	first := event(1, "text_delta", map[string]any{"text": "before"})
	ra.AddEvent("t1", first)
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Kind != NoteEvents || n.Last != 1 {
		t.Fatalf("%+v", n)
	}
	old, _ := a.identity()
	a.noReconnect.Store(true)
	terminate(t, c, old)
	b.Grace = 100 * time.Millisecond
	eventually(t, "A's turn to be seen dead", func() bool {
		ti, err := rb.Turn(ctx, "t1")
		return err == nil && ti != nil && !ti.Alive
	})
	abandoned, err := rb.Abandon(ctx, "t1", "lost", func(next int) []TurnEvent {
		return []TurnEvent{
			event(next, "error", map[string]any{"message": "the process running this turn is gone"}),
			event(next+1, "done", map[string]any{"reason": "lost"}),
		}
	})
	if err != nil || len(abandoned) != 2 || abandoned[0].Seq != 2 {
		t.Fatalf("abandon: %+v %v", abandoned, err)
	}
	if n := nextNote(t, rb); n.Kind != NoteEvents || !sameEvents(n.Events, abandoned) {
		t.Fatalf("B heard %+v", n)
	}
	if n := nextNote(t, rb); n.Kind != NoteEnd || n.Reason != "lost" {
		t.Fatalf("B heard %+v", n)
	}

	// A connects again, and goes on with its turn.
	a.noReconnect.Store(false)
	for i := 2; i <= 4; i++ {
		ra.AddEvent("t1", event(i, "text_delta", map[string]any{"text": fmt.Sprint("late ", i)}))
	}
	ra.EndTurn("t1", "stop")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !ra.Lost("t1") {
		t.Error("A's relay does not say the turn is lost")
	}
	ra.AddEvent("t1", event(5, "text_delta", nil))
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	evs, err := rb.TurnEvents(ctx, "t1", 0)
	if want := append([]TurnEvent{first}, abandoned...); err != nil || !reflect.DeepEqual(evs, want) {
		t.Errorf("the log: %+v %v", evs, err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Ended || ti.Reason != "lost" {
		t.Errorf("%+v %v", ti, err)
	}
	// B heard nothing of A's late events: its next note is A's message.
	if err := ra.Send(ctx, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Kind != NoteMessage || string(n.Data) != "after" {
		t.Errorf("B's next note: %+v", n)
	}
}

// TestRelayRetry: a batch that cannot be written (here a constraint that
// refuses one event, for a while) is written again until it can be: every
// event arrives, in order, and Flush returns only after.
func TestRelayRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, _, _, ra, rb := relayPair(t)
	c := pgConn(t, u)
	pgExec(t, c, "ALTER TABLE turn_events ADD CONSTRAINT hold CHECK (seq <> 3) NOT VALID")
	ra.BeginTurn("t1", "s1")
	var sent []TurnEvent
	for i := range 5 {
		ev := event(i+1, "text_delta", map[string]any{"text": fmt.Sprint(i)})
		sent = append(sent, ev)
		ra.AddEvent("t1", ev)
	}
	ra.EndTurn("t1", "stop")
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	err := ra.Flush(sctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush while event 3 cannot be written: %v", err)
	}
	if evs, err := rb.TurnEvents(ctx, "t1", 0); err != nil || len(evs) >= 3 {
		t.Fatalf("written: %+v %v", evs, err)
	}
	flushed := make(chan error, 1)
	go func() {
		fctx, cancel := context.WithTimeout(ctx, time.Minute) // a hang bound
		defer cancel()
		flushed <- ra.Flush(fctx)
	}()
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while event 3 cannot be written", err)
	case <-time.After(200 * time.Millisecond):
	}
	pgExec(t, c, "ALTER TABLE turn_events DROP CONSTRAINT hold")
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if evs, err := rb.TurnEvents(ctx, "t1", 0); err != nil || !reflect.DeepEqual(evs, sent) {
		t.Errorf("the log: %+v %v", evs, err)
	}
	if got, reason := followTurn(t, rb, "t1"); !sameEvents(got, sent) || reason != "stop" {
		t.Errorf("B heard %+v %q", got, reason)
	}
}

// TestRelayDeletedSession: a turn whose session is deleted while it runs is
// no longer recorded (Lost), without holding up the other turns; so is one
// whose records meet a foreign key violation (a session deleted as they
// are written: here a trigger that says so).
func TestRelayDeletedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, _, ra, rb := relayPair(t)
	c := pgConn(t, u)
	if err := a.Create(ctx, &Session{ID: "s2"}); err != nil {
		t.Fatal(err)
	}
	ra.BeginTurn("t2", "s2")
	ra.AddEvent("t2", event(1, "text_delta", nil))
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Turn != "t2" {
		t.Fatalf("%+v", n)
	}
	if err := a.Delete(ctx, "s2"); err != nil {
		t.Fatal(err)
	}
	pgExec(t, c, `CREATE FUNCTION doomed() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.id = 'doomed' THEN
				RAISE EXCEPTION 'its session is gone' USING ERRCODE = 'foreign_key_violation';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER doomed BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION doomed()`)
	ra.AddEvent("t2", event(2, "text_delta", nil))
	ra.BeginTurn("doomed", "s1")
	ra.AddEvent("doomed", event(1, "text_delta", nil))
	ra.BeginTurn("t1", "s1")
	ra.AddEvent("t1", event(1, "text_delta", map[string]any{"text": "ok"}))
	ra.AddEvent("t2", event(3, "text_delta", nil))
	ra.AddEvent("doomed", event(2, "text_delta", nil))
	ra.EndTurn("t1", "stop")
	ra.EndTurn("t2", "stop")
	ra.EndTurn("doomed", "stop")
	// B hears t1 only.
	if got, reason := followTurn(t, rb, "t1"); len(got) != 1 || reason != "stop" {
		t.Errorf("%+v %q", got, reason)
	}
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if !ra.Lost("t2") || !ra.Lost("doomed") || ra.Lost("t1") {
		t.Errorf("lost: t2 %v doomed %v t1 %v", ra.Lost("t2"), ra.Lost("doomed"), ra.Lost("t1"))
	}
	for _, id := range []string{"t2", "doomed"} {
		if ti, err := rb.Turn(ctx, id); ti != nil || err != nil {
			t.Errorf("%s: %+v %v", id, ti, err)
		}
	}
	if err := ra.Send(ctx, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, rb); n.Kind != NoteMessage {
		t.Errorf("B's next note: %+v", n)
	}
}

// TestPostgresUnlockRetried: an unlock that fails (here a trigger that
// refuses the delete, for a while) is retried until the lock is released.
// Meanwhile the row is this process's, not held: its own Lock takes it.
func TestPostgresUnlockRetried(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	a, b := openPostgresAs(t, u, "A"), openPostgresAs(t, u, "B")
	c := pgConn(t, u)
	pgExec(t, c, `CREATE FUNCTION no_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'not now'; END $$`)
	refuse := func() {
		pgExec(t, c, "CREATE TRIGGER no_delete BEFORE DELETE ON session_locks FOR EACH ROW EXECUTE FUNCTION no_delete()")
	}
	allow := func() { pgExec(t, c, "DROP TRIGGER no_delete ON session_locks") }
	retried := func() {
		t.Helper()
		eventually(t, "the unlocks retried to end", func() bool {
			done := make(chan struct{})
			go func() {
				a.bg.Wait()
				close(done)
			}()
			select {
			case <-done:
				return true
			case <-time.After(100 * time.Millisecond):
				return false
			}
		})
	}

	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	refuse()
	unlock()
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("while the unlock fails: %v", err)
	}
	allow()
	b.LockTimeout = 10 * time.Second // a hang bound
	ub, err := b.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("after the unlock was retried: %v", err)
	}
	ub()
	retried()

	// A's unlock fails; A locks the session again: its row is taken.
	unlock, err = a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	refuse()
	unlock()
	a.LockTimeout = 10 * time.Second // a hang bound
	again, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("A's own lock while its unlock fails: %v", err)
	}
	allow()
	retried() // finds its token gone: A's new lock stays
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
		t.Errorf("the retried unlock released A's new lock: %v", err)
	}
	again()
	b.LockTimeout = 10 * time.Second
	if ub, err := b.Lock(ctx, "s1"); err != nil {
		t.Errorf("after A's unlock: %v", err)
	} else {
		ub()
	}
}

// TestPostgresLockOwnStaleRow: a lock row of this process's identity whose
// token it does not hold (an unlock that never reached the database) is
// taken over by its Lock, not by another's.
func TestPostgresLockOwnStaleRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	a, b := openPostgresAs(t, u, "A"), openPostgresAs(t, u, "B")
	c := pgConn(t, u)
	pid, start := a.identity()
	pgExec(t, c, "INSERT INTO session_locks (session_id, holder, token, pid, backend_start, at) VALUES ('s1', $1, 'stale', $2, $3, now())", a.Instance(), pid, start)
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("B took A's row: %v", err)
	}
	a.LockTimeout = 10 * time.Second // a hang bound
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	var token string
	if err := c.QueryRow(ctx, "SELECT token FROM session_locks WHERE session_id = 's1'").Scan(&token); err != nil || token == "stale" {
		t.Errorf("token %q %v", token, err)
	}
	unlock()
	if h, err := b.Holder(ctx, "s1"); h != "" || err != nil {
		t.Errorf("holder after unlock %q %v", h, err)
	}
}

// TestPostgresReconnectMoves: when the presence connection is replaced,
// the lock rows whose token is held and the turns running move to the new
// identity; the old identity's other lock rows are deleted and its other
// open turns ended (lost, every process told).
func TestPostgresReconnectMoves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, _, ra, rb := relayPair(t)
	c := pgConn(t, u)
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ra.BeginTurn("t1", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	old, start := a.identity()
	pgExec(t, c, "INSERT INTO session_locks (session_id, holder, token, pid, backend_start, at) VALUES ('s9', $1, 'stale', $2, $3, now())", a.Instance(), old, start)
	pgExec(t, c, "INSERT INTO turns (id, session_id, instance, pid, backend_start, started_at) VALUES ('orphan', 's1', $1, $2, $3, now())", a.Instance(), old, start)
	terminate(t, c, old)
	if n := nextNote(t, ra); n.Kind != NoteResync {
		t.Fatalf("%+v", n)
	}
	if n := nextNote(t, rb); n.Kind != NoteEnd || n.Turn != "orphan" || n.Reason != "lost" {
		t.Errorf("B's note %+v", n)
	}
	pid, _ := a.identity()
	if got := identityRow(t, c, "session_locks", "session_id", "s1"); got != pid {
		t.Errorf("s1's lock: %d, A is %d", got, pid)
	}
	if got := identityRow(t, c, "turns", "id", "t1"); got != pid {
		t.Errorf("t1: %d, A is %d", got, pid)
	}
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM session_locks WHERE session_id = 's9'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the stale lock: %d %v", n, err)
	}
	if ti, err := rb.Turn(ctx, "orphan"); err != nil || ti == nil || !ti.Ended || ti.Reason != "lost" {
		t.Errorf("orphan %+v %v", ti, err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || ti.Ended || !ti.Alive {
		t.Errorf("t1 %+v %v", ti, err)
	}
}

// TestRelayPurgeLocksAndInstances: Purge removes the lock rows of dead
// holders and the rows of processes not seen for an hour; a live holder's
// lock stays.
func TestRelayPurgeLocksAndInstances(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, _, _, rb := relayPair(t)
	c := pgConn(t, u)
	unlock, err := a.Lock(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	pgExec(t, c, `INSERT INTO hearth_instances (pid, backend_start, name, seen_at) VALUES
		(1, '2000-01-01', 'long gone', now() - interval '2 hours'),
		(2, '2000-01-01', 'gone', now() - interval '30 minutes')`)
	pgExec(t, c, `INSERT INTO session_locks (session_id, holder, token, pid, backend_start, at) VALUES ('dead', 'gone', 'x', 2, '2000-01-01', now())`)
	if err := rb.Purge(ctx, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	rows, _ := c.Query(ctx, "SELECT name FROM hearth_instances WHERE pid IN (1, 2) ORDER BY pid")
	if names, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || fmt.Sprint(names) != "[gone]" {
		t.Errorf("instances %v %v", names, err)
	}
	rows, _ = c.Query(ctx, "SELECT session_id FROM session_locks ORDER BY session_id")
	if locks, err := pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || fmt.Sprint(locks) != "[live]" {
		t.Errorf("locks %v %v", locks, err)
	}
}

// pgRoles makes n login roles (not superusers), dropped when t ends, after
// the stores are closed: what they own (Hearth's tables, the database) is
// given back first.
func pgRoles(t *testing.T, admin *pgx.Conn, n int) []string {
	t.Helper()
	ctx := context.Background()
	var roles []string
	for range n {
		role := "hearth_test_" + strings.ReplaceAll(NewID(), "-", "_")
		pgExec(t, admin, "CREATE ROLE "+role+" LOGIN")
		roles = append(roles, role)
	}
	t.Cleanup(func() {
		for _, role := range roles {
			for _, q := range []string{"REASSIGN OWNED BY " + role + " TO CURRENT_USER", "DROP OWNED BY " + role, "DROP ROLE " + role} {
				if _, err := admin.Exec(ctx, q); err != nil {
					t.Errorf("%s: %v", q, err)
				}
			}
		}
	})
	return roles
}

// urlAs is raw with the user role.
func urlAs(t *testing.T, raw, role string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	return u.String()
}

// TestPostgresTwoRoles: processes that connect as different roles (one
// owns the database, the other was granted its tables) cannot see each
// other's connections' start times in pg_stat_activity, but see each
// other alive through their heartbeats: the second cannot take the
// first's live lock, nor abandon its turn; once the first is killed, it
// can, after its grace period.
func TestPostgresTwoRoles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	pgExec(t, admin, "GRANT ALL ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	if err := a.Create(ctx, &Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ra, rb := a.Relay(), b.Relay()
	ra.BeginTurn("t1", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// The setup: B does not see when A's connection started.
	apid, _ := a.identity()
	var hidden bool
	if err := b.pool.QueryRow(ctx, "SELECT backend_start IS NULL FROM pg_stat_activity WHERE pid = $1", apid).Scan(&hidden); err != nil || !hidden {
		t.Fatalf("B sees A's backend_start: hidden %v %v", hidden, err)
	}
	b.Grace = time.Hour
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), a.Instance()) {
		t.Errorf("B's lock: %v", err)
	}
	if h, err := b.Holder(ctx, "s1"); err != nil || h != a.Instance() {
		t.Errorf("holder %q %v", h, err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Alive {
		t.Errorf("A's turn %+v %v", ti, err)
	}
	if evs, err := rb.Abandon(ctx, "t1", "lost", func(int) []TurnEvent { return nil }); evs != nil || err != nil {
		t.Errorf("abandoned: %+v %v", evs, err)
	}
	a.kill()
	b.Grace = 100 * time.Millisecond
	eventually(t, "A to be seen dead", func() bool {
		h, err := b.Holder(ctx, "s1")
		return err == nil && h == ""
	})
	ub, err := b.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("after A: %v", err)
	}
	ub()
}

// TestPostgresMigrateFrom1: a database of schema 1 (an earlier Hearth),
// whose tables a second role was granted, is brought to the current schema
// by its owner; its sessions stay, and the second role uses the new table too.
func TestPostgresMigrateFrom1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	owner := pgConn(t, urlAs(t, raw, roles[0]))
	pgExec(t, owner, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
		INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '1')`)
	pgExec(t, owner, pgMigrations[0])
	pgExec(t, owner, "INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('s1', 'kept', now(), now())")
	pgExec(t, admin, "GRANT ALL ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])

	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	var v string
	if err := admin.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != fmt.Sprint(len(pgMigrations)) {
		t.Fatalf("schema_version %q %v", v, err)
	}
	if se, err := a.Get(ctx, "s1"); err != nil || se.Title != "kept" {
		t.Errorf("%+v %v", se, err)
	}
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	unlock, err := b.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	a.LockTimeout = 50 * time.Millisecond
	if _, err := a.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
		t.Errorf("A's lock of B's session: %v", err)
	}
	unlock()
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM hearth_instances").Scan(&n); err != nil || n != 2 {
		t.Errorf("%d instances %v", n, err)
	}
}

// TestPostgresKeeperSteady: the keeper refreshes its row on the same
// presence connection, heartbeat after heartbeat (its waits for
// notifications end at each without harm to the connection), and the
// relay still hears the others after.
func TestPostgresKeeperSteady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u, a, _, ra, rb := relayPair(t)
	c := pgConn(t, u)
	pid, start := a.identity()
	seen := func() time.Time {
		var at time.Time
		if err := c.QueryRow(ctx, "SELECT seen_at FROM hearth_instances WHERE pid = $1 AND backend_start = $2", pid, start).Scan(&at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	at := seen()
	for range 2 {
		eventually(t, "a heartbeat", func() bool { return seen().After(at) })
		at = seen()
	}
	if p, s := a.identity(); p != pid || !s.Equal(start) {
		t.Errorf("the presence connection was replaced: %d, was %d", p, pid)
	}
	if err := rb.Send(ctx, []byte("still there?")); err != nil {
		t.Fatal(err)
	}
	if n := nextNote(t, ra); n.Kind != NoteMessage || string(n.Data) != "still there?" {
		t.Errorf("%+v", n)
	}
}
