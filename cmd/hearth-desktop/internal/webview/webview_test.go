// Tests of the desktop window's handler, written against its documented
// contract: requests go to the API given to Set, a 503 (JSON under /v1, an
// HTML page elsewhere) answers while there is none, the API token is put
// into the HTML page only (GET of "/", of paths without an extension and of
// "/index.html"; never API responses, assets or other methods), escaped,
// with a Content-Length that matches the new body, and every other response
// gets a writer on which http.ResponseController's Flush succeeds even when
// the writer underneath has no Flush, its writes reaching that writer at
// once. InjectToken is tested on its own, and Set against ServeHTTP from
// many goroutines (run with -race).
package webview_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/cmd/hearth-desktop/internal/webview"
)

// hangTimeout bounds every wait, only to turn a hang into a failure.
const hangTimeout = 10 * time.Second

// streamWriter stands for the web engine's response writer: it keeps each
// write as it comes, and it has no Flush (it must not satisfy
// http.Flusher, nor anything else ResponseController flushes through).
type streamWriter struct {
	header http.Header

	mu     sync.Mutex
	code   int
	body   bytes.Buffer
	writes chan string
}

func newStreamWriter() *streamWriter {
	return &streamWriter{header: http.Header{}, writes: make(chan string, 100)}
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		w.code = code
	}
}

func (w *streamWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.code == 0 {
		w.code = http.StatusOK
	}
	w.body.Write(p)
	w.mu.Unlock()
	select {
	case w.writes <- string(p):
	default:
	}
	return len(p), nil
}

func (w *streamWriter) snapshot() (int, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.code, w.body.String()
}

func TestStreamWriterHasNoFlush(t *testing.T) {
	var w any = newStreamWriter()
	if _, ok := w.(http.Flusher); ok {
		t.Fatal("the test's writer must not implement http.Flusher")
	}
	if _, ok := w.(interface{ FlushError() error }); ok {
		t.Fatal("the test's writer must not implement FlushError")
	}
	if err := http.NewResponseController(w.(http.ResponseWriter)).Flush(); !errors.Is(err, http.ErrNotSupported) {
		t.Fatalf("Flush on the bare writer: %v, want ErrNotSupported", err)
	}
}

const page = "<!doctype html>\n<html lang=\"en\">\n  <head>\n    <meta charset=\"UTF-8\" />\n    <title>Hearth</title>\n  </head>\n  <body><div id=\"root\"></div></body>\n</html>\n"

// pageAPI answers every request with the page, as text/html with its
// Content-Length and a header of its own, like the server's static files.
func pageAPI(code int, contentType, body string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Header().Set("X-From-Api", "yes")
		w.WriteHeader(code)
		io.WriteString(w, body)
	})
}

func metaFor(token string) string {
	return `<meta name="` + webview.TokenMeta + `" content="` + html.EscapeString(token) + `">`
}

func TestTokenOnlyInThePage(t *testing.T) {
	const token = "tok-123"
	tests := []struct {
		method, target string
		code           int
		contentType    string
		want           bool // the token is injected
	}{
		{"GET", "/", 200, "text/html; charset=utf-8", true},
		{"GET", "/index.html", 200, "text/html; charset=utf-8", true},
		{"GET", "/sessions/abc", 200, "text/html; charset=utf-8", true},
		{"GET", "/settings", 200, "text/html", true},
		{"GET", "/?x=1", 200, "text/html; charset=utf-8", true},
		// The API, however it answers.
		{"GET", "/v1", 200, "text/html; charset=utf-8", false},
		{"GET", "/v1/", 200, "text/html; charset=utf-8", false},
		{"GET", "/v1/sessions", 200, "text/html; charset=utf-8", false},
		{"GET", "/v1/sessions/abc/events", 200, "text/html; charset=utf-8", false},
		{"GET", "/v1/page.html", 200, "text/html; charset=utf-8", false},
		// Assets.
		{"GET", "/assets/x.js", 200, "text/html; charset=utf-8", false},
		{"GET", "/assets/index-abc.css", 200, "text/html; charset=utf-8", false},
		{"GET", "/favicon.ico", 200, "text/html; charset=utf-8", false},
		{"GET", "/other.html", 200, "text/html; charset=utf-8", false},
		{"GET", "/sub/index.html", 200, "text/html; charset=utf-8", false},
		// Other methods.
		{"POST", "/", 200, "text/html; charset=utf-8", false},
		{"HEAD", "/", 200, "text/html; charset=utf-8", false},
		{"PUT", "/sessions", 200, "text/html; charset=utf-8", false},
		{"DELETE", "/index.html", 200, "text/html; charset=utf-8", false},
		{"OPTIONS", "/", 200, "text/html; charset=utf-8", false},
		// The page's path, but not an HTML page, or not a 200.
		{"GET", "/", 200, "application/json", false},
		{"GET", "/", 200, "text/plain; charset=utf-8", false},
		{"GET", "/", 404, "text/html; charset=utf-8", false},
		{"GET", "/", 500, "text/html; charset=utf-8", false},
		{"GET", "/missing", 404, "text/html; charset=utf-8", false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s %d %s", tt.method, tt.target, tt.code, tt.contentType), func(t *testing.T) {
			h := webview.New(token)
			h.Set(pageAPI(tt.code, tt.contentType, page), "")
			w := newStreamWriter()
			h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			code, body := w.snapshot()
			if code != tt.code {
				t.Errorf("status %d, want %d", code, tt.code)
			}
			if got := w.header.Get("X-From-Api"); got != "yes" {
				t.Errorf("the API's own header is lost: X-From-Api %q", got)
			}
			if got := w.header.Get("Content-Type"); got != tt.contentType {
				t.Errorf("Content-Type %q, want %q", got, tt.contentType)
			}
			if cl := w.header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for a body of %d bytes", cl, len(body))
			}
			has := strings.Contains(body, token)
			if has != tt.want {
				t.Fatalf("token in the response: %v, want %v; body:\n%s", has, tt.want, body)
			}
			if !tt.want {
				if body != page {
					t.Errorf("body changed:\n%s\nwant:\n%s", body, page)
				}
				return
			}
			if n := strings.Count(body, "hearth-token"); n != 1 {
				t.Errorf("%d token elements, want 1", n)
			}
			if want := strings.Replace(page, "<head>", "<head>"+metaFor(token), 1); body != want {
				t.Errorf("body:\n%s\nwant:\n%s", body, want)
			}
		})
	}
}

// TestPageWithoutContentLength: a page that came without a Content-Length
// gets the right one.
func TestPageWithoutContentLength(t *testing.T) {
	h := webview.New("abc")
	h.Set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<html><head>")
		io.WriteString(w, "<title>t</title></head></html>")
	}), "")
	w := newStreamWriter()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	code, body := w.snapshot()
	if code != 200 {
		t.Errorf("status %d", code)
	}
	if want := "<html><head>" + metaFor("abc") + "<title>t</title></head></html>"; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
	if cl := w.header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q for %d bytes", cl, len(body))
	}
}

// TestPageThroughFileServer serves the page the way the server does (with
// http.ServeFileFS, which sets its own Content-Length) through a real HTTP
// server, whose client checks that Content-Length against the body.
func TestPageThroughFileServer(t *testing.T) {
	const token = `t"o<k>&'en`
	h := webview.New(token)
	h.Set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "index.html", time.Time{}, strings.NewReader(page))
	}), "")
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the page (a wrong Content-Length shows here): %v", err)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("Content-Length %d for %d bytes", resp.ContentLength, len(body))
	}
	if !strings.Contains(string(body), metaFor(token)) {
		t.Errorf("no token element in:\n%s", body)
	}
}

var metaRE = regexp.MustCompile(`<meta name="hearth-token" content="([^"<>]*)">`)

func TestTokenIsEscaped(t *testing.T) {
	tokens := []string{
		"plain",
		"",
		`"><script>alert(1)</script>`,
		`a"b`,
		`a'b`,
		`a&amp;b`,
		`<>&"'`,
		"ünïcødé-токен",
		"x\" onload=\"alert(1)",
	}
	for _, token := range tokens {
		t.Run(token, func(t *testing.T) {
			h := webview.New(token)
			h.Set(pageAPI(200, "text/html; charset=utf-8", page), "")
			w := newStreamWriter()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			_, body := w.snapshot()
			m := metaRE.FindStringSubmatch(body)
			if m == nil {
				t.Fatalf("no well-formed token element in:\n%s", body)
			}
			if got := html.UnescapeString(m[1]); got != token {
				t.Errorf("token read back %q, want %q", got, token)
			}
			if strings.Contains(body, "<script>") {
				t.Errorf("the token broke out of its attribute:\n%s", body)
			}
			if cl := w.header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for %d bytes", cl, len(body))
			}
		})
	}
}

func TestInjectToken(t *testing.T) {
	meta := metaFor("T")
	tests := []struct{ name, page, want string }{
		{"head", "<html><head><title>x</title></head></html>", "<html><head>" + meta + "<title>x</title></head></html>"},
		{"upper-case head", "<HTML><HEAD><TITLE>x</TITLE></HEAD></HTML>", "<HTML><HEAD>" + meta + "<TITLE>x</TITLE></HEAD></HTML>"},
		{"mixed-case head", "<html><HeAd></hEaD></html>", "<html><HeAd>" + meta + "</hEaD></html>"},
		{"no head", "<p>hello</p>", meta + "<p>hello</p>"},
		{"empty page", "", meta},
		{"header is not head", "<body><header>x</header></body>", meta + "<body><header>x</header></body>"},
		{"first head only", "<head></head><head></head>", "<head>" + meta + "</head><head></head>"},
		{"non-ASCII after head", "<head><title>héllo wörld</title></head>", "<head>" + meta + "<title>héllo wörld</title></head>"},
		{"ASCII doctype", page, strings.Replace(page, "<head>", "<head>"+meta, 1)},
		// Text whose lower case has another length in bytes (İ, the
		// Kelvin sign, Ⱥ, a byte that is not UTF-8) before <head>: the
		// offsets are the page's own (case is folded in ASCII only).
		{"head with attributes", "<!doctype html><head lang=\"en\"><title>x</title>", "<!doctype html><head lang=\"en\">" + meta + "<title>x</title>"},
		{"dotted capital I before head", "<html lang=\"tr\"><!-- İstanbul --><head><title>x</title>", "<html lang=\"tr\"><!-- İstanbul --><head>" + meta + "<title>x</title>"},
		{"Kelvin sign before head", "<!-- 300 \u212a --><head><title>x</title>", "<!-- 300 \u212a --><head>" + meta + "<title>x</title>"},
		{"growing lower case before head", "<!-- \u023a --><head><title>x</title>", "<!-- \u023a --><head>" + meta + "<title>x</title>"},
		{"Latin-1 byte before head", "<!-- caf\xe9 --><head><title>x</title>", "<!-- caf\xe9 --><head>" + meta + "<title>x</title>"},
		// Here the wrong index runs past the end of the page: a panic.
		{"Latin-1 bytes before a final head", "<!-- \xe9\xe9\xe9 --><head>", "<!-- \xe9\xe9\xe9 --><head>" + meta},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(tt.page)
			got, err := inject(in, "T")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("InjectToken(%q)\n got %q\nwant %q", tt.page, got, tt.want)
			}
			if string(in) != tt.page {
				t.Errorf("the input was changed to %q", in)
			}
			if strings.Replace(got, meta, "", 1) != tt.page {
				t.Errorf("the page around the element changed: %q", got)
			}
		})
	}
}

// inject calls InjectToken, turning a panic into an error so that one
// case cannot stop the others.
func inject(page []byte, token string) (out string, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("InjectToken(%q) panicked: %v", page, v)
		}
	}()
	return string(webview.InjectToken(page, token)), nil
}

func TestUnavailable(t *testing.T) {
	tests := []struct {
		name, problem, target string
		json                  bool
	}{
		{"starting, API", "", "/v1/sessions", true},
		{"starting, API root", "", "/v1", true},
		{"starting, API event stream", "", "/v1/sessions/x/events", true},
		{"starting, page", "", "/", false},
		{"starting, deep page", "", "/sessions/abc", false},
		{"starting, asset", "", "/assets/x.js", false},
		{"problem, API", "The workspace <b>x</b> & co cannot open.", "/v1/sessions", true},
		{"problem, page", "The workspace <b>x</b> & co cannot open.", "/", false},
	}
	for _, tt := range tests {
		for _, method := range []string{"GET", "POST"} {
			t.Run(tt.name+" "+method, func(t *testing.T) {
				const token = "secret-token-xyz"
				h := webview.New(token)
				if tt.problem != "" {
					h.Set(nil, tt.problem)
				}
				w := newStreamWriter()
				h.ServeHTTP(w, httptest.NewRequest(method, tt.target, nil))
				code, body := w.snapshot()
				if code != http.StatusServiceUnavailable {
					t.Errorf("status %d, want 503", code)
				}
				if strings.Contains(body, token) {
					t.Errorf("the token is in the 503: %s", body)
				}
				if got := w.header.Get("Cache-Control"); got != "no-store" {
					t.Errorf("Cache-Control %q, want no-store", got)
				}
				msg := tt.problem
				if msg == "" {
					msg = "Hearth is starting."
				}
				if tt.json {
					if ct := w.header.Get("Content-Type"); ct != "application/json" {
						t.Errorf("Content-Type %q", ct)
					}
					if ra := w.header.Get("Retry-After"); ra == "" {
						t.Error("no Retry-After")
					}
					var v struct {
						Error struct{ Code, Message string }
					}
					if err := json.Unmarshal([]byte(body), &v); err != nil {
						t.Fatalf("not JSON: %v: %s", err, body)
					}
					if v.Error.Code != "unavailable" || v.Error.Message != msg {
						t.Errorf("error %+v, want unavailable / %q", v.Error, msg)
					}
					return
				}
				if ct := w.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
					t.Errorf("Content-Type %q", ct)
				}
				if !strings.Contains(body, "<html") {
					t.Errorf("not a page: %s", body)
				}
				if !strings.Contains(body, html.EscapeString(msg)) {
					t.Errorf("the page does not say %q: %s", msg, body)
				}
				if tt.problem != "" && strings.Contains(body, "<b>") {
					t.Errorf("the problem is not escaped: %s", body)
				}
				refresh := strings.Contains(body, `http-equiv="refresh"`)
				if refresh != (tt.problem == "") {
					t.Errorf("reloads itself: %v, want %v (only while starting)", refresh, tt.problem == "")
				}
			})
		}
	}
}

func TestSetSwapsTheAPI(t *testing.T) {
	h := webview.New("tok")
	get := func() (int, string) {
		w := newStreamWriter()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/v1/who", nil))
		return w.snapshot()
	}
	api := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })
	}
	steps := []struct {
		api      http.Handler
		problem  string
		code     int
		contains string
	}{
		{nil, "", 503, "starting"},
		{api("first"), "", 200, "first"},
		{api("second"), "ignored while there is an API", 200, "second"},
		{nil, "Switching workspaces.", 503, "Switching workspaces."},
		{api("third"), "", 200, "third"},
		{nil, "", 503, "starting"},
	}
	for i, s := range steps {
		if i > 0 || s.api != nil {
			h.Set(s.api, s.problem)
		}
		code, body := get()
		if code != s.code || !strings.Contains(body, s.contains) {
			t.Errorf("step %d: %d %q, want %d with %q", i, code, body, s.code, s.contains)
		}
	}
}

// TestStreamingWithoutFlusher: an API response streams through a writer
// that has no Flush of its own: ResponseController's Flush succeeds, and
// what was written has reached the writer underneath while the handler is
// still running.
func TestStreamingWithoutFlusher(t *testing.T) {
	for _, tt := range []struct{ method, target string }{
		{"GET", "/v1/sessions/abc/events"},
		{"POST", "/v1/sessions/abc/turns"},
		{"GET", "/assets/stream.txt"},
		{"POST", "/"},
	} {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			flushed := make(chan error, 1)
			release := make(chan struct{})
			h := webview.New("tok")
			h.Set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				io.WriteString(w, "data: one\n\n")
				err := http.NewResponseController(w).Flush()
				if _, ok := w.(http.Flusher); !ok {
					err = errors.Join(err, errors.New("the handler's writer is not an http.Flusher"))
				}
				flushed <- err
				<-release
				io.WriteString(w, "data: two\n\n")
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}), "")
			w := newStreamWriter()
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
			}()
			defer func() {
				select {
				case <-release:
				default:
					close(release)
				}
				select {
				case <-done:
				case <-time.After(hangTimeout):
					t.Error("ServeHTTP did not return")
				}
			}()
			select {
			case err := <-flushed:
				if err != nil {
					t.Fatalf("ResponseController.Flush: %v", err)
				}
			case <-time.After(hangTimeout):
				t.Fatal("the handler never flushed")
			}
			select {
			case <-done:
				t.Fatal("ServeHTTP returned before the handler was released")
			default:
			}
			if code, body := w.snapshot(); code != 200 || body != "data: one\n\n" {
				t.Fatalf("while the handler runs the writer has %d %q, want 200 %q", code, body, "data: one\n\n")
			}
			if ct := w.header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("Content-Type %q", ct)
			}
			close(release)
			select {
			case <-done:
			case <-time.After(hangTimeout):
				t.Fatal("ServeHTTP did not return")
			}
			if _, body := w.snapshot(); body != "data: one\n\ndata: two\n\n" {
				t.Errorf("body %q", body)
			}
		})
	}
}

// TestResponseControllerReachesTheWriter: the wrapper lets the
// ResponseController reach the writer underneath for what it does not do
// itself.
func TestResponseControllerReachesTheWriter(t *testing.T) {
	h := webview.New("tok")
	var deadlineErr error
	h.Set(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadlineErr = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}), "")
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/v1/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if deadlineErr != nil {
		t.Errorf("SetWriteDeadline through the wrapper: %v", deadlineErr)
	}
}

// TestConcurrentSetAndServe swaps the API while requests are served; run
// with -race. Every response is one of the APIs' or a 503.
func TestConcurrentSetAndServe(t *testing.T) {
	const token = "tok"
	h := webview.New(token)
	apis := []http.Handler{
		pageAPI(200, "text/html; charset=utf-8", "<html><head></head>A</html>"),
		pageAPI(200, "text/html; charset=utf-8", "<html><head></head>B</html>"),
		nil,
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			h.Set(apis[i%len(apis)], fmt.Sprintf("problem %d", i))
		}
	}()
	errs := make(chan string, 100)
	var served sync.WaitGroup
	for g := 0; g < 8; g++ {
		served.Add(1)
		go func(g int) {
			defer served.Done()
			for i := 0; i < 200; i++ {
				target := "/"
				if (g+i)%2 == 0 {
					target = "/v1/x"
				}
				w := newStreamWriter()
				h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
				code, body := w.snapshot()
				ok := false
				switch code {
				case 200:
					ok = strings.Contains(body, "A</html>") || strings.Contains(body, "B</html>")
					ok = ok && strings.Contains(body, token) == (target == "/")
				case 503:
					ok = strings.Contains(body, "problem") || strings.Contains(body, "starting")
				}
				if !ok {
					select {
					case errs <- fmt.Sprintf("GET %s: %d %q", target, code, body):
					default:
					}
				}
			}
		}(g)
	}
	served.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
