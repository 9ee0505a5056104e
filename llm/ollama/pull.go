package ollama

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/internal/wire"
)

// PullProgress is one step of a pull as Ollama reports it on /api/pull:
// "pulling manifest", then each layer ("pulling 8934d96d3f08", with its
// Digest, its Total size and the bytes Completed so far, repeated as they
// arrive), "verifying sha256 digest", "writing manifest" and "success".
type PullProgress struct {
	// Status is the server's own words for the step.
	Status string `json:"status"`
	// Digest names the layer being downloaded ("sha256:…"); empty for the
	// other steps.
	Digest string `json:"digest,omitempty"`
	// Total is the layer's size in bytes, Completed how much of it is on
	// the server so far.
	Total     int64 `json:"total,omitempty"`
	Completed int64 `json:"completed,omitempty"`
}

// pullLine is one line of the /api/pull stream: a step, or an error.
type pullLine struct {
	PullProgress
	Error string `json:"error"`
}

// Pull downloads model from Ollama's registry onto the server (/api/pull),
// calling progress, when not nil, with each step the server reports. It
// returns nil once the server says "success".
//
// Errors are *llm.Error: CodeModelNotFound when the registry has no model of
// that name, CodeCancelled when ctx ends (Ollama stops the download and keeps
// the layers it has: pulling again resumes), and otherwise what the server
// said, with a hint.
func (p *Provider) Pull(ctx context.Context, model string, progress func(PullProgress)) error {
	model = p.model(model)
	if model == "" {
		return &llm.Error{Provider: "ollama", Op: "pull model", Code: llm.CodeInvalidRequest,
			Message: "no model given", Hint: "name the model to pull, e.g. qwen3:4b"}
	}
	body, err := json.Marshal(map[string]any{"model": model, "stream": true})
	if err != nil {
		return &llm.Error{Provider: "ollama", Op: "pull model", Code: llm.CodeInvalidRequest, Message: err.Error(), Err: err}
	}
	// Ollama is silent while it verifies the digest of a large layer: allow
	// the long gap a chat with tools gets.
	t := p.client.StreamTimeouts(true)
	err = p.client.Do(ctx, func() (bool, error) {
		b, err := p.client.Open(ctx, "pull model", http.MethodPost, p.url("/api/pull"), body, t)
		if err != nil {
			return false, err
		}
		defer b.Close()
		dec := wire.NewNDJSON(b)
		seen := false
		for {
			raw, err := dec.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					return seen, &llm.Error{Provider: "ollama", Op: "pull model", Code: llm.CodeBadResponse, Retryable: true,
						Message: "the server ended the pull before it said it was done",
						Hint:    "pull again: Ollama resumes from the layers it has"}
				}
				return seen, b.Err(err)
			}
			var line pullLine
			if err := json.Unmarshal(raw, &line); err != nil {
				return seen, p.client.Malformed("pull model", raw, err)
			}
			if line.Error != "" {
				return seen, p.client.FromStream("pull model", line.Error, "")
			}
			seen = true
			if progress != nil {
				progress(line.PullProgress)
			}
			if line.Status == "success" {
				return true, nil
			}
		}
	})
	var le *llm.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llm.CodeServer, llm.CodeModelNotFound, llm.CodeInvalidRequest:
			return pullError(le, model)
		}
	}
	return err
}

// pullError gives a failed pull the fix that fits it.
func pullError(le *llm.Error, model string) *llm.Error {
	m := strings.ToLower(le.Message)
	switch {
	case le.Code == llm.CodeModelNotFound, strings.Contains(m, "file does not exist"), strings.Contains(m, "invalid model name"):
		le.Code = llm.CodeModelNotFound
		le.Retryable = false
		le.Hint = "Ollama's registry has no model " + strconv.Quote(model) + ": check the name and tag on https://ollama.com/library (e.g. qwen3:4b)"
	case le.Code != llm.CodeServer:
		// A request the server refused for another reason: its own hint.
	case strings.Contains(m, "no such host") || strings.Contains(m, "dial tcp") || strings.Contains(m, "i/o timeout") ||
		strings.Contains(m, "connection refused") || strings.Contains(m, "connection reset") || strings.Contains(m, "tls handshake") || strings.Contains(m, "x509"):
		le.Hint = "Ollama could not reach its registry: check the network of the machine Ollama runs on (a proxy is set for `ollama serve` with HTTPS_PROXY), then pull again: it resumes"
	case strings.Contains(m, "no space left"):
		le.Hint = "the disk Ollama keeps models on is full: free space (`ollama rm` a model you no longer use), then pull again"
	case le.Hint == "" || le.Hint == "the server's log may say more":
		le.Hint = "pull again (Ollama resumes from the layers it has); the server's log may say more"
	}
	return le
}
