package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fastjson"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/hearth-agent/hearth/llm"
)

// migrations bring a database from version i to i+1. They only ever grow:
// a released migration is never edited.
var migrations = []string{
	// 1: the first schema.
	`CREATE TABLE sessions (
		id          TEXT PRIMARY KEY,
		title       TEXT NOT NULL DEFAULT '',
		provider    TEXT NOT NULL DEFAULT '',
		model       TEXT NOT NULL DEFAULT '',
		workspace   TEXT NOT NULL DEFAULT '',
		parent_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL,
		parent_call TEXT NOT NULL DEFAULT '',
		created_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL
	);
	CREATE INDEX sessions_updated ON sessions(updated_at DESC);
	CREATE INDEX sessions_parent ON sessions(parent_id);
	CREATE TABLE messages (
		session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		seq          INTEGER NOT NULL,
		role         TEXT NOT NULL,
		content      TEXT NOT NULL DEFAULT '',
		thinking     TEXT NOT NULL DEFAULT '',
		tool_calls   TEXT NOT NULL DEFAULT '',
		tool_call_id TEXT NOT NULL DEFAULT '',
		tool_name    TEXT NOT NULL DEFAULT '',
		images       TEXT NOT NULL DEFAULT '',
		tokens       INTEGER NOT NULL DEFAULT 0,
		partial      INTEGER NOT NULL DEFAULT 0,
		compacted    INTEGER NOT NULL DEFAULT 0,
		summary      INTEGER NOT NULL DEFAULT 0,
		before_seq   INTEGER NOT NULL DEFAULT 0,
		created_at   INTEGER NOT NULL,
		PRIMARY KEY (session_id, seq)
	) WITHOUT ROWID;
	CREATE TABLE usage (
		id            INTEGER PRIMARY KEY,
		session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		model         TEXT NOT NULL DEFAULT '',
		input_tokens  INTEGER NOT NULL,
		output_tokens INTEGER NOT NULL,
		at            INTEGER NOT NULL
	);
	CREATE INDEX messages_live ON messages(session_id, compacted, seq);
	CREATE INDEX usage_session ON usage(session_id);
	CREATE INDEX usage_at ON usage(at);
	CREATE TABLE tool_runs (
		id          INTEGER PRIMARY KEY,
		session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		call_id     TEXT NOT NULL,
		name        TEXT NOT NULL,
		args        TEXT NOT NULL,
		ok          INTEGER NOT NULL,
		output      TEXT NOT NULL DEFAULT '',
		error       TEXT NOT NULL DEFAULT '',
		duration_ms INTEGER NOT NULL,
		at          INTEGER NOT NULL
	);
	CREATE INDEX tool_runs_session ON tool_runs(session_id);`,
	// 2: messages that record why a turn failed (Message.Failure).
	`ALTER TABLE messages ADD COLUMN failure INTEGER NOT NULL DEFAULT 0;`,
	// 3: facts about the file itself: when its structure was last checked.
	// (IF NOT EXISTS: two processes that open an old file at once both
	// migrate it.)
	`CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
	// 4: archived sessions, forks (the session forked and the seq of the
	// last message taken from it: a name, not a reference, so that a fork
	// outlives its source and is imported without it), and the
	// checkpoints of a session's workspace (AUTOINCREMENT: an id is never
	// given twice, not even the last one's after it is deleted).
	`ALTER TABLE sessions ADD COLUMN archived INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE sessions ADD COLUMN fork_of TEXT NOT NULL DEFAULT '';
	ALTER TABLE sessions ADD COLUMN fork_seq INTEGER NOT NULL DEFAULT 0;
	CREATE TABLE checkpoints (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
		kind       TEXT NOT NULL,
		turn       INTEGER NOT NULL DEFAULT 0,
		seq        INTEGER NOT NULL DEFAULT 0,
		call_id    TEXT NOT NULL DEFAULT '',
		tool       TEXT NOT NULL DEFAULT '',
		tree       TEXT NOT NULL DEFAULT '',
		workspace  TEXT NOT NULL DEFAULT '',
		detail     TEXT,
		created_at INTEGER NOT NULL
	);
	CREATE INDEX checkpoints_session ON checkpoints(session_id, id);`,
	// 5: what Hearth told the model on its own during a turn
	// (Message.Reminder).
	`ALTER TABLE messages ADD COLUMN reminder INTEGER NOT NULL DEFAULT 0;`,
	// 6: the workspaces Hearth knows (a name of '' is the default one,
	// given when read: see defaultName), made from the sessions' (the
	// sessions recorded without one are in the workspace '', "unknown"):
	// first used when its first session was created, last used when its
	// last session was updated. And usage with its cost (Usage.Cost, in
	// micro-units; NULL: no price known) and cached input tokens.
	`CREATE TABLE workspaces (
		path       TEXT PRIMARY KEY,
		name       TEXT NOT NULL DEFAULT '',
		trust      TEXT NOT NULL DEFAULT 'untrusted' CHECK (trust IN ('untrusted', 'read-only', 'trusted')),
		created_at INTEGER NOT NULL,
		last_used  INTEGER NOT NULL
	) WITHOUT ROWID;
	CREATE INDEX workspaces_last_used ON workspaces(last_used DESC);
	CREATE INDEX sessions_workspace ON sessions(workspace);
	INSERT INTO workspaces (path, created_at, last_used)
		SELECT workspace, min(created_at), max(updated_at) FROM sessions GROUP BY workspace;
	ALTER TABLE usage ADD COLUMN cached_input_tokens INTEGER NOT NULL DEFAULT 0;
	ALTER TABLE usage ADD COLUMN cost INTEGER;`,
	// 7: whether the user chose a workspace's trust (Workspace.TrustChosen):
	// those trusted or read-only were (only a user sets a trust other
	// than untrusted); the untrusted ones are untrusted by default, and
	// a UI asks.
	`ALTER TABLE workspaces ADD COLUMN trust_chosen INTEGER NOT NULL DEFAULT 0;
	UPDATE workspaces SET trust_chosen = 1 WHERE trust <> 'untrusted';`,
	// 8: the hash of a workspace's project config when the user last
	// chose its trust (Workspace.ConfigHash); none known for the rows
	// already there.
	`ALTER TABLE workspaces ADD COLUMN config_hash TEXT NOT NULL DEFAULT '';`,
}

// checkEvery is how often Open checks the file's structure (PRAGMA
// quick_check): it reads the whole file, the largest part of opening a
// store that has some history, and a run that repeats it each time repeats
// what the run before it did.
const checkEvery = 24 * time.Hour

// appID marks a SQLite file as Hearth's (PRAGMA application_id), so that a
// foreign database is recognised instead of being written into.
const appID = 0x48727468 // "Hrth"

// SQLite is the embedded Store.
type SQLite struct {
	db   *sql.DB
	path string
	// LockTimeout is how long Lock waits for another process (default 2 s).
	LockTimeout time.Duration
	// checked says Open checked the file's structure (tests).
	checked bool
	// Used only by lock_other.go (systems without Unix file locks), which
	// staticcheck, checking this system's build, does not see.
	//lint:ignore U1000 used in lock_other.go
	locks sync.Map // held sessions, where file locks are not used
}

var _ Store = (*SQLite)(nil)

// Open opens (creating if needed) the database at path and brings its
// schema up to date. A file that is damaged, not SQLite, another program's
// database, or from a newer Hearth gets an error naming the file.
func Open(ctx context.Context, path string) (*SQLite, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session store: creating %s: %w", filepath.Dir(path), err)
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "foreign_keys(1)", "journal_mode(WAL)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("session store %s: %w", path, err)
	}
	s := &SQLite{db: db, path: path, LockTimeout: 2 * time.Second}
	// Processes that open a file at once may find it locked in ways the
	// busy timeout does not wait for (one switching the file to WAL holds
	// it exclusively): try again for a while.
	for wait, deadline := 10*time.Millisecond, time.Now().Add(10*time.Second); ; wait = min(2*wait, 200*time.Millisecond) {
		err = s.migrate(ctx)
		if err == nil {
			return s, nil
		}
		if !isBusy(err) || time.Now().After(deadline) {
			db.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			db.Close()
			return nil, err
		case <-time.After(wait):
		}
	}
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// Path returns the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// fileError explains a database that cannot be used.
func (s *SQLite) fileError(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_NOTADB:
			return fmt.Errorf("session store %s is not a SQLite database (damaged, or another kind of file): move it aside and Hearth will start a new one", s.path)
		case sqlite3.SQLITE_CORRUPT:
			return fmt.Errorf("session store %s is damaged (%v): move it aside and Hearth will start a new one; `sqlite3 %s .recover` may save its content", s.path, err, s.path)
		case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_READONLY:
			return fmt.Errorf("session store %s cannot be opened for writing (%v): check its permissions", s.path, err)
		}
	}
	return fmt.Errorf("session store %s: %w", s.path, err)
}

func (s *SQLite) migrate(ctx context.Context) error {
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.fileError(err)
	}
	defer conn.Close()
	var app, version int
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&app); err != nil {
		return s.fileError(err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return s.fileError(err)
	}
	if app != appID {
		var tables int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
			return s.fileError(err)
		}
		if tables > 0 || app != 0 {
			return fmt.Errorf("session store %s is another program's SQLite database, not Hearth's: set HEARTH_HOME to another directory, or move the file aside", s.path)
		}
	}
	// A damaged file can answer queries wrongly (a session "not found")
	// rather than fail: its structure is checked on open, once a day (the
	// file records when), so that a run does not repeat what the one
	// before it did.
	checkedAt := time.Time{}
	if version >= 3 {
		var at string
		if conn.QueryRowContext(ctx, "SELECT value FROM meta WHERE key = 'checked_at'").Scan(&at) == nil {
			checkedAt, _ = time.Parse(time.RFC3339, at)
		}
	}
	if age := time.Since(checkedAt); age < 0 || age >= checkEvery {
		var check string
		if err := conn.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&check); err != nil {
			return s.fileError(err)
		}
		if check != "ok" {
			return fmt.Errorf("session store %s is damaged (%s): move it aside and Hearth will start a new one; `sqlite3 %s .recover` may save its content", s.path, check, s.path)
		}
		s.checked = true
	}
	if version > len(migrations) {
		return fmt.Errorf("session store %s was written by a newer Hearth (schema %d, this one knows %d): upgrade Hearth", s.path, version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return s.fileError(err)
		}
		// The version again, now that this transaction holds the file's
		// write lock: another process that opened the file at the same
		// time may have migrated it meanwhile (and a migration that adds
		// a column cannot run twice).
		var current int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&current); err != nil {
			tx.Rollback()
			return s.fileError(err)
		}
		if current > v {
			tx.Rollback()
			if current > len(migrations) {
				return fmt.Errorf("session store %s was written by a newer Hearth (schema %d, this one knows %d): upgrade Hearth", s.path, current, len(migrations))
			}
			v = current - 1
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("session store %s: migrating to schema %d: %w", s.path, v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", v+1, appID)); err != nil {
			tx.Rollback()
			return s.fileError(err)
		}
		if err := tx.Commit(); err != nil {
			return s.fileError(err)
		}
	}
	if s.checked {
		// Best effort, and not worth waiting for: a file another process
		// is writing, or a read-only one, is checked again next time.
		wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		_, _ = conn.ExecContext(wctx, "INSERT INTO meta (key, value) VALUES ('checked_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
			time.Now().UTC().Format(time.RFC3339))
	}
	return nil
}

func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// Create stores a new session.
func (s *SQLite) Create(ctx context.Context, se *Session) error {
	if se.ID == "" {
		se.ID = NewID()
	}
	t := now()
	se.CreatedAt, se.UpdatedAt = fromMillis(t), fromMillis(t)
	var parent any
	if se.ParentID != "" {
		parent = se.ParentID
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errSession("create", se.ID, s.fileError(err))
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, se.ID, se.Title, se.Provider, se.Model, se.Workspace, parent, se.ParentCall, se.Archived, se.ForkOf, se.ForkSeq, t, t)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("create session %s: a session with this id exists, or its parent does not", se.ID)
		}
		return errSession("create", se.ID, s.fileError(err))
	}
	if err := touchWorkspace(ctx, tx, se.Workspace, t, t); err != nil {
		return errSession("create", se.ID, s.fileError(err))
	}
	if err := tx.Commit(); err != nil {
		return errSession("create", se.ID, s.fileError(err))
	}
	return nil
}

func isConstraint(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CONSTRAINT
}

const sessionColumns = `s.id, s.title, s.provider, s.model, s.workspace, COALESCE(s.parent_id, ''), s.parent_call, s.archived, s.fork_of, s.fork_seq, s.created_at, s.updated_at,
	(SELECT count(*) FROM messages m WHERE m.session_id = s.id),
	(SELECT COALESCE(sum(input_tokens), 0) FROM usage u WHERE u.session_id = s.id),
	(SELECT COALESCE(sum(output_tokens), 0) FROM usage u WHERE u.session_id = s.id),
	(SELECT sum(cost) FROM usage u WHERE u.session_id = s.id),
	(SELECT count(*) FROM usage u WHERE u.session_id = s.id AND u.cost IS NULL)`

func scanSession(sc interface{ Scan(...any) error }) (*Session, error) {
	var se Session
	var created, updated, archived int64
	var cost sql.NullInt64
	err := sc.Scan(&se.ID, &se.Title, &se.Provider, &se.Model, &se.Workspace, &se.ParentID, &se.ParentCall, &archived, &se.ForkOf, &se.ForkSeq, &created, &updated,
		&se.MessageCount, &se.InputTokens, &se.OutputTokens, &cost, &se.Unpriced)
	se.CreatedAt, se.UpdatedAt, se.Archived = fromMillis(created), fromMillis(updated), archived != 0
	if cost.Valid {
		se.Cost = &cost.Int64
	}
	return &se, err
}

// Get returns one session.
func (s *SQLite) Get(ctx context.Context, id string) (*Session, error) {
	se, err := scanSession(s.db.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errSession("get", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("get", id, s.fileError(err))
	}
	return se, nil
}

// List returns sessions, most recently updated first: the archived ones
// only when opts.Archived, the others only when not.
func (s *SQLite) List(ctx context.Context, opts ListOptions) ([]Session, error) {
	q := "SELECT " + sessionColumns + " FROM sessions s WHERE s.archived = ? AND "
	args := []any{opts.Archived}
	if opts.ParentID == "" {
		q += "s.parent_id IS NULL"
	} else {
		q += "s.parent_id = ?"
		args = append(args, opts.ParentID)
	}
	if opts.Workspace != nil {
		q += " AND s.workspace = ?"
		args = append(args, *opts.Workspace)
	}
	if opts.Query != "" {
		like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(opts.Query) + "%"
		q += ` AND (s.title LIKE ? ESCAPE '\' OR EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.content LIKE ? ESCAPE '\'))`
		args = append(args, like, like)
	}
	q += " ORDER BY s.updated_at DESC, s.id"
	if opts.Limit > 0 {
		q += fmt.Sprintf(" LIMIT %d", opts.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", s.fileError(err))
	}
	defer rows.Close()
	var out []Session
	for rows.Next() {
		se, err := scanSession(rows)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		out = append(out, *se)
	}
	return out, rows.Err()
}

// Rename sets a session's title.
func (s *SQLite) Rename(ctx context.Context, id, title string) error {
	res, err := s.db.ExecContext(ctx, "UPDATE sessions SET title = ?, updated_at = ? WHERE id = ?", title, now(), id)
	if err != nil {
		return errSession("rename", id, s.fileError(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errSession("rename", id, ErrNotFound)
	}
	return nil
}

// Delete removes a session with its messages, usage, tool runs and
// checkpoints. Its forks stay (their ForkOf names a session that is gone).
func (s *SQLite) Delete(ctx context.Context, id string) error {
	res, err := s.db.ExecContext(ctx, "DELETE FROM sessions WHERE id = ?", id)
	if err != nil {
		return errSession("delete", id, s.fileError(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errSession("delete", id, ErrNotFound)
	}
	return nil
}

// Append adds messages in one transaction.
func (s *SQLite) Append(ctx context.Context, id string, msgs ...Message) ([]Message, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, errSession("append to", id, s.fileError(err))
	}
	defer tx.Rollback()
	var seq int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(max(seq), 0) FROM messages WHERE session_id = ?", id).Scan(&seq); err != nil {
		return nil, errSession("append to", id, err)
	}
	t := now()
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		seq++
		m.Seq = seq
		m.CreatedAt = fromMillis(t)
		if m.Tokens == 0 {
			m.Tokens = MessageTokens(m.Message)
		}
		calls, images := "", ""
		if len(m.ToolCalls) > 0 {
			calls = marshalCalls(m.ToolCalls)
		}
		if len(m.Images) > 0 {
			b, _ := json.Marshal(m.Images)
			images = string(b)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, reminder, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			id, m.Seq, string(m.Role), m.Content, m.Thinking, calls, m.ToolCallID, m.ToolName, images, m.Tokens, m.Partial, m.Compacted, m.Summary, m.Failure, m.Reminder, t)
		if err != nil {
			if isConstraint(err) {
				return nil, errSession("append to", id, ErrNotFound)
			}
			return nil, errSession("append to", id, s.fileError(err))
		}
		out[i] = m
	}
	res, err := tx.ExecContext(ctx, "UPDATE sessions SET updated_at = ? WHERE id = ?", t, id)
	if err != nil {
		return nil, errSession("append to", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, errSession("append to", id, ErrNotFound)
	}
	if err := tx.Commit(); err != nil {
		return nil, errSession("append to", id, s.fileError(err))
	}
	return out, nil
}

// Messages returns a session's messages in order.
func (s *SQLite) Messages(ctx context.Context, id string) ([]Message, error) {
	return s.messages(ctx, id, false)
}

// LiveMessages returns the messages not compacted, in order.
func (s *SQLite) LiveMessages(ctx context.Context, id string) ([]Message, error) {
	return s.messages(ctx, id, true)
}

func (s *SQLite) messages(ctx context.Context, id string, live bool) ([]Message, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	out, err := s.readMessages(ctx, s.db, id, live)
	if err != nil {
		return nil, errSession("read", id, err)
	}
	return out, nil
}

// sqlQuerier is what reads go through: the database, or a transaction
// (Export reads a whole session in one).
type sqlQuerier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readMessages reads a session's messages (live: those not compacted) in
// order.
func (s *SQLite) readMessages(ctx context.Context, q sqlQuerier, id string, live bool) ([]Message, error) {
	query := `SELECT seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images, tokens, partial, compacted, summary, failure, reminder, before_seq, created_at
		FROM messages WHERE session_id = ?`
	if live {
		query += ` AND compacted = 0`
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY seq`, id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var out []Message
	var parser fastjson.Parser
	for rows.Next() {
		var m Message
		var role, calls, images string
		var created, partial, compacted, summary, failure, reminder int64
		if err := rows.Scan(&m.Seq, &role, &m.Content, &m.Thinking, &calls, &m.ToolCallID, &m.ToolName, &images, &m.Tokens, &partial, &compacted, &summary, &failure, &reminder, &m.Before, &created); err != nil {
			return nil, err
		}
		m.Role, m.CreatedAt = llm.Role(role), fromMillis(created)
		m.Partial, m.Compacted, m.Summary, m.Failure, m.Reminder = partial != 0, compacted != 0, summary != 0, failure != 0, reminder != 0
		if err := decodeMessage(&parser, &m, calls, images); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// decodeMessage fills a read message's tool calls and images from their
// stored JSON.
func decodeMessage(parser *fastjson.Parser, m *Message, calls, images string) error {
	if calls != "" {
		tc, err := decodeCalls(parser, calls)
		if err != nil {
			return fmt.Errorf("message %d: tool calls: %w", m.Seq, err)
		}
		m.ToolCalls = tc
	}
	if images != "" {
		if err := json.Unmarshal([]byte(images), &m.Images); err != nil {
			return fmt.Errorf("message %d: images: %w", m.Seq, err)
		}
	}
	return nil
}

// decodeCalls reads stored tool calls (the JSON of []llm.ToolCall) with a
// reusable parser: a long session holds thousands.
func decodeCalls(p *fastjson.Parser, s string) ([]llm.ToolCall, error) {
	v, err := p.Parse(s)
	if err != nil {
		return nil, err
	}
	arr, err := v.Array()
	if err != nil {
		return nil, err
	}
	out := make([]llm.ToolCall, len(arr))
	for i, c := range arr {
		out[i] = llm.ToolCall{
			ID: string(c.GetStringBytes("id")), Name: string(c.GetStringBytes("name")),
			ArgsError: string(c.GetStringBytes("args_error")),
			Repaired:  c.GetBool("repaired"), FromText: c.GetBool("from_text"),
		}
		if a := c.Get("args"); a != nil {
			out[i].Args = a.MarshalTo(nil)
		}
	}
	return out, nil
}

// Compact marks the given messages compacted and adds their summary.
func (s *SQLite) Compact(ctx context.Context, id string, seqs []int, before int, summary Message) (Message, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Message{}, errSession("compact", id, s.fileError(err))
	}
	defer tx.Rollback()
	var exists int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sessions WHERE id = ?", id).Scan(&exists); err != nil {
		return Message{}, errSession("compact", id, s.fileError(err))
	}
	if exists == 0 {
		return Message{}, errSession("compact", id, ErrNotFound)
	}
	for _, q := range seqs {
		if _, err := tx.ExecContext(ctx, "UPDATE messages SET compacted = 1 WHERE session_id = ? AND seq = ?", id, q); err != nil {
			return Message{}, errSession("compact", id, err)
		}
	}
	var seq int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(max(seq), 0) FROM messages WHERE session_id = ?", id).Scan(&seq); err != nil {
		return Message{}, errSession("compact", id, err)
	}
	if summary.Tokens == 0 {
		summary.Tokens = MessageTokens(summary.Message)
	}
	t := now()
	summary.Seq, summary.Summary, summary.Before, summary.CreatedAt = seq+1, true, before, fromMillis(t)
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, tokens, summary, before_seq, created_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)`,
		id, summary.Seq, string(summary.Role), summary.Content, summary.Tokens, before, t); err != nil {
		return Message{}, errSession("compact", id, err)
	}
	if err := tx.Commit(); err != nil {
		return Message{}, errSession("compact", id, s.fileError(err))
	}
	return summary, nil
}

// RecordUsage stores one model call's token counts and cost.
func (s *SQLite) RecordUsage(ctx context.Context, u Usage) error {
	if u.At.IsZero() {
		u.At = time.Now()
	}
	_, err := s.db.ExecContext(ctx, "INSERT INTO usage (session_id, model, input_tokens, output_tokens, cached_input_tokens, cost, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
		u.SessionID, u.Model, u.InputTokens, u.OutputTokens, u.CachedInputTokens, u.Cost, u.At.UnixMilli())
	if err != nil {
		return errSession("record usage of", u.SessionID, s.fileError(err))
	}
	return nil
}

// RecordToolRun stores one tool call's outcome.
func (s *SQLite) RecordToolRun(ctx context.Context, r ToolRun) error {
	if r.At.IsZero() {
		r.At = time.Now()
	}
	args := string(r.Args)
	if args == "" {
		args = "{}"
	}
	_, err := s.db.ExecContext(ctx, "INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, error, duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		r.SessionID, r.CallID, r.Name, args, r.OK, r.Output, r.Error, r.Duration.Milliseconds(), r.At.UnixMilli())
	if err != nil {
		return errSession("record a tool run of", r.SessionID, s.fileError(err))
	}
	return nil
}

// ToolRuns returns a session's tool runs in order.
func (s *SQLite) ToolRuns(ctx context.Context, id string) ([]ToolRun, error) {
	out, err := s.readToolRuns(ctx, s.db, id)
	if err != nil {
		return nil, errSession("read tool runs of", id, err)
	}
	return out, nil
}

// readToolRuns reads a session's tool runs in order.
func (s *SQLite) readToolRuns(ctx context.Context, q sqlQuerier, id string) ([]ToolRun, error) {
	rows, err := q.QueryContext(ctx, "SELECT call_id, name, args, ok, output, error, duration_ms, at FROM tool_runs WHERE session_id = ? ORDER BY id", id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var out []ToolRun
	for rows.Next() {
		r := ToolRun{SessionID: id}
		var args string
		var ms, at int64
		if err := rows.Scan(&r.CallID, &r.Name, &args, &r.OK, &r.Output, &r.Error, &ms, &at); err != nil {
			return nil, err
		}
		r.Args, r.Duration, r.At = json.RawMessage(args), time.Duration(ms)*time.Millisecond, fromMillis(at)
		out = append(out, r)
	}
	return out, rows.Err()
}

// UsageByDay sums usage per UTC day.
func (s *SQLite) UsageByDay(ctx context.Context, since time.Time) ([]DayUsage, error) {
	return usageByDay(ctx, s, since)
}

// usageKeys are the SQL of UsageTotals' keys, by grouping.
var usageKeys = map[string]string{
	ByTotal:     "''",
	BySession:   "u.session_id",
	ByModel:     "u.model",
	ByWorkspace: "s.workspace",
	ByDay:       "strftime('%Y-%m-%d', u.at / 1000, 'unixepoch')",
}

// UsageTotals sums usage rows with SQLite's sum() of integers, which is
// exact (and fails on an overflow rather than round).
func (s *SQLite) UsageTotals(ctx context.Context, f UsageFilter, by string) ([]UsageTotal, error) {
	if err := checkGroup(by); err != nil {
		return nil, err
	}
	q := `SELECT ` + usageKeys[by] + ` AS k, count(*), COALESCE(sum(u.input_tokens), 0), COALESCE(sum(u.output_tokens), 0),
		COALESCE(sum(u.cached_input_tokens), 0), COALESCE(sum(u.cost), 0), count(*) - count(u.cost)
		FROM usage u`
	if by == ByWorkspace || f.Workspace != nil {
		q += " JOIN sessions s ON s.id = u.session_id"
	}
	q += " WHERE 1 = 1"
	var args []any
	if !f.Since.IsZero() {
		q += " AND u.at >= ?"
		args = append(args, f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		q += " AND u.at < ?"
		args = append(args, f.Until.UnixMilli())
	}
	if f.SessionID != "" {
		q += " AND u.session_id = ?"
		args = append(args, f.SessionID)
	}
	if f.Model != "" {
		q += " AND u.model = ?"
		args = append(args, f.Model)
	}
	if f.Workspace != nil {
		q += " AND s.workspace = ?"
		args = append(args, *f.Workspace)
	}
	if by != ByTotal {
		q += " GROUP BY k ORDER BY k"
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("usage totals: %w", s.fileError(err))
	}
	defer rows.Close()
	out := []UsageTotal{}
	for rows.Next() {
		var t UsageTotal
		if err := rows.Scan(&t.Key, &t.Calls, &t.InputTokens, &t.OutputTokens, &t.CachedInputTokens, &t.Cost, &t.Unpriced); err != nil {
			return nil, fmt.Errorf("usage totals: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("usage totals: %w", s.fileError(err))
	}
	return out, nil
}

// sqlExecer is what writes go through: the database, or a transaction.
type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// touchWorkspace records a use of workspace path between created and
// used (milliseconds): it makes it (untrusted, its trust not chosen)
// when it is new, else moves its first use back to created and its last
// use on to used, if they are earlier or later (its trust untouched).
func touchWorkspace(ctx context.Context, db sqlExecer, path string, created, used int64) error {
	_, err := db.ExecContext(ctx, `INSERT INTO workspaces (path, created_at, last_used) VALUES (?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET created_at = min(created_at, excluded.created_at), last_used = max(last_used, excluded.last_used)`,
		path, created, used)
	return err
}

// workspaceColumns are what a Workspace is read from (the table as w).
const workspaceColumns = `w.path, w.name, w.trust, w.trust_chosen, w.config_hash, w.created_at, w.last_used,
	(SELECT count(*) FROM sessions s WHERE s.workspace = w.path AND s.parent_id IS NULL)`

func scanWorkspace(sc interface{ Scan(...any) error }) (Workspace, error) {
	var w Workspace
	var chosen, created, used int64
	err := sc.Scan(&w.Path, &w.Name, &w.Trust, &chosen, &w.ConfigHash, &created, &used, &w.Sessions)
	w.TrustChosen = chosen != 0
	w.CreatedAt, w.LastUsed = fromMillis(created), fromMillis(used)
	named(&w)
	return w, err
}

// Workspace returns the workspace of path.
func (s *SQLite) Workspace(ctx context.Context, path string) (*Workspace, error) {
	w, err := scanWorkspace(s.db.QueryRowContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces w WHERE w.path = ?", path))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errNoWorkspace(path)
	}
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", path, s.fileError(err))
	}
	return &w, nil
}

// Workspaces lists the workspaces, most recently used first.
func (s *SQLite) Workspaces(ctx context.Context) ([]Workspace, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces w ORDER BY w.last_used DESC, w.path")
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", s.fileError(err))
	}
	defer rows.Close()
	out := []Workspace{}
	for rows.Next() {
		w, err := scanWorkspace(rows)
		if err != nil {
			return nil, fmt.Errorf("list workspaces: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list workspaces: %w", s.fileError(err))
	}
	return out, nil
}

// AddWorkspace makes a workspace known, or renames it or changes its
// trust (then chosen, with its config hash), in one transaction.
func (s *SQLite) AddWorkspace(ctx context.Context, w Workspace) (Workspace, error) {
	trust, err := addTrust(w.Trust)
	if err != nil {
		return Workspace{}, fmt.Errorf("add workspace %s: %w", w.Path, err)
	}
	var name, level, hash any
	if w.Name != "" {
		name = w.Name
	}
	if trust != "" {
		level, hash = string(trust), w.ConfigHash
	}
	got, err := s.upsertWorkspace(ctx, w.Path, `INSERT INTO workspaces AS w (path, name, trust, trust_chosen, config_hash, created_at, last_used)
		VALUES (?1, COALESCE(?2, ''), COALESCE(?3, 'untrusted'), ?3 IS NOT NULL, COALESCE(?5, ''), ?4, ?4)
		ON CONFLICT (path) DO UPDATE SET name = COALESCE(?2, w.name), trust = COALESCE(?3, w.trust),
			trust_chosen = w.trust_chosen OR ?3 IS NOT NULL, config_hash = COALESCE(?5, w.config_hash)`, w.Path, name, level, now(), hash)
	if err != nil {
		return Workspace{}, fmt.Errorf("add workspace %s: %w", w.Path, s.fileError(err))
	}
	return got, nil
}

// upsertWorkspace runs an upsert of workspace path and reads it back, in
// one transaction (which holds the file's write lock from its start:
// another process's upsert waits for it).
func (s *SQLite) upsertWorkspace(ctx context.Context, path, upsert string, args ...any) (Workspace, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Workspace{}, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, upsert, args...); err != nil {
		return Workspace{}, err
	}
	got, err := scanWorkspace(tx.QueryRowContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces w WHERE w.path = ?", path))
	if err != nil {
		return Workspace{}, err
	}
	return got, tx.Commit()
}

// UpdateWorkspace renames a known workspace or changes its trust (then
// chosen, with its config hash), in one transaction; it creates none.
func (s *SQLite) UpdateWorkspace(ctx context.Context, w Workspace) (Workspace, error) {
	name, level, hash, err := updateFields(w)
	if err != nil {
		return Workspace{}, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Workspace{}, fmt.Errorf("update workspace %s: %w", w.Path, s.fileError(err))
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `UPDATE workspaces SET name = COALESCE(?1, name), trust = COALESCE(?2, trust), trust_chosen = trust_chosen OR ?2 IS NOT NULL,
			config_hash = COALESCE(?4, config_hash)
		WHERE path = ?3`, name, level, w.Path, hash)
	if err != nil {
		return Workspace{}, fmt.Errorf("update workspace %s: %w", w.Path, s.fileError(err))
	}
	if n, err := res.RowsAffected(); err != nil {
		return Workspace{}, fmt.Errorf("update workspace %s: %w", w.Path, s.fileError(err))
	} else if n == 0 {
		return Workspace{}, errNoWorkspace(w.Path)
	}
	got, err := scanWorkspace(tx.QueryRowContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces w WHERE w.path = ?", w.Path))
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return Workspace{}, fmt.Errorf("update workspace %s: %w", w.Path, s.fileError(err))
	}
	return got, nil
}

// TouchWorkspace records a use of a workspace now, in one transaction;
// a new one is untrusted, its trust not chosen, without a config hash.
func (s *SQLite) TouchWorkspace(ctx context.Context, path string) (Workspace, error) {
	t := now()
	got, err := s.upsertWorkspace(ctx, path, `INSERT INTO workspaces (path, created_at, last_used) VALUES (?1, ?2, ?2)
		ON CONFLICT (path) DO UPDATE SET last_used = max(last_used, excluded.last_used)`, path, t)
	if err != nil {
		return Workspace{}, fmt.Errorf("touch workspace %s: %w", path, s.fileError(err))
	}
	return got, nil
}

// RemoveWorkspace forgets a workspace; its sessions stay.
func (s *SQLite) RemoveWorkspace(ctx context.Context, path string) error {
	res, err := s.db.ExecContext(ctx, "DELETE FROM workspaces WHERE path = ?", path)
	if err != nil {
		return fmt.Errorf("remove workspace %s: %w", path, s.fileError(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errNoWorkspace(path)
	}
	return nil
}

// marshalCalls encodes tool calls as stored: their arguments compact, and
// not HTML-escaped (json.Marshal would write a command's "&&" as
// "\u0026\u0026"), so that a call sent back from the store is the same
// bytes as in the turn that made it (agent.request compacts them the same
// way), and a server's prompt cache holds across the two.
func marshalCalls(calls []llm.ToolCall) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(calls)
	return strings.TrimSuffix(b.String(), "\n")
}
