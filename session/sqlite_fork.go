package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/valyala/fastjson"
)

// The SQLite store's checkpoints, archived sessions, forks and truncation.

// AddCheckpoint records a checkpoint of a stored session (ErrNotFound: no
// such session) and returns it with its ID and CreatedAt set. Its Detail
// is kept as given, and must be JSON (or empty).
func (s *SQLite) AddCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	if err := checkDetail(&c); err != nil {
		return Checkpoint{}, fmt.Errorf("add a checkpoint to session %s: %w", c.SessionID, err)
	}
	if len(c.Detail) == 0 {
		c.Detail = nil
	}
	t := now()
	err := s.db.QueryRowContext(ctx, `INSERT INTO checkpoints (session_id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at)
		SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?) RETURNING id`,
		c.SessionID, c.Kind, c.Turn, c.Seq, c.CallID, c.Tool, c.Tree, c.Workspace, sqliteDetail(c.Detail), t, c.SessionID).Scan(&c.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return Checkpoint{}, errSession("add a checkpoint to", c.SessionID, ErrNotFound)
	}
	if err != nil {
		return Checkpoint{}, errSession("add a checkpoint to", c.SessionID, s.fileError(err))
	}
	c.CreatedAt = fromMillis(t)
	return c, nil
}

// sqliteDetail is a checkpoint's Detail as stored: NULL for none.
func sqliteDetail(d json.RawMessage) any {
	if len(d) == 0 {
		return nil
	}
	return string(d)
}

// Checkpoints returns a session's checkpoints by ID (none: an empty
// slice), or ErrNotFound.
func (s *SQLite) Checkpoints(ctx context.Context, id string) ([]Checkpoint, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: it takes no write lock
	if err != nil {
		return nil, errSession("read the checkpoints of", id, s.fileError(err))
	}
	defer tx.Rollback()
	if err := sqliteExists(ctx, tx, id); errors.Is(err, ErrNotFound) {
		return nil, errSession("read the checkpoints of", id, err)
	} else if err != nil {
		return nil, errSession("read the checkpoints of", id, s.fileError(err))
	}
	out, err := s.readCheckpoints(ctx, tx, id)
	if err != nil {
		return nil, errSession("read the checkpoints of", id, err)
	}
	if out == nil {
		out = []Checkpoint{}
	}
	return out, nil
}

// sqliteExists says ErrNotFound for a session tx does not see.
func sqliteExists(ctx context.Context, tx *sql.Tx, id string) error {
	var one int
	err := tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// readCheckpoints reads a session's checkpoints by ID (none: nil).
func (s *SQLite) readCheckpoints(ctx context.Context, q sqlQuerier, id string) ([]Checkpoint, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at
		FROM checkpoints WHERE session_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		c := Checkpoint{SessionID: id}
		var detail sql.NullString
		var created int64
		if err := rows.Scan(&c.ID, &c.Kind, &c.Turn, &c.Seq, &c.CallID, &c.Tool, &c.Tree, &c.Workspace, &detail, &created); err != nil {
			return nil, err
		}
		if detail.String != "" {
			c.Detail = json.RawMessage(detail.String)
		}
		c.CreatedAt = fromMillis(created)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetArchived archives a session or brings it back (ErrNotFound: no such
// session). It leaves UpdatedAt as it is: archiving is no activity of the
// conversation, and a session brought back takes its old place in List.
func (s *SQLite) SetArchived(ctx context.Context, id string, archived bool) error {
	res, err := s.db.ExecContext(ctx, "UPDATE sessions SET archived = ? WHERE id = ?", archived, id)
	if err != nil {
		return errSession(archiveOp(archived), id, s.fileError(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errSession(archiveOp(archived), id, ErrNotFound)
	}
	return nil
}

// Fork stores into, a copy of session id up to seq through (all of it when
// through <= 0), in one transaction. The messages keep their seqs, marks,
// tokens and times; a message compacted by a summary that is not copied is
// live in the fork (as after Truncate). The tool runs of the calls the
// copied messages make or answer, and the checkpoints taken up to through,
// are copied too (the checkpoints with new IDs, in the same order). Usage
// is not: it counts model calls, which the fork did not make. into gets
// its ID (when empty), the title, provider, model and workspace of session
// id where it has none, ForkOf, ForkSeq (the last seq copied) and its
// times; it is archived when into.Archived says so. On an error into is
// left as it was.
func (s *SQLite) Fork(ctx context.Context, id string, through int, into *Session) error {
	tx, err := s.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE: the write lock, as Append takes it
	if err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	defer tx.Rollback()
	src := Session{ID: id}
	err = tx.QueryRowContext(ctx, "SELECT title, provider, model, workspace FROM sessions WHERE id = ?", id).
		Scan(&src.Title, &src.Provider, &src.Model, &src.Workspace)
	if errors.Is(err, sql.ErrNoRows) {
		return errSession("fork", id, ErrNotFound)
	}
	if err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	cut := forkCut(through)
	var last int
	if err := tx.QueryRowContext(ctx, "SELECT COALESCE(max(seq), 0) FROM messages WHERE session_id = ? AND seq <= ?", id, cut).Scan(&last); err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	f := *into
	t := now()
	forkDefaults(&f, &src, last, fromMillis(t))
	var parent any
	if f.ParentID != "" {
		parent = f.ParentID
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, f.ID, f.Title, f.Provider, f.Model, f.Workspace, parent, f.ParentCall, f.Archived, f.ForkOf, f.ForkSeq, t, t)
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("fork session %s into %s: a session with this id exists, or its parent does not", id, f.ID)
		}
		return errSession("fork", id, s.fileError(err))
	}
	if err := touchWorkspace(ctx, tx, f.Workspace, t, t); err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images,
			tokens, partial, compacted, summary, failure, reminder, before_seq, created_at)
		SELECT ?, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images,
			tokens, partial, compacted, summary, failure, reminder, before_seq, created_at
		FROM messages WHERE session_id = ? AND seq <= ?`, f.ID, id, last); err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	runs, err := s.forkRuns(ctx, tx, id, last)
	if err != nil {
		return errSession("fork", id, err)
	}
	if len(runs) > 0 {
		ids, _ := json.Marshal(runs)
		if _, err := tx.ExecContext(ctx, `INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, error, duration_ms, at)
			SELECT ?, call_id, name, args, ok, output, error, duration_ms, at
			FROM tool_runs WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id`, f.ID, string(ids)); err != nil {
			return errSession("fork", id, s.fileError(err))
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (session_id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at)
		SELECT ?, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at
		FROM checkpoints WHERE session_id = ? AND seq <= ? ORDER BY id`, f.ID, id, cut); err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	if err := s.relive(ctx, tx, f.ID); err != nil {
		return errSession("fork", id, err)
	}
	if err := tx.Commit(); err != nil {
		return errSession("fork", id, s.fileError(err))
	}
	*into = f
	return nil
}

// forkRuns returns the ids of the tool runs of session id that a fork of
// its messages up to seq last takes (see forkRuns).
func (s *SQLite) forkRuns(ctx context.Context, tx *sql.Tx, id string, last int) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, "SELECT id, call_id, at FROM tool_runs WHERE session_id = ? ORDER BY id", id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var runs []runMark
	for rows.Next() {
		var r runMark
		var at int64
		if err := rows.Scan(&r.id, &r.callID, &at); err != nil {
			return nil, err
		}
		r.at = fromMillis(at)
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	if len(runs) == 0 {
		return nil, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT seq, role, tool_calls, tool_call_id, created_at FROM messages
		WHERE session_id = ? AND (tool_calls <> '' OR tool_call_id <> '') ORDER BY seq`, id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var msgs []callMark
	var parser fastjson.Parser
	for rows.Next() {
		var m callMark
		var role, calls, answers string
		var created int64
		if err := rows.Scan(&m.seq, &role, &calls, &answers, &created); err != nil {
			return nil, err
		}
		if m.calls, err = callIDs(&parser, m.seq, calls, answers); err != nil {
			return nil, err
		}
		m.assistant, m.at = role == "assistant", fromMillis(created)
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return forkRuns(msgs, last, runs), nil
}

// callIDs returns the ids of the calls a stored message makes (calls, its
// tool calls' JSON) or answers (answers, its tool call id).
func callIDs(parser *fastjson.Parser, seq int, calls, answers string) ([]string, error) {
	var out []string
	if calls != "" {
		tc, err := decodeCalls(parser, calls)
		if err != nil {
			return nil, fmt.Errorf("message %d: tool calls: %w", seq, err)
		}
		for _, c := range tc {
			out = append(out, c.ID)
		}
	}
	if answers != "" {
		out = append(out, answers)
	}
	return out, nil
}

// relive marks live again the compacted messages of session id that no
// summary left in it stands for (see liveAgain).
func (s *SQLite) relive(ctx context.Context, tx *sql.Tx, id string) error {
	rows, err := tx.QueryContext(ctx, "SELECT seq, compacted, summary, before_seq FROM messages WHERE session_id = ? AND (compacted <> 0 OR summary <> 0)", id)
	if err != nil {
		return s.fileError(err)
	}
	defer rows.Close()
	var marks []compactMark
	for rows.Next() {
		var m compactMark
		if err := rows.Scan(&m.seq, &m.compacted, &m.summary, &m.before); err != nil {
			return err
		}
		marks = append(marks, m)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	rows.Close()
	seqs := liveAgain(marks)
	if len(seqs) == 0 {
		return nil
	}
	list, _ := json.Marshal(seqs)
	if _, err := tx.ExecContext(ctx, "UPDATE messages SET compacted = 0 WHERE session_id = ? AND seq IN (SELECT value FROM json_each(?))", id, string(list)); err != nil {
		return s.fileError(err)
	}
	return nil
}

// Truncate removes a session's messages after seq through, and its
// checkpoints taken after it, in one transaction that holds the write lock
// (as Append does): the next message appended gets seq through+1 (when
// the session had one at through). A compacted message whose summary is
// removed is live again (see liveAgain). It sets the session's UpdatedAt;
// the records of tool runs and usage stay.
func (s *SQLite) Truncate(ctx context.Context, id string, through int) error {
	if through < 0 {
		return fmt.Errorf("truncate session %s after seq %d: %w", id, through, errNegativeSeq)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errSession("truncate", id, s.fileError(err))
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "UPDATE sessions SET updated_at = ? WHERE id = ?", now(), id)
	if err != nil {
		return errSession("truncate", id, s.fileError(err))
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errSession("truncate", id, ErrNotFound)
	}
	for _, q := range []string{"DELETE FROM messages WHERE session_id = ? AND seq > ?", "DELETE FROM checkpoints WHERE session_id = ? AND seq > ?"} {
		if _, err := tx.ExecContext(ctx, q, id, through); err != nil {
			return errSession("truncate", id, s.fileError(err))
		}
	}
	if err := s.relive(ctx, tx, id); err != nil {
		return errSession("truncate", id, err)
	}
	if err := tx.Commit(); err != nil {
		return errSession("truncate", id, s.fileError(err))
	}
	return nil
}
