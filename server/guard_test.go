package server

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.MaxBodyBytes = 1 << 10 })
	big := `{"title": "` + strings.Repeat("x", 2<<10) + `"}`
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		edit   func(r *http.Request)
		status int
		code   string
	}{
		// Each failure, with the code a client can act on.
		{"no token", "GET", "/v1/sessions", "", func(r *http.Request) { r.Header.Del("Authorization") }, 401, "unauthorized"},
		{"wrong token", "GET", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Authorization", "Bearer wrong-token-0123456789") }, 401, "invalid_token"},
		{"token as basic auth", "GET", "/v1/sessions", "", func(r *http.Request) { r.SetBasicAuth("hearth", testToken) }, 401, "invalid_token"},
		{"token in the query", "GET", "/v1/sessions?token=" + testToken, "", func(r *http.Request) { r.Header.Del("Authorization") }, 401, "unauthorized"},
		{"bad Host (DNS rebinding)", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "attacker.example:" + f.port }, 403, "bad_host"},
		{"loopback name on another port", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "localhost:1" }, 403, "bad_host"},
		{"Host without port", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "localhost" }, 403, "bad_host"},
		{"bad Host on the UI too", "GET", "/", "", func(r *http.Request) { r.Host = "attacker.example:" + f.port }, 403, "bad_host"},
		{"bad Origin", "POST", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }, 403, "bad_origin"},
		{"Origin on another port", "POST", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Origin", "http://127.0.0.1:3000") }, 403, "bad_origin"},
		{"null Origin", "POST", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Origin", "null") }, 403, "bad_origin"},
		{"cross-site fetch", "GET", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }, 403, "bad_origin"},
		{"oversized body", "POST", "/v1/sessions", big, nil, 413, "body_too_large"},
		{"oversized chunked body", "POST", "/v1/sessions", big, func(r *http.Request) { r.ContentLength = -1 }, 413, "body_too_large"},
		// What is allowed.
		{"token", "GET", "/v1/sessions", "", nil, 200, ""},
		{"bearer in lower case", "GET", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Authorization", "bearer "+testToken) }, 200, ""},
		{"localhost", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "localhost:" + f.port }, 200, ""},
		{"[::1]", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "[::1]:" + f.port }, 200, ""},
		{"allowed host", "GET", "/v1/sessions", "", func(r *http.Request) { r.Host = "hearth.test:" + f.port }, 200, ""},
		{"own origin", "POST", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:"+f.port) }, 201, ""},
		{"allowed origin", "POST", "/v1/sessions", "", func(r *http.Request) { r.Header.Set("Origin", "https://app.example") }, 201, ""},
		{"UI without token", "GET", "/", "", func(r *http.Request) { r.Header.Del("Authorization") }, 200, ""},
		{"body at the limit", "POST", "/v1/sessions", `{"title": "short"}`, nil, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var body any
			if tt.body != "" {
				body = tt.body
			}
			req := f.request(tt.method, tt.path, body)
			if tt.edit != nil {
				tt.edit(req)
			}
			resp := f.send(req)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d\n%s", resp.StatusCode, tt.status, data)
			}
			if tt.code != "" && !strings.Contains(string(data), `"code":"`+tt.code+`"`) {
				t.Errorf("body %s, want code %s", data, tt.code)
			}
			if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestCORSForAllowedOrigins(t *testing.T) {
	f := newFixture(t)
	req := f.request("OPTIONS", "/v1/sessions", nil)
	req.Header.Del("Authorization")
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	resp := f.send(req)
	resp.Body.Close()
	if resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Errorf("preflight: %d %v", resp.StatusCode, resp.Header)
	}
	// The server's own origin needs no CORS headers.
	req = f.request("GET", "/v1/sessions", nil)
	req.Header.Set("Origin", "http://127.0.0.1:"+f.port)
	resp = f.send(req)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("own origin: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	f := newFixture(t)
	base := Options{Token: testToken}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"short token", func(o *Options) { o.Token = "short" }, "at least 16"},
		{"URL as host", func(o *Options) { o.AllowedHosts = []string{"http://hearth.lan"} }, "not a URL"},
		{"origin without scheme", func(o *Options) { o.AllowedOrigins = []string{"app.example"} }, "scheme and host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			if _, err := New(f.api.agent, o); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New: %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New(nil, base); err == nil || !strings.Contains(err.Error(), "no agent") {
		t.Errorf("New without an agent: %v", err)
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "conf", TokenFile)
	tok, created, err := LoadOrCreateToken(path)
	if err != nil || !created || len(tok) < 40 {
		t.Fatalf("first start: %q %v %v", tok, created, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	again, created, err := LoadOrCreateToken(path)
	if err != nil || created || again != tok {
		t.Errorf("second start: %q %v %v", again, created, err)
	}
	if runtime.GOOS == "windows" {
		return
	}
	os.Chmod(path, 0o644)
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("readable by others: %v", err)
	}
	os.Chmod(path, 0o600)
	os.WriteFile(path, []byte("short\n"), 0o600)
	if _, _, err := LoadOrCreateToken(path); err == nil || !strings.Contains(err.Error(), "delete the file") {
		t.Errorf("short token: %v", err)
	}
	if a, b := NewToken(), NewToken(); a == b || len(a) < 16 {
		t.Errorf("tokens %q and %q", a, b)
	}
}

func TestSplitHost(t *testing.T) {
	tests := []struct{ in, host, port string }{
		{"127.0.0.1:8437", "127.0.0.1", "8437"},
		{"LOCALHOST:8437", "localhost", "8437"},
		{"[::1]:8437", "::1", "8437"},
		{"[::1]", "::1", ""},
		{"localhost", "localhost", ""},
		{"::1", "", ""},
		{"host:port", "", ""},
		{"host:99999", "", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if h, p := splitHost(tt.in); h != tt.host || p != tt.port {
			t.Errorf("splitHost(%q) = %q, %q; want %q, %q", tt.in, h, p, tt.host, tt.port)
		}
	}
}
