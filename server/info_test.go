package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// chatOnly is a provider of an embedder's own that can only chat: it hides
// every optional ability of the provider it wraps.
type chatOnly struct{ p llm.Provider }

func (c chatOnly) Kind() string { return "remote" }

func (c chatOnly) Chat(ctx context.Context, req *llm.Request) llm.Stream { return c.p.Chat(ctx, req) }

// A provider that cannot list models or check its health gets errors that
// say so, with the provider's code.
func TestModelsAndHealthOfAChatOnlyProvider(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Provider = chatOnly{o.Provider} })

	status, code, msg := f.errorCode(f.request("GET", "/v1/models", nil))
	if status != http.StatusBadGateway || code != "provider_invalid_request" || !strings.Contains(msg, "cannot list its models") {
		t.Errorf("GET /v1/models: %d %s %q", status, code, msg)
	}

	var h healthJSON
	f.call("GET", "/v1/health", nil, http.StatusOK, &h)
	e := h.Provider.Error
	if h.Status != "degraded" || h.Provider.Reachable || h.Provider.Kind != "remote" || e == nil ||
		e.Code != "provider_invalid_request" || !strings.Contains(e.Message, "cannot check its server's health") {
		t.Errorf("health %+v (error %+v)", h, e)
	}
}
