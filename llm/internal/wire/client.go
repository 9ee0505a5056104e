package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// Defaults for a Client's timeouts and retries.
const (
	// DefaultIdleTimeout ends a stream that started and then sent nothing
	// for this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultFirstByteTimeout ends a request that got no byte at all for
	// this long. It is long on purpose: a server loading a large model, or
	// evaluating a long prompt on a CPU, sends nothing until it is ready.
	DefaultFirstByteTimeout = 10 * time.Minute
)

// Retry says how transient failures are retried before any output.
type Retry struct {
	// Max is the number of retries after the first attempt.
	Max int
	// Base is the first backoff; each retry doubles it, with jitter.
	Base time.Duration
	// MaxWait caps one wait. A server asking (Retry-After) for longer than
	// this is not retried: the error goes to the caller with RetryAfter set.
	MaxWait time.Duration
}

// RetryFor returns the retry policy for a provider's MaxRetries option:
// 0 means the default of two retries (after about 0.5 s and 1 s), negative
// means none.
func RetryFor(maxRetries int) Retry {
	r := Retry{Max: 2, Base: 500 * time.Millisecond, MaxWait: 30 * time.Second}
	switch {
	case maxRetries < 0:
		r.Max = 0
	case maxRetries > 0:
		r.Max = maxRetries
	}
	return r
}

// Client sends requests to one server.
type Client struct {
	Target
	// HTTP is the client used; nil means one with a 10 s dial timeout and
	// no overall timeout (streams are bounded by the watchdog instead).
	HTTP *http.Client
	// Header is added to every request (authorisation).
	Header http.Header
	// IdleTimeout and FirstByteTimeout bound a silent server; zero means
	// the defaults above, negative disables.
	IdleTimeout      time.Duration
	FirstByteTimeout time.Duration
	Retry            Retry
	Log              *slog.Logger
}

// NewHTTPClient returns the http.Client providers use by default.
func NewHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 0
	return &http.Client{Transport: t}
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

func timeoutOr(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Body is a response body watched for silence. Close it when done.
//
// The watchdog runs only while the reader waits on the server: time the
// consumer spends with an event (a slow terminal, a busy UI) is not counted
// against the server.
type Body struct {
	resp   *http.Response
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	first  time.Duration
	idle   time.Duration
	seen   atomic.Bool
	target Target
	op     string
}

// Read reads from the response with the watchdog armed.
func (b *Body) Read(p []byte) (int, error) {
	if b.timer != nil {
		if d := b.wait(); d > 0 {
			b.timer.Reset(d)
		}
	}
	n, err := b.resp.Body.Read(p)
	if b.timer != nil {
		b.timer.Stop()
		if n > 0 {
			b.seen.Store(true)
		}
	}
	return n, err
}

// wait is how long the server may stay silent now: the first-byte allowance
// until it has sent something, the idle one after.
func (b *Body) wait() time.Duration {
	if b.seen.Load() {
		return b.idle
	}
	return b.first
}

// Close stops the watchdog and closes the connection.
func (b *Body) Close() error {
	if b.timer != nil {
		b.timer.Stop()
	}
	err := b.resp.Body.Close()
	b.cancel(nil)
	return err
}

// Err maps a read error to an *llm.Error.
func (b *Body) Err(err error) *llm.Error { return b.target.FromTransport(b.ctx, b.op, err) }

// Timeouts bound a silent server for one request.
type Timeouts struct {
	// FirstByte is the wait for the response to start (headers included).
	FirstByte time.Duration
	// Idle is the longest gap once it has started.
	Idle time.Duration
}

// StreamTimeouts are a chat stream's: the client's settings. With slowGaps
// set (tools offered: Ollama sends nothing while it collects a tool call,
// which can take minutes on a CPU) the idle allowance grows to the first-
// byte one.
func (c *Client) StreamTimeouts(slowGaps bool) Timeouts {
	t := Timeouts{FirstByte: timeoutOr(c.FirstByteTimeout, DefaultFirstByteTimeout), Idle: timeoutOr(c.IdleTimeout, DefaultIdleTimeout)}
	if slowGaps && t.Idle > 0 && t.FirstByte > t.Idle {
		t.Idle = t.FirstByte
	}
	return t
}

// metaTimeouts bound requests that do not generate (listing, showing,
// health): a server that does not answer them in 30 s is not going to.
var metaTimeouts = Timeouts{FirstByte: 30 * time.Second, Idle: 30 * time.Second}

// Open sends a request and returns the body of a 2xx response, watched for
// silence. Other statuses become an *llm.Error carrying the server's message.
func (c *Client) Open(ctx context.Context, op, method, url string, body []byte, t Timeouts) (*Body, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &Body{ctx: ctx, cancel: cancel, target: c.Target, op: op, first: t.FirstByte, idle: t.Idle}
	if b.first > 0 || b.idle > 0 {
		b.timer = time.AfterFunc(max(b.first, 1), func() {
			if b.seen.Load() {
				cancel(ErrIdle)
			} else {
				cancel(ErrNoFirstByte)
			}
		})
		if b.first <= 0 {
			b.timer.Stop()
		}
	}
	fail := func(err error) (*Body, error) {
		if b.timer != nil {
			b.timer.Stop()
		}
		cancel(nil)
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return fail(&llm.Error{Provider: c.Provider, Op: op, Code: llm.CodeInvalidRequest, Message: err.Error(), Err: err})
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json, text/event-stream, application/x-ndjson")
	for k, v := range c.Header {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return fail(c.FromTransport(ctx, op, err))
	}
	c.log().Debug("llm request", "provider", c.Provider, "op", op, "url", url, "status", resp.StatusCode, "wait", time.Since(start))
	b.resp = resp
	// Headers came: from here on the watchdog runs only inside Read.
	if b.timer != nil {
		b.timer.Stop()
	}
	if resp.StatusCode/100 != 2 {
		data, rerr := io.ReadAll(io.LimitReader(b, 64<<10))
		resp.Body.Close()
		if rerr != nil && len(data) == 0 {
			return fail(c.FromTransport(ctx, op, rerr))
		}
		return fail(c.FromStatus(op, resp.StatusCode, resp.Header, data))
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		// Another program answers at this address (a web UI, a proxy page).
		data, _ := io.ReadAll(io.LimitReader(b, 512))
		resp.Body.Close()
		return fail(c.Malformed(op, data, errors.New("an HTML page")))
	}
	return b, nil
}

// JSON sends in (if not nil) as JSON and decodes a 2xx answer into out,
// retrying transient failures.
func (c *Client) JSON(ctx context.Context, op, method, url string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return &llm.Error{Provider: c.Provider, Op: op, Code: llm.CodeInvalidRequest, Message: "encoding the request: " + err.Error(), Err: err}
		}
	}
	return c.Do(ctx, func() (bool, error) {
		b, err := c.Open(ctx, op, method, url, body, metaTimeouts)
		if err != nil {
			return false, err
		}
		defer b.Close()
		data, err := io.ReadAll(io.LimitReader(b, 64<<20))
		if err != nil {
			return false, b.Err(err)
		}
		if out == nil {
			return false, nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return false, c.Malformed(op, data, err)
		}
		return false, nil
	})
}

// Do runs attempt until it succeeds, fails for good, or has produced output.
// attempt reports whether it produced output (a streamed event): after that
// nothing is retried, because the caller has already seen part of a reply.
func (c *Client) Do(ctx context.Context, attempt func() (emitted bool, err error)) error {
	r := c.Retry
	loading := 0
	for n := 0; ; n++ {
		emitted, err := attempt()
		if err == nil || emitted || !llm.IsRetryable(err) {
			return err
		}
		var le *llm.Error
		errors.As(err, &le)
		wait := backoff(r.Base, n)
		// 503 without Retry-After: a server loading a model (llama.cpp
		// answers "Loading model" until it is ready), which takes tens of
		// seconds. Wait for it longer than for other failures.
		if le.Status == http.StatusServiceUnavailable && le.RetryAfter == 0 && loading < loadingRetries {
			loading++
			wait = min(time.Duration(loading)*4*r.Base, 10*time.Second)
			n--
		} else if n >= r.Max || le.Code == llm.CodeUnreachable {
			// Nothing listening will not start listening in a second.
			return err
		}
		if le.RetryAfter > 0 {
			if r.MaxWait > 0 && le.RetryAfter > r.MaxWait {
				return err
			}
			wait = le.RetryAfter
		}
		if r.MaxWait > 0 {
			wait = min(wait, r.MaxWait)
		}
		c.log().Info("retrying model request", "provider", c.Provider, "op", le.Op, "code", le.Code, "attempt", n+1, "wait", wait, "error", le.Message)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return c.FromTransport(ctx, le.Op, ctx.Err())
		case <-t.C:
		}
	}
}

// loadingRetries bounds the waits for a server that is loading a model
// (about a minute in all).
const loadingRetries = 8

// backoff is base·2ⁿ with ±25 % jitter.
func backoff(base time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base << min(n, 10)
	j := time.Duration(rand.Int64N(int64(d)/2+1)) - d/4
	return d + j
}

// JoinURL joins a base URL and a path with exactly one slash between them.
func JoinURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}

// ErrStopped is returned by decoders when the consumer stopped the stream.
var ErrStopped = fmt.Errorf("stream stopped by its consumer")
