package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/valyala/fastjson"
)

// The PostgreSQL store's checkpoints, archived sessions, forks and
// truncation.

// AddCheckpoint records a checkpoint of a stored session (ErrNotFound: no
// such session) and returns it with its ID and CreatedAt set. Its Detail
// is kept as given, and must be JSON (or empty). Its text goes through
// pgText (a NUL or invalid UTF-8 is stored as U+FFFD); JSON has neither.
func (p *Postgres) AddCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error) {
	if err := checkDetail(&c); err != nil {
		return Checkpoint{}, fmt.Errorf("add a checkpoint to session %s: %w", c.SessionID, err)
	}
	if len(c.Detail) == 0 {
		c.Detail = nil
	}
	t := pgNow()
	err := p.pool.QueryRow(ctx, `INSERT INTO checkpoints (session_id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		pgText(c.SessionID), pgText(c.Kind), c.Turn, c.Seq, pgText(c.CallID), pgText(c.Tool), pgText(c.Tree), pgText(c.Workspace), pgDetail(c.Detail), t).Scan(&c.ID)
	if isPgCode(err, "23503") {
		return Checkpoint{}, errSession("add a checkpoint to", c.SessionID, ErrNotFound)
	}
	if err != nil {
		return Checkpoint{}, errSession("add a checkpoint to", c.SessionID, p.connError(err))
	}
	c.CreatedAt = t
	return c, nil
}

// pgDetail is a checkpoint's Detail as stored: NULL for none.
func pgDetail(d json.RawMessage) any {
	if len(d) == 0 {
		return nil
	}
	return pgText(string(d))
}

// Checkpoints returns a session's checkpoints by ID (none: an empty
// slice), or ErrNotFound.
func (p *Postgres) Checkpoints(ctx context.Context, id string) ([]Checkpoint, error) {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, errSession("read the checkpoints of", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	var one int
	err = tx.QueryRow(ctx, "SELECT 1 FROM sessions WHERE id = $1", pgText(id)).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errSession("read the checkpoints of", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("read the checkpoints of", id, p.connError(err))
	}
	out, err := p.readCheckpoints(ctx, tx, id)
	if err != nil {
		return nil, errSession("read the checkpoints of", id, err)
	}
	if out == nil {
		out = []Checkpoint{}
	}
	return out, nil
}

// readCheckpoints reads a session's checkpoints by ID (none: nil).
func (p *Postgres) readCheckpoints(ctx context.Context, q pgQuerier, id string) ([]Checkpoint, error) {
	rows, err := q.Query(ctx, `SELECT id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at
		FROM checkpoints WHERE session_id = $1 ORDER BY id`, pgText(id))
	if err != nil {
		return nil, p.connError(err)
	}
	defer rows.Close()
	var out []Checkpoint
	for rows.Next() {
		c := Checkpoint{SessionID: id}
		var detail *string
		if err := rows.Scan(&c.ID, &c.Kind, &c.Turn, &c.Seq, &c.CallID, &c.Tool, &c.Tree, &c.Workspace, &detail, &c.CreatedAt); err != nil {
			return nil, err
		}
		if detail != nil && *detail != "" {
			c.Detail = json.RawMessage(*detail)
		}
		c.CreatedAt = c.CreatedAt.UTC()
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, p.connError(err)
	}
	return out, nil
}

// SetArchived archives a session or brings it back (ErrNotFound: no such
// session). It leaves UpdatedAt as it is: archiving is no activity of the
// conversation, and a session brought back takes its old place in List.
func (p *Postgres) SetArchived(ctx context.Context, id string, archived bool) error {
	tag, err := p.pool.Exec(ctx, "UPDATE sessions SET archived = $1 WHERE id = $2", archived, pgText(id))
	if err != nil {
		return errSession(archiveOp(archived), id, p.connError(err))
	}
	if tag.RowsAffected() == 0 {
		return errSession(archiveOp(archived), id, ErrNotFound)
	}
	return nil
}

// Fork stores into, a copy of session id up to seq through (all of it when
// through <= 0), in one transaction; the row of session id is locked (FOR
// SHARE) meanwhile, so that no Append, Compact or Truncate changes it
// while it is copied. The messages keep their seqs, marks, tokens and
// times; a message compacted by a summary that is not copied is live in
// the fork (as after Truncate). The tool runs of the calls the copied
// messages make or answer, and the checkpoints taken up to through, are
// copied too (the checkpoints with new IDs, in the same order). Usage is
// not: it counts model calls, which the fork did not make. into gets its
// ID (when empty), the title, provider, model and workspace of session id
// where it has none, ForkOf, ForkSeq (the last seq copied) and its times;
// it is archived when into.Archived says so. On an error into is left as
// it was.
func (p *Postgres) Fork(ctx context.Context, id string, through int, into *Session) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return errSession("fork", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	sid := pgText(id)
	src := Session{ID: id}
	err = tx.QueryRow(ctx, "SELECT title, provider, model, workspace FROM sessions WHERE id = $1 FOR SHARE", sid).
		Scan(&src.Title, &src.Provider, &src.Model, &src.Workspace)
	if errors.Is(err, pgx.ErrNoRows) {
		return errSession("fork", id, ErrNotFound)
	}
	if err != nil {
		return errSession("fork", id, p.connError(err))
	}
	cut := forkCut(through)
	var last int
	if err := tx.QueryRow(ctx, "SELECT COALESCE(max(seq), 0) FROM messages WHERE session_id = $1 AND seq <= $2", sid, cut).Scan(&last); err != nil {
		return errSession("fork", id, p.connError(err))
	}
	f := *into
	t := pgNow()
	forkDefaults(&f, &src, last, t)
	fid := pgText(f.ID)
	var parent any
	if f.ParentID != "" {
		parent = pgText(f.ParentID)
	}
	_, err = tx.Exec(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11)`, fid, pgText(f.Title), pgText(f.Provider), pgText(f.Model), pgText(f.Workspace), parent, pgText(f.ParentCall),
		f.Archived, sid, f.ForkSeq, t)
	if isPgCode(err, "23505", "23503") {
		return fmt.Errorf("fork session %s into %s: a session with this id exists, or its parent does not", id, f.ID)
	}
	if err != nil {
		return errSession("fork", id, p.connError(err))
	}
	if _, err := tx.Exec(ctx, pgTouch, pgText(f.Workspace), t, t); err != nil {
		return errSession("fork", id, p.connError(err))
	}
	if _, err := tx.Exec(ctx, `INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images,
			tokens, partial, compacted, summary, failure, reminder, before_seq, created_at)
		SELECT $1::text, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images,
			tokens, partial, compacted, summary, failure, reminder, before_seq, created_at
		FROM messages WHERE session_id = $2 AND seq <= $3`, fid, sid, last); err != nil {
		return errSession("fork", id, p.connError(err))
	}
	runs, err := p.forkRuns(ctx, tx, sid, last)
	if err != nil {
		return errSession("fork", id, err)
	}
	// (The rows are inserted in the order of the SELECT: the new ids
	// keep the order of the old ones.)
	if len(runs) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, error, duration_ms, at)
			SELECT $1::text, call_id, name, args, ok, output, error, duration_ms, at
			FROM tool_runs WHERE id = ANY($2::bigint[]) ORDER BY id`, fid, runs); err != nil {
			return errSession("fork", id, p.connError(err))
		}
	}
	if _, err := tx.Exec(ctx, `INSERT INTO checkpoints (session_id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at)
		SELECT $1::text, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at
		FROM checkpoints WHERE session_id = $2 AND seq <= $3 ORDER BY id`, fid, sid, cut); err != nil {
		return errSession("fork", id, p.connError(err))
	}
	if err := p.relive(ctx, tx, fid); err != nil {
		return errSession("fork", id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return errSession("fork", id, p.connError(err))
	}
	*into = f
	return nil
}

// forkRuns returns the ids of the tool runs of session sid that a fork of
// its messages up to seq last takes (see forkRuns).
func (p *Postgres) forkRuns(ctx context.Context, tx pgx.Tx, sid string, last int) ([]int64, error) {
	rows, err := tx.Query(ctx, "SELECT id, call_id, at FROM tool_runs WHERE session_id = $1 ORDER BY id", sid)
	if err != nil {
		return nil, p.connError(err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (runMark, error) {
		var r runMark
		err := row.Scan(&r.id, &r.callID, &r.at)
		return r, err
	})
	if err != nil {
		return nil, p.connError(err)
	}
	if len(runs) == 0 {
		return nil, nil
	}
	rows, err = tx.Query(ctx, `SELECT seq, role, tool_calls, tool_call_id, created_at FROM messages
		WHERE session_id = $1 AND (tool_calls <> '' OR tool_call_id <> '') ORDER BY seq`, sid)
	if err != nil {
		return nil, p.connError(err)
	}
	var parser fastjson.Parser
	msgs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (callMark, error) {
		var m callMark
		var role, calls, answers string
		if err := row.Scan(&m.seq, &role, &calls, &answers, &m.at); err != nil {
			return m, err
		}
		ids, err := callIDs(&parser, m.seq, calls, answers)
		m.calls, m.assistant = ids, role == "assistant"
		return m, err
	})
	if err != nil {
		return nil, p.connError(err)
	}
	return forkRuns(msgs, last, runs), nil
}

// relive marks live again the compacted messages of session sid that no
// summary left in it stands for (see liveAgain).
func (p *Postgres) relive(ctx context.Context, tx pgx.Tx, sid string) error {
	rows, err := tx.Query(ctx, "SELECT seq, compacted, summary, before_seq FROM messages WHERE session_id = $1 AND (compacted OR summary)", sid)
	if err != nil {
		return p.connError(err)
	}
	marks, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (compactMark, error) {
		var m compactMark
		err := row.Scan(&m.seq, &m.compacted, &m.summary, &m.before)
		return m, err
	})
	if err != nil {
		return p.connError(err)
	}
	seqs := liveAgain(marks)
	if len(seqs) == 0 {
		return nil
	}
	s32 := make([]int32, len(seqs))
	for i, q := range seqs {
		s32[i] = int32(q)
	}
	if _, err := tx.Exec(ctx, "UPDATE messages SET compacted = false WHERE session_id = $1 AND seq = ANY($2)", sid, s32); err != nil {
		return p.connError(err)
	}
	return nil
}

// Truncate removes a session's messages after seq through, and its
// checkpoints taken after it, in one transaction that locks the session's
// row first (as Append does): the next message appended gets seq through+1
// (when the session had one at through). A compacted message whose
// summary is removed is live again (see liveAgain). It sets the session's
// UpdatedAt; the records of tool runs and usage stay.
func (p *Postgres) Truncate(ctx context.Context, id string, through int) error {
	if through < 0 {
		return fmt.Errorf("truncate session %s after seq %d: %w", id, through, errNegativeSeq)
	}
	through = min(through, math.MaxInt32) // seq is an integer
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return errSession("truncate", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	sid := pgText(id)
	if _, err := lockSession(ctx, tx, sid); errors.Is(err, ErrNotFound) {
		return errSession("truncate", id, ErrNotFound)
	} else if err != nil {
		return errSession("truncate", id, p.connError(err))
	}
	var b pgx.Batch
	b.Queue("UPDATE sessions SET updated_at = $2 WHERE id = $1", sid, pgNow())
	b.Queue("DELETE FROM messages WHERE session_id = $1 AND seq > $2", sid, through)
	b.Queue("DELETE FROM checkpoints WHERE session_id = $1 AND seq > $2", sid, through)
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return errSession("truncate", id, p.connError(err))
	}
	if err := p.relive(ctx, tx, sid); err != nil {
		return errSession("truncate", id, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return errSession("truncate", id, p.connError(err))
	}
	return nil
}
