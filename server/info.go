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

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), providerTimeout)
	defer cancel()
	list, err := llm.Models(ctx, s.agent.Provider())
	if err != nil {
		writeJSON(w, http.StatusBadGateway, apiError{*providerError(err)})
		return
	}
	if list == nil {
		list = []llm.ModelInfo{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"models": list, "default": s.agent.Model()})
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
	ctx, cancel := context.WithTimeout(r.Context(), providerTimeout)
	defer cancel()
	p := s.agent.Provider()
	out := healthJSON{Status: "ok", Version: s.o.Version, Tools: []string{}, ApprovalMode: string(s.agent.Mode()),
		Provider: providerHealth{Kind: p.Kind(), BaseURL: s.o.ProviderURL}}
	if out.ApprovalMode == "" {
		out.ApprovalMode = "default"
	}
	if names := s.agent.Tools(); names != nil {
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
	if m := s.agent.Model(); m != "" {
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
	if st := s.agent.MCPStatus(); st != nil {
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
	// Days holds every day from Since to today, zero days included.
	Days []session.DayUsage `json:"days"`
	// Total sums Days.
	Total tokens `json:"total"`
	// Sessions are the sessions that used tokens (all time), most
	// recently updated first.
	Sessions []sessionUsage `json:"sessions"`
}

type tokens struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

type sessionUsage struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Model     string    `json:"model,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
	tokens
}

// maxUsageDays bounds GET /v1/usage?days=.
const maxUsageDays = 3660

func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	days := 30
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxUsageDays {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("days=%q: give a number of days from 1 to %d", v, maxUsageDays))
			return
		}
		days = n
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(days - 1))
	byDay, err := s.store.UsageByDay(r.Context(), since)
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	list, err := s.store.List(r.Context(), session.ListOptions{})
	if err != nil {
		s.storeError(w, "", err)
		return
	}
	out := usageJSON{Since: since.Format(time.DateOnly), Days: make([]session.DayUsage, 0, days), Sessions: []sessionUsage{}}
	have := map[string]session.DayUsage{}
	for _, d := range byDay {
		have[d.Day] = d
	}
	for d := since; !d.After(today); d = d.AddDate(0, 0, 1) {
		day := d.Format(time.DateOnly)
		u, ok := have[day]
		if !ok {
			u = session.DayUsage{Day: day}
		}
		out.Days = append(out.Days, u)
		out.Total.InputTokens += u.InputTokens
		out.Total.OutputTokens += u.OutputTokens
	}
	for _, se := range list {
		if se.InputTokens+se.OutputTokens == 0 {
			continue
		}
		out.Sessions = append(out.Sessions, sessionUsage{ID: se.ID, Title: se.Title, Model: se.Model, UpdatedAt: se.UpdatedAt,
			tokens: tokens{se.InputTokens, se.OutputTokens}})
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
