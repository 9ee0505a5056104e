package server

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// loopbackNames are always accepted in the Host header (with the listening
// port).
var loopbackNames = []string{"localhost", "127.0.0.1", "::1"}

// guard checks every request before it is routed: the Host header (DNS
// rebinding), the Origin (cross-site requests; allowed origins get CORS
// headers), the bearer token on /v1, and the body size.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer") // the UI's URL carries the token
		local := localPort(r)
		if !s.hostAllowed(r.Host, "80", local) {
			writeError(w, http.StatusForbidden, "bad_host", fmt.Sprintf(
				"the Host header %q is not allowed (a guard against DNS rebinding): use http://127.0.0.1:%s, or start hearth serve with --allow-host for this name",
				r.Host, orDefault(local, "PORT")))
			return
		}
		api := r.URL.Path == "/v1" || strings.HasPrefix(r.URL.Path, "/v1/")
		origin := r.Header.Get("Origin")
		cross := false // an allowed origin other than the server's own
		if origin != "" {
			switch {
			case s.origins[origin]:
				cross = true
			case s.sameServer(origin, local):
			default:
				writeError(w, http.StatusForbidden, "bad_origin", fmt.Sprintf(
					"requests from %s are not allowed (a guard against cross-site requests): use the web UI served by hearth serve, or start it with --allow-origin %s",
					origin, origin))
				return
			}
		}
		if api && !cross && r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			writeError(w, http.StatusForbidden, "bad_origin", "cross-site requests are not allowed: use the web UI served by hearth serve, or start it with --allow-origin for your page's origin")
			return
		}
		if cross {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			h.Set("Access-Control-Expose-Headers", "Hearth-Turn-Id, Hearth-Session-Id, Location")
			if r.Method == http.MethodOptions { // preflight: no token
				h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		if api {
			h.Set("Cache-Control", "no-store")
			if !s.authorized(r) {
				h.Set("WWW-Authenticate", `Bearer realm="hearth"`)
				code, msg := "unauthorized", "missing bearer token: send the header Authorization: Bearer TOKEN, with the token printed by hearth serve (kept in its config directory as api-token, or set with HEARTH_API_TOKEN)"
				if r.Header.Get("Authorization") != "" {
					code, msg = "invalid_token", "the bearer token is wrong: use the token printed by hearth serve (kept in its config directory as api-token, or set with HEARTH_API_TOKEN)"
				}
				writeError(w, http.StatusUnauthorized, code, msg)
				return
			}
		}
		if r.ContentLength > s.o.MaxBodyBytes {
			writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", tooLarge(s.o.MaxBodyBytes))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

func tooLarge(limit int64) string {
	return fmt.Sprintf("the request body is over the limit of %d bytes: send less (put large context in files the agent can read), or raise --max-body", limit)
}

// authorized checks the bearer token in constant time.
func (s *Server) authorized(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(s.o.Token)) == 1
}

// hostAllowed reports whether hostport (a Host header, or an origin's
// host) names this server: a loopback name or an allowed name, with the
// listening port (local; "" when unknown, which accepts any). defPort is
// the port implied when hostport has none.
func (s *Server) hostAllowed(hostport, defPort, local string) bool {
	host, port := splitHost(hostport)
	if host == "" {
		return false
	}
	if port == "" {
		port = defPort
	}
	if s.hosts[net.JoinHostPort(host, port)] {
		return true // an allowed name with its own port (behind a proxy)
	}
	if local != "" && port != local {
		return false
	}
	if s.hosts[host] {
		return true
	}
	for _, n := range loopbackNames {
		if host == n {
			return true
		}
	}
	return false
}

// sameServer reports whether origin is one of this server's own addresses.
func (s *Server) sameServer(origin, local string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" {
		return false
	}
	switch u.Scheme {
	case "http":
		return s.hostAllowed(u.Host, "80", local)
	case "https":
		return s.hostAllowed(u.Host, "443", local)
	}
	return false
}

// splitHost splits a Host header into a lower-case host (without IPv6
// brackets) and its port ("" if none).
func splitHost(hostport string) (host, port string) {
	hostport = strings.ToLower(strings.TrimSpace(hostport))
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		if _, err := strconv.ParseUint(p, 10, 16); err != nil {
			return "", ""
		}
		return h, p
	}
	if strings.Contains(strings.Trim(hostport, "[]"), ":") && !strings.HasPrefix(hostport, "[") {
		return "", "" // a bare IPv6 address or garbage
	}
	return strings.Trim(hostport, "[]"), ""
}

// localPort is the port the request came in on ("" when unknown).
func localPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			return p
		}
	}
	return ""
}

func hostSet(names []string) (map[string]bool, error) {
	m := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if strings.Contains(n, "/") {
			return nil, fmt.Errorf("allowed host %q: give a host name, optionally with a port (hearth.lan or hearth.lan:443), not a URL", n)
		}
		host, port := splitHost(n)
		if host == "" {
			return nil, fmt.Errorf("allowed host %q: not a host name", n)
		}
		if port != "" {
			m[net.JoinHostPort(host, port)] = true
		} else {
			m[host] = true
		}
	}
	return m, nil
}

func originSet(origins []string) (map[string]bool, error) {
	m := map[string]bool{}
	for _, o := range origins {
		o = strings.TrimRight(strings.TrimSpace(o), "/")
		if o == "" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" {
			return nil, fmt.Errorf("allowed origin %q: give scheme and host, as a browser sends them (https://app.example, http://localhost:5173)", o)
		}
		m[o] = true
	}
	return m, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// NewToken returns a fresh random API token (256 bits, URL-safe).
func NewToken() string {
	var b [32]byte
	rand.Read(b[:]) // never fails (crypto/rand documents it)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// TokenFile is the name of the token file in the config directory.
const TokenFile = "api-token"

// LoadOrCreateToken returns the API token kept in the file at path,
// creating the file (mode 0600, its directory 0700) with a new token when
// there is none. created says whether it did. A file others can read is
// refused: the token gives control of the agent.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	for range 2 {
		data, err := os.ReadFile(path)
		if err == nil {
			if fi, err := os.Stat(path); err == nil && runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
				return "", false, fmt.Errorf("the API token file %s can be read by other users (mode %v): run chmod 600 %s, or delete it to get a new token", path, fi.Mode().Perm(), path)
			}
			tok := strings.TrimSpace(string(data))
			if len(tok) < 16 {
				return "", false, fmt.Errorf("the API token in %s is shorter than 16 characters: delete the file to get a new token, or set HEARTH_API_TOKEN", path)
			}
			return tok, false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("reading the API token: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, fmt.Errorf("creating the config directory for the API token: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue // another process made it first: read theirs
		}
		if err != nil {
			return "", false, fmt.Errorf("storing the API token: %w", err)
		}
		tok := NewToken()
		_, err = f.WriteString(tok + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("storing the API token in %s: %w", path, err)
		}
		return tok, true, nil
	}
	return "", false, fmt.Errorf("the API token file %s keeps changing: check what else writes it", path)
}
