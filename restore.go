package hearth

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/checkpoint"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// Taking back what the agent did: every call of a tool that may change the
// workspace is preceded by a checkpoint (a snapshot of the files, kept
// outside the workspace, recorded with the session, the turn and the
// call), and a turn that made such calls ends with one. Session.Restore
// undoes the last turn's changes, redoes them, or rewinds the files, the
// conversation or both to a message; Session.Fork starts a new session
// from any point of one.

// RestoreOp names a restore.
type RestoreOp string

// The restores.
const (
	// Undo takes back the file changes of the session's last turn that
	// changed files (and is not undone yet).
	Undo RestoreOp = "undo"
	// Redo brings back what the last undo took back.
	Redo RestoreOp = "redo"
	// Rewind brings the files, the conversation or both to their state
	// after a message (or the files to a checkpoint).
	Rewind RestoreOp = "rewind"
)

// Errors of Restore.
var (
	// ErrNoCheckpoints: the agent keeps no checkpoints (no workspace, or
	// Config.NoCheckpoints).
	ErrNoCheckpoints = errors.New("checkpoints are off: nothing the agent changed can be restored")
	// ErrNothingToUndo and ErrNothingToRedo: see their messages.
	ErrNothingToUndo = checkpoint.ErrNothingToUndo
	ErrNothingToRedo = checkpoint.ErrNothingToRedo
)

// ConflictError is the error of a restore that would overwrite changes
// made to files after the agent changed them (by the user, an editor, a
// formatter): nothing was changed. Paths lists them. Restore again with
// Overwrite (what is there is kept in the restore's own checkpoint) or
// Keep.
type ConflictError = checkpoint.ConflictError

// RestoreRequest says what to restore.
type RestoreRequest struct {
	Op RestoreOp
	// Through is, for Rewind, the seq of the message to rewind to: the
	// files as they were right after it, the conversation ending with it
	// (a message with tool calls keeps their results).
	Through int
	// Start, for Rewind instead of Through, goes back to the start of the
	// session: the files as they were before it changed any, and (unless
	// FilesOnly) no message left.
	Start bool
	// Checkpoint is, for Rewind, a checkpoint to bring the files back to
	// instead of a message (files only).
	Checkpoint int64
	// FilesOnly and ConversationOnly narrow a Rewind (neither: both).
	FilesOnly, ConversationOnly bool
	// Overwrite restores files changed after the agent changed them too.
	Overwrite bool
	// Keep lists such files to leave as they are.
	Keep []string
	// DryRun works the restore out and changes nothing: the result is
	// the preview of what would change (Conflicts included).
	DryRun bool
}

// RestoreResult is what a restore did (or, with DryRun, would do).
type RestoreResult struct {
	agent.RestoreInfo
	// Conflicts lists the files changed after the agent changed them
	// (with DryRun; a restore with unresolved ones returns a
	// *ConflictError instead).
	Conflicts []string `json:"conflicts,omitempty"`
	// DryRun marks a preview.
	DryRun bool `json:"dry_run,omitempty"`
}

// Event is the restore as an event of the stream (EventRestore).
func (r *RestoreResult) Event() Event {
	info := r.RestoreInfo
	return Event{Type: EventRestore, Restore: &info}
}

// openCheckpoints opens the workspace's checkpoint store (and finishes a
// restore a process died in).
func (a *Agent) openCheckpoints() error {
	if a.ws == nil || a.cpRoot == "" {
		return nil
	}
	dir := a.cpRoot
	ws := a.ws
	skip := func(rel string) bool {
		p := filepath.Join(ws.Root(), filepath.FromSlash(rel))
		return ws.IsProtected(p) || ws.IsSecret(p)
	}
	st, err := checkpoint.Open(checkpoint.StoreDir(dir, ws.Root()), ws.Root(), checkpoint.Options{MaxFileSize: a.c.CheckpointMaxFileSize, Skip: skip, Log: a.log})
	if err != nil {
		return fmt.Errorf("hearth: %w", err)
	}
	a.keeper = checkpoint.NewKeeper(st, a.store, a.log)
	n, err := a.keeper.Recover(context.Background())
	if err != nil {
		return fmt.Errorf("hearth: finishing an interrupted restore: %w", err)
	}
	if n > 0 {
		a.log.Warn("finished restores that were interrupted", "count", n)
	}
	return nil
}

// Checkpoints returns the session's checkpoints, in order.
func (s *Session) Checkpoints(ctx context.Context) ([]session.Checkpoint, error) {
	return s.a.store.Checkpoints(ctx, s.id)
}

// Restore undoes, redoes or rewinds, as req says. It waits for no turn: a
// session running one is busy (ErrBusy). A restore that would overwrite
// files changed after the agent changed them returns a *ConflictError
// and changes nothing, unless req says what to do with them.
func (s *Session) Restore(ctx context.Context, req RestoreRequest) (*RestoreResult, error) {
	if req.Op != Undo && req.Op != Redo && req.Op != Rewind {
		return nil, fmt.Errorf("hearth: restore: unknown op %q: undo, redo or rewind", req.Op)
	}
	if req.Op == Rewind && !req.Start && req.Through <= 0 && req.Checkpoint <= 0 {
		return nil, errors.New("hearth: rewind: say to which message (its seq) or checkpoint, or to the start")
	}
	if req.Start && (req.Through > 0 || req.Checkpoint > 0) {
		return nil, errors.New("hearth: rewind: to the start, to a message or to a checkpoint: one of them")
	}
	if req.Start {
		req.Through = 0
	}
	if req.FilesOnly && req.ConversationOnly {
		return nil, errors.New("hearth: rewind: files only or conversation only, not both")
	}
	if req.Checkpoint > 0 && req.ConversationOnly {
		return nil, errors.New("hearth: rewind: a checkpoint is a state of the files: it cannot rewind the conversation")
	}
	files := req.Op != Rewind || !req.ConversationOnly
	conv := req.Op == Rewind && !req.FilesOnly && req.Checkpoint == 0
	if files && s.a.keeper == nil {
		return nil, ErrNoCheckpoints
	}
	if !req.DryRun {
		if err := s.hold(); err != nil {
			return nil, err
		}
		defer s.release()
	}
	st := s.a.store
	if _, err := st.Get(ctx, s.id); err != nil {
		return nil, fmt.Errorf("hearth: restore: %w", err)
	}
	unlock, err := st.Lock(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("hearth: restore: %w", err)
	}
	defer unlock()
	res := &RestoreResult{RestoreInfo: agent.RestoreInfo{Op: string(req.Op), Through: req.Through, Files: []agent.FileChange{}}, DryRun: req.DryRun}
	through := req.Through
	if conv && !req.Start {
		if through, err = conversationEnd(ctx, st, s.id, req.Through); err != nil {
			return nil, err
		}
	}
	if files {
		// The files as they were once the conversation kept ended: after
		// the message's tool calls, when it made any.
		filesThrough := req.Through
		if conv || (req.Op == Rewind && req.Through > 0 && req.Checkpoint == 0) {
			if filesThrough, err = conversationEnd(ctx, st, s.id, req.Through); err != nil && !req.Start {
				return nil, err
			}
			if req.Start {
				filesThrough = 0
			}
		}
		p, err := s.a.keeper.Plan(ctx, s.id, checkpoint.Op(req.Op), filesThrough, req.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("hearth: %s: %w", req.Op, err)
		}
		res.Turn = p.Turn
		for _, c := range p.Changes {
			res.Files = append(res.Files, agent.FileChange{Path: c.Path, Action: c.Action()})
		}
		res.Conflicts = p.Conflicts
		for _, u := range p.Unrestorable {
			res.Failed = append(res.Failed, agent.FileProblem{Path: u.Path, Reason: u.Reason})
		}
		if conv {
			// Recorded at the message the conversation now ends with, so
			// that the record stays with it.
			p.Seq = through
		}
		// An undo or redo whose files are already as it would make them
		// (the user took the changes back by hand) is recorded all the
		// same: the next undo goes to the turn before.
		if !req.DryRun && (len(p.Changes) > 0 || req.Op != Rewind) {
			out, err := s.a.keeper.Apply(ctx, p, checkpoint.Resolve{Overwrite: req.Overwrite, Keep: req.Keep})
			if err != nil {
				return nil, fmt.Errorf("hearth: %s: %w", req.Op, err)
			}
			res.Checkpoint, res.Kept, res.Conflicts = out.Checkpoint.ID, out.Kept, nil
			res.Failed = nil
			for _, f := range out.Restored.Failed {
				res.Failed = append(res.Failed, agent.FileProblem{Path: f.Path, Reason: f.Reason})
			}
			done := map[string]bool{}
			for _, d := range out.Restored.Done {
				done[d] = true
			}
			kept := res.Files[:0]
			for _, f := range res.Files {
				if done[f.Path] {
					kept = append(kept, f)
				}
			}
			res.Files = kept
		}
	}
	if conv {
		cr, err := s.rewindConversation(ctx, through, req.DryRun)
		if err != nil {
			return res, err
		}
		res.Conversation = cr
	}
	// The session's record of what the model read stays: a file restored
	// since differs from it, so an edit asks the model to read it again.
	return res, nil
}

// conversationEnd is where a rewind to message through cuts the
// conversation: after it, and after the results of its tool calls.
func conversationEnd(ctx context.Context, st session.Store, id string, through int) (int, error) {
	msgs, err := st.Messages(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("hearth: rewind: %w", err)
	}
	found := false
	end := through
	for i, m := range msgs {
		if m.Seq != through {
			continue
		}
		found = true
		if m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0 {
			for _, r := range msgs[i+1:] {
				if r.Role != llm.RoleTool {
					break
				}
				end = r.Seq
			}
		}
	}
	if !found {
		return 0, fmt.Errorf("hearth: rewind: session %s has no message %d", id, through)
	}
	return end, nil
}

// rewindConversation cuts the conversation after message through. What is
// cut is not lost: the whole conversation is first copied into an
// archived session.
func (s *Session) rewindConversation(ctx context.Context, through int, dry bool) (*agent.ConversationRewind, error) {
	st := s.a.store
	msgs, err := st.Messages(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("hearth: rewind: %w", err)
	}
	removed := 0
	for _, m := range msgs {
		if m.Seq > through {
			removed++
		}
	}
	cr := &agent.ConversationRewind{Through: through, Removed: removed}
	if dry || removed == 0 {
		return cr, nil
	}
	src, err := st.Get(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("hearth: rewind: %w", err)
	}
	archive := &session.Session{Title: src.Title + " (before rewind)", Archived: true}
	if err := st.Fork(context.WithoutCancel(ctx), s.id, 0, archive); err != nil {
		return nil, fmt.Errorf("hearth: rewind: keeping the conversation before it: %w", err)
	}
	if err := st.Truncate(context.WithoutCancel(ctx), s.id, through); err != nil {
		return nil, fmt.Errorf("hearth: rewind: %w", err)
	}
	cr.Archived = archive.ID
	return cr, nil
}

// hold marks the session busy for a restore (no turn may start).
func (s *Session) hold() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy {
		return fmt.Errorf("hearth: session %s is running a turn: wait for it to end: %w", s.id, ErrBusy)
	}
	s.busy = true
	return nil
}

func (s *Session) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.busy = false
}

// ForkRequest says where to fork a session.
type ForkRequest struct {
	// Through is the seq of the last message the fork takes (0: all).
	Through int
	// Files also brings the workspace's files back to their state after
	// that message (as a rewind of the files would, recorded in the
	// fork).
	Files bool
	// Overwrite and Keep resolve conflicts of Files, as for Restore.
	Overwrite bool
	Keep      []string
	// Title is the fork's (empty: the session's, marked as a fork).
	Title string
}

// ForkResult is a fork made.
type ForkResult struct {
	Session session.Session `json:"session"`
	// Files says what bringing the files back did (nil without Files).
	Files *RestoreResult `json:"files,omitempty"`
}

// Fork starts a new session from this one: its conversation up to a
// message, and, if asked, the files as they were then.
func (s *Session) Fork(ctx context.Context, req ForkRequest) (*ForkResult, error) {
	st := s.a.store
	if req.Files {
		// The files change: no turn of this session meanwhile.
		if err := s.hold(); err != nil {
			return nil, err
		}
		defer s.release()
		unlock, err := st.Lock(ctx, s.id)
		if err != nil {
			return nil, fmt.Errorf("hearth: fork: %w", err)
		}
		defer unlock()
	}
	src, err := st.Get(ctx, s.id)
	if err != nil {
		return nil, fmt.Errorf("hearth: fork: %w", err)
	}
	through := req.Through
	if through > 0 {
		if through, err = conversationEnd(ctx, st, s.id, req.Through); err != nil {
			return nil, err
		}
	}
	var p *checkpoint.Plan
	if req.Files {
		if s.a.keeper == nil {
			return nil, ErrNoCheckpoints
		}
		if req.Through <= 0 {
			return nil, errors.New("hearth: fork: the files are as the session left them: give a message to fork at to bring them back")
		}
		if p, err = s.a.keeper.Plan(ctx, s.id, checkpoint.Rewind, through, 0); err != nil {
			return nil, fmt.Errorf("hearth: fork: %w", err)
		}
		if open := unresolved(p.Conflicts, req.Overwrite, req.Keep); len(open) > 0 {
			return nil, fmt.Errorf("hearth: fork: %w", &ConflictError{Op: checkpoint.Rewind, Paths: open})
		}
	}
	title := req.Title
	if title == "" {
		title = strings.TrimSpace(src.Title + " (fork)")
	}
	into := &session.Session{Title: title}
	if err := st.Fork(ctx, s.id, through, into); err != nil {
		return nil, fmt.Errorf("hearth: fork: %w", err)
	}
	out := &ForkResult{Session: *into}
	if p != nil {
		p.SessionID = into.ID
		p.Seq = into.ForkSeq
		r := &RestoreResult{RestoreInfo: agent.RestoreInfo{Op: string(Rewind), Through: req.Through, Files: []agent.FileChange{}}}
		if len(p.Changes) > 0 {
			applied, err := s.a.keeper.Apply(ctx, p, checkpoint.Resolve{Overwrite: req.Overwrite, Keep: req.Keep})
			if err != nil {
				return out, fmt.Errorf("hearth: fork: bringing the files back: %w", err)
			}
			done := map[string]bool{}
			for _, d := range applied.Restored.Done {
				done[d] = true
			}
			for _, c := range p.Changes {
				if done[c.Path] {
					r.Files = append(r.Files, agent.FileChange{Path: c.Path, Action: c.Action()})
				}
			}
			for _, f := range applied.Restored.Failed {
				r.Failed = append(r.Failed, agent.FileProblem{Path: f.Path, Reason: f.Reason})
			}
			r.Checkpoint, r.Kept = applied.Checkpoint.ID, applied.Kept
		}
		out.Files = r
	}
	return out, nil
}

func unresolved(conflicts []string, overwrite bool, keep []string) []string {
	if overwrite {
		return nil
	}
	var out []string
	for _, c := range conflicts {
		found := false
		for _, k := range keep {
			if k == c {
				found = true
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// restoredNote tells the model, on the turn after a restore, which files
// were restored since it last looked (its memory of them is stale).
func (s *Session) restoredNote(ctx context.Context) string {
	if s.a.keeper == nil {
		return ""
	}
	recs, err := s.a.store.Checkpoints(ctx, s.id)
	if err != nil || len(recs) == 0 {
		return ""
	}
	sess, err := s.a.store.Get(ctx, s.id)
	if err != nil {
		return ""
	}
	last := sess.MessageCount // seqs run from 1 without a gap
	var paths []string
	var ops []string
	for _, c := range recs {
		if c.Seq < last || (c.Kind != session.CheckpointUndo && c.Kind != session.CheckpointRedo && c.Kind != session.CheckpointRewind) {
			continue
		}
		ops = append(ops, c.Kind)
		paths = append(paths, checkpoint.RestoredPaths(c)...)
	}
	if len(paths) == 0 {
		return ""
	}
	if len(paths) > 20 {
		paths = append(paths[:20], fmt.Sprintf("and %d more", len(paths)-20))
	}
	return fmt.Sprintf("Since your last reply the user restored files (%s): %s. They are no longer as you left them: read them again before you change them.",
		strings.Join(ops, ", "), strings.Join(paths, ", "))
}

func joinContext(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// Pruned says what PruneCheckpoints removed.
type Pruned = checkpoint.Pruned

// PruneCheckpoints removes from the workspace's checkpoint store what no
// checkpoint of any stored session reaches any more (the snapshots of
// deleted sessions, previews), keeping what is younger than grace (a
// snapshot being taken may be about to use it). The store only grows
// otherwise.
func (a *Agent) PruneCheckpoints(ctx context.Context, grace time.Duration) (Pruned, error) {
	if a.keeper == nil {
		return Pruned{}, ErrNoCheckpoints
	}
	return a.keeper.Prune(ctx, grace)
}
