package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// Errors the watchdog cancels a request with.
var (
	// ErrIdle: the stream started, then sent nothing for the idle timeout.
	ErrIdle = errors.New("stream went silent")
	// ErrNoFirstByte: the server sent nothing at all for the first-byte
	// timeout (which is long: a model may be loading).
	ErrNoFirstByte = errors.New("server sent nothing")
)

// ParseErrorBody pulls the message and type or code out of an error body in
// any of the shapes servers use:
//
//	{"error":"…"}                                  Ollama, vLLM 401
//	{"error":{"message":"…","type":"…","code":…}}  OpenAI, llama.cpp, newer vLLM
//	{"object":"error","message":"…","code":400}    older vLLM
//	{"message":"…"} / {"detail":"…"}               LM Studio, FastAPI
//
// A body that is not JSON is returned as the message, trimmed.
func ParseErrorBody(b []byte) (msg, code string) {
	b = []byte(strings.TrimSpace(string(b)))
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &v) != nil {
		return clip(string(b), 500), ""
	}
	code = rawString(v.Code)
	if code == "" {
		code = v.Type
	}
	if len(v.Error) > 0 {
		var s string
		if json.Unmarshal(v.Error, &s) == nil {
			return s, code
		}
		var inner struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		if json.Unmarshal(v.Error, &inner) == nil {
			c := rawString(inner.Code)
			if c == "" || isNumber(c) {
				if inner.Type != "" {
					c = inner.Type
				}
			}
			return inner.Message, c
		}
	}
	if v.Message != "" {
		return v.Message, code
	}
	if len(v.Detail) > 0 {
		var s string
		if json.Unmarshal(v.Detail, &s) == nil {
			return s, code
		}
		return clip(string(v.Detail), 500), code
	}
	return clip(string(b), 500), code
}

func rawString(r json.RawMessage) string {
	if len(r) == 0 || string(r) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(r, &s) == nil {
		return s
	}
	return string(r)
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// contextLengthMarkers are the phrases servers use for a prompt too long for
// the window (OpenAI, vLLM, llama.cpp, LM Studio, Ollama).
var contextLengthMarkers = []string{
	"context_length_exceeded",
	"exceed_context_size",
	"maximum context length",
	"context length",
	"context window",
	"context size",
	"exceeds the context",
	"prompt is too long",
	"too many tokens",
	"n_ctx",
}

func mentionsContextLength(s string) bool {
	s = strings.ToLower(s)
	for _, m := range contextLengthMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func mentionsModelNotFound(msg, code string) bool {
	if code == "model_not_found" {
		return true
	}
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist") || strings.Contains(m, "no such model"))
}

// Target describes the server a Client talks to, for error messages.
type Target struct {
	// Provider is "ollama", "openai" or "responses".
	Provider string
	// BaseURL is shown in messages about reaching the server.
	BaseURL string
	// UnreachableHint tells the user how to get the server answering.
	UnreachableHint string
	// AuthHint tells the user how to give credentials.
	AuthHint string
	// WrongServerHint tells the user what to check when something else
	// answers at the address (a web page, a 404).
	WrongServerHint string
}

// FromStatus maps an HTTP error response to an *llm.Error. It keeps the
// server's own message.
func (t Target) FromStatus(op string, status int, header http.Header, body []byte) *llm.Error {
	msg, code := ParseErrorBody(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	e := &llm.Error{Provider: t.Provider, Op: op, Status: status, Message: msg}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code, e.Hint = llm.CodeAuth, t.AuthHint
	case status == http.StatusTooManyRequests:
		e.Code, e.Retryable = llm.CodeRateLimited, true
		e.RetryAfter = RetryAfter(header, time.Now())
	case mentionsContextLength(msg) || code == "context_length_exceeded":
		e.Code = llm.CodeContextLength
		e.Hint = t.contextHint()
	case mentionsModelNotFound(msg, code):
		e.Code = llm.CodeModelNotFound
	case status == http.StatusNotFound:
		e.Code = llm.CodeUnreachable
		e.Message = fmt.Sprintf("%s (nothing serves the %s API at %s)", msg, t.Provider, t.BaseURL)
		e.Hint = t.WrongServerHint
	case status == http.StatusRequestTimeout || status >= 500:
		e.Code, e.Retryable = llm.CodeServer, true
		e.RetryAfter = RetryAfter(header, time.Now())
		e.Hint = serverHint(msg)
	case status >= 400:
		e.Code = llm.CodeInvalidRequest
		e.Hint = requestHint(msg)
	default:
		e.Code = llm.CodeBadResponse
	}
	return e
}

// contextHint says how to get a conversation that no longer fits the
// model's window going again, in the terms of the server at hand.
func (t Target) contextHint() string {
	const shorten = "the conversation does not fit the model's context window: shorten it (/compress in the terminal UI, or start a new session)"
	if t.Provider == "ollama" {
		return shorten + ", set a larger num_ctx for this provider in Hearth's config (up to the length the model was trained on), or use a model with a longer context"
	}
	return shorten + ", start the server with a longer context (vLLM --max-model-len, llama.cpp -c, LM Studio's context length setting), or use a model with a longer context"
}

// FromStream maps an error object a server sent inside a 200 stream.
func (t Target) FromStream(op, msg, code string) *llm.Error {
	e := &llm.Error{Provider: t.Provider, Op: op, Message: msg}
	switch {
	case mentionsContextLength(msg) || code == "context_length_exceeded":
		e.Code = llm.CodeContextLength
		e.Hint = t.contextHint()
	case mentionsModelNotFound(msg, code):
		e.Code = llm.CodeModelNotFound
	default:
		e.Code, e.Retryable = llm.CodeServer, true
		e.Hint = serverHint(msg)
	}
	return e
}

// serverHint suggests a fix for a server failure the message explains.
func serverHint(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "out of memory") || strings.Contains(m, "oom") || strings.Contains(m, "cuda error") || strings.Contains(m, "failed to allocate"):
		return "the model does not fit in memory: choose a smaller model or quantization, or a smaller context window (HEARTH_NUM_CTX)"
	case strings.Contains(m, "loading model"):
		return "the server is still loading the model: try again in a moment"
	case strings.Contains(m, "runner") && (strings.Contains(m, "terminated") || strings.Contains(m, "stopped")):
		return "the model runner crashed: the server's log says why (often memory)"
	}
	return "the server's log may say more"
}

// requestHint suggests a fix for a request the server refused.
func requestHint(msg string) string {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "does not support tools") || strings.Contains(m, "tools are not supported"):
		return "this model cannot call tools: let Hearth describe them in the prompt (--tool-mode auto or prompted), or choose a model that can (`hearth models` shows which)"
	case strings.Contains(m, "does not support thinking"):
		return "this model does not think: leave thinking off for it"
	}
	return ""
}

// FromTransport maps a failure to send a request or read its response. ctx
// is the request's context, whose cause tells a watchdog timeout from a
// caller's cancel.
func (t Target) FromTransport(ctx context.Context, op string, err error) *llm.Error {
	var le *llm.Error
	if errors.As(err, &le) {
		return le
	}
	e := &llm.Error{Provider: t.Provider, Op: op, Err: err}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrIdle):
		e.Code, e.Retryable, e.Err = llm.CodeServer, true, ErrIdle
		e.Message = "the server stopped sending in the middle of the reply"
	case errors.Is(cause, ErrNoFirstByte):
		// Not retried: a server silent for that long would be again.
		e.Code, e.Err = llm.CodeServer, ErrNoFirstByte
		e.Message = "the server accepted the request but sent nothing"
		e.Hint = "is the server overloaded or stuck? check its log"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		// The caller's own time limit, not an interruption.
		e.Code, e.Err = llm.CodeServer, context.DeadlineExceeded
		e.Message = "the time limit was reached before the server answered"
	case ctx.Err() != nil:
		e.Code, e.Message = llm.CodeCancelled, "cancelled"
		if cause != nil {
			e.Err = cause
		}
	case errors.Is(err, ErrLineTooLong):
		e.Code, e.Message = llm.CodeBadResponse, err.Error()
	case isConnRefused(err) || isDNS(err):
		e.Code, e.Retryable = llm.CodeUnreachable, true
		e.Message = fmt.Sprintf("cannot reach %s: %s", t.BaseURL, rootCause(err))
		e.Hint = t.UnreachableHint
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || isReset(err):
		e.Code, e.Retryable = llm.CodeBadResponse, true
		e.Message = "the connection closed before the reply was complete"
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			e.Code, e.Retryable = llm.CodeUnreachable, ue.Timeout()
			e.Message = fmt.Sprintf("cannot reach %s: %s", t.BaseURL, rootCause(err))
			e.Hint = t.UnreachableHint
		} else {
			e.Code = llm.CodeBadResponse
			e.Message = err.Error()
		}
	}
	return e
}

// Truncated is the error for a stream that ended without its final chunk.
func (t Target) Truncated(op string) *llm.Error {
	return &llm.Error{Provider: t.Provider, Op: op, Code: llm.CodeBadResponse, Retryable: true,
		Message: "the stream ended before the reply was complete"}
}

// Malformed is the error for a chunk that is not what the dialect sends.
func (t Target) Malformed(op string, chunk []byte, err error) *llm.Error {
	e := &llm.Error{Provider: t.Provider, Op: op, Code: llm.CodeBadResponse, Err: err,
		Message: fmt.Sprintf("malformed chunk %q: %v", clip(string(chunk), 200), err)}
	if trimmed := strings.TrimSpace(string(chunk)); strings.HasPrefix(trimmed, "<") {
		e.Message = fmt.Sprintf("%s answered with a web page, not the model API", t.BaseURL)
		e.Hint = t.WrongServerHint
	}
	return e
}

func isConnRefused(err error) bool {
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH)
}

func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isDNS(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

func rootCause(err error) string {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// RetryAfter reads the wait a response asks for: Retry-After in seconds or
// as an HTTP date, or the retry-after-ms header OpenAI sends. Zero if none.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n > 0 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
