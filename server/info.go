package server

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// providerTimeout bounds the calls GET /v1/health and GET /v1/models make
// to the model server.
const providerTimeout = 10 * time.Second

// providerError describes a model server's failure with its fix.
func providerError(err error) *errorBody {
	var le *llm.Error
	if errors.As(err, &le) {
		msg := le.Message
		if msg == "" {
			msg = err.Error()
		}
		if len(le.Available) > 0 {
			msg += " (available: " + strings.Join(le.Available, ", ") + ")"
		}
		return &errorBody{Code: "provider_" + string(le.Code), Message: msg, Hint: le.Hint}
	}
	return &errorBody{Code: "provider_error", Message: err.Error()}
}

// describedAgent is the agent GET /v1/health and /v1/models describe: that
// of ?workspace= (a known workspace), else of the server's own workspace as
// its trust now stands (a trusted project may choose its own model
// server). It writes the error response and returns nil when there is
// none.
func (s *Server) describedAgent(w http.ResponseWriter, r *http.Request) *hearth.Agent {
	if s.o.Workspaces == nil {
		return s.agent
	}
	ws := r.URL.Query().Get("workspace")
	if ws == "" {
		if a, err := s.o.Workspaces.Agent(r.Context(), ""); err == nil {
			return a
		}
		return s.agent // its own workspace's config is broken: describe the one it started with
	}
	return s.agentFor(w, r.Context(), ws)
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	a := s.describedAgent(w, r)
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), providerTimeout)
	defer cancel()
	list, err := llm.Models(ctx, a.Provider())
	if err != nil {
		writeJSON(w, http.StatusBadGateway, apiError{*providerError(err)})
		return
	}
	if list == nil {
		list = []llm.ModelInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list, "default": a.Model()})
}

// healthJSON is GET /v1/health.
type healthJSON struct {
	// Status is "ok" when the model server answers and has the model,
	// else "degraded".
	Status       string         `json:"status"`
	Version      string         `json:"version,omitempty"`
	Provider     providerHealth `json:"provider"`
	Model        *modelHealth   `json:"model,omitempty"`
	Tools        []string       `json:"tools"`
	ApprovalMode string         `json:"approval_mode"`
	// Workspace is the folder described (?workspace=, else the
	// server's own) and Trust its trust level in force ("" for an agent
	// whose program set none).
	Workspace string `json:"workspace,omitempty"`
	Trust     string `json:"trust,omitempty"`
	// MCP lists the MCP servers and their state (absent when none is
	// configured); a failed one makes the status "degraded".
	MCP []hearth.MCPStatus `json:"mcp,omitempty"`
}

type providerHealth struct {
	Kind      string     `json:"kind"`
	BaseURL   string     `json:"base_url,omitempty"`
	Reachable bool       `json:"reachable"`
	Version   string     `json:"version,omitempty"`
	LatencyMS int64      `json:"latency_ms"`
	Error     *errorBody `json:"error,omitempty"`
}

type modelHealth struct {
	Name          string           `json:"name"`
	Available     bool             `json:"available"`
	ContextLength int              `json:"context_length,omitempty"`
	Capabilities  []llm.Capability `json:"capabilities,omitempty"`
	Error         *errorBody       `json:"error,omitempty"`
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	a := s.describedAgent(w, r)
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), providerTimeout)
	defer cancel()
	p := a.Provider()
	out := healthJSON{Status: "ok", Version: s.o.Version, Tools: []string{}, ApprovalMode: string(a.Mode()),
		Provider: providerHealth{Kind: p.Kind(), BaseURL: s.o.ProviderURL}, Workspace: a.Workspace(), Trust: string(a.Trust())}
	if out.ApprovalMode == "" {
		out.ApprovalMode = "default"
	}
	if names := a.Tools(); names != nil {
		out.Tools = append(out.Tools, names...)
	}
	start := time.Now()
	info, err := llm.Health(ctx, p)
	out.Provider.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		out.Status = "degraded"
		out.Provider.Error = providerError(err)
	} else {
		out.Provider.Reachable = true
		out.Provider.Version = info.Version
		if info.BaseURL != "" {
			out.Provider.BaseURL = info.BaseURL
		}
	}
	if m := a.Model(); m != "" {
		out.Model = &modelHealth{Name: m}
		if out.Provider.Reachable {
			mi, err := llm.Describe(ctx, p, m)
			if err != nil {
				out.Status = "degraded"
				out.Model.Error = providerError(err)
			} else {
				out.Model.Available = true
				out.Model.ContextLength = mi.ContextLength
				out.Model.Capabilities = mi.Capabilities
			}
		}
	}
	if st := a.MCPStatus(); st != nil {
		out.MCP = st
		for _, st := range out.MCP {
			if st.State == hearth.MCPFailed || st.State == hearth.MCPCrashed {
				out.Status = "degraded"
			}
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// usageJSON is GET /v1/usage.
type usageJSON struct {
	// Since is the first day counted (UTC).
	Since string `json:"since"`
	// Currency is the label of the user's currency for costs
	// (Options.Currency: "USD"), "" when none is configured.
	Currency string `json:"currency"`
	// Days holds every day from Since to today, zero days included.
	Days []dayUsage `json:"days"`
	// Total sums Days.
	Total usageFigures `json:"total"`
	// Sessions are the sessions that used tokens (all time), most
	// recently updated first.
	Sessions []sessionUsage `json:"sessions"`
	// By and Groups, when ?by= asks for them: the same usage as Total,
	// summed per day, model, session or workspace (only keys with calls),
	// in the order of their keys.
	By     string        `json:"by,omitempty"`
	Groups *[]usageGroup `json:"groups,omitempty"`
}

// usageFigures sums model calls: tokens and cost. Cost is in micro-units
// (millionths) of the user's currency, the sum of the priced calls; it is
// null when no call was priced (none made, or none with a price), never 0
// for an unknown cost. Unpriced counts the calls without a price: above 0,
// the cost is a lower bound.
type usageFigures struct {
	Calls             int    `json:"calls"`
	InputTokens       int64  `json:"input_tokens"`
	OutputTokens      int64  `json:"output_tokens"`
	CachedInputTokens int64  `json:"cached_input_tokens"`
	Cost              *int64 `json:"cost"`
	Unpriced          int    `json:"unpriced"`
}

func figures(t session.UsageTotal) usageFigures {
	f := usageFigures{Calls: t.Calls, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		CachedInputTokens: t.CachedInputTokens, Unpriced: t.Unpriced}
	if t.Calls > t.Unpriced {
		c := t.Cost
		f.Cost = &c
	}
	return f
}

type dayUsage struct {
	Day string `json:"day"`
	usageFigures
}

type usageGroup struct {
	Key string `json:"key"`
	usageFigures
}

type sessionUsage struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Model        string    `json:"model,omitempty"`
	Workspace    string    `json:"workspace,omitempty"`
	UpdatedAt    time.Time `json:"updated_at"`
	InputTokens  int       `json:"input_tokens"`
	OutputTokens int       `json:"output_tokens"`
	Cost         *int64    `json:"cost"`
	Unpriced     int       `json:"unpriced"`
}

// maxUsageDays bounds GET /v1/usage?days= (and since=).
const maxUsageDays = 3660

// usageQuery reads GET /v1/usage's parameters: the first day shown, the
// rows' filter and the grouping. It writes the error response and returns
// false when one cannot be used.
func usageQuery(w http.ResponseWriter, r *http.Request, today time.Time) (day time.Time, f session.UsageFilter, by string, ok bool) {
	q := r.URL.Query()
	days := 30
	if v := q.Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxUsageDays {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("days=%q: give a number of days from 1 to %d", v, maxUsageDays))
			return
		}
		days = n
	}
	day = today.AddDate(0, 0, -(days - 1))
	f.Since = day
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			t, err = time.Parse(time.RFC3339, v)
		}
		if err != nil {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("since=%q: give a day (2006-01-02, UTC) or a time (RFC 3339)", v))
			return
		}
		t = t.UTC()
		day = t.Truncate(24 * time.Hour)
		if day.After(today) || day.Before(today.AddDate(0, 0, -(maxUsageDays-1))) {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("since=%q: give a time from the last %d days, not in the future", v, maxUsageDays))
			return
		}
		f.Since = t
	}
	f.SessionID = q.Get("session")
	f.Model = q.Get("model")
	if q.Has("workspace") {
		ws := q.Get("workspace")
		f.Workspace = &ws
	}
	switch by = q.Get("by"); by {
	case session.ByDay, session.ByModel, session.BySession, session.ByWorkspace, "":
	default:
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("by=%q: give day, model, session or workspace", by))
		return
	}
	return day, f, by, true
}

func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	since, f, by, ok := usageQuery(w, r, today)
	if !ok {
		return
	}
	byDay, err := s.store.UsageTotals(ctx, f, session.ByDay)
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	total, err := s.store.UsageTotals(ctx, f, session.ByTotal)
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	list, err := s.store.List(ctx, session.ListOptions{Workspace: f.Workspace})
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	out := usageJSON{Since: since.Format(time.DateOnly), Currency: s.o.Currency, Days: []dayUsage{}, Sessions: []sessionUsage{}}
	have := map[string]session.UsageTotal{}
	for _, d := range byDay {
		have[d.Key] = d
	}
	for d := since; !d.After(today); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		out.Days = append(out.Days, dayUsage{Day: day, usageFigures: figures(have[day])})
	}
	if len(total) > 0 {
		out.Total = figures(total[0])
	}
	for _, se := range list {
		if se.InputTokens+se.OutputTokens == 0 && se.Cost == nil && se.Unpriced == 0 || f.SessionID != "" && se.ID != f.SessionID {
			continue
		}
		out.Sessions = append(out.Sessions, sessionUsage{ID: se.ID, Title: se.Title, Model: se.Model, Workspace: se.Workspace,
			UpdatedAt: se.UpdatedAt, InputTokens: se.InputTokens, OutputTokens: se.OutputTokens, Cost: se.Cost, Unpriced: se.Unpriced})
	}
	if by != "" {
		groups := byDay
		if by != session.ByDay {
			if groups, err = s.store.UsageTotals(ctx, f, by); err != nil {
				s.storeError(w, "", err)
				return
			}
		}
		list := make([]usageGroup, 0, len(groups))
		for _, g := range groups {
			list = append(list, usageGroup{Key: g.Key, usageFigures: figures(g)})
		}
		out.By, out.Groups = by, &list
	}
	writeJSON(w, http.StatusOK, out)
}

// openAPIDoc is the API's OpenAPI 3.1 document.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPI returns the API's OpenAPI document (JSON).
func OpenAPI() []byte { return slices.Clone(openAPIDoc) }

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(openAPIDoc)
}

// notFound answers /v1 paths no route matched: 405 with Allow when the
// path exists for other methods, else 404.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, rt := range routes {
		if pathMatches(rt.Path, r.URL.Path) {
			allow = append(allow, rt.Method)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", fmt.Sprintf("%s does not take %s: use %s", r.URL.Path, r.Method, strings.Join(allow, " or ")))
		return
	}
	writeError(w, http.StatusNotFound, "no_route", fmt.Sprintf("no endpoint %s %s: the API is described at GET /v1/openapi.json", r.Method, r.URL.Path))
}

// pathMatches reports whether path fits pattern, whose {name} segments
// match any one segment.
func pathMatches(pattern, path string) bool {
	ps, xs := strings.Split(pattern, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") {
			if xs[i] == "" {
				return false
			}
			continue
		}
		if ps[i] != xs[i] {
			return false
		}
	}
	return true
}
