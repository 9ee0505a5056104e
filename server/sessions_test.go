package server

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/hearth-agent/hearth"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
)

func TestSessionsCRUD(t *testing.T) {
	f := newFixture(t)
	var created sessionJSON
	f.call("POST", "/v1/sessions", map[string]any{"title": "Parser bug"}, http.StatusCreated, &created)
	if created.ID == "" || created.Title != "Parser bug" || created.Provider != "ollama" || created.Model != "m" || created.Workspace != f.api.agent.Workspace() || created.Workspace == "" {
		t.Fatalf("created %+v", created)
	}
	other := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("The lexer drops tabs.")))
	f.turn(other, map[string]any{"message": "why does the lexer fail?"}).rest()

	var list struct{ Sessions []sessionJSON }
	f.call("GET", "/v1/sessions", nil, http.StatusOK, &list)
	if len(list.Sessions) != 2 || list.Sessions[0].ID != other {
		t.Errorf("list %+v", list.Sessions)
	}
	f.call("GET", "/v1/sessions?q=lexer", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != other {
		t.Errorf("search %+v", list.Sessions)
	}
	f.call("GET", "/v1/sessions?limit=1", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 {
		t.Errorf("limit 1: %d", len(list.Sessions))
	}

	var renamed sessionJSON
	f.call("PATCH", "/v1/sessions/"+created.ID, map[string]any{"title": "  Tabs  "}, http.StatusOK, &renamed)
	if renamed.Title != "Tabs" {
		t.Errorf("renamed %+v", renamed)
	}
	var d sessionDetail
	f.call("GET", "/v1/sessions/"+other, nil, http.StatusOK, &d)
	if len(d.Messages) != 2 || d.Messages[0].Content != "why does the lexer fail?" || d.Messages[1].Content != "The lexer drops tabs." {
		t.Errorf("detail %+v", d.Messages)
	}
	f.call("DELETE", "/v1/sessions/"+created.ID, nil, http.StatusNoContent, nil)
	f.call("GET", "/v1/sessions", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 {
		t.Errorf("after delete: %+v", list.Sessions)
	}

	errs := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"get missing", "GET", "/v1/sessions/s-nope", nil, 404, "not_found"},
		{"rename missing", "PATCH", "/v1/sessions/s-nope", map[string]any{"title": "x"}, 404, "not_found"},
		{"delete missing", "DELETE", "/v1/sessions/" + created.ID, nil, 404, "not_found"},
		{"rename without title", "PATCH", "/v1/sessions/" + other, map[string]any{}, 400, "bad_request"},
		{"two-line title", "PATCH", "/v1/sessions/" + other, map[string]any{"title": "a\nb"}, 400, "bad_request"},
		{"long title", "POST", "/v1/sessions", map[string]any{"title": strings.Repeat("é", 201)}, 400, "bad_request"},
		{"bad limit", "GET", "/v1/sessions?limit=x", nil, 400, "bad_request"},
		{"unknown route", "GET", "/v1/nothing", nil, 404, "no_route"},
		{"wrong method", "PUT", "/v1/sessions/" + other, nil, 405, "method_not_allowed"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			status, code, msg := f.errorCode(f.request(tt.method, tt.path, tt.body))
			if status != tt.status || code != tt.code {
				t.Errorf("%d %s (%s), want %d %s", status, code, msg, tt.status, tt.code)
			}
		})
	}
	resp := f.send(f.request("PUT", "/v1/sessions/"+other, nil))
	resp.Body.Close()
	if allow := resp.Header.Get("Allow"); allow != "GET, PATCH, DELETE" {
		t.Errorf("Allow: %q", allow)
	}
}

func TestUsagePerSessionAndPerDay(t *testing.T) {
	f := newFixture(t)
	a, b, idle := f.newSession(), f.newSession(), f.newSession()
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Text("one"), llmtest.Usage(100, 10)),
		llmtest.OllamaStream("m", llmtest.Text("two"), llmtest.Usage(200, 20)),
		llmtest.OllamaStream("m", llmtest.Text("three"), llmtest.Usage(300, 30)))
	f.turn(a, map[string]any{"message": "1"}).rest()
	f.turn(a, map[string]any{"message": "2"}).rest()
	f.turn(b, map[string]any{"message": "3"}).rest()

	var u usageJSON
	f.call("GET", "/v1/usage?days=7", nil, http.StatusOK, &u)
	today := time.Now().UTC().Format(time.DateOnly)
	if len(u.Days) != 7 || u.Days[6].Day != today || u.Days[6].InputTokens != 600 || u.Days[6].OutputTokens != 60 || u.Days[0].InputTokens != 0 {
		t.Errorf("days %+v", u.Days)
	}
	if u.Total.InputTokens != 600 || u.Total.OutputTokens != 60 || u.Total.Calls != 3 || u.Since != time.Now().UTC().AddDate(0, 0, -6).Format(time.DateOnly) {
		t.Errorf("total %+v since %s", u.Total, u.Since)
	}
	// No price is configured: the cost is unknown, never 0.
	if u.Total.Cost != nil || u.Total.Unpriced != 3 || u.Days[6].Cost != nil || u.Days[0].Cost != nil {
		t.Errorf("cost of unpriced calls: total %+v, today %+v", u.Total, u.Days[6])
	}
	type tokens struct{ in, out int }
	got := map[string]tokens{}
	for _, s := range u.Sessions {
		got[s.ID] = tokens{s.InputTokens, s.OutputTokens}
	}
	if len(got) != 2 || got[a] != (tokens{300, 30}) || got[b] != (tokens{300, 30}) {
		t.Errorf("sessions %+v (idle %s)", u.Sessions, idle)
	}
	f.call("GET", "/v1/usage", nil, http.StatusOK, &u)
	if len(u.Days) != 30 {
		t.Errorf("default: %d days", len(u.Days))
	}
	if status, _, _ := f.errorCode(f.request("GET", "/v1/usage?days=0", nil)); status != 400 {
		t.Errorf("days=0: %d", status)
	}
}

func TestModelsAndHealth(t *testing.T) {
	f := newFixture(t)
	var models struct {
		Models  []struct{ Name string }
		Default string
	}
	f.call("GET", "/v1/models", nil, http.StatusOK, &models)
	if len(models.Models) != 1 || models.Models[0].Name != "m" || models.Default != "m" {
		t.Errorf("models %+v", models)
	}
	var h healthJSON
	f.call("GET", "/v1/health", nil, http.StatusOK, &h)
	if h.Status != "ok" || !h.Provider.Reachable || h.Provider.Version == "" || h.Model == nil || !h.Model.Available ||
		!slices.Equal(h.Tools, []string{"read_note", "write_note"}) || h.ApprovalMode != "default" || h.Version != "test" {
		t.Errorf("health %+v", h)
	}
}

func TestHealthWhenTheProviderIsDown(t *testing.T) {
	tests := []struct {
		name     string
		down     bool
		model    string
		wantCode string
	}{
		{"unreachable", true, "m", "provider_unreachable"},
		{"model missing", false, "absent", "provider_model_not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, func(o *setup) {
				o.Model = tt.model
				if tt.down {
					o.Provider = ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:1", MaxRetries: -1})
					o.ProviderURL = "http://127.0.0.1:1"
				}
			})
			var h healthJSON
			f.call("GET", "/v1/health", nil, http.StatusOK, &h)
			if h.Status != "degraded" {
				t.Errorf("status %q", h.Status)
			}
			e := h.Provider.Error
			if h.Model != nil && h.Model.Error != nil {
				e = h.Model.Error
			}
			if e == nil || e.Code != tt.wantCode || e.Message == "" {
				t.Fatalf("health %+v", h)
			}
			if tt.down {
				if h.Provider.BaseURL != "http://127.0.0.1:1" || e.Hint == "" {
					t.Errorf("no address or fix: %+v", h.Provider)
				}
				status, code, _ := f.errorCode(f.request("GET", "/v1/models", nil))
				if status != http.StatusBadGateway || code != "provider_unreachable" {
					t.Errorf("models: %d %s", status, code)
				}
			}
		})
	}
}

func TestStaticUI(t *testing.T) {
	assets := fstest.MapFS{
		"index.html":         {Data: []byte("<!doctype html><title>UI</title>")},
		"assets/app-1a2b.js": {Data: []byte("console.log(1)")},
	}
	f := newFixture(t, func(o *setup) { o.Assets = assets })
	tests := []struct {
		path, want, cache string
		status            int
	}{
		{"/", "<title>UI</title>", "no-cache", 200},
		{"/?token=abc", "<title>UI</title>", "no-cache", 200},
		{"/sessions/s-abc", "<title>UI</title>", "no-cache", 200}, // the UI's own routes
		{"/assets/app-1a2b.js", "console.log(1)", "immutable", 200},
		{"/assets/missing.js", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			req := f.request("GET", tt.path, nil)
			req.Header.Del("Authorization")
			resp := f.send(req)
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(data), tt.want) || !strings.Contains(resp.Header.Get("Cache-Control"), tt.cache) {
				t.Errorf("%d %q cache %q", resp.StatusCode, data, resp.Header.Get("Cache-Control"))
			}
			if tt.status == 200 && (!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
				resp.Header.Get("Referrer-Policy") != "no-referrer") {
				t.Errorf("security headers %v", resp.Header)
			}
		})
	}
	resp := f.send(f.request("POST", "/", "x"))
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
}

// TestEmbeddedUI checks that the built web UI is embedded and served: its
// page (also for the UI's own routes, so that a reload works), the hashed
// files it loads, with the headers that keep it safe.
func TestEmbeddedUI(t *testing.T) {
	f := newFixture(t)
	get := func(path string) (*http.Response, string) {
		req := f.request("GET", path, nil)
		req.Header.Del("Authorization") // the page itself needs no token
		resp := f.send(req)
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(data)
	}
	resp, page := get("/")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("CSP %q", csp)
	}
	if strings.Contains(page, "<script>") || strings.Contains(page, "<script type=\"module\">") {
		t.Errorf("the page has an inline script, which the CSP refuses:\n%s", page)
	}
	scripts := regexp.MustCompile(`src="(/assets/[^"]+\.js)"`).FindAllStringSubmatch(page, -1)
	styles := regexp.MustCompile(`href="(/assets/[^"]+\.css)"`).FindAllStringSubmatch(page, -1)
	if len(scripts) != 1 || len(styles) != 1 {
		t.Fatalf("the page should load one script and one style sheet from /assets/ (is server/ui built? cd web && npm run build):\n%s", page)
	}
	for _, a := range []struct{ path, ctype string }{{scripts[0][1], "javascript"}, {styles[0][1], "text/css"}} {
		resp, body := get(a.path)
		if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Type"), a.ctype) || len(body) < 1000 {
			t.Errorf("GET %s: %d %s, %d bytes", a.path, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s: Cache-Control %q, want immutable (the name has a hash)", a.path, cc)
		}
	}
	if resp, body := get("/s/s-abc123"); resp.StatusCode != 200 || body != page || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /s/s-abc123 (a route of the UI): %d, Cache-Control %q, same page: %v", resp.StatusCode, resp.Header.Get("Cache-Control"), body == page)
	}
	if resp, _ := get("/assets/missing.js"); resp.StatusCode != 404 {
		t.Errorf("GET /assets/missing.js: %d, want 404", resp.StatusCode)
	}
}

// TestOpenAPIMatchesRoutes checks that every route is documented and every
// documented operation is routed, and that the document is served.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	var documented, routed []string
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(method)+" "+path)
			var o struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			json.Unmarshal(op, &o)
			if o.OperationID == "" || o.Responses["401"] == nil {
				t.Errorf("%s %s: no operationId or no 401 response", method, path)
			}
		}
	}
	for _, rt := range routes {
		routed = append(routed, rt.Method+" "+rt.Path)
	}
	sort.Strings(documented)
	sort.Strings(routed)
	if !slices.Equal(documented, routed) {
		t.Errorf("documented %v\nrouted     %v", documented, routed)
	}

	// Every documented operation reaches a handler (not the 404/405 of
	// unknown routes), and the served document is the one in the repo.
	f := newFixture(t)
	for _, op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{id}", "s-nope").Replace(path)
		status, code, _ := f.errorCode(f.request(method, path, nil))
		if code == "no_route" || code == "method_not_allowed" || status == 0 {
			t.Errorf("%s is not routed: %d %s", op, status, code)
		}
	}
	resp := f.send(f.request("GET", "/v1/openapi.json", nil))
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(data) != string(OpenAPI()) {
		t.Errorf("served document differs (%d)", resp.StatusCode)
	}
}

func TestDefaultsAndModes(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Profile.Mode = hearth.ModeYolo })
	var h healthJSON
	f.call("GET", "/v1/health", nil, http.StatusOK, &h)
	if h.ApprovalMode != "yolo" {
		t.Errorf("approval mode %q", h.ApprovalMode)
	}
	if f.api.o.MaxBodyBytes != DefaultMaxBodyBytes || f.api.o.KeepEvents != DefaultKeepEvents || f.api.o.ApprovalTimeout != DefaultApprovalTimeout {
		t.Errorf("defaults %+v", f.api.o)
	}
}

func TestHealthReportsMCPServers(t *testing.T) {
	// A real MCP server that cannot start: an HTTP one where nothing
	// answers.
	f := newFixture(t, func(o *setup) {
		o.MCPServers = []hearth.MCPServer{{Name: "search", URL: "http://127.0.0.1:1/mcp"}}
	})
	var h healthJSON
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		h = healthJSON{}
		f.call("GET", "/v1/health", nil, http.StatusOK, &h)
		if len(h.MCP) == 1 && h.MCP[0].State == hearth.MCPFailed || time.Now().After(deadline) {
			break
		}
	}
	if h.Status != "degraded" || len(h.MCP) != 1 || h.MCP[0].Name != "search" || h.MCP[0].Error == "" {
		t.Errorf("%+v", h)
	}
	// Without MCP servers, none is reported and the status is ok.
	g := newFixture(t)
	h = healthJSON{}
	g.call("GET", "/v1/health", nil, http.StatusOK, &h)
	if h.Status != "ok" || h.MCP != nil {
		t.Errorf("no MCP servers: %+v", h)
	}
}
