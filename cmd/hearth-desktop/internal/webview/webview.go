// Package webview serves Hearth's API and web UI to the desktop window.
//
// The window loads its pages through the webview's own URL scheme
// (wails://wails on Linux): requests go from the web engine to this
// handler inside the process, with no socket that another program could
// connect to. The API still wants its bearer token: a token made for this
// launch, kept in memory only, and given to the page in a <meta> element of
// the one page this handler serves, so that a page from elsewhere (a link
// followed inside the window) has nothing to send.
package webview

import (
	"bytes"
	"encoding/json"
	"html"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

// TokenMeta is the name of the <meta> element that carries the API token
// to the page (the web UI reads it in takeToken).
const TokenMeta = "hearth-token"

// Handler serves the current API (an http.Handler: a server.Server) to the
// window, and a short page saying why while there is none (starting, or
// switching workspaces). It is safe for concurrent use.
type Handler struct {
	token string

	mu      sync.RWMutex
	api     http.Handler
	problem string
}

// New returns a handler that gives the page token.
func New(token string) *Handler { return &Handler{token: token} }

// Set makes api the handler requests go to; problem says why there is none
// when api is nil ("" while starting).
func (h *Handler) Set(api http.Handler, problem string) {
	h.mu.Lock()
	h.api, h.problem = api, problem
	h.mu.Unlock()
}

// ServeHTTP serves r with the current API. The web engine's response
// writer streams what is written at once: it gets a Flush, which the API's
// event streams ask for.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.RLock()
	api, problem := h.api, h.problem
	h.mu.RUnlock()
	if api == nil {
		h.unavailable(w, r, problem)
		return
	}
	fw := flusher{w}
	if !isPage(r) {
		api.ServeHTTP(fw, r)
		return
	}
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	api.ServeHTTP(rec, r)
	body := rec.body.Bytes()
	if rec.code == http.StatusOK && strings.HasPrefix(rec.header.Get("Content-Type"), "text/html") {
		body = InjectToken(body, h.token)
		rec.header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.code)
	w.Write(body)
}

// InjectToken puts the token's <meta> element at the start of the page's
// <head> element (at the very start when the page has none). The tag is
// found by ASCII case folding only, so byte offsets are the page's own.
func InjectToken(page []byte, token string) []byte {
	meta := []byte(`<meta name="` + TokenMeta + `" content="` + html.EscapeString(token) + `">`)
	i := headEnd(page)
	if i < 0 {
		return append(meta, page...)
	}
	out := make([]byte, 0, len(page)+len(meta))
	out = append(out, page[:i]...)
	out = append(out, meta...)
	return append(out, page[i:]...)
}

// headEnd is the offset just after the page's <head> start tag (with or
// without attributes), or -1.
func headEnd(page []byte) int {
	for i := 0; i+5 < len(page); i++ {
		if page[i] != '<' || !asciiFold(page[i+1:i+5], "head") {
			continue
		}
		switch c := page[i+5]; c {
		case '>':
			return i + 6
		case ' ', '\t', '\n', '\r', '\f':
			if j := bytes.IndexByte(page[i+5:], '>'); j >= 0 {
				return i + 5 + j + 1
			}
			return -1
		}
	}
	return -1
}

// asciiFold reports whether b is word, ignoring ASCII case.
func asciiFold(b []byte, word string) bool {
	for k := range len(word) {
		c := b[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != word[k] {
			return false
		}
	}
	return true
}

// isPage reports whether r asks for the web UI's page (not an API call, nor
// one of its assets): only the page gets the token.
func isPage(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	p := r.URL.Path
	if isAPI(p) {
		return false
	}
	return path.Ext(p) == "" || p == "/index.html"
}

// isAPI reports whether p is the API's.
func isAPI(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// unavailable answers while there is no API: JSON for the API's clients, a
// page that reloads itself for the window.
func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request, problem string) {
	msg := problem
	if msg == "" {
		msg = "Hearth is starting."
	}
	w.Header().Set("Cache-Control", "no-store")
	if isAPI(r.URL.Path) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "unavailable", "message": msg}})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	refresh := ""
	if problem == "" {
		refresh = `<meta http-equiv="refresh" content="1">`
	}
	w.Write([]byte(`<!doctype html><html><head><meta charset="utf-8">` + refresh + `<title>Hearth</title></head>` +
		`<body style="font: 15px system-ui, sans-serif; margin: 3em; color: #333"><h1 style="font-size: 20px">Hearth</h1><p>` +
		html.EscapeString(msg) + `</p></body></html>`))
}

// flusher gives the web engine's writer, which sends each write at once, the
// Flush that streaming handlers ask for.
type flusher struct{ http.ResponseWriter }

// Flush does nothing: every write has gone already.
func (flusher) Flush() {}

// Unwrap lets http.ResponseController reach the writer underneath.
func (f flusher) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// recorder keeps a page's response to change it before it is sent.
type recorder struct {
	header http.Header
	code   int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.code, r.wrote = code, true
	}
}

func (r *recorder) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(p)
}
