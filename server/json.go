package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// apiError is the body of every error response.
type apiError struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	// Code is stable, for programs; Message says what happened and what
	// to do, for people.
	Code    string `json:"code"`
	Message string `json:"message"`
	// Hint, where there is one, is the fix (a provider that cannot be
	// reached).
	Hint string `json:"hint,omitempty"`
	// Paths, on restore_conflict, lists the files the restore would
	// overwrite.
	Paths []string `json:"paths,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, apiError{errorBody{Code: code, Message: msg}})
}

// bodyTimeout bounds reading a request body (the server has no ReadTimeout,
// which would cut event streams).
const bodyTimeout = 30 * time.Second

// decodeJSON reads the body into v, a pointer to a struct; unknown fields
// are refused. An empty body leaves v as it is when emptyOK. It writes the
// error response and returns false when the body cannot be used.
func decodeJSON(w http.ResponseWriter, r *http.Request, v any, emptyOK bool, example string) bool {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Now().Add(bodyTimeout))
	defer rc.SetReadDeadline(time.Time{})
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(strings.ToLower(ct), "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "bad_request", fmt.Sprintf("the body must be JSON (Content-Type: application/json), not %s", ct))
		return false
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.Decode(&json.RawMessage{}) != io.EOF {
			err = errors.New("more than one JSON value")
		}
	}
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		return true
	case errors.Is(err, io.EOF) && emptyOK:
		return true
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", tooLarge(tooBig.Limit))
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "bad_request", "the request body is empty: send a JSON object such as "+example)
	default:
		msg := strings.TrimPrefix(err.Error(), "json: ")
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("the request body is not what this endpoint takes (%s): send a JSON object such as %s", msg, example))
	}
	return false
}
