package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

var _ Archiver = (*SQLite)(nil)

// SessionIDs lists the top-level sessions, oldest first.
func (s *SQLite) SessionIDs(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT id FROM sessions WHERE parent_id IS NULL ORDER BY created_at, id")
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", s.fileError(err))
	}
	return collectIDs(rows)
}

// collectIDs reads rows of one text column, and closes them.
func collectIDs(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// Export reads a session and its sub-agents' sessions in one read
// transaction: a snapshot, whatever other processes write meanwhile.
func (s *SQLite) Export(ctx context.Context, id string) (*Archive, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}) // a deferred BEGIN: it takes no write lock
	if err != nil {
		return nil, errSession("export", id, s.fileError(err))
	}
	defer tx.Rollback()
	return s.export(ctx, tx, id, 0)
}

func (s *SQLite) export(ctx context.Context, tx *sql.Tx, id string, depth int) (*Archive, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("export session %s: sub-agents' sessions nest more than %d deep", id, maxDepth)
	}
	se, err := scanSession(tx.QueryRowContext(ctx, "SELECT "+sessionColumns+" FROM sessions s WHERE s.id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, errSession("export", id, ErrNotFound)
	}
	if err != nil {
		return nil, errSession("export", id, s.fileError(err))
	}
	a := &Archive{Session: *se}
	if a.Messages, err = s.readMessages(ctx, tx, id, false); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.Usage, err = s.exportUsage(ctx, tx, id); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.ToolRuns, err = s.readToolRuns(ctx, tx, id); err != nil {
		return nil, errSession("export", id, err)
	}
	if a.Checkpoints, err = s.readCheckpoints(ctx, tx, id); err != nil {
		return nil, errSession("export", id, err)
	}
	rows, err := tx.QueryContext(ctx, "SELECT id FROM sessions WHERE parent_id = ? ORDER BY created_at, id", id)
	if err != nil {
		return nil, errSession("export", id, s.fileError(err))
	}
	children, err := collectIDs(rows)
	if err != nil {
		return nil, errSession("export", id, err)
	}
	for _, c := range children {
		ca, err := s.export(ctx, tx, c, depth+1)
		if err != nil {
			return nil, err
		}
		a.Children = append(a.Children, *ca)
	}
	return a, nil
}

func (s *SQLite) exportUsage(ctx context.Context, tx *sql.Tx, id string) ([]Usage, error) {
	rows, err := tx.QueryContext(ctx, "SELECT model, input_tokens, output_tokens, cached_input_tokens, cost, at FROM usage WHERE session_id = ? ORDER BY id", id)
	if err != nil {
		return nil, s.fileError(err)
	}
	defer rows.Close()
	var out []Usage
	for rows.Next() {
		u := Usage{SessionID: id}
		var at int64
		var cost sql.NullInt64
		if err := rows.Scan(&u.Model, &u.InputTokens, &u.OutputTokens, &u.CachedInputTokens, &cost, &at); err != nil {
			return nil, err
		}
		u.At = fromMillis(at)
		if cost.Valid {
			u.Cost = &cost.Int64
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// Import writes a session, its messages, usage, tool runs and checkpoints
// (with new IDs, in order), then its children, in one transaction. The
// workspace of each is touched with the session's times (see Archiver).
func (s *SQLite) Import(ctx context.Context, a *Archive) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return errSession("import", a.Session.ID, s.fileError(err))
	}
	defer tx.Rollback()
	if err := s.importSession(ctx, tx, a, ""); err != nil {
		return err
	}
	for _, w := range archiveWorkspaces(a) {
		if err := touchWorkspace(ctx, tx, w.path, w.created.UnixMilli(), w.used.UnixMilli()); err != nil {
			return errSession("import", a.Session.ID, s.fileError(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return errSession("import", a.Session.ID, s.fileError(err))
	}
	return nil
}

func (s *SQLite) importSession(ctx context.Context, tx *sql.Tx, a *Archive, parent string) error {
	if err := checkImport(a, parent); err != nil {
		return err
	}
	se := &a.Session
	var one int
	switch err := tx.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", se.ID).Scan(&one); {
	case err == nil:
		return fmt.Errorf("import session %s: %w", se.ID, ErrExists)
	case !errors.Is(err, sql.ErrNoRows):
		return errSession("import", se.ID, s.fileError(err))
	}
	var parentID any
	if se.ParentID != "" {
		parentID = se.ParentID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, title, provider, model, workspace, parent_id, parent_call, archived, fork_of, fork_seq, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, se.ID, se.Title, se.Provider, se.Model, se.Workspace, parentID, se.ParentCall,
		se.Archived, se.ForkOf, se.ForkSeq, se.CreatedAt.UnixMilli(), se.UpdatedAt.UnixMilli())
	if err != nil {
		if isConstraint(err) {
			return fmt.Errorf("import session %s: its parent session %s is not in the store", se.ID, se.ParentID)
		}
		return errSession("import", se.ID, s.fileError(err))
	}
	if len(a.Messages) > 0 {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO messages (session_id, seq, role, content, thinking, tool_calls, tool_call_id, tool_name, images,
			tokens, partial, compacted, summary, failure, reminder, before_seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return errSession("import", se.ID, s.fileError(err))
		}
		defer stmt.Close()
		for i := range a.Messages {
			m := &a.Messages[i]
			_, err := stmt.ExecContext(ctx, se.ID, m.Seq, string(m.Role), m.Content, m.Thinking, storedCalls(m), m.ToolCallID, m.ToolName, storedImages(m),
				m.Tokens, m.Partial, m.Compacted, m.Summary, m.Failure, m.Reminder, m.Before, m.CreatedAt.UnixMilli())
			if err != nil {
				if isConstraint(err) {
					return fmt.Errorf("import session %s: message seq %d appears twice", se.ID, m.Seq)
				}
				return errSession("import", se.ID, s.fileError(err))
			}
		}
	}
	for _, u := range a.Usage {
		if _, err := tx.ExecContext(ctx, "INSERT INTO usage (session_id, model, input_tokens, output_tokens, cached_input_tokens, cost, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
			se.ID, u.Model, u.InputTokens, u.OutputTokens, u.CachedInputTokens, u.Cost, u.At.UnixMilli()); err != nil {
			return errSession("import", se.ID, s.fileError(err))
		}
	}
	for _, r := range a.ToolRuns {
		if _, err := tx.ExecContext(ctx, "INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, error, duration_ms, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			se.ID, r.CallID, r.Name, string(r.Args), r.OK, r.Output, r.Error, r.Duration.Milliseconds(), r.At.UnixMilli()); err != nil {
			return errSession("import", se.ID, s.fileError(err))
		}
	}
	for _, c := range a.Checkpoints {
		if _, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (session_id, kind, turn, seq, call_id, tool, tree, workspace, detail, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, se.ID, c.Kind, c.Turn, c.Seq, c.CallID, c.Tool, c.Tree, c.Workspace, sqliteDetail(c.Detail),
			c.CreatedAt.UnixMilli()); err != nil {
			return errSession("import", se.ID, s.fileError(err))
		}
	}
	for i := range a.Children {
		if err := s.importSession(ctx, tx, &a.Children[i], se.ID); err != nil {
			return err
		}
	}
	return nil
}

// ImportWorkspace writes a workspace's record (see Archiver), in one
// transaction (which holds the file's write lock from its start).
func (s *SQLite) ImportWorkspace(ctx context.Context, w Workspace) (Workspace, bool, error) {
	name, trust, created, used, err := importFields(w)
	if err != nil {
		return Workspace{}, false, err
	}
	fail := func(err error) (Workspace, bool, error) {
		return Workspace{}, false, fmt.Errorf("import workspace %s: %w", w.Path, s.fileError(err))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var one int
	added := false
	switch err := tx.QueryRowContext(ctx, "SELECT 1 FROM workspaces WHERE path = ?", w.Path).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		added = true
	case err != nil:
		return fail(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (path, name, trust, trust_chosen, config_hash, created_at, last_used) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (path) DO UPDATE SET created_at = min(created_at, excluded.created_at), last_used = max(last_used, excluded.last_used)`,
		w.Path, name, string(trust), w.TrustChosen, w.ConfigHash, created.UnixMilli(), used.UnixMilli()); err != nil {
		return fail(err)
	}
	got, err := scanWorkspace(tx.QueryRowContext(ctx, "SELECT "+workspaceColumns+" FROM workspaces w WHERE w.path = ?", w.Path))
	if err == nil {
		err = tx.Commit()
	}
	if err != nil {
		return fail(err)
	}
	return got, added, nil
}
