package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// OffersResponses reports whether the server also speaks the Responses API
// (POST /responses, which llm/responses talks to): OpenAI, Ollama 0.13.3
// and later, vLLM and LM Studio 0.3.29 and later do; llama.cpp's server and
// older Ollama do not.
//
// It asks cheaply: an empty request, which no server can generate from. A
// server with the endpoint refuses it for what it lacks (400, 422); one
// without answers 404 or 405 (LM Studio answers 200 with "Unexpected
// endpoint"). Any other answer (a wrong key, a server down) is returned as
// the error: then it cannot tell.
func (p *Provider) OffersResponses(ctx context.Context) (bool, error) {
	c := *p.client
	c.Retry.Max = 0
	b, err := c.Open(ctx, "probe the Responses API", http.MethodPost, p.url("/responses"), []byte(`{}`),
		wire.Timeouts{FirstByte: 30 * time.Second, Idle: 30 * time.Second})
	if err != nil {
		var le *llm.Error
		if errors.As(err, &le) {
			switch le.Status {
			case http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotImplemented:
				return false, nil
			case http.StatusBadRequest, http.StatusUnprocessableEntity:
				return true, nil
			}
		}
		return false, err
	}
	defer b.Close()
	data, _ := io.ReadAll(io.LimitReader(b, 4<<10))
	if strings.Contains(strings.ToLower(string(data)), "unexpected endpoint") {
		return false, nil
	}
	return true, nil
}
