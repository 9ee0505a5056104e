package session

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm"
)

// What only the PostgreSQL store does: the database it is given (another
// program's, a newer Hearth's, missing, a bad URL), several stores on one
// database (as several processes), and locks held by a connection. The
// Store's behaviour is tested on both stores in store_test.go, the Relay
// in postgres_relay_test.go.

// openPostgresAs opens the store at url as the process called name. Two
// stores of one test are one process, with one pid: their Instance, which
// names the process to the others (in ErrBusy, in TurnInfo), is made
// theirs.
func openPostgresAs(t testing.TB, url, name string) *Postgres {
	t.Helper()
	p := openPostgres(t, url)
	p.instance = fmt.Sprintf("%s [%s]", p.instance, name) // before Relay starts its goroutines
	return p
}

// pgConn is a plain connection to the database at url: a look at the
// tables, or a third party that ends another connection.
func pgConn(t testing.TB, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// pgExec runs sql on c, failing t on an error.
func pgExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pgTables lists the tables of c's database.
func pgTables(t testing.TB, c *pgx.Conn) []string {
	t.Helper()
	rows, err := c.Query(context.Background(), "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// terminate ends the backend pid as a third party would (an
// administrator, the server restarting, a network cut seen by the
// server), and waits until it is gone.
func terminate(t testing.TB, c *pgx.Conn, pid int32) {
	t.Helper()
	var ok bool
	if err := c.QueryRow(context.Background(), "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v %v", pid, ok, err)
	}
	eventually(t, "the backend to go", func() bool {
		var n int
		c.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
		return n == 0
	})
}

// eventually waits until cond holds. The 10 s bound only detects a hang:
// nothing here asserts how long anything takes.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: still not so after 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pgDatabase is the database of url, as the store's errors name it.
func pgDatabase(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// TestPostgresForeignDatabase: a database that holds another program's
// tables is not written into; the error names them and says what to do.
func TestPostgresForeignDatabase(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, setup string
		want        []string
	}{
		{"another program's tables", "CREATE TABLE invoices (id int); CREATE VIEW customers AS SELECT 1 AS id",
			[]string{"holds another program's tables (customers, invoices)", "give Hearth a database of its own"}},
		{"many of them", "CREATE TABLE t1 (); CREATE TABLE t2 (); CREATE TABLE t3 (); CREATE TABLE t4 (); CREATE TABLE t5 (); CREATE TABLE t6 ()",
			[]string{"(t1, t2, t3, t4, t5, …)", "give Hearth a database of its own"}},
		{"a hearth_meta that is not Hearth's", "CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO hearth_meta VALUES ('application', 'other'), ('schema_version', '1')",
			[]string{"hearth_meta table that is not Hearth's", "give Hearth a database of its own"}},
		{"a hearth_meta without a version", "CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL); INSERT INTO hearth_meta VALUES ('application', 'hearth')",
			[]string{"hearth_meta table that is not Hearth's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := pgtest.URL(t)
			c := pgConn(t, u)
			pgExec(t, c, tc.setup)
			before := pgTables(t, c)
			p, err := OpenPostgres(context.Background(), u)
			if err == nil {
				p.Close()
				t.Fatal("opened")
			}
			for _, want := range append(tc.want, fmt.Sprintf("%q", pgDatabase(t, u))) {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%v\nwant %q", err, want)
				}
			}
			if after := pgTables(t, c); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("the database was written into: %v, was %v", after, before)
			}
		})
	}
}

// TestPostgresNewerSchema: a database of a newer Hearth is left alone.
func TestPostgresNewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	p, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Create(ctx, &Session{ID: "s1", Title: "kept"}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	c := pgConn(t, u)
	pgExec(t, c, "UPDATE hearth_meta SET value = '99' WHERE key = 'schema_version'")
	_, err = OpenPostgres(ctx, u)
	want := fmt.Sprintf("made by a newer Hearth (schema 99; this one knows %d): upgrade Hearth", len(pgMigrations))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), pgDatabase(t, u)) {
		t.Fatalf("%v\nwant %q", err, want)
	}
	var v string
	if err := c.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != "99" {
		t.Errorf("schema_version %q %v", v, err)
	}
	// Back to this version: opened again, with its sessions.
	pgExec(t, c, "UPDATE hearth_meta SET value = $1 WHERE key = 'schema_version'", fmt.Sprint(len(pgMigrations)))
	p = openPostgres(t, u)
	if se, err := p.Get(ctx, "s1"); err != nil || se.Title != "kept" {
		t.Errorf("%+v %v", se, err)
	}
}

// TestPostgresMissingDatabase: a database that does not exist is not
// created (the server may be another's): the error says to.
func TestPostgresMissingDatabase(t *testing.T) {
	t.Parallel()
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/hearth_no_such_database"
	_, err = OpenPostgres(context.Background(), u.String())
	want := `the database "hearth_no_such_database" on ` + u.Hostname()
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "does not exist: create it") {
		t.Fatalf("%v\nwant %q and how to create it", err, want)
	}
}

// TestPostgresBadURL: a URL that cannot be read, or a server that cannot
// be reached, gets an error that says so and does not show the password.
func TestPostgresBadURL(t *testing.T) {
	t.Parallel()
	const secret = "s3cr3t-pw"
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://hearth:" + secret + "@localhost:notaport/hearth", "is not a PostgreSQL URL"},
		{"postgres://hearth:" + secret + "@[::1/hearth", "is not a PostgreSQL URL"},
		{"postgres://hearth@localhost/hearth?password=" + secret + "&sslmode=sometimes", "is not a PostgreSQL URL"},
		{"host=localhost user=hearth password=" + secret + " port=notaport", "is not a PostgreSQL URL"},
		{"host=localhost password='" + secret + "' sslmode=sometimes", "is not a PostgreSQL URL"},
		{"postgresql://hearth:" + secret + "@127.0.0.1:1/hearth?connect_timeout=5", `the database "hearth" on 127.0.0.1:1`},
	} {
		_, err := OpenPostgres(context.Background(), tc.dsn)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "%!") {
			t.Errorf("%s:\n%v\nwant %q, without the password", tc.dsn, err, tc.want)
		}
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"postgres://hearth:pw@db.example:5432/hearth?sslmode=require": "postgres://hearth:xxxxx@db.example:5432/hearth?sslmode=require",
		"postgres://hearth@db/hearth":                                 "postgres://hearth@db/hearth",
		"postgres://db/hearth?password=pw&sslmode=require":            "postgres://db/hearth?password=xxxxx&sslmode=require",
		"postgres://hearth:pw@[::1/hearth":                            "the database URL",
		"host=db user=hearth password=pw dbname=hearth":               "host=db user=hearth password=xxxxx dbname=hearth",
		"host=db password = 'p w\\'x' dbname=hearth":                  "host=db password = xxxxx dbname=hearth",
		"host=db dbname=hearth":                                       "host=db dbname=hearth",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
	if !IsPostgresURL("postgres://x/y") || !IsPostgresURL("postgresql://x/y") || IsPostgresURL("/home/me/.hearth/hearth.db") || IsPostgresURL("host=db") {
		t.Error("IsPostgresURL")
	}
}

// TestPostgresConcurrentOpen: processes started together on a new
// database migrate it once (a second migration would fail: its tables
// exist) and all of them work.
func TestPostgresConcurrentOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	stores := make([]*Postgres, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = OpenPostgres(ctx, u) })
	}
	wg.Wait()
	for i, p := range stores {
		if p != nil {
			t.Cleanup(func() { p.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("store %d: %v", i, errs[i])
		}
	}
	c := pgConn(t, u)
	rows, _ := c.Query(ctx, "SELECT key || '=' || value FROM hearth_meta ORDER BY key")
	meta, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || fmt.Sprint(meta) != fmt.Sprintf("[application=hearth schema_version=%d]", len(pgMigrations)) {
		t.Errorf("hearth_meta %v %v", meta, err)
	}
	for i, p := range stores {
		id := fmt.Sprintf("s%d", i)
		if err := p.Create(ctx, &Session{ID: id}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Append(ctx, id, msg(llm.RoleUser, "from "+id)); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range stores {
		if l, err := p.List(ctx, ListOptions{}); err != nil || len(l) != 3 {
			t.Errorf("store %d lists %+v %v", i, l, err)
		}
	}
}

// TestPostgresLockAcrossStores: a session locked by one process is busy
// for another, which is told who holds it.
func TestPostgresLockAcrossStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	a, b := openPostgresAs(t, u, "A"), openPostgresAs(t, u, "B")
	unlock, err := a.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	b.LockTimeout = 100 * time.Millisecond
	_, err = b.Lock(ctx, "s1")
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "is being used by "+a.Instance()+";") {
		t.Errorf("B's lock: %v\nwant ErrBusy naming %s", err, a.Instance())
	}
	if h, err := b.Holder(ctx, "s1"); err != nil || h != a.Instance() {
		t.Errorf("holder %q %v", h, err)
	}
	if h, err := b.Holder(ctx, "s2"); err != nil || h != "" {
		t.Errorf("holder of a free session %q %v", h, err)
	}
	ub, err := b.Lock(ctx, "s2")
	if err != nil {
		t.Fatalf("another session: %v", err)
	}
	if _, err := a.Lock(ctx, "s2"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), b.Instance()) {
		t.Errorf("A's lock of B's session: %v", err)
	}
	ub()
	unlock()
	if h, _ := b.Holder(ctx, "s1"); h != "" {
		t.Errorf("holder after unlock %q", h)
	}
	b.LockTimeout = 10 * time.Second // a hang bound: the lock is free
	ub, err = b.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("after A's unlock: %v", err)
	}
	ub()
}

// TestPostgresLockTakeover: a lock whose holder is gone is taken over:
// at once when the holder closed its store without unlocking (Close
// removes its row), and once its last heartbeat is older than the grace
// period when it was killed (see kill); the old holder's unlock does not
// release the new holder's lock. (A holder whose connection is ended from
// outside lives: see TestPostgresPresenceBlip.)
func TestPostgresLockTakeover(t *testing.T) {
	t.Parallel()
	for _, death := range []string{"killed", "closed"} {
		t.Run(death, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			u := pgtest.URL(t)
			a, b := openPostgresAs(t, u, "A"), openPostgresAs(t, u, "B")
			unlock, err := a.Lock(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			c := pgConn(t, u)
			var pid int32
			var holder string
			if err := c.QueryRow(ctx, "SELECT pid, holder FROM session_locks WHERE session_id = 's1'").Scan(&pid, &holder); err != nil {
				t.Fatal(err)
			}
			if apid, _ := a.identity(); pid != apid || holder != a.Instance() {
				t.Fatalf("lock row: pid %d holder %q; A is %d %q", pid, holder, apid, a.Instance())
			}
			b.LockTimeout = 50 * time.Millisecond
			if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
				t.Fatalf("while A lives: %v", err)
			}
			switch death {
			case "killed":
				a.kill()
				eventually(t, "A's presence to go", func() bool {
					var n int
					c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
					return n == 0
				})
				// Its heartbeat is recent: it is taken for alive, for
				// the grace period.
				b.Grace = time.Hour
				if h, err := b.Holder(ctx, "s1"); err != nil || h != a.Instance() {
					t.Errorf("holder within the grace period: %q %v", h, err)
				}
				if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
					t.Fatalf("within the grace period: %v", err)
				}
				b.Grace = 100 * time.Millisecond
				eventually(t, "A's heartbeat to be older than the grace period", func() bool {
					h, err := b.Holder(ctx, "s1")
					return err == nil && h == ""
				})
			case "closed":
				a.Close()
				eventually(t, "A's presence to go", func() bool {
					var n int
					c.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid).Scan(&n)
					return n == 0
				})
			}
			if h, err := b.Holder(ctx, "s1"); err != nil || h != "" {
				t.Errorf("a dead holder is reported: %q %v", h, err)
			}
			ub, err := b.Lock(ctx, "s1")
			if err != nil {
				t.Fatalf("B did not take over: %v", err)
			}
			unlock() // A's, too late: B's lock stays
			if h, err := b.Holder(ctx, "s1"); err != nil || h != b.Instance() {
				t.Errorf("holder after A's late unlock: %q %v", h, err)
			}
			if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
				t.Errorf("A's late unlock released B's lock: %v", err)
			}
			ub()
		})
	}
}

// TestPostgresConcurrentAppendsFromTwoStores: appends of two processes to
// one session get consecutive, unique seqs, and none is lost.
func TestPostgresConcurrentAppendsFromTwoStores(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	a, b := openPostgresAs(t, u, "A"), openPostgresAs(t, u, "B")
	if err := a.Create(ctx, &Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	seqs := make(chan int, 200)
	for i, s := range []*Postgres{a, b, a, b} {
		wg.Go(func() {
			for j := range 25 {
				got, err := s.Append(ctx, "s1", msg(llm.RoleUser, fmt.Sprintf("%d.%d", i, j)), msg(llm.RoleAssistant, fmt.Sprintf("%d.%d'", i, j)))
				if err != nil {
					t.Error(err)
					return
				}
				if got[1].Seq != got[0].Seq+1 {
					t.Errorf("one append's seqs %d %d", got[0].Seq, got[1].Seq)
				}
				seqs <- got[0].Seq
				seqs <- got[1].Seq
			}
		})
	}
	wg.Wait()
	close(seqs)
	seen := map[int]bool{}
	for q := range seqs {
		if seen[q] {
			t.Errorf("seq %d returned twice", q)
		}
		seen[q] = true
	}
	all, err := b.Messages(ctx, "s1")
	if err != nil || len(all) != 200 || len(seen) != 200 {
		t.Fatalf("%d messages, %d seqs, %v", len(all), len(seen), err)
	}
	for i, m := range all {
		if m.Seq != i+1 || !seen[m.Seq] {
			t.Fatalf("message %d has seq %d", i, m.Seq)
		}
		if i%2 == 1 && m.Content != all[i-1].Content+"'" {
			t.Errorf("an append was split: %q after %q", m.Content, all[i-1].Content)
		}
	}
}

// TestPostgresReopen: a database opened again keeps its sessions and is
// not migrated again.
func TestPostgresReopen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	p, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Create(ctx, &Session{ID: "s1", Title: "first"}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(ctx, "s1", msg(llm.RoleUser, "hello")); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := p.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	p = openPostgres(t, u)
	if m, err := p.Messages(ctx, "s1"); err != nil || len(m) != 1 || m[0].Content != "hello" {
		t.Errorf("%+v %v", m, err)
	}
}

// TestPostgresOrdinaryRole: Hearth connects as a role that is not a
// superuser, as it should. Without the right to create tables it is told
// so; as the database's owner it works, and sees its own processes'
// presence connections (PostgreSQL shows a connection's start time only
// to its own role, or a superuser): a live process's lock holds, a dead
// one's is taken over.
func TestPostgresOrdinaryRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	role := "hearth_test_" + strings.ReplaceAll(NewID(), "-", "_")
	pgExec(t, admin, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		// Roles are the server's, not the database's: give back what
		// this one owns (the database and Hearth's tables), then drop it.
		// This runs after the stores are closed, before the database is
		// dropped.
		for _, q := range []string{"REASSIGN OWNED BY " + role + " TO CURRENT_USER", "DROP OWNED BY " + role, "DROP ROLE " + role} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Errorf("%s: %v", q, err)
			}
		}
	})
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	_, err = OpenPostgres(ctx, u.String())
	if err == nil || !strings.Contains(err.Error(), "the user needs the right to create tables in it") {
		t.Fatalf("without rights: %v", err)
	}
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+role)

	a, b := openPostgresAs(t, u.String(), "A"), openPostgresAs(t, u.String(), "B")
	if err := a.Create(ctx, &Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Append(ctx, "s1", msg(llm.RoleUser, "hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Lock(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	ra, rb := a.Relay(), b.Relay()
	ra.BeginTurn("t1", "s1")
	if err := ra.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	b.LockTimeout = 50 * time.Millisecond
	if _, err := b.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), a.Instance()) {
		t.Errorf("while A lives: %v", err)
	}
	if ti, err := rb.Turn(ctx, "t1"); err != nil || ti == nil || !ti.Alive {
		t.Errorf("A's turn: %+v %v", ti, err)
	}
	a.Close() // without unlocking or ending the turn
	eventually(t, "A's turn to be seen dead", func() bool {
		ti, err := rb.Turn(ctx, "t1")
		return err == nil && ti != nil && !ti.Alive
	})
	unlock, err := b.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("after A: %v", err)
	}
	unlock()
}

// TestPostgresMigrateFrom2: a database of schema 2 (before checkpoints,
// forks and archived sessions), whose tables a second role was granted,
// is brought to schema 3 by its owner: its sessions keep everything, are
// not archived nor forks, and have no checkpoints; the second role gets
// the rights on the new table (and its sequence) that it has on the tool
// runs, and uses it.
func TestPostgresMigrateFrom2(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	owner := pgConn(t, urlAs(t, raw, roles[0]))
	pgExec(t, owner, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
		INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '2')`)
	pgExec(t, owner, pgMigrations[0])
	pgExec(t, owner, pgMigrations[1])
	created := time.Date(2026, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
	pgExec(t, owner, "INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('s1', 'kept', '/w', $1, $1)", created)
	pgExec(t, owner, `INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, tokens, created_at) VALUES
		('s1', 1, 'user', 'hello', '', '', '', 3, $1),
		('s1', 2, 'assistant', '', '[{"id":"call_0","name":"read_file","args":{"path":"a"}}]', '', '', 7, $1),
		('s1', 3, 'tool', 'A', '', 'call_0', 'read_file', 1, $1)`, created)
	pgExec(t, owner, `INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, duration_ms, at) VALUES ('s1', 'call_0', 'read_file', '{}', true, 'A', 5, $1)`, created)
	pgExec(t, admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT SELECT ON tool_runs TO PUBLIC")

	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	var v string
	if err := admin.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != "7" || v != fmt.Sprint(len(pgMigrations)) {
		t.Fatalf("schema_version %q %v", v, err)
	}
	got, err := a.Get(ctx, "s1")
	if err != nil || got.Title != "kept" || got.Workspace != "/w" || got.Archived || got.ForkOf != "" || got.ForkSeq != 0 || got.MessageCount != 3 ||
		!got.CreatedAt.Equal(created) {
		t.Fatalf("%+v %v", got, err)
	}
	if cs, err := a.Checkpoints(ctx, "s1"); err != nil || cs == nil || len(cs) != 0 {
		t.Errorf("checkpoints %+v %v", cs, err)
	}
	// The second role: the same rights on checkpoints as on tool_runs.
	for _, priv := range []string{"SELECT", "INSERT", "UPDATE", "DELETE"} {
		var has bool
		if err := admin.QueryRow(ctx, "SELECT has_table_privilege($1, 'checkpoints', $2)", roles[1], priv).Scan(&has); err != nil || !has {
			t.Errorf("%s on checkpoints: %v %v", priv, has, err)
		}
	}
	var truncate, usage, public, publicInsert bool
	if err := admin.QueryRow(ctx, `SELECT has_table_privilege($1, 'checkpoints', 'TRUNCATE'), has_sequence_privilege($1, pg_get_serial_sequence('checkpoints', 'id'), 'USAGE'),
			has_table_privilege('public', 'checkpoints', 'SELECT'), has_table_privilege('public', 'checkpoints', 'INSERT')`,
		roles[1]).Scan(&truncate, &usage, &public, &publicInsert); err != nil || truncate || !usage || !public || publicInsert {
		t.Errorf("TRUNCATE %v (not granted on tool_runs), USAGE of the sequence %v, PUBLIC's SELECT %v and INSERT %v: %v", truncate, usage, public, publicInsert, err)
	}
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	if _, err := b.AddCheckpoint(ctx, Checkpoint{SessionID: "s1", Kind: CheckpointAfter, Seq: 3, Tree: "t1"}); err != nil {
		t.Fatal(err)
	}
	fork := &Session{}
	if err := b.Fork(ctx, "s1", 0, fork); err != nil || fork.ForkSeq != 3 {
		t.Fatalf("fork %+v %v", fork, err)
	}
	if runs, err := b.ToolRuns(ctx, fork.ID); err != nil || len(runs) != 1 {
		t.Errorf("fork's tool runs %+v %v", runs, err)
	}
	if cs, err := a.Checkpoints(ctx, fork.ID); err != nil || len(cs) != 1 || cs[0].Tree != "t1" {
		t.Errorf("fork's checkpoints %+v %v", cs, err)
	}
	if err := b.Truncate(ctx, "s1", 1); err != nil {
		t.Fatal(err)
	}
	if err := b.SetArchived(ctx, "s1", true); err != nil {
		t.Fatal(err)
	}
	if l, err := a.List(ctx, ListOptions{Archived: true}); err != nil || len(l) != 1 || l[0].ID != "s1" || l[0].MessageCount != 1 {
		t.Errorf("archived %+v %v", l, err)
	}
}

// TestPostgresMigrateFrom4: a database of schema 4 (before workspaces and
// costs), with sessions in two folders and one without, whose tables a
// second role was granted, is brought to schema 5 by its owner: a
// workspace for each folder and the unknown one, untrusted, first used
// when its first session was created, last used when its last one was
// updated; nothing else changes, the usage it had is unpriced; the second
// role gets the rights on workspaces it has on sessions, and creates
// sessions (which touch their workspace) and workspaces.
func TestPostgresMigrateFrom4(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	owner := pgConn(t, urlAs(t, raw, roles[0]))
	pgExec(t, owner, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
		INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '4')`)
	for _, m := range pgMigrations[:4] {
		pgExec(t, owner, m)
	}
	at := func(ms int64) time.Time { return time.UnixMilli(1_767_000_000_000 + ms).UTC() }
	pgExec(t, owner, `INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES
		('a1', 'first in a', '/home/me/a', $1, $2), ('a2', 'second in a', '/home/me/a', $3, $4),
		('b1', 'in b', '/home/me/b', $5, $6), ('x', 'without', '', $7, $8)`,
		at(1000), at(5000), at(3000), at(9000), at(2000), at(2500), at(4000), at(4100))
	pgExec(t, owner, "INSERT INTO sessions (id, title, workspace, parent_id, parent_call, created_at, updated_at) VALUES ('kid', 'sub-agent', '/home/me/a', 'a1', 'c', $1, $2)", at(900), at(9500))
	pgExec(t, owner, "UPDATE sessions SET archived = true WHERE id = 'a2'")
	pgExec(t, owner, "INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('a1', 1, 'user', 'hello', $1)", at(1000))
	pgExec(t, owner, "INSERT INTO usage (session_id, model, input_tokens, output_tokens, at) VALUES ('a1', 'm', 10, 2, $1), ('x', 'm', 30, 4, $2)", at(1001), at(4001))
	pgExec(t, admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT SELECT ON sessions TO PUBLIC")

	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	var v string
	if err := admin.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != "7" || v != fmt.Sprint(len(pgMigrations)) {
		t.Fatalf("schema_version %q %v", v, err)
	}
	ws, err := a.Workspaces(ctx)
	want := []Workspace{
		{Path: "/home/me/a", Name: "a", Trust: TrustUntrusted, CreatedAt: at(900), LastUsed: at(9500), Sessions: 2},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, CreatedAt: at(4000), LastUsed: at(4100), Sessions: 1},
		{Path: "/home/me/b", Name: "b", Trust: TrustUntrusted, CreatedAt: at(2000), LastUsed: at(2500), Sessions: 1},
	}
	if err != nil || !reflect.DeepEqual(ws, want) {
		t.Fatalf("workspaces:\n%+v %v\nwant\n%+v", ws, err, want)
	}
	if se, err := a.Get(ctx, "a1"); err != nil || se.Title != "first in a" || se.Workspace != "/home/me/a" || se.MessageCount != 1 || se.InputTokens != 10 ||
		se.Cost != nil || se.Unpriced != 1 || !se.CreatedAt.Equal(at(1000)) {
		t.Errorf("a1: %+v %v", se, err)
	}
	tot, err := a.UsageTotals(ctx, UsageFilter{}, ByWorkspace)
	if err != nil || len(tot) != 2 || tot[0] != (UsageTotal{Key: "", Calls: 1, InputTokens: 30, OutputTokens: 4, Unpriced: 1}) ||
		tot[1] != (UsageTotal{Key: "/home/me/a", Calls: 1, InputTokens: 10, OutputTokens: 2, Unpriced: 1}) {
		t.Errorf("usage by workspace %+v %v", tot, err)
	}

	// The second role: the rights on workspaces it has on sessions.
	for _, priv := range []string{"SELECT", "INSERT", "UPDATE", "DELETE"} {
		var has bool
		if err := admin.QueryRow(ctx, "SELECT has_table_privilege($1, 'workspaces', $2)", roles[1], priv).Scan(&has); err != nil || !has {
			t.Errorf("%s on workspaces: %v %v", priv, has, err)
		}
	}
	var truncate, public, publicInsert bool
	if err := admin.QueryRow(ctx, `SELECT has_table_privilege($1, 'workspaces', 'TRUNCATE'), has_table_privilege('public', 'workspaces', 'SELECT'),
			has_table_privilege('public', 'workspaces', 'INSERT')`, roles[1]).Scan(&truncate, &public, &publicInsert); err != nil || truncate || !public || publicInsert {
		t.Errorf("TRUNCATE %v (not granted on sessions), PUBLIC's SELECT %v and INSERT %v: %v", truncate, public, publicInsert, err)
	}
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	if err := b.Create(ctx, &Session{ID: "c1", Workspace: "/home/me/c"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, &Session{ID: "a3", Workspace: "/home/me/a"}); err != nil {
		t.Fatal(err)
	}
	if w, err := b.AddWorkspace(ctx, Workspace{Path: "/home/me/b", Trust: TrustTrusted}); err != nil || w.Trust != TrustTrusted || !w.CreatedAt.Equal(at(2000)) {
		t.Errorf("B trusts b: %+v %v", w, err)
	}
	if err := b.RecordUsage(ctx, Usage{SessionID: "c1", Model: "m", InputTokens: 5, CachedInputTokens: 2, Cost: i64(12)}); err != nil {
		t.Fatal(err)
	}
	ws, err = a.Workspaces(ctx)
	if err != nil || len(ws) != 4 || ws[0].Path != "/home/me/a" || ws[0].Sessions != 3 || !ws[0].CreatedAt.Equal(at(900)) || ws[1].Path != "/home/me/c" ||
		ws[3].Trust != TrustTrusted {
		t.Errorf("after B: %+v %v", ws, err)
	}
	if se, err := a.Get(ctx, "c1"); err != nil || se.Cost == nil || *se.Cost != 12 || se.Unpriced != 0 {
		t.Errorf("c1: %+v %v", se, err)
	}
}

// TestPostgresMigrateFrom5: a database of schema 5 (before TrustChosen),
// whose tables a second role was granted, is brought to schema 6 by its
// owner: its workspaces trusted or read-only are marked chosen (only a
// user could have set that), the untrusted ones are not (a UI asks), and
// nothing else in them changes; the second role reads and writes the new
// column (its rights on the table cover it).
func TestPostgresMigrateFrom5(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	owner := pgConn(t, urlAs(t, raw, roles[0]))
	pgExec(t, owner, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
		INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '5')`)
	for _, m := range pgMigrations[:5] {
		pgExec(t, owner, m)
	}
	at := func(ms int64) time.Time { return time.UnixMilli(1_767_000_000_000 + ms).UTC() }
	pgExec(t, owner, "INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('r1', 'in ro', '/home/me/ro', $1, $2)", at(1000), at(2000))
	pgExec(t, owner, `INSERT INTO workspaces (path, name, trust, created_at, last_used) VALUES
		('/home/me/ro', '', 'read-only', $1, $2), ('/home/me/trusted', 'Mine', 'trusted', $3, $4),
		('/home/me/headless', '', 'untrusted', $5, $6), ('', '', 'untrusted', $7, $8)`,
		at(1000), at(2000), at(1100), at(2100), at(1200), at(2200), at(1300), at(2300))
	pgExec(t, admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])

	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	var v string
	if err := admin.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != "7" || v != fmt.Sprint(len(pgMigrations)) {
		t.Fatalf("schema_version %q %v", v, err)
	}
	for _, want := range []Workspace{
		{Path: "/home/me/ro", Name: "ro", Trust: TrustReadOnly, TrustChosen: true, CreatedAt: at(1000), LastUsed: at(2000), Sessions: 1},
		{Path: "/home/me/trusted", Name: "Mine", Trust: TrustTrusted, TrustChosen: true, CreatedAt: at(1100), LastUsed: at(2100)},
		{Path: "/home/me/headless", Name: "headless", Trust: TrustUntrusted, TrustChosen: false, CreatedAt: at(1200), LastUsed: at(2200)},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, TrustChosen: false, CreatedAt: at(1300), LastUsed: at(2300)},
	} {
		if got, err := a.Workspace(ctx, want.Path); err != nil || *got != want {
			t.Errorf("%q:\n%+v %v\nwant\n%+v", want.Path, got, err, want)
		}
	}

	// The second role: a touch makes a workspace not chosen, a trust
	// given marks one chosen.
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	if w, err := b.TouchWorkspace(ctx, "/home/me/new"); err != nil || w.TrustChosen {
		t.Errorf("B touches a new folder: %+v %v", w, err)
	}
	if w, err := b.AddWorkspace(ctx, Workspace{Path: "/home/me/headless", Trust: TrustReadOnly}); err != nil || !w.TrustChosen || w.Trust != TrustReadOnly {
		t.Errorf("B sets a trust: %+v %v", w, err)
	}
	if w, err := a.Workspace(ctx, "/home/me/headless"); err != nil || !w.TrustChosen {
		t.Errorf("A reads it: %+v %v", w, err)
	}
}

// TestPostgresMigrateFrom6: a database of schema 6 (before ConfigHash),
// whose tables a second role was granted, is brought to schema 7 by its
// owner: its workspaces keep their records, trust and TrustChosen
// included, and none has a config hash; the second role reads and writes
// the new column (its rights on the table cover it).
func TestPostgresMigrateFrom6(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	raw := pgtest.URL(t)
	admin := pgConn(t, raw)
	roles := pgRoles(t, admin, 2)
	pgExec(t, admin, "ALTER DATABASE "+pgDatabase(t, raw)+" OWNER TO "+roles[0])
	owner := pgConn(t, urlAs(t, raw, roles[0]))
	pgExec(t, owner, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
		INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '6')`)
	for _, m := range pgMigrations[:6] {
		pgExec(t, owner, m)
	}
	at := func(ms int64) time.Time { return time.UnixMilli(1_767_000_000_000 + ms).UTC() }
	pgExec(t, owner, "INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('r1', 'in ro', '/home/me/ro', $1, $2)", at(1000), at(2000))
	pgExec(t, owner, `INSERT INTO workspaces (path, name, trust, trust_chosen, created_at, last_used) VALUES
		('/home/me/ro', '', 'read-only', true, $1, $2), ('/home/me/trusted', 'Mine', 'trusted', true, $3, $4),
		('/home/me/headless', '', 'untrusted', false, $5, $6), ('/home/me/asked', '', 'untrusted', true, $7, $8),
		('', '', 'untrusted', false, $9, $10)`,
		at(1000), at(2000), at(1100), at(2100), at(1200), at(2200), at(1250), at(2250), at(1300), at(2300))
	pgExec(t, admin, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "+roles[1])
	pgExec(t, admin, "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO "+roles[1])

	a := openPostgresAs(t, urlAs(t, raw, roles[0]), "A")
	var v string
	if err := admin.QueryRow(ctx, "SELECT value FROM hearth_meta WHERE key = 'schema_version'").Scan(&v); err != nil || v != "7" || v != fmt.Sprint(len(pgMigrations)) {
		t.Fatalf("schema_version %q %v", v, err)
	}
	for _, want := range []Workspace{
		{Path: "/home/me/ro", Name: "ro", Trust: TrustReadOnly, TrustChosen: true, CreatedAt: at(1000), LastUsed: at(2000), Sessions: 1},
		{Path: "/home/me/trusted", Name: "Mine", Trust: TrustTrusted, TrustChosen: true, CreatedAt: at(1100), LastUsed: at(2100)},
		{Path: "/home/me/headless", Name: "headless", Trust: TrustUntrusted, CreatedAt: at(1200), LastUsed: at(2200)},
		{Path: "/home/me/asked", Name: "asked", Trust: TrustUntrusted, TrustChosen: true, CreatedAt: at(1250), LastUsed: at(2250)},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, CreatedAt: at(1300), LastUsed: at(2300)},
	} {
		if got, err := a.Workspace(ctx, want.Path); err != nil || *got != want {
			t.Errorf("%q:\n%+v %v\nwant\n%+v", want.Path, got, err, want)
		}
	}

	// The second role: a trust given stores the hash, a touch keeps it,
	// one without a trust keeps it.
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	b := openPostgresAs(t, urlAs(t, raw, roles[1]), "B")
	if w, err := b.UpdateWorkspace(ctx, Workspace{Path: "/home/me/trusted", Trust: TrustTrusted, ConfigHash: hash}); err != nil || w.ConfigHash != hash || w.Name != "Mine" {
		t.Errorf("B trusts it: %+v %v", w, err)
	}
	if w, err := b.TouchWorkspace(ctx, "/home/me/trusted"); err != nil || w.ConfigHash != hash {
		t.Errorf("B touches it: %+v %v", w, err)
	}
	if w, err := b.AddWorkspace(ctx, Workspace{Path: "/home/me/trusted", Name: "Ours"}); err != nil || w.ConfigHash != hash {
		t.Errorf("B renames it: %+v %v", w, err)
	}
	if w, err := a.Workspace(ctx, "/home/me/trusted"); err != nil || w.ConfigHash != hash || w.Name != "Ours" {
		t.Errorf("A reads it: %+v %v", w, err)
	}
}
