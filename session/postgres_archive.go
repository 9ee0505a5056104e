package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

var _ Archiver = (*Postgres)(nil)

// SessionIDs lists the top-level sessions, oldest first.
func (p *Postgres) SessionIDs(ctx context.Context) ([]string, error) {
	rows, err := p.pool.Query(ctx, "SELECT id FROM sessions WHERE parent_id IS NULL ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", p.connError(err))
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", p.connError(err))
	}
	return ids, nil
}

// Export reads a session and its sub-agents' sessions in one read-only,
// repeatable-read transaction: a snapshot, whatever other processes write
// meanwhile.
func (p *Postgres) Export(ctx context.Context, id string) (*Archive, error) {
	tx, err := p.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, errSession("export", id, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	return p.export(ctx, tx, id, 0)
}

func (p *Postgres) export(ctx context.Context, tx pgx.Tx, id string, depth int) (*Archive, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("export session %s: sub-agents' sessions nest more than %d deep", id, maxDepth)
	}
	se, err := scanPgSession(tx.QueryRow(ctx, "SELECT "+pgSessionColumns+" FROM sessions s WHERE s.id = $1", pgText(id)))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errSession("export", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("export", id, p.connError(err))
	}
	a := &Archive{Session: *se}
	if a.Messages, err = p.readMessages(ctx, tx, se.ID, false); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.Usage, err = p.exportUsage(ctx, tx, se.ID); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.ToolRuns, err = p.readToolRuns(ctx, tx, se.ID); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.Checkpoints, err = p.readCheckpoints(ctx, tx, se.ID); err != nil {
		return nil, errSession("export", id, err)
	}
	rows, err := tx.Query(ctx, "SELECT id FROM sessions WHERE parent_id = $1 ORDER BY created_at, id", se.ID)
	if err != nil {
		return nil, errSession("export", id, p.connError(err))
	}
	children, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, errSession("export", id, p.connError(err))
	}
	for _, c := range children {
		ca, err := p.export(ctx, tx, c, depth+1)
		if err != nil {
			return nil, err
		}
		a.Children = append(a.Children, *ca)
	}
	return a, nil
}

func (p *Postgres) exportUsage(ctx context.Context, tx pgx.Tx, id string) ([]Usage, error) {
	rows, err := tx.Query(ctx, "SELECT model, input_tokens, output_tokens, cached_input_tokens, cost, at FROM usage WHERE session_id = $1 ORDER BY id", id)
	if err != nil {
		return nil, p.connError(err)
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		u := Usage{SessionID: id}
		if err := rows.Scan(&u.Model, &u.InputTokens, &u.OutputTokens, &u.CachedInputTokens, &u.Cost, &u.At); err != nil {
			return nil, err
		}
		u.At = u.At.UTC()
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, p.connError(err)
	}
	return out, nil
}

// Import writes a session, its messages, usage, tool runs and checkpoints
// (with new IDs, in order), then its children, in one transaction. Text
// goes through pgText, as every write of this store's does: a NUL or
// invalid UTF-8 (which SQLite keeps and PostgreSQL's text cannot hold)
// becomes U+FFFD. The workspaces of the sessions are touched with their
// times (see Archiver), in the order of their paths.
func (p *Postgres) Import(ctx context.Context, a *Archive) error {
	tx, err := p.pool.Begin(ctx)
	if err != nil {
		return errSession("import", a.Session.ID, p.connError(err))
	}
	defer tx.Rollback(context.Background())
	if err := p.importSession(ctx, tx, a, ""); err != nil {
		return err
	}
	var b pgx.Batch
	for _, w := range archiveWorkspaces(a) {
		queueTouch(&b, w.path, w.created, w.used)
	}
	if err := tx.SendBatch(ctx, &b).Close(); err != nil {
		return errSession("import", a.Session.ID, p.connError(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return errSession("import", a.Session.ID, p.connError(err))
	}
	return nil
}

func (p *Postgres) importSession(ctx context.Context, tx pgx.Tx, a *Archive, parent string) error {
	if err := checkImport(a, parent); err != nil {
		return err
	}
	se := &a.Session
	id := pgText(se.ID)
	var parentID any
	if se.ParentID != "" {
		parentID = pgText(se.ParentID)
	}
	tag, err := tx.Exec(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (id) DO NOTHING`,
		id, pgText(se.Title), pgText(se.Provider), pgText(se.Model), pgText(se.Workspace), parentID, pgText(se.ParentCall),
		se.Archived, pgText(se.ForkOf), se.ForkSeq, pgTime(se.CreatedAt), pgTime(se.UpdatedAt))
	switch {
	case isPgCode(err, "23503"):
		return fmt.Errorf("import session %s: its parent session %s is not in the store", se.ID, se.ParentID)
	case err != nil:
		return errSession("import", se.ID, p.connError(err))
	case tag.RowsAffected() == 0:
		return fmt.Errorf("import session %s: %w", se.ID, ErrExists)
	}
	if len(a.Messages) > 0 {
		rows := make([][]any, len(a.Messages))
		for i := range a.Messages {
			m := &a.Messages[i]
			rows[i] = []any{id, m.Seq, pgText(string(m.Role)), pgText(m.Content), pgText(m.Thinking), pgText(storedCalls(m)),
				pgText(m.ToolCallID), pgText(m.ToolName), pgText(storedImages(m)),
				m.Tokens, m.Partial, m.Compacted, m.Summary, m.Failure, m.Reminder, m.Before, pgTime(m.CreatedAt)}
		}
		_, err := tx.CopyFrom(ctx, pgx.Identifier{"messages"}, []string{"session_id", "seq", "role", "content", "thinking", "tool_calls",
			"tool_call_id", "tool_name", "images", "tokens", "partial", "compacted", "summary", "failure", "reminder", "before_seq", "created_at"},
			pgx.CopyFromRows(rows))
		if isPgCode(err, "23505") {
			return fmt.Errorf("import session %s: a message seq appears twice", se.ID)
		}
		if err != nil {
			return errSession("import", se.ID, p.connError(err))
		}
	}
	if len(a.Usage) > 0 {
		rows := make([][]any, len(a.Usage))
		for i, u := range a.Usage {
			rows[i] = []any{id, pgText(u.Model), u.InputTokens, u.OutputTokens, u.CachedInputTokens, u.Cost, pgTime(u.At)}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"usage"}, []string{"session_id", "model", "input_tokens", "output_tokens", "cached_input_tokens", "cost", "at"},
			pgx.CopyFromRows(rows)); err != nil {
			return errSession("import", se.ID, p.connError(err))
		}
	}
	if len(a.ToolRuns) > 0 {
		rows := make([][]any, len(a.ToolRuns))
		for i, r := range a.ToolRuns {
			rows[i] = []any{id, pgText(r.CallID), pgText(r.Name), pgText(string(r.Args)), r.OK, pgText(r.Output), pgText(r.Error),
				r.Duration.Milliseconds(), pgTime(r.At)}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"tool_runs"}, []string{"session_id", "call_id", "name", "args", "ok", "output", "error", "duration_ms", "at"},
			pgx.CopyFromRows(rows)); err != nil {
			return errSession("import", se.ID, p.connError(err))
		}
	}
	if len(a.Checkpoints) > 0 {
		// COPY writes the rows in order: their new ids keep it.
		rows := make([][]any, len(a.Checkpoints))
		for i, c := range a.Checkpoints {
			rows[i] = []any{id, pgText(c.Kind), c.Turn, c.Seq, pgText(c.CallID), pgText(c.Tool), pgText(c.Tree), pgText(c.Workspace),
				pgDetail(c.Detail), pgTime(c.CreatedAt)}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"checkpoints"}, []string{"session_id", "kind", "turn", "seq", "call_id", "tool", "tree", "workspace", "detail", "created_at"},
			pgx.CopyFromRows(rows)); err != nil {
			return errSession("import", se.ID, p.connError(err))
		}
	}
	for i := range a.Children {
		if err := p.importSession(ctx, tx, &a.Children[i], se.ID); err != nil {
			return err
		}
	}
	return nil
}

// ImportWorkspace writes a workspace's record (see Archiver), in one
// statement: processes that import a new path at once make one row, and
// only one of them reports it new.
func (p *Postgres) ImportWorkspace(ctx context.Context, w Workspace) (Workspace, bool, error) {
	name, trust, created, used, err := importFields(w)
	if err != nil {
		return Workspace{}, false, err
	}
	var added bool
	// xmax is 0 in the row an INSERT made, the updating transaction's id
	// in one ON CONFLICT updated.
	row := p.pool.QueryRow(ctx, `INSERT INTO workspaces AS w (path, name, trust, trust_chosen, config_hash, created_at, last_used) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (path) DO UPDATE SET created_at = LEAST(w.created_at, EXCLUDED.created_at), last_used = GREATEST(w.last_used, EXCLUDED.last_used)
		RETURNING `+pgWorkspaceColumns+`, w.xmax = 0`, pgText(w.Path), pgText(name), string(trust), w.TrustChosen, pgText(w.ConfigHash), pgTime(created), pgTime(used))
	got, err := scanPgWorkspace(scanMore{row, []any{&added}})
	if err != nil {
		return Workspace{}, false, fmt.Errorf("import workspace %s: %w", w.Path, p.connError(err))
	}
	return got, added, nil
}

// scanMore scans a row into the destinations given, then into more.
type scanMore struct {
	row  pgx.Row
	more []any
}

func (s scanMore) Scan(dest ...any) error { return s.row.Scan(append(dest, s.more...)...) }
