package server

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/session"
)

// maxWorkspaceName bounds a workspace's name, in characters.
const maxWorkspaceName = 200

// workspaceJSON is a workspace as GET /v1/workspaces lists it.
type workspaceJSON struct {
	session.Workspace
	// ConfigChanged: the workspace is trusted, but its .hearth/config.toml
	// is not the file the user trusted (it appeared or changed since): it
	// is read as an untrusted folder's until the user trusts it again.
	ConfigChanged bool `json:"config_changed,omitempty"`
}

// workspaceBody is the body of POST and PATCH /v1/workspaces.
type workspaceBody struct {
	// Path is the folder (POST only): absolute, an existing directory.
	Path  *string `json:"path"`
	Name  *string `json:"name"`
	Trust *string `json:"trust"`
}

// workspaceError answers a failure of the store about a workspace: 404
// for one it does not know.
func (s *Server) workspaceError(w http.ResponseWriter, path string, err error) {
	if errors.Is(err, session.ErrNotFound) {
		writeError(w, http.StatusNotFound, "workspace_not_found", fmt.Sprintf("no workspace %q is known: list them with GET /v1/workspaces, or add one with POST /v1/workspaces", path))
		return
	}
	s.log.Error("session store", "workspace", path, "error", err)
	writeError(w, http.StatusInternalServerError, "store_error", "the session store failed: "+err.Error())
}

// workspaceFields checks a body's name and trust into ws; it writes the
// error response and returns false when one cannot be used.
func workspaceFields(w http.ResponseWriter, body workspaceBody, ws *session.Workspace) bool {
	if body.Name != nil {
		name := strings.TrimSpace(*body.Name)
		if name == "" || utf8.RuneCountInString(name) > maxWorkspaceName || strings.ContainsAny(name, "\n\r") {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the name must be one line of 1 to %d characters", maxWorkspaceName))
			return false
		}
		ws.Name = name
	}
	if body.Trust != nil {
		t, err := session.ParseTrust(*body.Trust)
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_trust", err.Error())
			return false
		}
		// The trust is given for the project's file as it is now: one
		// that changes later is read as an untrusted folder's.
		ws.Trust, ws.ConfigHash = t, config.ProjectHash(ws.Path)
	}
	return true
}

// trustChosen tells the agents that the user chose path's trust.
func (s *Server) trustChosen(path string, body workspaceBody) {
	if body.Trust != nil && s.o.Workspaces != nil {
		s.o.Workspaces.TrustChanged(path)
	}
}

// workspacePath checks a folder given to POST /v1/workspaces: absolute,
// existing, a directory. It returns it with its symlinks resolved, or
// writes the error response and returns false.
func workspacePath(w http.ResponseWriter, p string) (string, bool) {
	switch {
	case strings.TrimSpace(p) == "":
		writeError(w, http.StatusBadRequest, "bad_request", `the path is missing: send {"path": "/home/me/project"}`)
		return "", false
	case strings.ContainsRune(p, 0):
		writeError(w, http.StatusBadRequest, "bad_path", "the path contains a NUL character")
		return "", false
	case !filepath.IsAbs(p):
		writeError(w, http.StatusBadRequest, "path_not_absolute", fmt.Sprintf("%q is not an absolute path: give the folder's full path, such as /home/me/project", p))
		return "", false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			writeError(w, http.StatusBadRequest, "path_not_found", fmt.Sprintf("%s does not exist: give an existing folder", p))
		} else {
			writeError(w, http.StatusBadRequest, "bad_path", fmt.Sprintf("%s cannot be used: %v", p, err))
		}
		return "", false
	}
	fi, err := os.Stat(real)
	if err != nil {
		writeError(w, http.StatusBadRequest, "bad_path", fmt.Sprintf("%s cannot be used: %v", p, err))
		return "", false
	}
	if !fi.IsDir() {
		writeError(w, http.StatusBadRequest, "not_a_directory", fmt.Sprintf("%s is a file, not a folder: a workspace is a folder", p))
		return "", false
	}
	return real, true
}

// queryPath is the workspace named by ?path= (PATCH and DELETE), exactly
// as GET /v1/workspaces lists it; false (the response written) when it is
// missing.
func queryPath(w http.ResponseWriter, r *http.Request) (string, bool) {
	q := r.URL.Query()
	if !q.Has("path") || q.Get("path") == "" {
		writeError(w, http.StatusBadRequest, "bad_request", "name the workspace by its path, as GET /v1/workspaces lists it: ?path=/home/me/project")
		return "", false
	}
	return q.Get("path"), true
}

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) {
	list, err := s.store.Workspaces(r.Context())
	if err != nil {
		s.workspaceError(w, "", err)
		return
	}
	// A trusted workspace whose project file is not the one trusted has
	// it read as an untrusted folder's: config_changed says so, for a UI
	// to ask again.
	out := make([]workspaceJSON, 0, len(list))
	for _, ws := range list {
		j := workspaceJSON{Workspace: ws}
		if ws.TrustChosen && ws.Trust == session.TrustTrusted && ws.Path != "" {
			j.ConfigChanged = config.ProjectHash(ws.Path) != ws.ConfigHash
		}
		out = append(out, j)
	}
	// default is where sessions that name no workspace go; multiple says
	// whether sessions may be made in the others (Options.Workspaces);
	// default_trust, when set, is the trust in force there that is not
	// the store's (hearth serve --trust): no one need be asked.
	resp := map[string]any{"workspaces": out, "default": s.agent.Workspace(), "multiple": s.o.Workspaces != nil}
	if s.o.Workspaces != nil {
		if t, from := s.o.Workspaces.Override(r.Context(), s.agent.Workspace()); t != "" {
			resp["default_trust"] = map[string]string{"trust": string(t), "source": from}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) addWorkspace(w http.ResponseWriter, r *http.Request) {
	var body workspaceBody
	if !decodeJSON(w, r, &body, false, `{"path": "/home/me/project", "name": "project", "trust": "untrusted"}`) {
		return
	}
	if body.Path == nil {
		body.Path = new(string)
	}
	path, ok := workspacePath(w, *body.Path)
	if !ok {
		return
	}
	if s.o.Workspaces != nil {
		if err := s.o.Workspaces.Check(path); err != nil {
			writeError(w, http.StatusBadRequest, "bad_workspace", err.Error())
			return
		}
	}
	ws := session.Workspace{Path: path}
	if !workspaceFields(w, body, &ws) {
		return
	}
	ctx := r.Context()
	status := http.StatusCreated
	if _, err := s.store.Workspace(ctx, path); err == nil {
		status = http.StatusOK
	} else if !errors.Is(err, session.ErrNotFound) {
		s.workspaceError(w, path, err)
		return
	}
	got, err := s.store.AddWorkspace(ctx, ws)
	s.trustChosen(path, body)
	if err != nil {
		s.workspaceError(w, path, err)
		return
	}
	// The count of sessions comes with a read.
	if st, err := s.store.Workspace(ctx, path); err == nil {
		got = *st
	}
	writeJSON(w, status, got)
}

func (s *Server) patchWorkspace(w http.ResponseWriter, r *http.Request) {
	path, ok := queryPath(w, r)
	if !ok {
		return
	}
	var body workspaceBody
	if !decodeJSON(w, r, &body, false, `{"name": "project", "trust": "trusted"}`) {
		return
	}
	if body.Path != nil {
		writeError(w, http.StatusBadRequest, "bad_request", "a workspace's path cannot change: add the new folder with POST /v1/workspaces")
		return
	}
	if body.Name == nil && body.Trust == nil {
		writeError(w, http.StatusBadRequest, "bad_request", `nothing to change: send {"name": "…"} or {"trust": "trusted"} (or read-only, untrusted)`)
		return
	}
	ws := session.Workspace{Path: path}
	if !workspaceFields(w, body, &ws) {
		return
	}
	// One write that changes a known workspace only: one unknown, or
	// removed meanwhile, is a 404, never made again.
	got, err := s.store.UpdateWorkspace(r.Context(), ws)
	s.trustChosen(path, body)
	if err != nil {
		s.workspaceError(w, path, err)
		return
	}
	writeJSON(w, http.StatusOK, got)
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) {
	path, ok := queryPath(w, r)
	if !ok {
		return
	}
	if err := s.store.RemoveWorkspace(r.Context(), path); err != nil {
		s.workspaceError(w, path, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
