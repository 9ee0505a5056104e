package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/valyala/fastjson"

	"github.com/hearth-agent/hearth/llm"
)

// pgMigrations bring a PostgreSQL database from version i to i+1. Like
// the SQLite ones, they only ever grow: a released migration is never
// edited. Times are timestamptz at millisecond precision (as SQLite
// keeps them), text is text: tool calls are kept as the exact JSON text
// the turn sent (jsonb would reorder keys, and a server's prompt cache
// compares bytes).
var pgMigrations = []string{
	// 1: sessions and their messages, usage and tool runs; the events of
	// recent turns, so that any instance can stream them; session locks
	// held by a live connection.
	`CREATE TABLE sessions (
		id          text PRIMARY KEY,
		title       text NOT NULL DEFAULT '',
		provider    text NOT NULL DEFAULT '',
		model       text NOT NULL DEFAULT '',
		workspace   text NOT NULL DEFAULT '',
		parent_id   text REFERENCES sessions(id) ON DELETE SET NULL,
		parent_call text NOT NULL DEFAULT '',
		created_at  timestamptz NOT NULL,
		updated_at  timestamptz NOT NULL
	);
	CREATE INDEX sessions_updated ON sessions(updated_at DESC);
	CREATE INDEX sessions_parent ON sessions(parent_id);
	CREATE TABLE messages (
		session_id   text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		seq          integer NOT NULL,
		role         text NOT NULL,
		content      text NOT NULL DEFAULT '',
		thinking     text NOT NULL DEFAULT '',
		tool_calls   text NOT NULL DEFAULT '',
		tool_call_id text NOT NULL DEFAULT '',
		tool_name    text NOT NULL DEFAULT '',
		images       text NOT NULL DEFAULT '',
		tokens       integer NOT NULL DEFAULT 0,
		partial      boolean NOT NULL DEFAULT false,
		compacted    boolean NOT NULL DEFAULT false,
		summary      boolean NOT NULL DEFAULT false,
		failure      boolean NOT NULL DEFAULT false,
		before_seq   integer NOT NULL DEFAULT 0,
		created_at   timestamptz NOT NULL,
		PRIMARY KEY (session_id, seq)
	);
	CREATE TABLE usage (
		id            bigserial PRIMARY KEY,
		session_id    text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		model         text NOT NULL DEFAULT '',
		input_tokens  integer NOT NULL,
		output_tokens integer NOT NULL,
		at            timestamptz NOT NULL
	);
	CREATE INDEX usage_session ON usage(session_id);
	CREATE INDEX usage_at ON usage(at);
	CREATE TABLE tool_runs (
		id          bigserial PRIMARY KEY,
		session_id  text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		call_id     text NOT NULL,
		name        text NOT NULL,
		args        text NOT NULL,
		ok          boolean NOT NULL,
		output      text NOT NULL DEFAULT '',
		error       text NOT NULL DEFAULT '',
		duration_ms bigint NOT NULL,
		at          timestamptz NOT NULL
	);
	CREATE INDEX tool_runs_session ON tool_runs(session_id);
	CREATE TABLE session_locks (
		session_id    text PRIMARY KEY,
		holder        text NOT NULL,
		token         text NOT NULL,
		pid           integer NOT NULL,
		backend_start timestamptz NOT NULL,
		at            timestamptz NOT NULL
	);
	CREATE TABLE turns (
		id            text PRIMARY KEY,
		session_id    text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		instance      text NOT NULL,
		pid           integer NOT NULL,
		backend_start timestamptz NOT NULL,
		started_at    timestamptz NOT NULL,
		ended_at      timestamptz,
		reason        text NOT NULL DEFAULT ''
	);
	CREATE INDEX turns_session ON turns(session_id, started_at DESC);
	CREATE TABLE turn_events (
		turn_id text NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
		seq     integer NOT NULL,
		type    text NOT NULL,
		call_id text NOT NULL DEFAULT '',
		data    text NOT NULL,
		PRIMARY KEY (turn_id, seq)
	);
	CREATE INDEX turn_events_approvals ON turn_events(call_id) WHERE type = 'approval_required';`,
	// 2: the processes that share the database, each named by its presence
	// connection (pid, backend_start) and the last time it said it lives:
	// unlike pg_stat_activity's backend_start, which PostgreSQL shows only
	// to the connection's own role, every role that uses the tables sees
	// it. The table gets the rights that session_locks has (the roles
	// granted them, and its owner when another role migrates), so that
	// every role that used the database before uses it after.
	`CREATE TABLE hearth_instances (
		pid           integer NOT NULL,
		backend_start timestamptz NOT NULL,
		name          text NOT NULL,
		seen_at       timestamptz NOT NULL,
		PRIMARY KEY (pid, backend_start)
	);
	DO $$
	DECLARE
		g record;
	BEGIN
		FOR g IN SELECT a.grantee, a.privilege_type, r.rolname
			FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
			WHERE c.oid = 'session_locks'::regclass AND a.grantee <> c.relowner AND (r.rolname IS NULL OR r.rolname <> current_user)
		LOOP
			IF g.grantee = 0 THEN
				EXECUTE format('GRANT %s ON hearth_instances TO PUBLIC', g.privilege_type);
			ELSIF g.rolname IS NOT NULL THEN
				EXECUTE format('GRANT %s ON hearth_instances TO %I', g.privilege_type, g.rolname);
			END IF;
		END LOOP;
		FOR g IN SELECT r.rolname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
			WHERE c.oid = 'session_locks'::regclass AND r.rolname <> current_user
		LOOP
			EXECUTE format('GRANT ALL ON hearth_instances TO %I', g.rolname);
		END LOOP;
	END $$;`,
	// 3: archived sessions, forks (the session forked and the seq of the
	// last message taken from it: a name, not a reference, so that a fork
	// outlives its source and is imported without it), and the
	// checkpoints of a session's workspace. The table and its sequence get
	// the rights that tool_runs and its sequence have, as in 2.
	`ALTER TABLE sessions ADD COLUMN archived boolean NOT NULL DEFAULT false,
		ADD COLUMN fork_of text NOT NULL DEFAULT '',
		ADD COLUMN fork_seq integer NOT NULL DEFAULT 0;
	CREATE TABLE checkpoints (
		id         bigserial PRIMARY KEY,
		session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		kind       text NOT NULL,
		turn       integer NOT NULL DEFAULT 0,
		seq        integer NOT NULL DEFAULT 0,
		call_id    text NOT NULL DEFAULT '',
		tool       text NOT NULL DEFAULT '',
		tree       text NOT NULL DEFAULT '',
		workspace  text NOT NULL DEFAULT '',
		detail     text,
		created_at timestamptz NOT NULL
	);
	CREATE INDEX checkpoints_session ON checkpoints(session_id, id);
	DO $$
	DECLARE
		g record;
		v_from regclass := pg_get_serial_sequence('tool_runs', 'id')::regclass;
		v_to text := pg_get_serial_sequence('checkpoints', 'id');
	BEGIN
		FOR g IN SELECT c.oid = v_from AS is_seq, a.grantee, a.privilege_type, r.rolname
			FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
			WHERE c.oid IN ('tool_runs'::regclass, v_from) AND a.grantee <> c.relowner AND (r.rolname IS NULL OR r.rolname <> current_user)
		LOOP
			IF g.grantee = 0 AND g.is_seq THEN
				EXECUTE format('GRANT %s ON SEQUENCE %s TO PUBLIC', g.privilege_type, v_to);
			ELSIF g.grantee = 0 THEN
				EXECUTE format('GRANT %s ON checkpoints TO PUBLIC', g.privilege_type);
			ELSIF g.rolname IS NOT NULL AND g.is_seq THEN
				EXECUTE format('GRANT %s ON SEQUENCE %s TO %I', g.privilege_type, v_to, g.rolname);
			ELSIF g.rolname IS NOT NULL THEN
				EXECUTE format('GRANT %s ON checkpoints TO %I', g.privilege_type, g.rolname);
			END IF;
		END LOOP;
		FOR g IN SELECT r.rolname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
			WHERE c.oid = 'tool_runs'::regclass AND r.rolname <> current_user
		LOOP
			EXECUTE format('GRANT ALL ON checkpoints TO %I', g.rolname);
			EXECUTE format('GRANT ALL ON SEQUENCE %s TO %I', v_to, g.rolname);
		END LOOP;
	END $$;`,
	// 4: what Hearth told the model on its own during a turn
	// (Message.Reminder).
	`ALTER TABLE messages ADD COLUMN reminder boolean NOT NULL DEFAULT false;`,
	// 5: the workspaces Hearth knows (a name of '' is the default one,
	// given when read: see defaultName), made from the sessions' (the
	// sessions recorded without one are in the workspace '', "unknown"):
	// first used when its first session was created, last used when its
	// last session was updated. And usage with its cost (Usage.Cost, in
	// micro-units; NULL: no price known) and cached input tokens. The
	// table gets the rights that sessions has (as in 2): every role that
	// creates sessions touches workspaces.
	`CREATE TABLE workspaces (
		path       text PRIMARY KEY,
		name       text NOT NULL DEFAULT '',
		trust      text NOT NULL DEFAULT 'untrusted' CHECK (trust IN ('untrusted', 'read-only', 'trusted')),
		created_at timestamptz NOT NULL,
		last_used  timestamptz NOT NULL
	);
	CREATE INDEX workspaces_last_used ON workspaces(last_used DESC);
	CREATE INDEX sessions_workspace ON sessions(workspace);
	INSERT INTO workspaces (path, created_at, last_used)
		SELECT workspace, min(created_at), max(updated_at) FROM sessions GROUP BY workspace;
	ALTER TABLE usage ADD COLUMN cached_input_tokens integer NOT NULL DEFAULT 0,
		ADD COLUMN cost bigint;
	DO $$
	DECLARE
		g record;
	BEGIN
		FOR g IN SELECT a.grantee, a.privilege_type, r.rolname
			FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
			WHERE c.oid = 'sessions'::regclass AND a.grantee <> c.relowner AND (r.rolname IS NULL OR r.rolname <> current_user)
		LOOP
			IF g.grantee = 0 THEN
				EXECUTE format('GRANT %s ON workspaces TO PUBLIC', g.privilege_type);
			ELSIF g.rolname IS NOT NULL THEN
				EXECUTE format('GRANT %s ON workspaces TO %I', g.privilege_type, g.rolname);
			END IF;
		END LOOP;
		FOR g IN SELECT r.rolname FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner
			WHERE c.oid = 'sessions'::regclass AND r.rolname <> current_user
		LOOP
			EXECUTE format('GRANT ALL ON workspaces TO %I', g.rolname);
		END LOOP;
	END $$;`,
	// 6: whether the user chose a workspace's trust (Workspace.TrustChosen):
	// those trusted or read-only were (only a user sets a trust other
	// than untrusted); the untrusted ones are untrusted by default, and
	// a UI asks. (The rights on the table cover the new column.)
	`ALTER TABLE workspaces ADD COLUMN trust_chosen boolean NOT NULL DEFAULT false;
	UPDATE workspaces SET trust_chosen = true WHERE trust <> 'untrusted';`,
	// 7: the hash of a workspace's project config when the user last
	// chose its trust (Workspace.ConfigHash); none known for the rows
	// already there. (The rights on the table cover the new column.)
	`ALTER TABLE workspaces ADD COLUMN config_hash text NOT NULL DEFAULT '';`,
}

// pgLockSpace is the first key of the advisory lock that serialises
// migrations ("Hrth").
const pgLockSpace = 0x48727468

// Postgres is the Store that several Hearth processes share: sessions live
// in one PostgreSQL database, a session is locked for one turn at a time
// across all of them, and (as a Relay) the events of running turns are
// published through the database so that any of them can serve a turn's
// stream, its cancel and its approvals.
//
// Every process that opens it holds one connection for its lifetime (its
// presence), which names the process to the others: the locks it takes and
// the turns it runs carry the connection's backend pid and start time. A
// goroutine (the presence keeper) refreshes the process's row in
// hearth_instances every heartbeat (1.5 s) on that connection, and when the
// connection breaks (PostgreSQL restarted, a proxy or an administrator
// ended it, idle_session_timeout) connects again and moves the locks still
// held and the turns still running to the new connection. A process is
// alive while its presence connection is in pg_stat_activity, or its row
// was refreshed less than Grace ago: so a process that is killed (SIGKILL
// included) is seen dead at most Grace plus a heartbeat after it last
// refreshed its row, and one whose connection blips is not seen dead. The
// row is what makes this work across database roles (pg_stat_activity
// hides a connection's start time from other roles).
type Postgres struct {
	pool *pgxpool.Pool
	name string // the database, for errors
	// LockTimeout is how long Lock waits for another holder (default 2 s).
	LockTimeout time.Duration
	// Grace is how long another process is still taken for alive after
	// its last sign of life (default 5 s, pgGrace): its locks are not
	// taken over, nor its turns abandoned, before. It covers the time a
	// live process needs to connect again after its presence connection
	// broke; it must be well above the heartbeat (1.5 s).
	Grace time.Duration

	// Log receives the store's and the relay's warnings (nil: none). Set
	// it before the store is used: it is read by the first Lock or Relay.
	Log *slog.Logger

	instance     string
	instanceName string // instance as opened: the name in hearth_instances
	connCfg      *pgx.ConnConfig

	// The presence connection and this process's identity (its backend's
	// pid and start time). The keeper changes them (with idRW held for
	// writing) when it connects again; a statement that writes the
	// identity into a row holds idRW for reading while it runs, so that
	// the keeper moves the rows to the new identity only after the
	// statements that wrote the old one have finished.
	idRW     sync.RWMutex
	presence *pgx.Conn
	pid      int32
	start    time.Time
	// old are this process's earlier identities whose rows are not moved
	// yet (the keeper's own).
	old []pgIdentity

	mu sync.Mutex
	// held are the locks this process holds, or is taking: session →
	// token. A session in it is not locked again by this process until
	// it is released.
	held map[string]heldLock
	log  *slog.Logger // Log, as read by Lock or Relay
	// closing is set by Close: no unlock is retried after it.
	closing bool
	relay   *pgRelay
	// The keeper LISTENs once listen is set (by Relay); listenOK once it
	// did, the first time, which closes listenReady, unless Relay gave up
	// waiting (listenLate: then that first LISTEN says NoteResync).
	listen, listenOK, listenLate bool
	listenReady                  chan struct{}
	// poked asks the keeper to stop waiting for notifications and look
	// again; waitCancel ends its current wait.
	poked      bool
	waitCancel context.CancelFunc

	// The keeper runs until kctx ends, and closes kdone when it returns.
	kctx  context.Context
	kstop context.CancelFunc
	kdone chan struct{}
	// bg are the unlocks retried in the background; bgCtx ends them.
	bg     sync.WaitGroup
	bgCtx  context.Context
	bgStop context.CancelFunc
	// noReconnect holds the keeper back from connecting again (tests: a
	// database that cannot be reached).
	noReconnect atomic.Bool

	relayOnce sync.Once
	once      sync.Once
}

// pgIdentity names a presence connection: its backend's pid and start.
type pgIdentity struct {
	pid   int32
	start time.Time
}

// heldLock is a lock of this process: its token, and whether it was taken
// (or is being taken).
type heldLock struct {
	token    string
	acquired bool
}

// Timings of the presence keeper.
const (
	// pgHeartbeat is how often the keeper refreshes this process's row.
	pgHeartbeat = 1500 * time.Millisecond
	// pgGrace is the default Grace.
	pgGrace = 5 * time.Second
	// pgReconnectMax caps the wait between two attempts to connect again.
	pgReconnectMax = time.Second
	// pgForget is how long the row of a process not seen is kept (Purge).
	pgForget = time.Hour
	// pgLost is the reason of a turn ended for a process that was gone
	// (or taken for gone), as the server's Abandon records it.
	pgLost = "lost"
)

// pgAlive is the SQL condition that the process named by the pid and
// backend_start of the row alias holder (a lock, a turn) is alive: its
// row in hearth_instances was refreshed less than grace ago (by the
// database's clock), or less than a minute ago while its presence
// connection is still in pg_stat_activity (which shows the start time to
// its own role only). Every test of liveness uses
// it: Lock's takeover, TurnInfo.Alive, Abandon, Purge, Holder. (Both are
// put in the SQL text: holder is a constant of the caller, grace an
// integer.)
func pgAlive(holder string, grace time.Duration) string {
	// A visible backend counts only while its heartbeat is not very old:
	// the connection of a host that froze (a laptop's lid closed) stays
	// open until TCP gives up on it, hours later.
	return fmt.Sprintf(`(EXISTS (SELECT 1 FROM hearth_instances i WHERE i.pid = %[1]s.pid AND i.backend_start = %[1]s.backend_start
			AND (i.seen_at > now() - %[2]d * interval '1 millisecond'
				OR i.seen_at > now() - interval '60 seconds'
					AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = %[1]s.pid AND a.backend_start = %[1]s.backend_start))))`, holder, grace.Milliseconds())
}

// alive is pgAlive with this store's Grace.
func (p *Postgres) alive(holder string) string {
	g := p.Grace
	if g <= 0 {
		g = pgGrace
	}
	return pgAlive(holder, g)
}

var _ Store = (*Postgres)(nil)

// IsPostgresURL reports whether s names a PostgreSQL database
// (postgres:// or postgresql://) rather than a file.
func IsPostgresURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// RedactURL returns a database URL without its password, for messages:
// neither the one after the user name nor a password or sslpassword
// parameter; in a libpq key=value string, the value of password and
// sslpassword.
func RedactURL(s string) string {
	if !IsPostgresURL(s) {
		return kvPassword.ReplaceAllString(s, "${1}xxxxx")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "the database URL"
	}
	q := u.Query()
	redacted := false
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "xxxxx")
			redacted = true
		}
	}
	if redacted {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// kvPassword finds the passwords of a key=value connection string: the
// key, then the value, quoted (to the end of the string when the quote is
// not closed) or not.
var kvPassword = regexp.MustCompile(`((?:^|\s)(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*(?:'|$)|\S*)`)

// parseError says what is wrong with a connection string that cannot be
// read, without repeating the string (it may hold a password: pgconn's
// message quotes it, redacted only as well as it can tell where the
// password is).
func parseError(err error) string {
	s := err.Error()
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) {
		if i := strings.LastIndex(s, "`: "); i >= 0 {
			return s[i+len("`: "):]
		}
		return "it cannot be read"
	}
	return s
}

// OpenPostgres connects to the PostgreSQL database at dsn (a postgres://
// URL, or a libpq key=value string) and brings its schema up to date. A
// database that holds another program's tables, or one made by a newer
// Hearth, gets an error that says what to do; so does one that cannot be
// reached. It starts the presence keeper, which Close stops.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("session store: %s is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE): %s", RedactURL(dsn), parseError(err))
	}
	host, _ := os.Hostname()
	instance := fmt.Sprintf("hearth on %s (pid %d)", host, os.Getpid())
	cfg.ConnConfig.RuntimeParams["application_name"] = instance
	// A turn uses a few connections at once (its appends, the relay's
	// writer, the followers' reads): at least 8, unless the URL says how
	// many.
	if cfg.MaxConns < 8 && !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = 8
	}
	name := cfg.ConnConfig.Database
	where := fmt.Sprintf("database %q on %s:%d", name, cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	p := &Postgres{name: where, LockTimeout: 2 * time.Second, Grace: pgGrace, instance: instance, instanceName: instance, connCfg: cfg.ConnConfig.Copy(),
		held: map[string]heldLock{}}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	conn, id, err := p.dial(cctx)
	if err != nil {
		return nil, err
	}
	p.presence, p.pid, p.start = conn, id.pid, id.start
	if p.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		conn.Close(ctx)
		return nil, p.connError(err)
	}
	if err := p.migrate(cctx); err != nil {
		p.Close()
		return nil, err
	}
	if err := p.beat(cctx, conn, id); err != nil {
		p.Close()
		return nil, p.connError(err)
	}
	p.bgCtx, p.bgStop = context.WithCancel(context.Background())
	p.kctx, p.kstop = context.WithCancel(context.Background())
	p.kdone = make(chan struct{})
	go p.keep(conn)
	return p, nil
}

// dial opens a presence connection and reads its identity.
func (p *Postgres) dial(ctx context.Context) (*pgx.Conn, pgIdentity, error) {
	var id pgIdentity
	conn, err := pgx.ConnectConfig(ctx, p.connCfg.Copy())
	if err != nil {
		return nil, id, p.connError(err)
	}
	if err := conn.QueryRow(ctx, "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&id.pid, &id.start); err != nil {
		conn.Close(ctx)
		return nil, id, p.connError(err)
	}
	return conn, id, nil
}

// beat says that the process of presence connection id lives: it writes
// (or refreshes) its row in hearth_instances, on that connection (which
// also keeps the connection from being idle long enough for an
// idle_session_timeout).
func (p *Postgres) beat(ctx context.Context, conn *pgx.Conn, id pgIdentity) error {
	_, err := conn.Exec(ctx, `INSERT INTO hearth_instances (pid, backend_start, name, seen_at) VALUES ($1, $2, $3, now())
		ON CONFLICT (pid, backend_start) DO UPDATE SET seen_at = now()`, id.pid, id.start, p.instanceName)
	return err
}

// keep is the presence keeper: it owns the presence connection. It
// refreshes this process's row every pgHeartbeat; once Relay asked, it
// LISTENs for the relay's notifications and hands them to the relay
// (waiting for them at most until the next heartbeat). When the
// connection breaks it connects again (see reconnect), LISTENs again and
// tells the relay that notes may have been missed (NoteResync).
func (p *Postgres) keep(conn *pgx.Conn) {
	defer close(p.kdone)
	ctx := p.kctx
	id := pgIdentity{p.pid, p.start}
	last := time.Now() // of the last heartbeat
	moved := last      // the last attempt to move the old identities' rows
	listening, resync := false, false
	broke := func(what string, err error) {
		p.logger().Warn("session store: the presence connection broke; connecting again", "while", what, "error", err)
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn.Close(cctx)
		cancel()
		conn = nil
	}
	for ctx.Err() == nil {
		if conn == nil {
			if conn, id = p.reconnect(); conn == nil {
				return
			}
			last, listening, resync = time.Now(), false, true
			moved = last
		}
		if len(p.old) > 0 && time.Since(moved) >= pgHeartbeat {
			// The rows of an earlier identity are not moved yet (the
			// move failed): again, every heartbeat, until they are.
			moved = time.Now()
			if err := p.move(ctx, conn, id); err != nil {
				if ctx.Err() != nil {
					return
				}
				if conn.IsClosed() {
					broke("moving this process's locks and turns", err)
					continue
				}
				p.logger().Warn("session store: moving this process's locks and turns to its new connection; trying again", "error", err)
			}
		}
		if !listening && p.listenWanted() {
			lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := conn.Exec(lctx, "LISTEN "+relayChannel)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				broke("LISTEN", err)
				continue
			}
			listening = true
			p.listened(resync)
			resync = false
		}
		if time.Since(last) >= pgHeartbeat {
			// A beat that hangs is a broken connection: give up on it
			// well within the others' grace, and reconnect.
			bctx, cancel := context.WithTimeout(ctx, pgGrace/3)
			err := p.beat(bctx, conn, id)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				broke("heartbeat", err)
				continue
			}
			last = time.Now()
		}
		n, err := p.waitNote(conn, last.Add(pgHeartbeat))
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errWaitOver) {
				continue
			}
			broke("waiting for notifications", err)
			continue
		}
		if n != nil {
			p.mu.Lock()
			r := p.relay
			p.mu.Unlock()
			if r != nil {
				if note, ok := r.parseNote(n.Payload); ok {
					r.enqueue(note)
				}
			}
		}
	}
}

// errWaitOver ends a wait for notifications that is over (the heartbeat is
// due, or the keeper was poked), not broken.
var errWaitOver = errors.New("the wait is over")

// waitNote waits on conn for a notification until until, or until the
// keeper is poked.
func (p *Postgres) waitNote(conn *pgx.Conn, until time.Time) (*pgconn.Notification, error) {
	wctx, cancel := context.WithDeadline(p.kctx, until)
	defer cancel()
	p.mu.Lock()
	if p.poked {
		p.poked = false
		p.mu.Unlock()
		return nil, errWaitOver
	}
	p.waitCancel = cancel
	p.mu.Unlock()
	n, err := conn.WaitForNotification(wctx)
	p.mu.Lock()
	p.waitCancel, p.poked = nil, false
	p.mu.Unlock()
	if err != nil && wctx.Err() != nil && p.kctx.Err() == nil && !conn.IsClosed() {
		// A deadline ends the wait without harm to the connection (pgx's
		// default handler of a context's end sets a deadline on the
		// socket, and a read that times out leaves it open).
		return nil, errWaitOver
	}
	return n, err
}

// poke makes the keeper stop waiting for notifications and look again.
func (p *Postgres) poke() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.waitCancel != nil {
		p.waitCancel()
	} else {
		p.poked = true
	}
}

// listenWanted says whether Relay asked the keeper to LISTEN.
func (p *Postgres) listenWanted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.listen
}

// listened is called by the keeper when its LISTEN is in effect: the first
// time, Relay may return (unless it stopped waiting: then, as after a
// reconnect (resync), the relay says that notes may have been missed).
func (p *Postgres) listened(resync bool) {
	p.mu.Lock()
	first := !p.listenOK
	p.listenOK = true
	late, ready, r := p.listenLate, p.listenReady, p.relay
	p.mu.Unlock()
	if first && !late {
		close(ready)
		return
	}
	if (resync || first) && r != nil {
		r.enqueue(Note{Kind: NoteResync})
	}
}

// reconnect connects a new presence connection, trying again (after
// 100 ms, doubling up to pgReconnectMax) until it can or the store is
// closed (then nil), and moves this process's locks and turns to its
// identity.
func (p *Postgres) reconnect() (*pgx.Conn, pgIdentity) {
	delay := 100 * time.Millisecond
	var warned time.Time
	failed := false
	for {
		conn, id, err := p.dialHere()
		if err == nil {
			if failed {
				p.logger().Info("session store: connected to the database again")
			}
			return conn, id
		}
		if p.kctx.Err() != nil {
			return nil, pgIdentity{}
		}
		failed = true
		if time.Since(warned) > 30*time.Second {
			p.logger().Warn("session store: cannot connect to the database; trying again", "error", err)
			warned = time.Now()
		}
		select {
		case <-time.After(delay):
		case <-p.kctx.Done():
			return nil, pgIdentity{}
		}
		delay = min(2*delay, pgReconnectMax)
	}
}

// dialHere makes a new presence connection this process's: its row, its
// identity (once no statement that writes the old one runs), then the
// locks and turns of the old identity moved to it (when that fails, the
// keeper tries again at its next heartbeat).
func (p *Postgres) dialHere() (*pgx.Conn, pgIdentity, error) {
	if p.noReconnect.Load() {
		return nil, pgIdentity{}, errors.New("held back by a test")
	}
	ctx, cancel := context.WithTimeout(p.kctx, 15*time.Second)
	defer cancel()
	conn, id, err := p.dial(ctx)
	if err != nil {
		return nil, id, err
	}
	if err := p.beat(ctx, conn, id); err != nil {
		conn.Close(ctx)
		return nil, id, p.connError(err)
	}
	p.idRW.Lock()
	p.old = append(p.old, pgIdentity{p.pid, p.start})
	p.presence, p.pid, p.start = conn, id.pid, id.start
	p.idRW.Unlock()
	if err := p.move(ctx, conn, id); err != nil {
		p.logger().Warn("session store: moving this process's locks and turns to its new connection; trying again", "error", err)
	}
	return conn, id, nil
}

// move moves this process's rows from its earlier identities (p.old) to
// id, in one transaction: the lock rows whose token it holds and the turn
// rows of the turns its relay runs (begun, their end not written). Its
// other lock rows are deleted (their unlock failed, or they were never
// known to be taken); its other open turns are ended (pgLost, with no
// events; every process is told). The old identities' rows in
// hearth_instances go too. The locks it holds that are no longer its own
// (taken over while it was taken for dead) are logged.
func (p *Postgres) move(ctx context.Context, conn *pgx.Conn, id pgIdentity) error {
	pids := make([]int32, len(p.old))
	starts := make([]time.Time, len(p.old))
	for i, o := range p.old {
		pids[i], starts[i] = o.pid, o.start
	}
	held, acquired := []string{}, map[string]string{}
	p.mu.Lock()
	for sid, h := range p.held {
		held = append(held, h.token)
		if h.acquired {
			acquired[h.token] = sid
		}
	}
	r := p.relay
	p.mu.Unlock()
	running := []string{}
	if r != nil {
		running = r.runningTurns()
	}
	mctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var gone []string
	err := pgx.BeginFunc(mctx, conn, func(tx pgx.Tx) error {
		const old = `(pid, backend_start) IN (SELECT * FROM unnest($1::integer[], $2::timestamptz[]))`
		var b pgx.Batch
		b.Queue(`UPDATE session_locks SET pid = $3, backend_start = $4 WHERE `+old+` AND token = ANY($5::text[])`, pids, starts, id.pid, id.start, held)
		b.Queue(`DELETE FROM session_locks WHERE `+old+` AND token <> ALL($3::text[])`, pids, starts, held)
		b.Queue(`UPDATE turns SET pid = $3, backend_start = $4 WHERE `+old+` AND id = ANY($5::text[])`, pids, starts, id.pid, id.start, running)
		b.Queue(`WITH ended AS (UPDATE turns SET ended_at = now(), reason = $4 WHERE `+old+` AND ended_at IS NULL AND id <> ALL($3::text[]) RETURNING id)
			SELECT pg_notify($5, $6 || ' - ' || id || ' ' || $4) FROM ended`, pids, starts, running, pgLost, relayChannel, string(NoteEnd))
		b.Queue(`DELETE FROM hearth_instances WHERE `+old, pids, starts)
		tokens := make([]string, 0, len(acquired))
		for t := range acquired {
			tokens = append(tokens, t)
		}
		b.Queue(`SELECT t FROM unnest($1::text[]) AS t WHERE NOT EXISTS (SELECT 1 FROM session_locks l WHERE l.token = t)`, tokens).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var t string
				if err := rows.Scan(&t); err != nil {
					return err
				}
				gone = append(gone, acquired[t])
			}
			return rows.Err()
		})
		return tx.SendBatch(mctx, &b).Close()
	})
	if err != nil {
		return err
	}
	p.old = nil
	for _, sid := range gone {
		p.logger().Warn("session store: the lock of a session was taken by another process while this one was cut off from the database", "session", sid)
	}
	return nil
}

// identity returns the presence connection's backend pid and start.
func (p *Postgres) identity() (int32, time.Time) {
	p.idRW.RLock()
	defer p.idRW.RUnlock()
	return p.pid, p.start
}

// logger returns the logger Lock or Relay read from Log.
func (p *Postgres) logger() *slog.Logger {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.log
}

// readLog reads Log for the goroutines of the store (it is set after
// OpenPostgres returns, by the caller, whose calls read it).
func (p *Postgres) readLog() {
	l := p.Log
	p.mu.Lock()
	p.log = l
	p.mu.Unlock()
}

// connError explains a database that cannot be reached or used.
func (p *Postgres) connError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "3D000":
			return fmt.Errorf("session store: the %s does not exist: create it (createdb, or CREATE DATABASE) and start again", p.name)
		case "28P01", "28000":
			return fmt.Errorf("session store: the %s refused the login (%s): check the user and password in HEARTH_DATABASE_URL or [store] url", p.name, pe.Message)
		case "42501":
			return fmt.Errorf("session store: the %s refused a change (%s): the user needs the right to create tables in it", p.name, pe.Message)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("session store: the %s did not answer in time: %w", p.name, err)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		// pgx lists each address and attempt on a line of its own: say
		// the cause once.
		var oe *net.OpError
		if errors.As(err, &oe) {
			return fmt.Errorf("session store: cannot connect to the %s: %v: is PostgreSQL running there?", p.name, oe.Err)
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		return fmt.Errorf("session store: cannot connect to the %s: %s", p.name, strings.TrimSuffix(strings.TrimSpace(first), ":"))
	}
	return fmt.Errorf("session store: the %s: %w", p.name, err)
}

// Instance names this process among those sharing the database ("hearth
// on HOST (pid N)").
func (p *Postgres) Instance() string { return p.instance }

// Close writes what the relay has queued (for up to 5 s), gives the
// unlocks that failed up to 5 s more to succeed, stops the keeper, removes
// this process's row (so that the others see it gone at once: a lock it
// did not release is taken over, a turn it did not end abandoned) and
// closes the connections.
func (p *Postgres) Close() error {
	p.shutdown(true)
	return nil
}

// kill stops the store as a SIGKILL stops its process (tests): nothing
// written, released or removed; its connections end. The others see it
// dead once its row is older than their Grace.
func (p *Postgres) kill() {
	p.shutdown(false)
}

func (p *Postgres) shutdown(clean bool) {
	p.once.Do(func() {
		p.mu.Lock()
		p.closing = true
		r := p.relay
		p.mu.Unlock()
		if r != nil {
			r.close(clean)
		}
		if p.bgStop != nil {
			if clean {
				waitGroup(&p.bg, 5*time.Second)
			}
			p.bgStop()
			p.bg.Wait()
		}
		if p.kstop != nil {
			p.kstop()
			<-p.kdone
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if p.pool != nil {
			if clean && p.kdone != nil {
				ids := append(p.old, pgIdentity{p.pid, p.start})
				pids := make([]int32, len(ids))
				starts := make([]time.Time, len(ids))
				for i, o := range ids {
					pids[i], starts[i] = o.pid, o.start
				}
				dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				p.pool.Exec(dctx, `DELETE FROM hearth_instances WHERE (pid, backend_start) IN (SELECT * FROM unnest($1::integer[], $2::timestamptz[]))`, pids, starts)
				cancel()
			}
			p.pool.Close()
		}
		if p.presence != nil && !p.presence.IsClosed() {
			p.presence.Close(ctx)
		}
	})
}

// waitGroup waits for wg, at most d.
func waitGroup(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// migrate brings the schema up to date under an advisory lock, so that
// instances started together migrate it once.
func (p *Postgres) migrate(ctx context.Context) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return p.connError(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, 0)", int32(pgLockSpace)); err != nil {
		return p.connError(err)
	}
	var metaExists bool
	var others []string
	rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name`)
	if err != nil {
		return p.connError(err)
	}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return p.connError(err)
		}
		if t == "hearth_meta" {
			metaExists = true
		} else {
			others = append(others, t)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return p.connError(err)
	}
	version := 0
	if !metaExists {
		if len(others) > 0 {
			shown := others
			if len(shown) > 5 {
				shown = append(shown[:5:5], "…")
			}
			return fmt.Errorf("session store: the %s holds another program's tables (%s), not Hearth's: give Hearth a database of its own (createdb hearth) and point HEARTH_DATABASE_URL at it", p.name, strings.Join(shown, ", "))
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE hearth_meta (key text PRIMARY KEY, value text NOT NULL);
			INSERT INTO hearth_meta (key, value) VALUES ('application', 'hearth'), ('schema_version', '0')`); err != nil {
			return p.connError(err)
		}
	} else {
		var app string
		err := tx.QueryRow(ctx, `SELECT COALESCE((SELECT value FROM hearth_meta WHERE key = 'application'), ''),
			COALESCE((SELECT value::integer FROM hearth_meta WHERE key = 'schema_version'), -1)`).Scan(&app, &version)
		if err != nil {
			return p.connError(err)
		}
		if app != "hearth" || version < 0 {
			return fmt.Errorf("session store: the %s has a hearth_meta table that is not Hearth's: give Hearth a database of its own", p.name)
		}
	}
	if version > len(pgMigrations) {
		return fmt.Errorf("session store: the %s was made by a newer Hearth (schema %d; this one knows %d): upgrade Hearth, or use another database", p.name, version, len(pgMigrations))
	}
	for ; version < len(pgMigrations); version++ {
		if _, err := tx.Exec(ctx, pgMigrations[version]); err != nil {
			return fmt.Errorf("session store: updating the %s to schema %d: %w", p.name, version+1, p.connError(err))
		}
	}
	if _, err := tx.Exec(ctx, "UPDATE hearth_meta SET value = $1 WHERE key = 'schema_version'", fmt.Sprint(version)); err != nil {
		return p.connError(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return p.connError(err)
	}
	return nil
}

// pgText makes a string storable as PostgreSQL text, which holds neither
// NUL nor invalid UTF-8 (SQLite keeps both): each NUL, and each run of
// invalid bytes (strings.ToValidUTF8), becomes one U+FFFD, so a command's
// binary output is stored, marked, rather than failing the turn.
func pgText(s string) string {
	if strings.IndexByte(s, 0) < 0 && utf8.ValidString(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

func pgTime(t time.Time) time.Time { return t.Truncate(time.Millisecond).UTC() }

func pgNow() time.Time { return pgTime(time.Now()) }

func isPgCode(err error, codes ...string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && slices.Contains(codes, pe.Code)
}

// Create stores a new session.
func (p *Postgres) Create(ctx context.Context, se *Session) error {
	if se.ID == "" {
		se.ID = NewID()
	}
	t := pgNow()
	se.CreatedAt, se.UpdatedAt = t, t
	var parent any
	if se.ParentID != "" {
		parent = se.ParentID
	}
	// One round trip, one transaction (a batch outside one is run in an
	// implicit transaction).
	var b pgx.Batch
	b.Queue(`INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`, pgText(se.ID), pgText(se.Title), pgText(se.Provider), pgText(se.Model), pgText(se.Workspace), parent, pgText(se.ParentCall),
		se.Archived, pgText(se.ForkOf), se.ForkSeq, t)
	queueTouch(&b, se.Workspace, t, t)
	if err := p.pool.SendBatch(ctx, &b).Close(); err != nil {
		if isPgCode(err, "23505", "23503") {
			return fmt.Errorf("create session %s: a session with this id exists, or its parent does not", se.ID)
		}
		return errSession("create", se.ID, p.connError(err))
	}
	return nil
}

const pgSessionColumns = `s.id, s.title, s.provider, s.model, s.workspace, COALESCE(s.parent_id, ''), s.parent_call, s.archived, s.fork_of, s.fork_seq, s.created_at, s.updated_at,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	(SELECT COALESCE(sum(input_tokens), 0) FROM usage u WHERE u.session_id = s.id),
	(SELECT COALESCE(sum(output_tokens), 0) FROM usage u WHERE u.session_id = s.id),
	(SELECT sum(cost)::bigint FROM usage u WHERE u.session_id = s.id),
	(SELECT count(*) FROM usage u WHERE u.session_id = s.id AND u.cost IS NULL)`

func scanPgSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var se Session
	var count, in, out, unpriced int64
	err := sc.Scan(&se.ID, &se.Title, &se.Provider, &se.Model, &se.Workspace, &se.ParentID, &se.ParentCall, &se.Archived, &se.ForkOf, &se.ForkSeq,
		&se.CreatedAt, &se.UpdatedAt, &count, &in, &out, &se.Cost, &unpriced)
	se.CreatedAt, se.UpdatedAt = se.CreatedAt.UTC(), se.UpdatedAt.UTC()
	se.MessageCount, se.InputTokens, se.OutputTokens, se.Unpriced = int(count), int(in), int(out), int(unpriced)
	return &se, err
}

// Get returns one session.
func (p *Postgres) Get(ctx context.Context, id string) (*Session, error) {
	se, err := scanPgSession(p.pool.QueryRow(ctx, "SELECT "+pgSessionColumns+" FROM sessions s WHERE s.id = $1", pgText(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errSession("get", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("get", id, p.connError(err))
	}
	return se, nil
}

// List returns sessions, most recently updated first: the archived ones
// only when opts.Archived, the others only when not.
func (p *Postgres) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	q := "SELECT " + pgSessionColumns + " FROM sessions s WHERE s.archived = $1 AND "
	args := []any{opts.Archived}
	if opts.ParentID == "" {
		q += "s.parent_id IS NULL"
	} else {
		args = append(args, pgText(opts.ParentID))
		q += fmt.Sprintf("s.parent_id = $%d", len(args))
	}
	if opts.Workspace != nil {
		args = append(args, pgText(*opts.Workspace))
		q += fmt.Sprintf(" AND s.workspace = $%d", len(args))
	}
	if opts.Query != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(pgText(opts.Query)) + "%"
		args = append(args, like)
		n := len(args)
		// ILIKE: SQLite's LIKE ignores the case of ASCII letters.
		q += fmt.Sprintf(` AND (s.title ILIKE $%d OR EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.content ILIKE $%d))`, n, n)
	}
	q += " ORDER BY s.updated_at DESC, s.id"
	if opts.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", p.connError(err))
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		se, err := scanPgSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, *se)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sessions: %w", p.connError(err))
	}
	return out, nil
}

// Rename sets a session's title.
func (p *Postgres) Rename(ctx context.Context, id, title string) error {
	tag, err := p.pool.Exec(ctx, "UPDATE sessions SET title = $1, updated_at = $2 WHERE id = $3", pgText(title), pgNow(), pgText(id))
	if err != nil {
		return errSession("rename", id, p.connError(err))
	}
	if tag.RowsAffected() == 0 {
		return errSession("rename", id, ErrNotFound)
	}
	return nil
}

// Delete removes a session with its messages, usage, tool runs,
// checkpoints and turns. Its forks stay (their ForkOf names a session that
// is gone). Its lock is left alone: the deleter may hold it (and releases
// it with its unlock); a lock row whose holder is gone is Purge's.
func (p *Postgres) Delete(ctx context.Context, id string) error {
	tag, err := p.pool.Exec(ctx, "DELETE FROM sessions WHERE id = $1", pgText(id))
	if err != nil {
		return errSession("delete", id, p.connError(err))
	}
	if tag.RowsAffected() == 0 {
		return errSession("delete", id, ErrNotFound)
	}
	return nil
}

// lockSession locks a session's row for the rest of tx and returns its
// last seq, or ErrNotFound. The seq is read by a statement of its own,
// after the lock: a statement's snapshot is taken when it starts, so a
// subquery of the statement that waited for the lock (an UPDATE …
// RETURNING (SELECT max(seq) …)) would miss the messages of the
// transaction it waited for, and reuse their seqs.
// (The two statements go in one round trip; the second starts when the
// first has the lock.)
func lockSession(ctx context.Context, tx pgx.Tx, id string) (int, error) {
	var b pgx.Batch
	b.Queue("SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE", id)
	b.Queue("SELECT COALESCE(max(seq), 0) FROM messages WHERE session_id = $1", id)
	br := tx.SendBatch(ctx, &b)
	defer br.Close()
	var one, seq int
	err := br.QueryRow().Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, err
	}
	if err := br.QueryRow().Scan(&seq); err != nil {
		return 0, err
	}
	return seq, br.Close()
}

// Append adds messages in one transaction. The session's row is locked
// first, so that appends from several processes get consecutive seqs.
func (p *Postgres) Append(ctx context.Context, id string, msgs ...Message) ([]Message, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return nil, errSession("append to", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	seq, err := lockSession(ctx, tx, pgText(id))
	if errors.Is(err, ErrNotFound) {
		return nil, errSession("append to", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("append to", id, p.connError(err))
	}
	t := pgNow()
	var b pgx.Batch
	b.Queue("UPDATE sessions SET updated_at = $2 WHERE id = $1", pgText(id), t)
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		seq++
		m.Seq = seq
		m.CreatedAt = t
		if m.Tokens == 0 {
			m.Tokens = MessageTokens(m.Message)
		}
		calls, images := "", ""
		if len(m.ToolCalls) > 0 {
			calls = marshalCalls(m.ToolCalls)
		}
		if len(m.Images) > 0 {
			data, _ := json.Marshal(m.Images)
			images = string(data)
		}
		b.Queue(`INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, reminder, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			pgText(id), m.Seq, pgText(string(m.Role)), pgText(m.Content), pgText(m.Thinking), pgText(calls), pgText(m.ToolCallID), pgText(m.ToolName), images,
			m.Tokens, m.Partial, m.Compacted, m.Summary, m.Failure, m.Reminder, t)
		out[i] = m
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return nil, errSession("append to", id, p.connError(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, errSession("append to", id, p.connError(err))
	}
	return out, nil
}

// Messages returns a session's messages in order.
func (p *Postgres) Messages(ctx context.Context, id string) ([]Message, error) {
	return p.messages(ctx, id, false)
}

// LiveMessages returns the messages not compacted, in order.
func (p *Postgres) LiveMessages(ctx context.Context, id string) ([]Message, error) {
	return p.messages(ctx, id, true)
}

func (p *Postgres) messages(ctx context.Context, id string, live bool) ([]Message, error) {
	if _, err := p.Get(ctx, id); err != nil {
		return nil, err
	}
	out, err := p.readMessages(ctx, p.pool, id, live)
	if err != nil {
		return nil, errSession("read", id, err)
	}
	return out, nil
}

// pgQuerier is what reads go through: the pool, or a transaction (Export
// reads a whole session in one).
type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readMessages reads a session's messages (live: those not compacted) in
// order.
func (p *Postgres) readMessages(ctx context.Context, q pgQuerier, id string, live bool) ([]Message, error) {
	query := `SELECT seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, reminder, before_seq, created_at
		FROM messages WHERE session_id = $1`
	if live {
		query += ` AND NOT compacted`
	}
	rows, err := q.Query(ctx, query+` ORDER BY seq`, pgText(id))
	if err != nil {
		return nil, p.connError(err)
	}
	defer rows.Close()
	var out []Message
	var parser fastjson.Parser
	for rows.Next() {
		var m Message
		var role, calls, images string
		if err := rows.Scan(&m.Seq, &role, &m.Content, &m.Thinking, &calls, &m.ToolCallID, &m.ToolName, &images, &m.Tokens,
			&m.Partial, &m.Compacted, &m.Summary, &m.Failure, &m.Reminder, &m.Before, &m.CreatedAt); err != nil {
			return nil, err
		}
		m.Role, m.CreatedAt = llm.Role(role), m.CreatedAt.UTC()
		if err := decodeMessage(&parser, &m, calls, images); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, p.connError(err)
	}
	return out, nil
}

// Compact marks the given messages compacted and adds their summary, in
// one transaction.
func (p *Postgres) Compact(ctx context.Context, id string, seqs []int, before int, summary Message) (Message, error) {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return Message{}, errSession("compact", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	seq, err := lockSession(ctx, tx, pgText(id))
	if errors.Is(err, ErrNotFound) {
		return Message{}, errSession("compact", id, ErrNotFound)
	}
	if err != nil {
		return Message{}, errSession("compact", id, p.connError(err))
	}
	t := pgNow()
	s32 := make([]int32, len(seqs))
	for i, q := range seqs {
		s32[i] = int32(q)
	}
	if _, err := tx.Exec(ctx, "UPDATE messages SET compacted = true WHERE session_id = $1 AND seq = ANY($2)", pgText(id), s32); err != nil {
		return Message{}, errSession("compact", id, p.connError(err))
	}
	if summary.Tokens == 0 {
		summary.Tokens = MessageTokens(summary.Message)
	}
	summary.Seq, summary.Summary, summary.Before, summary.CreatedAt = seq+1, true, before, t
	if _, err := tx.Exec(ctx, `INSERT INTO messages (session_id, seq, role, content, tokens, summary, before_seq, created_at) VALUES ($1, $2, $3, $4, $5, true, $6, $7)`,
		pgText(id), summary.Seq, pgText(string(summary.Role)), pgText(summary.Content), summary.Tokens, before, t); err != nil {
		return Message{}, errSession("compact", id, p.connError(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return Message{}, errSession("compact", id, p.connError(err))
	}
	return summary, nil
}

// RecordUsage stores one model call's token counts and cost.
func (p *Postgres) RecordUsage(ctx context.Context, u Usage) error {
	if u.At.IsZero() {
		u.At = time.Now()
	}
	_, err := p.pool.Exec(ctx, "INSERT INTO usage (session_id, model, input_tokens, output_tokens, cached_input_tokens, cost, at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
		pgText(u.SessionID), pgText(u.Model), u.InputTokens, u.OutputTokens, u.CachedInputTokens, u.Cost, pgTime(u.At))
	if err != nil {
		return errSession("record usage of", u.SessionID, p.connError(err))
	}
	return nil
}

// RecordToolRun stores one tool call's outcome.
func (p *Postgres) RecordToolRun(ctx context.Context, r ToolRun) error {
	if r.At.IsZero() {
		r.At = time.Now()
	}
	args := string(r.Args)
	if args == "" {
		args = "{}"
	}
	_, err := p.pool.Exec(ctx, "INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, error, duration_ms, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
		pgText(r.SessionID), pgText(r.CallID), pgText(r.Name), pgText(args), r.OK, pgText(r.Output), pgText(r.Error), r.Duration.Milliseconds(), pgTime(r.At))
	if err != nil {
		return errSession("record a tool run of", r.SessionID, p.connError(err))
	}
	return nil
}

// ToolRuns returns a session's tool runs in order.
func (p *Postgres) ToolRuns(ctx context.Context, id string) ([]ToolRun, error) {
	out, err := p.readToolRuns(ctx, p.pool, id)
	if err != nil {
		return nil, errSession("read tool runs of", id, err)
	}
	return out, nil
}

// readToolRuns reads a session's tool runs in order.
func (p *Postgres) readToolRuns(ctx context.Context, q pgQuerier, id string) ([]ToolRun, error) {
	rows, err := q.Query(ctx, "SELECT call_id, name, args, ok, output, error, duration_ms, at FROM tool_runs WHERE session_id = $1 ORDER BY id", pgText(id))
	if err != nil {
		return nil, p.connError(err)
	}
	defer rows.Close()
	var out []ToolRun
	for rows.Next() {
		r := ToolRun{SessionID: id}
		var args string
		var ms int64
		if err := rows.Scan(&r.CallID, &r.Name, &args, &r.OK, &r.Output, &r.Error, &ms, &r.At); err != nil {
			return nil, err
		}
		r.Args, r.Duration, r.At = json.RawMessage(args), time.Duration(ms)*time.Millisecond, r.At.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, p.connError(err)
	}
	return out, nil
}

// UsageByDay sums usage per UTC day.
func (p *Postgres) UsageByDay(ctx context.Context, since time.Time) ([]DayUsage, error) {
	return usageByDay(ctx, p, since)
}

// pgUsageKeys are the SQL of UsageTotals' keys, by grouping.
var pgUsageKeys = map[string]string{
	ByTotal:     "''",
	BySession:   "u.session_id",
	ByModel:     "u.model",
	ByWorkspace: "s.workspace",
	ByDay:       "to_char(u.at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
}

// UsageTotals sums usage rows with PostgreSQL's sum() of integers, which
// is exact (numeric for bigint, cast back: an overflow fails rather than
// round). Keys are ordered byte by byte (COLLATE "C"), as SQLite orders
// them.
func (p *Postgres) UsageTotals(ctx context.Context, f UsageFilter, by string) ([]UsageTotal, error) {
	if err := checkGroup(by); err != nil {
		return nil, err
	}
	q := `SELECT (` + pgUsageKeys[by] + `) COLLATE "C" AS k, count(*), COALESCE(sum(u.input_tokens), 0)::bigint, COALESCE(sum(u.output_tokens), 0)::bigint,
		COALESCE(sum(u.cached_input_tokens), 0)::bigint, COALESCE(sum(u.cost), 0)::bigint, count(*) - count(u.cost)
		FROM usage u`
	if by == ByWorkspace || f.Workspace != nil {
		q += " JOIN sessions s ON s.id = u.session_id"
	}
	q += " WHERE true"
	var args []any
	arg := func(cond string, v any) {
		args = append(args, v)
		q += fmt.Sprintf(" AND "+cond, len(args))
	}
	if !f.Since.IsZero() {
		arg("u.at >= $%d", pgTime(f.Since))
	}
	if !f.Until.IsZero() {
		arg("u.at < $%d", pgTime(f.Until))
	}
	if f.SessionID != "" {
		arg("u.session_id = $%d", pgText(f.SessionID))
	}
	if f.Model != "" {
		arg("u.model = $%d", pgText(f.Model))
	}
	if f.Workspace != nil {
		arg("s.workspace = $%d", pgText(*f.Workspace))
	}
	if by != ByTotal {
		q += ` GROUP BY k ORDER BY k`
	}
	rows, err := p.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("usage totals: %w", p.connError(err))
	}
	defer rows.Close()
	out := []UsageTotal{}
	for rows.Next() {
		var t UsageTotal
		var calls, unpriced int64
		if err := rows.Scan(&t.Key, &calls, &t.InputTokens, &t.OutputTokens, &t.CachedInputTokens, &t.Cost, &unpriced); err != nil {
			return nil, fmt.Errorf("usage totals: %w", err)
		}
		t.Calls, t.Unpriced = int(calls), int(unpriced)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage totals: %w", p.connError(err))
	}
	return out, nil
}

// pgTouch is the statement that records a use of a workspace ($1)
// between $2 and $3: it makes it (untrusted, its trust not chosen) when
// it is new, else moves its first use back to $2 and its last use on to
// $3, if they are earlier or later (its trust untouched). One statement:
// processes that run it at once for a new path make one row (INSERT …
// ON CONFLICT waits for the other's, then updates it).
const pgTouch = `INSERT INTO workspaces AS w (path, created_at, last_used) VALUES ($1, $2, $3)
	ON CONFLICT (path) DO UPDATE SET created_at = LEAST(w.created_at, EXCLUDED.created_at), last_used = GREATEST(w.last_used, EXCLUDED.last_used)`

// queueTouch queues pgTouch.
func queueTouch(b *pgx.Batch, path string, created, used time.Time) {
	b.Queue(pgTouch, pgText(path), pgTime(created), pgTime(used))
}

// pgWorkspaceColumns are what a Workspace is read from (the table as w).
const pgWorkspaceColumns = `w.path, w.name, w.trust, w.trust_chosen, w.config_hash, w.created_at, w.last_used,
	(SELECT count(*) FROM sessions s WHERE s.workspace = w.path AND s.parent_id IS NULL)`

func scanPgWorkspace(sc interface{ Scan(...any) error }) (Workspace, error) {
	var w Workspace
	var trust string
	var n int64
	err := sc.Scan(&w.Path, &w.Name, &trust, &w.TrustChosen, &w.ConfigHash, &w.CreatedAt, &w.LastUsed, &n)
	w.Trust, w.Sessions = Trust(trust), int(n)
	w.CreatedAt, w.LastUsed = w.CreatedAt.UTC(), w.LastUsed.UTC()
	named(&w)
	return w, err
}

// Workspace returns the workspace of path.
func (p *Postgres) Workspace(ctx context.Context, path string) (*Workspace, error) {
	w, err := scanPgWorkspace(p.pool.QueryRow(ctx, "SELECT "+pgWorkspaceColumns+" FROM workspaces w WHERE w.path = $1", pgText(path)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNoWorkspace(path)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", path, p.connError(err))
	}
	return &w, nil
}

// Workspaces lists the workspaces, most recently used first.
func (p *Postgres) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := p.pool.Query(ctx, "SELECT "+pgWorkspaceColumns+` FROM workspaces w ORDER BY w.last_used DESC, w.path COLLATE "C"`)
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", p.connError(err))
	}
	defer rows.Close()
	out := []Workspace{}
	for rows.Next() {
		w, err := scanPgWorkspace(rows)
		if err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", p.connError(err))
	}
	return out, nil
}

// AddWorkspace makes a workspace known, or renames it or changes its
// trust (then chosen, with its config hash), in one statement.
func (p *Postgres) AddWorkspace(ctx context.Context, w Workspace) (Workspace, error) {
	trust, err := addTrust(w.Trust)
	if err != nil {
		return Workspace{}, fmt.Errorf("add workspace %s: %w", w.Path, err)
	}
	var name, level, hash *string
	if w.Name != "" {
		n := pgText(w.Name)
		name = &n
	}
	if trust != "" {
		l, h := string(trust), pgText(w.ConfigHash)
		level, hash = &l, &h
	}
	got, err := scanPgWorkspace(p.pool.QueryRow(ctx, `INSERT INTO workspaces AS w (path, name, trust, trust_chosen, config_hash, created_at, last_used)
		VALUES ($1, COALESCE($2::text, ''), COALESCE($3::text, 'untrusted'), $3::text IS NOT NULL, COALESCE($5::text, ''), $4, $4)
		ON CONFLICT (path) DO UPDATE SET name = COALESCE($2::text, w.name), trust = COALESCE($3::text, w.trust),
			trust_chosen = w.trust_chosen OR $3::text IS NOT NULL, config_hash = COALESCE($5::text, w.config_hash)
		RETURNING `+pgWorkspaceColumns, pgText(w.Path), name, level, pgNow(), hash))
	if err != nil {
		return Workspace{}, fmt.Errorf("add workspace %s: %w", w.Path, p.connError(err))
	}
	return got, nil
}

// UpdateWorkspace renames a known workspace or changes its trust (then
// chosen, with its config hash), in one statement; it creates none.
func (p *Postgres) UpdateWorkspace(ctx context.Context, w Workspace) (Workspace, error) {
	name, level, hash, err := updateFields(w)
	if err != nil {
		return Workspace{}, err
	}
	var pgName, pgHash any
	if name != nil {
		pgName = pgText(*name)
	}
	if hash != nil {
		pgHash = pgText(*hash)
	}
	got, err := scanPgWorkspace(p.pool.QueryRow(ctx, `UPDATE workspaces AS w SET name = COALESCE($2::text, w.name), trust = COALESCE($3::text, w.trust),
			trust_chosen = w.trust_chosen OR $3::text IS NOT NULL, config_hash = COALESCE($4::text, w.config_hash)
		WHERE w.path = $1 RETURNING `+pgWorkspaceColumns, pgText(w.Path), pgName, level, pgHash))
	if errors.Is(err, pgx.ErrNoRows) {
		return Workspace{}, errNoWorkspace(w.Path)
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("update workspace %s: %w", w.Path, p.connError(err))
	}
	return got, nil
}

// TouchWorkspace records a use of a workspace now, in one statement; a
// new one is untrusted, its trust not chosen, without a config hash.
func (p *Postgres) TouchWorkspace(ctx context.Context, path string) (Workspace, error) {
	t := pgNow()
	got, err := scanPgWorkspace(p.pool.QueryRow(ctx, pgTouch+" RETURNING "+pgWorkspaceColumns, pgText(path), t, t))
	if err != nil {
		return Workspace{}, fmt.Errorf("touch workspace %s: %w", path, p.connError(err))
	}
	return got, nil
}

// RemoveWorkspace forgets a workspace; its sessions stay.
func (p *Postgres) RemoveWorkspace(ctx context.Context, path string) error {
	tag, err := p.pool.Exec(ctx, "DELETE FROM workspaces WHERE path = $1", pgText(path))
	if err != nil {
		return fmt.Errorf("remove workspace %s: %w", path, p.connError(err))
	}
	if tag.RowsAffected() == 0 {
		return errNoWorkspace(path)
	}
	return nil
}

// Lock takes the session for this process: a row in session_locks naming
// this process's presence connection, with a token of this lock. A row
// whose holder is dead (see pgAlive) is taken over, and so is one of this
// very process whose token it no longer holds (an unlock that has not
// reached the database yet); a live holder's makes Lock wait up to
// LockTimeout and then fail with ErrBusy naming the holder.
//
// The unlock it returns deletes the row; when that fails (the database is
// unreachable, say) it is retried in the background until it succeeds or
// the store is closed. Until then the row shows this process as the
// holder, which this process's own Lock takes over.
func (p *Postgres) Lock(ctx context.Context, id string) (func(), error) {
	p.readLog()
	token := NewID()
	sid := pgText(id)
	deadline := time.Now().Add(p.LockTimeout)
	for {
		got, err := p.tryLock(ctx, sid, token)
		if err != nil {
			return nil, fmt.Errorf("lock session %s: %w", id, p.connError(err))
		}
		if got {
			return p.unlocker(sid, token), nil
		}
		if time.Now().After(deadline) {
			var holder string
			p.pool.QueryRow(ctx, "SELECT holder FROM session_locks WHERE session_id = $1", sid).Scan(&holder)
			if holder == "" {
				holder = "another hearth process"
			}
			return nil, fmt.Errorf("%w: session %s is being used by %s; wait for it to finish, or continue in another session", ErrBusy, id, holder)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// tryLock tries once to take session sid with token. While it does, and
// once it has, sid is this process's in held: so a row of this process's
// identity for sid is no lock of this process (its unlock is under way, or
// it failed), and is taken over.
func (p *Postgres) tryLock(ctx context.Context, sid, token string) (bool, error) {
	p.mu.Lock()
	if _, busy := p.held[sid]; busy {
		p.mu.Unlock()
		return false, nil
	}
	p.held[sid] = heldLock{token: token}
	p.mu.Unlock()
	// (Bounded: the keeper waits for it to move the rows to a new
	// identity.)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	p.idRW.RLock()
	defer p.idRW.RUnlock()
	var got bool
	err := p.pool.QueryRow(ctx, `INSERT INTO session_locks AS l (session_id, holder, token, pid, backend_start, at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, pid = EXCLUDED.pid,
			backend_start = EXCLUDED.backend_start, at = EXCLUDED.at
		WHERE (l.pid = EXCLUDED.pid AND l.backend_start = EXCLUDED.backend_start) OR NOT `+p.alive("l")+`
		RETURNING true`, sid, p.instance, token, p.pid, p.start).Scan(&got)
	if errors.Is(err, pgx.ErrNoRows) {
		err = nil
	}
	p.mu.Lock()
	if got && err == nil {
		p.held[sid] = heldLock{token: token, acquired: true}
	} else if p.held[sid].token == token {
		delete(p.held, sid)
	}
	p.mu.Unlock()
	return got && err == nil, err
}

// unlocker returns the unlock of the lock of session sid with token.
func (p *Postgres) unlocker(sid, token string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			if p.held[sid].token == token {
				delete(p.held, sid)
			}
			closing := p.closing
			p.mu.Unlock()
			err := p.unlock(context.Background(), sid, token)
			if err == nil || closing {
				return
			}
			p.mu.Lock()
			if p.closing {
				p.mu.Unlock()
				return
			}
			p.bg.Add(1)
			p.mu.Unlock()
			p.logger().Warn("session store: releasing the lock of a session failed; trying again", "session", sid, "error", err)
			go p.retryUnlock(sid, token)
		})
	}
}

// unlock deletes the lock row of session sid with token, if it is there.
func (p *Postgres) unlock(ctx context.Context, sid, token string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := p.pool.Exec(ctx, "DELETE FROM session_locks WHERE session_id = $1 AND token = $2", sid, token)
	return err
}

// retryUnlock tries unlock again (after 100 ms, doubling up to 5 s) until
// it succeeds or the store is closed.
func (p *Postgres) retryUnlock(sid, token string) {
	defer p.bg.Done()
	delay := 100 * time.Millisecond
	for {
		select {
		case <-time.After(delay):
		case <-p.bgCtx.Done():
			return
		}
		err := p.unlock(p.bgCtx, sid, token)
		if err == nil {
			p.logger().Info("session store: released the lock of a session", "session", sid)
			return
		}
		if p.bgCtx.Err() != nil {
			p.logger().Warn("session store: the lock of a session was not released before the store closed", "session", sid, "error", err)
			return
		}
		delay = min(2*delay, 5*time.Second)
	}
}

// Holder names the process that holds a session's lock ("" if none does,
// or its holder is dead).
func (p *Postgres) Holder(ctx context.Context, id string) (string, error) {
	var holder string
	err := p.pool.QueryRow(ctx, `SELECT l.holder FROM session_locks l WHERE l.session_id = $1 AND `+p.alive("l"), pgText(id)).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("who holds session %s: %w", id, p.connError(err))
	}
	return holder, nil
}
