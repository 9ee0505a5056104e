package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/conversation"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// maxTitle bounds a session title, in characters.
const maxTitle = 200

// sessionJSON is a session as the API shows it.
type sessionJSON struct {
	session.Session
	// RunningTurn is the id of the turn running now ("" when none).
	RunningTurn string `json:"running_turn,omitempty"`
}

// sessionDetail is GET /v1/sessions/{id}: the session with its history.
type sessionDetail struct {
	sessionJSON
	Messages []session.Message `json:"messages"`
	ToolRuns []session.ToolRun `json:"tool_runs"`
	// Plan is the plan the model keeps (update_plan) as the stored
	// messages hold it now: null when it keeps none.
	Plan *agent.Plan `json:"plan"`
}

// remember notes sessions seen to exist.
func (s *Server) remember(ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		s.known[id] = true
	}
}

// rememberSession notes a session seen, with its workspace.
func (s *Server) rememberSession(se *session.Session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known[se.ID] = true
	s.wsOf[se.ID] = se.Workspace
}

// exists reports whether the session exists, asking the store only about
// sessions not seen yet (on a shared store, always).
func (s *Server) exists(ctx context.Context, id string) error {
	_, err := s.sessionWorkspace(ctx, id)
	return err
}

// sessionWorkspace returns the workspace of session id, asking the store
// only about sessions not seen yet (on a shared store, always: another
// server may have deleted it).
func (s *Server) sessionWorkspace(ctx context.Context, id string) (string, error) {
	s.mu.Lock()
	ws, seen := s.wsOf[id]
	known := s.known[id] && seen && s.relay == nil
	s.mu.Unlock()
	if known {
		return ws, nil
	}
	se, err := s.store.Get(ctx, id)
	if err != nil {
		return "", err
	}
	s.rememberSession(se)
	return se.Workspace, nil
}

// agentOf returns the agent that runs session id: its workspace's
// (Options.Workspaces), else the server's. It writes the error response
// and returns nil when there is none.
func (s *Server) agentOf(w http.ResponseWriter, ctx context.Context, id string) *hearth.Agent {
	ws, err := s.sessionWorkspace(ctx, id)
	if err != nil {
		s.storeError(w, id, err)
		return nil
	}
	return s.agentFor(w, ctx, ws)
}

// agentFor returns the agent of workspace ws ("": the server's own), or
// writes the error response and returns nil.
func (s *Server) agentFor(w http.ResponseWriter, ctx context.Context, ws string) *hearth.Agent {
	if s.o.Workspaces == nil {
		return s.agent
	}
	a, err := s.o.Workspaces.Agent(ctx, ws)
	switch {
	case err == nil:
		return a
	case errors.Is(err, session.ErrNotFound):
		writeError(w, http.StatusConflict, "workspace_not_known", fmt.Sprintf(
			"workspace %s is not known to Hearth (never added, or removed): add it with POST /v1/workspaces (GET /v1/workspaces lists the known ones, their paths exactly)", ws))
	default:
		s.log.Error("a workspace's agent", "workspace", ws, "error", err)
		writeError(w, http.StatusConflict, "workspace_unavailable", fmt.Sprintf("workspace %s cannot run sessions: %v", ws, err))
	}
	return nil
}

// runningAnywhere is runningTurn, with the turns of the other processes
// that share the store.
func (s *Server) runningAnywhere(ctx context.Context, id string) string {
	if t := s.runningTurn(id); t != "" || s.relay == nil {
		return t
	}
	info, err := s.remoteTurn(ctx, id)
	if err != nil || info == nil || info.Ended {
		return ""
	}
	return info.ID
}

func (s *Server) runningTurn(id string) string {
	s.mu.Lock()
	t := s.turns[id]
	s.mu.Unlock()
	if t == nil || t.finished() {
		return ""
	}
	return t.id
}

// storeError answers a failure of the store: 404 for a missing session.
func (s *Server) storeError(w http.ResponseWriter, id string, err error) {
	if errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no session %s: list them with GET /v1/sessions, or create one with POST /v1/sessions", id))
		return
	}
	s.log.Error("session store", "session", id, "error", err)
	writeError(w, http.StatusInternalServerError, "store_error", "the session store failed: "+err.Error())
}

func (s *Server) listSessions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("limit=%q: give a number of sessions, such as limit=50", v))
			return
		}
		limit = n
	}
	archived := false
	if v := q.Get("archived"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("archived=%q: archived=true lists the archived sessions (and only them), archived=false the others", v))
			return
		}
		archived = b
	}
	opts := session.ListOptions{Limit: limit, Query: q.Get("q"), Archived: archived}
	if q.Has("workspace") {
		ws := q.Get("workspace")
		opts.Workspace = &ws
	}
	list, err := s.store.List(r.Context(), opts)
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	out := make([]sessionJSON, 0, len(list))
	for i, se := range list {
		s.rememberSession(&list[i])
		out = append(out, sessionJSON{Session: se, RunningTurn: s.runningTurn(se.ID)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"sessions": out})
}

// createBody is the body of POST /v1/sessions.
type createBody struct {
	Title *string `json:"title"`
	// Workspace is the folder the session works in, as GET
	// /v1/workspaces lists it (absent: the server's own).
	Workspace *string `json:"workspace"`
}

// patchBody is the body of PATCH /v1/sessions/{id}: what to change.
type patchBody struct {
	Title *string `json:"title"`
	// Archived archives the session (hidden from the list unless asked
	// for with archived=true; nothing in it is deleted) or brings it back.
	Archived *bool `json:"archived"`
}

func checkTitle(w http.ResponseWriter, title string) (string, bool) {
	title = strings.TrimSpace(title)
	if utf8.RuneCountInString(title) > maxTitle || strings.ContainsAny(title, "\n\r") {
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the title must be one line of at most %d characters", maxTitle))
		return "", false
	}
	return title, true
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) {
	var body createBody
	if !decodeJSON(w, r, &body, true, `{"title": "Fix the parser", "workspace": "/home/me/project"}`) {
		return
	}
	a := s.agent
	if body.Workspace != nil && *body.Workspace != s.agent.Workspace() && s.o.Workspaces == nil {
		writeError(w, http.StatusBadRequest, "bad_workspace", fmt.Sprintf("this server serves one workspace, %s: leave \"workspace\" out", s.agent.Workspace()))
		return
	}
	if body.Workspace != nil && strings.TrimSpace(*body.Workspace) == "" {
		writeError(w, http.StatusBadRequest, "bad_workspace", `"workspace" is empty: give a folder as GET /v1/workspaces lists it, or leave it out for the server's own`)
		return
	}
	if s.o.Workspaces != nil {
		// The workspace's agent as its trust now stands (its provider
		// and model are recorded with the session).
		ws := ""
		if body.Workspace != nil {
			ws = *body.Workspace
		}
		if a = s.agentFor(w, r.Context(), ws); a == nil {
			return
		}
	}
	se := session.Session{Provider: a.Provider().Kind(), Model: a.Model(), Workspace: a.Workspace()}
	if body.Title != nil {
		t, ok := checkTitle(w, *body.Title)
		if !ok {
			return
		}
		se.Title = t
	}
	if err := s.store.Create(r.Context(), &se); err != nil {
		s.storeError(w, se.ID, err)
		return
	}
	s.rememberSession(&se)
	w.Header().Set("Location", "/v1/sessions/"+se.ID)
	writeJSON(w, http.StatusCreated, sessionJSON{Session: se})
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	ctx := r.Context()
	se, err := s.store.Get(ctx, id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	s.remember(id)
	msgs, err := s.store.Messages(ctx, id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	runs, err := s.store.ToolRuns(ctx, id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	// The plan from the messages just read (every one, the compacted
	// too: a summary may have replaced the plan's last call), not from a
	// second read of the store.
	d := sessionDetail{sessionJSON: sessionJSON{Session: *se, RunningTurn: s.runningAnywhere(ctx, id)},
		Messages: session.InOrder(msgs), ToolRuns: runs, Plan: conversation.Plan(msgs)}
	if d.Messages == nil {
		d.Messages = []session.Message{}
	}
	if d.ToolRuns == nil {
		d.ToolRuns = []session.ToolRun{}
	}
	writeJSON(w, http.StatusOK, d)
}

func (s *Server) patchSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body patchBody
	if !decodeJSON(w, r, &body, false, `{"title": "Fix the parser"}`) {
		return
	}
	if body.Title == nil && body.Archived == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `nothing to change: send {"title": "…"} to rename the session, or {"archived": true} to archive it ({"archived": false} brings it back)`)
		return
	}
	if body.Title != nil {
		title, ok := checkTitle(w, *body.Title)
		if !ok {
			return
		}
		if err := s.store.Rename(r.Context(), id, title); err != nil {
			s.storeError(w, id, err)
			return
		}
	}
	if body.Archived != nil {
		if err := s.store.SetArchived(r.Context(), id, *body.Archived); err != nil {
			s.storeError(w, id, err)
			return
		}
	}
	se, err := s.store.Get(r.Context(), id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	writeJSON(w, http.StatusOK, sessionJSON{Session: *se, RunningTurn: s.runningTurn(id)})
}

// titleTimeout bounds POST /v1/sessions/{id}/title's model call.
const titleTimeout = time.Minute

// titleSession asks the model for a better title for a session that still
// has the one its first prompt gave it (hearth.Session.Title). A turn never
// waits for its title: the web UI asks for it in the background after a
// turn, and shows it when it comes.
func (s *Server) titleSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var body struct {
		Model string `json:"model"`
	}
	if !decodeJSON(w, r, &body, true, `{"model": "qwen3:4b"}`) {
		return
	}
	a := s.agentOf(w, r.Context(), id)
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), titleTimeout)
	defer cancel()
	if _, err := a.Session(id).Title(ctx, body.Model); err != nil {
		if llm.CodeOf(err) != "" || errors.Is(err, agent.ErrNoAnswer) {
			writeJSON(w, http.StatusBadGateway, apiError{*providerError(err)})
			return
		}
		s.storeError(w, id, err)
		return
	}
	se, err := s.store.Get(r.Context(), id)
	if err != nil {
		s.storeError(w, id, err)
		return
	}
	writeJSON(w, http.StatusOK, sessionJSON{Session: *se, RunningTurn: s.runningTurn(id)})
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if s.relay != nil {
		if t := s.runningTurn(id); t != "" {
			writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf("session %s is running turn %s: cancel it first (POST /v1/sessions/%s/cancel)", id, t, id))
			return
		}
		// Another process may run a turn in it.
		info, err := s.remoteTurn(r.Context(), id)
		if err != nil {
			s.storeError(w, id, err)
			return
		}
		if info != nil && !info.Ended {
			writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf("session %s is running turn %s on %s: cancel it first (POST /v1/sessions/%s/cancel)", id, info.ID, info.Instance, id))
			return
		}
		// A turn starting on another server holds the session's lock
		// before its turn is recorded: the lock decides.
		unlock, err := s.store.Lock(r.Context(), id)
		if errors.Is(err, session.ErrBusy) {
			writeError(w, http.StatusConflict, "session_busy", err.Error()+": cancel its turn first (POST /v1/sessions/"+id+"/cancel)")
			return
		}
		if err != nil {
			s.storeError(w, id, err)
			return
		}
		defer unlock()
	}
	// The session's tools are released after s.mu (its workspace's agent
	// may have to be found first).
	var forget func()
	defer func() {
		if forget != nil {
			forget()
		}
	}()
	// Holding s.mu keeps a turn from starting while the session goes.
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.turns[id]; t != nil && !t.finished() {
		writeError(w, http.StatusConflict, "session_busy", fmt.Sprintf("session %s is running turn %s: cancel it first (POST /v1/sessions/%s/cancel)", id, t.id, id))
		return
	}
	if err := s.store.Delete(r.Context(), id); err != nil {
		if errors.Is(err, session.ErrNotFound) {
			delete(s.known, id)
		}
		s.storeError(w, id, err)
		return
	}
	if t := s.turns[id]; t != nil && t.evict != nil {
		t.evict.Stop()
	}
	delete(s.turns, id)
	delete(s.known, id)
	ws, seen := s.wsOf[id]
	delete(s.wsOf, id)
	forget = func() {
		a := s.agent
		if s.o.Workspaces != nil && seen {
			var err error
			if a, err = s.o.Workspaces.Agent(r.Context(), ws); err != nil {
				return // its workspace is gone: so are its tools
			}
		}
		if err := a.Forget(id); err != nil {
			s.log.Warn("releasing a deleted session's tools", "session", id, "error", err)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}
