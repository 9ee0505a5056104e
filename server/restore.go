package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/session"
)

// Taking back what the agent did (hearth.Session.Restore and Fork): undo,
// redo and rewind of a session, a fork of it from any message, and its
// checkpoints. The answer of a restore is the restore event of the event
// contract (docs/events.md) with what a preview adds: the server has no
// stream outside a turn, so a client shows the restore from the answer.

// restoreJSON is the answer of an undo, a redo or a rewind: the restore
// event's fields, with the conflicts a preview found and whether it was
// one.
type restoreJSON struct {
	// Type is always "restore", as in the event.
	Type string `json:"type"`
	agent.RestoreInfo
	// Conflicts lists the files someone changed after the agent did that
	// the restore would overwrite (a preview's; a restore with unresolved
	// ones is refused with restore_conflict).
	Conflicts []string `json:"conflicts"`
	// DryRun marks a preview: nothing was changed.
	DryRun bool `json:"dry_run"`
}

func restoreAnswer(res *hearth.RestoreResult) restoreJSON {
	out := restoreJSON{Type: string(agent.EventRestore), RestoreInfo: res.RestoreInfo, Conflicts: res.Conflicts, DryRun: res.DryRun}
	if out.Files == nil {
		out.Files = []agent.FileChange{}
	}
	if out.Conflicts == nil {
		out.Conflicts = []string{}
	}
	return out
}

// undoBody is the body of POST …/undo and …/redo.
type undoBody struct {
	// Overwrite restores files changed after the agent changed them too
	// (what is there is kept in the restore's own checkpoint).
	Overwrite bool `json:"overwrite"`
	// Keep lists such files to leave as they are.
	Keep []string `json:"keep"`
	// DryRun previews: nothing changes.
	DryRun bool `json:"dry_run"`
}

const undoExample = `{"dry_run": true}`

// rewindBody is the body of POST …/rewind.
type rewindBody struct {
	// Through is the seq of the message to rewind to.
	Through int `json:"through"`
	// Start goes back to the start of the session instead: the files as
	// they were before it changed any, and no message left.
	Start bool `json:"start"`
	// Checkpoint is a checkpoint to bring the files back to instead.
	Checkpoint int64 `json:"checkpoint"`
	// FilesOnly and ConversationOnly narrow a rewind to a message.
	FilesOnly        bool `json:"files_only"`
	ConversationOnly bool `json:"conversation_only"`
	undoBody
}

const rewindExample = `{"through": 4, "dry_run": true}`

func (s *Server) undoSession(w http.ResponseWriter, r *http.Request) {
	s.undoOrRedo(w, r, hearth.Undo)
}

func (s *Server) redoSession(w http.ResponseWriter, r *http.Request) {
	s.undoOrRedo(w, r, hearth.Redo)
}

func (s *Server) undoOrRedo(w http.ResponseWriter, r *http.Request, op hearth.RestoreOp) {
	var body undoBody
	if !decodeJSON(w, r, &body, true, undoExample) {
		return
	}
	s.restore(w, r, hearth.RestoreRequest{Op: op, Overwrite: body.Overwrite, Keep: body.Keep, DryRun: body.DryRun})
}

func (s *Server) rewindSession(w http.ResponseWriter, r *http.Request) {
	var body rewindBody
	if !decodeJSON(w, r, &body, false, rewindExample) {
		return
	}
	switch {
	case body.Through < 0 || body.Checkpoint < 0:
		writeError(w, http.StatusBadRequest, "bad_request", "through and checkpoint are positive numbers: the seq of a message, or the id of a checkpoint (GET /v1/sessions/{id}/checkpoints)")
		return
	case body.Through == 0 && body.Checkpoint == 0 && !body.Start:
		writeError(w, http.StatusBadRequest, "bad_request", `say where to rewind to: "through" (the seq of a message), "checkpoint" (its id) or "start": true (the start of the session): `+rewindExample)
		return
	case (body.Through > 0) && (body.Checkpoint > 0) || body.Start && (body.Through > 0 || body.Checkpoint > 0):
		writeError(w, http.StatusBadRequest, "bad_request", `rewind to a message ("through"), to a checkpoint ("checkpoint") or to the start ("start"): one of them`)
		return
	case body.FilesOnly && body.ConversationOnly:
		writeError(w, http.StatusBadRequest, "bad_request", `"files_only" or "conversation_only", not both (neither: the files and the conversation)`)
		return
	case body.Checkpoint > 0 && body.ConversationOnly:
		writeError(w, http.StatusBadRequest, "bad_request", `a checkpoint is a state of the files: "conversation_only" needs "through" (a message)`)
		return
	}
	s.restore(w, r, hearth.RestoreRequest{Op: hearth.Rewind, Through: body.Through, Checkpoint: body.Checkpoint, Start: body.Start,
		FilesOnly: body.FilesOnly, ConversationOnly: body.ConversationOnly,
		Overwrite: body.Overwrite, Keep: body.Keep, DryRun: body.DryRun})
}

// restore makes (or previews) a restore of session id.
func (s *Server) restore(w http.ResponseWriter, r *http.Request, req hearth.RestoreRequest) {
	id := r.PathValue("id")
	ctx := r.Context()
	if !s.checkTarget(w, ctx, id, req.Through, req.Checkpoint) {
		return
	}
	if !s.notRunning(w, ctx, id, "restore") {
		return
	}
	// The agent of the session's own workspace: its checkpoints, and
	// the only folder its files may be written back to.
	a := s.agentOf(w, ctx, id)
	if a == nil {
		return
	}
	res, err := a.Session(id).Restore(ctx, req)
	if err != nil {
		s.restoreError(w, id, string(req.Op), err)
		return
	}
	if !req.DryRun {
		s.log.Info("restore", "session", id, "op", req.Op, "files", len(res.Files), "checkpoint", res.Checkpoint)
	}
	writeJSON(w, http.StatusOK, restoreAnswer(res))
}

// checkTarget answers 404 for a missing session, and 400 for a message or
// a checkpoint it does not have; false when it answered.
func (s *Server) checkTarget(w http.ResponseWriter, ctx context.Context, id string, through int, checkpoint int64) bool {
	if err := s.exists(ctx, id); err != nil {
		s.storeError(w, id, err)
		return false
	}
	if through > 0 {
		msgs, err := s.store.Messages(ctx, id)
		if err != nil {
			s.storeError(w, id, err)
			return false
		}
		if !slices.ContainsFunc(msgs, func(m session.Message) bool { return m.Seq == through }) {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("session %s has no message %d: GET /v1/sessions/%s lists its messages with their seq", id, through, id))
			return false
		}
	}
	if checkpoint > 0 {
		cps, err := s.store.Checkpoints(ctx, id)
		if err != nil {
			s.storeError(w, id, err)
			return false
		}
		if !slices.ContainsFunc(cps, func(c session.Checkpoint) bool { return c.ID == checkpoint }) {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("session %s has no checkpoint %d: GET /v1/sessions/%s/checkpoints lists them", id, checkpoint, id))
			return false
		}
	}
	return true
}

// notRunning answers 409 session_busy when a turn runs in the session, here or
// on another server sharing the store; false when it answered. (The
// restore itself takes the session's lock in the store, which decides
// when a turn is starting elsewhere at this very moment.)
func (s *Server) notRunning(w http.ResponseWriter, ctx context.Context, id, what string) bool {
	if t := s.runningTurn(id); t != "" {
		writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf(
			"session %s is running turn %s: a %s waits until it has ended (follow it with GET /v1/sessions/%s/events), or cancel it (POST /v1/sessions/%s/cancel)",
			id, t, what, id, id))
		return false
	}
	if s.relay == nil {
		return true
	}
	info, err := s.remoteTurn(ctx, id)
	if err != nil {
		s.storeError(w, id, err)
		return false
	}
	if info != nil && !info.Ended {
		writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf(
			"session %s is running turn %s on %s: a %s waits until it has ended (follow it with GET /v1/sessions/%s/events), or cancel it (POST /v1/sessions/%s/cancel)",
			id, info.ID, info.Instance, what, id, id))
		return false
	}
	return true
}

// restoreError answers a failed restore (or fork) with its code.
func (s *Server) restoreError(w http.ResponseWriter, id, op string, err error) {
	var ce *hearth.ConflictError
	switch {
	case errors.As(err, &ce):
		writeJSON(w, http.StatusConflict, apiError{errorBody{Code: "restore_conflict", Paths: ce.Paths, Message: fmt.Sprintf(
			"nothing was changed: the %s would overwrite changes made after the agent's to %s. "+
				`Send it again with "overwrite": true to restore them anyway (what is there now is kept in the restore's own checkpoint), `+
				`or with "keep": [those paths] to leave them as they are`, op, listPaths(ce.Paths))}})
	case errors.Is(err, hearth.ErrNothingToUndo):
		writeError(w, http.StatusConflict, "nothing_to_undo", fmt.Sprintf("nothing to undo in session %s: no turn of it changed files that is not undone already", id))
	case errors.Is(err, hearth.ErrNothingToRedo):
		writeError(w, http.StatusConflict, "nothing_to_redo", fmt.Sprintf("nothing to redo in session %s: no undo to take back since its last turn that changed files", id))
	case errors.Is(err, hearth.ErrNoCheckpoints):
		writeError(w, http.StatusConflict, "checkpoints_off", "this server keeps no checkpoints (it has no workspace, or checkpoints are turned off in its configuration), so no file the agent changed can be restored; a rewind of the conversation alone still works (\"conversation_only\": true)")
	case errors.Is(err, session.ErrBusy):
		writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf("session %s is busy (%v): wait for its turn to end, then try again", id, err))
	case errors.Is(err, session.ErrNotFound):
		s.storeError(w, id, err)
	default:
		s.log.Error(op, "session", id, "error", err)
		writeError(w, http.StatusInternalServerError, "restore_failed", fmt.Sprintf("the %s failed: %v", op, err))
	}
}

// listPaths names a few paths.
func listPaths(paths []string) string {
	if len(paths) > 5 {
		return strings.Join(paths[:5], ", ") + fmt.Sprintf(" and %d more", len(paths)-5)
	}
	return strings.Join(paths, ", ")
}

// forkBody is the body of POST …/fork.
type forkBody struct {
	// Through is the seq of the last message the fork takes (0: all).
	Through int `json:"through"`
	// Files also brings the workspace's files back to their state after
	// that message.
	Files bool `json:"files"`
	// Title is the fork's (empty: the session's, marked as a fork).
	Title *string `json:"title"`
	// Overwrite and Keep resolve conflicts of Files, as for a restore.
	Overwrite bool     `json:"overwrite"`
	Keep      []string `json:"keep"`
}

const forkExample = `{"through": 4, "files": true, "title": "Try the other parser"}`

// forkJSON is a fork made: the new session, and what bringing the files
// back did (absent without "files").
type forkJSON struct {
	sessionJSON
	Files *restoreJSON `json:"files,omitempty"`
}

func (s *Server) forkSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx := r.Context()
	var body forkBody
	if !decodeJSON(w, r, &body, true, forkExample) {
		return
	}
	req := hearth.ForkRequest{Through: body.Through, Files: body.Files, Overwrite: body.Overwrite, Keep: body.Keep}
	if body.Title != nil {
		t, ok := checkTitle(w, *body.Title)
		if !ok {
			return
		}
		req.Title = t
	}
	switch {
	case body.Through < 0:
		writeError(w, http.StatusBadRequest, "bad_request", `"through" is the seq of the last message the fork takes (0 or absent: all of them)`)
		return
	case body.Files && body.Through == 0:
		writeError(w, http.StatusBadRequest, "bad_request", `"files" brings the files back to their state after a message: give it as "through"`)
		return
	}
	if !s.checkTarget(w, ctx, id, body.Through, 0) || !s.notRunning(w, ctx, id, "fork") {
		return
	}
	// With the files, Fork holds the session (and its lock in the store)
	// while they change: no turn starts meanwhile, here or elsewhere.
	a := s.agentOf(w, ctx, id)
	if a == nil {
		return
	}
	res, err := a.Session(id).Fork(ctx, req)
	if err != nil {
		if res != nil {
			// The fork was made; its files could not be brought back.
			s.rememberSession(&res.Session)
			err = fmt.Errorf("session %s was made, but %w", res.Session.ID, err)
		}
		s.restoreError(w, id, "fork", err)
		return
	}
	s.rememberSession(&res.Session)
	out := forkJSON{sessionJSON: sessionJSON{Session: res.Session}}
	if se, err := s.store.Get(ctx, res.Session.ID); err == nil {
		out.Session = *se // with its counts
	}
	if res.Files != nil {
		a := restoreAnswer(res.Files)
		out.Files = &a
	}
	w.Header().Set("Location", "/v1/sessions/"+res.Session.ID)
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) listCheckpoints(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx := r.Context()
	a := s.agentOf(w, ctx, id)
	if a == nil {
		return
	}
	cps, err := a.Session(id).Checkpoints(ctx)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	if cps == nil {
		cps = []session.Checkpoint{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"checkpoints": cps})
}
