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
// presence): the locks it takes and the turns it runs are valid while that
// connection lives, so they die with the process, SIGKILL included. All
// processes must connect as the same database role (PostgreSQL shows a
// connection's start time only to its own role).
type Postgres struct {
	pool *pgxpool.Pool
	name string // the database, for errors
	// LockTimeout is how long Lock waits for another holder (default 2 s).
	LockTimeout time.Duration

	// Log receives the relay's warnings (nil: none).
	Log *slog.Logger

	instance string
	connCfg  *pgx.ConnConfig

	// The presence connection is this process's identity (its backend's
	// pid and start time) while it lives; the relay LISTENs on it.
	idMu     sync.Mutex
	presence *pgx.Conn
	pid      int32
	start    time.Time

	relayOnce sync.Once
	relay     *pgRelay
	once      sync.Once
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
// reached.
func OpenPostgres(ctx context.Context, dsn string) (*Postgres, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("session store: %s is not a PostgreSQL URL (postgres://USER:PASSWORD@HOST:PORT/DATABASE): %s", RedactURL(dsn), parseError(err))
	}
	host, _ := os.Hostname()
	instance := fmt.Sprintf("hearth on %s (pid %d)", host, os.Getpid())
	cfg.ConnConfig.RuntimeParams["application_name"] = instance
	if cfg.MaxConns < 8 {
		cfg.MaxConns = 8
	}
	name := cfg.ConnConfig.Database
	where := fmt.Sprintf("database %q on %s:%d", name, cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	p := &Postgres{name: where, LockTimeout: 2 * time.Second, instance: instance, connCfg: cfg.ConnConfig.Copy()}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := p.connectPresence(cctx); err != nil {
		return nil, err
	}
	if p.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		p.presence.Close(ctx)
		return nil, p.connError(err)
	}
	if err := p.migrate(cctx); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// connectPresence opens the presence connection. A new one (the old
// broke) takes over the locks and turns of the old identity.
func (p *Postgres) connectPresence(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, p.connCfg.Copy())
	if err != nil {
		return nil, p.connError(err)
	}
	var pid int32
	var start time.Time
	if err := conn.QueryRow(ctx, "SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&pid, &start); err != nil {
		conn.Close(ctx)
		return nil, p.connError(err)
	}
	p.idMu.Lock()
	oldPid, oldStart, old := p.pid, p.start, p.presence
	p.presence, p.pid, p.start = conn, pid, start
	p.idMu.Unlock()
	if old != nil {
		old.Close(ctx)
		for _, table := range []string{"session_locks", "turns"} {
			if _, err := conn.Exec(ctx, "UPDATE "+table+" SET pid = $1, backend_start = $2 WHERE pid = $3 AND backend_start = $4", pid, start, oldPid, oldStart); err != nil {
				return conn, nil // the old rows look abandoned; the next lock or turn is recorded anew
			}
		}
	}
	return conn, nil
}

// identity returns the presence connection's backend pid and start.
func (p *Postgres) identity() (int32, time.Time) {
	p.idMu.Lock()
	defer p.idMu.Unlock()
	return p.pid, p.start
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

// Close closes the connections.
func (p *Postgres) Close() error {
	p.once.Do(func() {
		if p.relay != nil {
			p.relay.close()
		}
		if p.pool != nil {
			p.pool.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.idMu.Lock()
		conn := p.presence
		p.idMu.Unlock()
		if conn != nil && !conn.IsClosed() {
			conn.Close(ctx)
		}
	})
	return nil
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
	_, err := p.pool.Exec(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`, pgText(se.ID), pgText(se.Title), pgText(se.Provider), pgText(se.Model), pgText(se.Workspace), parent, pgText(se.ParentCall), t)
	if err != nil {
		if isPgCode(err, "23505", "23503") {
			return fmt.Errorf("create session %s: a session with this id exists, or its parent does not", se.ID)
		}
		return errSession("create", se.ID, p.connError(err))
	}
	return nil
}

const pgSessionColumns = `s.id, s.title, s.provider, s.model, s.workspace, COALESCE(s.parent_id, ''), s.parent_call, s.created_at, s.updated_at,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	(SELECT COALESCE(sum(input_tokens), 0) FROM usage u WHERE u.session_id = s.id),
	(SELECT COALESCE(sum(output_tokens), 0) FROM usage u WHERE u.session_id = s.id)`

func scanPgSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var se Session
	var count, in, out int64
	err := sc.Scan(&se.ID, &se.Title, &se.Provider, &se.Model, &se.Workspace, &se.ParentID, &se.ParentCall, &se.CreatedAt, &se.UpdatedAt,
		&count, &in, &out)
	se.CreatedAt, se.UpdatedAt = se.CreatedAt.UTC(), se.UpdatedAt.UTC()
	se.MessageCount, se.InputTokens, se.OutputTokens = int(count), int(in), int(out)
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

// List returns sessions, most recently updated first.
func (p *Postgres) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	q := "SELECT " + pgSessionColumns + " FROM sessions s WHERE "
	var args []any
	if opts.ParentID == "" {
		q += "s.parent_id IS NULL"
	} else {
		args = append(args, pgText(opts.ParentID))
		q += fmt.Sprintf("s.parent_id = $%d", len(args))
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

// Delete removes a session with its messages, usage, tool runs and turns.
func (p *Postgres) Delete(ctx context.Context, id string) error {
	tag, err := p.pool.Exec(ctx, "DELETE FROM sessions WHERE id = $1", pgText(id))
	if err != nil {
		return errSession("delete", id, p.connError(err))
	}
	if tag.RowsAffected() == 0 {
		return errSession("delete", id, ErrNotFound)
	}
	p.pool.Exec(ctx, "DELETE FROM session_locks WHERE session_id = $1", pgText(id))
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
		b.Queue(`INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			pgText(id), m.Seq, pgText(string(m.Role)), pgText(m.Content), pgText(m.Thinking), pgText(calls), pgText(m.ToolCallID), pgText(m.ToolName), images,
			m.Tokens, m.Partial, m.Compacted, m.Summary, m.Failure, t)
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
	q := `SELECT seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, before_seq, created_at
		FROM messages WHERE session_id = $1`
	if live {
		q += ` AND NOT compacted`
	}
	rows, err := p.pool.Query(ctx, q+` ORDER BY seq`, pgText(id))
	if err != nil {
		return nil, errSession("read", id, p.connError(err))
	}
	defer rows.Close()
	var out []Message
	var parser fastjson.Parser
	for rows.Next() {
		var m Message
		var role, calls, images string
		if err := rows.Scan(&m.Seq, &role, &m.Content, &m.Thinking, &calls, &m.ToolCallID, &m.ToolName, &images, &m.Tokens,
			&m.Partial, &m.Compacted, &m.Summary, &m.Failure, &m.Before, &m.CreatedAt); err != nil {
			return nil, errSession("read", id, err)
		}
		m.Role, m.CreatedAt = llm.Role(role), m.CreatedAt.UTC()
		if calls != "" {
			tc, err := decodeCalls(&parser, calls)
			if err != nil {
				return nil, errSession("read", id, fmt.Errorf("message %d: tool calls: %w", m.Seq, err))
			}
			m.ToolCalls = tc
		}
		if images != "" {
			if err := json.Unmarshal([]byte(images), &m.Images); err != nil {
				return nil, errSession("read", id, fmt.Errorf("message %d: images: %w", m.Seq, err))
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, errSession("read", id, p.connError(err))
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

// RecordUsage stores one model call's token counts.
func (p *Postgres) RecordUsage(ctx context.Context, u Usage) error {
	if u.At.IsZero() {
		u.At = time.Now()
	}
	_, err := p.pool.Exec(ctx, "INSERT INTO usage (session_id, model, input_tokens, output_tokens, at) VALUES ($1, $2, $3, $4, $5)",
		pgText(u.SessionID), pgText(u.Model), u.InputTokens, u.OutputTokens, pgTime(u.At))
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
	rows, err := p.pool.Query(ctx, "SELECT call_id, name, args, ok, output, error, duration_ms, at FROM tool_runs WHERE session_id = $1 ORDER BY id", pgText(id))
	if err != nil {
		return nil, errSession("read tool runs of", id, p.connError(err))
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
	return out, rows.Err()
}

// UsageByDay sums usage per UTC day.
func (p *Postgres) UsageByDay(ctx context.Context, since time.Time) ([]DayUsage, error) {
	rows, err := p.pool.Query(ctx, `SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(input_tokens), sum(output_tokens)
		FROM usage WHERE at >= $1 GROUP BY day ORDER BY day`, pgTime(since))
	if err != nil {
		return nil, fmt.Errorf("usage by day: %w", p.connError(err))
	}
	defer rows.Close()
	var out []DayUsage
	for rows.Next() {
		var d DayUsage
		var in, outTok int64
		if err := rows.Scan(&d.Day, &in, &outTok); err != nil {
			return nil, err
		}
		d.InputTokens, d.OutputTokens = int(in), int(outTok)
		out = append(out, d)
	}
	return out, rows.Err()
}

// Lock takes the session for this process: a row in session_locks naming
// this process's presence connection. A row whose connection is gone (its
// process died, even by SIGKILL) is taken over; a live one makes Lock wait
// up to LockTimeout and then fail with ErrBusy naming the holder.
func (p *Postgres) Lock(ctx context.Context, id string) (func(), error) {
	token := NewID()
	pid, start := p.identity()
	deadline := time.Now().Add(p.LockTimeout)
	for {
		var got bool
		err := p.pool.QueryRow(ctx, `INSERT INTO session_locks AS l (session_id, holder, token, pid, backend_start, at)
			VALUES ($1, $2, $3, $4, $5, now())
			ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, pid = EXCLUDED.pid,
				backend_start = EXCLUDED.backend_start, at = EXCLUDED.at
			WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid AND a.backend_start = l.backend_start)
			RETURNING true`, pgText(id), p.instance, token, pid, start).Scan(&got)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("lock session %s: %w", id, p.connError(err))
		}
		if got {
			return func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				p.pool.Exec(ctx, "DELETE FROM session_locks WHERE session_id = $1 AND token = $2", pgText(id), token)
			}, nil
		}
		if time.Now().After(deadline) {
			var holder string
			p.pool.QueryRow(ctx, "SELECT holder FROM session_locks WHERE session_id = $1", pgText(id)).Scan(&holder)
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

// Holder names the process that holds a session's lock ("" if none does).
func (p *Postgres) Holder(ctx context.Context, id string) (string, error) {
	var holder string
	err := p.pool.QueryRow(ctx, `SELECT l.holder FROM session_locks l JOIN pg_stat_activity a ON a.pid = l.pid AND a.backend_start = l.backend_start
		WHERE l.session_id = $1`, pgText(id)).Scan(&holder)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("who holds session %s: %w", id, p.connError(err))
	}
	return holder, nil
}
