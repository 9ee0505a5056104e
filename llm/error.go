package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Code classifies a provider failure. Codes are part of Hearth's public
// contract (they appear in the event stream): none is renamed or removed.
type Code string

// The failure codes.
const (
	// CodeUnreachable: nothing answered at the server's address.
	CodeUnreachable Code = "unreachable"
	// CodeAuth: the server refused the credentials (401, 403).
	CodeAuth Code = "auth"
	// CodeModelNotFound: the server does not have the model.
	CodeModelNotFound Code = "model_not_found"
	// CodeContextLength: the prompt does not fit the model's context window.
	CodeContextLength Code = "context_length"
	// CodeRateLimited: the server asked us to slow down (429).
	CodeRateLimited Code = "rate_limited"
	// CodeServer: the server failed (5xx, or a stream that went silent).
	CodeServer Code = "server"
	// CodeBadResponse: the server's answer could not be understood, or the
	// stream ended before it was complete.
	CodeBadResponse Code = "bad_response"
	// CodeInvalidRequest: the server rejected the request itself (a 400 that
	// is not about context length), for example "model does not support
	// tools". Not in the first design notes; added because none of the other
	// codes tells the user the truth about it. Also the code of asking a
	// provider for an optional ability it lacks (Models, Describe, Embed,
	// Health); that error wraps errors.ErrUnsupported.
	CodeInvalidRequest Code = "invalid_request"
	// CodeCancelled: the caller's context was cancelled.
	CodeCancelled Code = "cancelled"
)

// Error is the one error type providers return.
type Error struct {
	Code Code
	// Retryable says whether the same request may succeed later.
	Retryable bool
	// Provider is the provider's Kind ("ollama", "openai", "responses");
	// Op is what was being done ("chat", "list models", …).
	Provider string
	Op       string
	// Status is the HTTP status, 0 when there was none.
	Status int
	// Message is the server's own message where it gave one, else ours.
	Message string
	// Hint says what the user can do about it.
	Hint string
	// RetryAfter is the wait the server asked for (429, 503).
	RetryAfter time.Duration
	// Available lists the models the server does have, for
	// CodeModelNotFound where they could be listed.
	Available []string
	// Err is the underlying cause, if any.
	Err error
}

// Error formats the failure as "provider op: message (hint)".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Provider != "" {
		b.WriteString(e.Provider)
		b.WriteByte(' ')
	}
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg == "" {
		msg = string(e.Code)
	}
	b.WriteString(msg)
	if len(e.Available) > 0 {
		fmt.Fprintf(&b, " (available: %s)", strings.Join(e.Available, ", "))
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, context.Canceled) hold for CodeCancelled.
func (e *Error) Is(target error) bool {
	return e.Code == CodeCancelled && target == context.Canceled
}

// CodeOf returns the Code of err if it is (or wraps) an *Error, and "" if not.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// IsRetryable reports whether err is an *Error marked retryable.
func IsRetryable(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Retryable
}
