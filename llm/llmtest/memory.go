package llmtest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
)

// InMemory returns a client that reaches the fake without a socket: each
// request is served by the fake's handler on a goroutine of the caller's
// process, its response body a pipe. A test can then run inside a
// testing/synctest bubble, where time is fake: a server silent for ten
// minutes (Pause, HeaderDelay, Hang) is ten minutes of the bubble's clock,
// passed at once, so timeouts are tested at their real values, without
// sleeping and without depending on the machine's speed. Requests and the
// clients that went away are counted as over the network.
func (s *Server) InMemory() *http.Client {
	return &http.Client{Transport: memoryTransport{s}}
}

// memoryTransport serves requests with the fake's handler.
type memoryTransport struct{ s *Server }

// RoundTrip implements http.RoundTripper.
func (m memoryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &memoryWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	// The handler's request ends, as a server's does, when the client
	// cancels or closes the body; it reads the body from a copy, so that
	// the caller may reuse its request.
	sctx, gone := context.WithCancel(req.Context())
	sreq := req.Clone(sctx)
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			gone()
			return nil, err
		}
		sreq.Body = io.NopCloser(bytes.NewReader(data))
	}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "127.0.0.1:1"
	// A cancelled request ends its body with the context's error, as a
	// transport's read does.
	stop := context.AfterFunc(req.Context(), func() { pw.CloseWithError(req.Context().Err()) })
	go func() {
		defer stop()
		defer gone()
		defer func() {
			if p := recover(); p != nil {
				// http.ErrAbortHandler: the server drops the connection.
				pw.CloseWithError(io.ErrUnexpectedEOF)
				w.headersDone()
				return
			}
			w.headersDone()
			if err := req.Context().Err(); err != nil {
				pw.CloseWithError(err) // the handler saw the cancel first
				return
			}
			pw.Close()
		}()
		m.s.serve(w, sreq)
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	w.mu.Lock()
	status, header := w.status, w.header.Clone()
	w.mu.Unlock()
	if status == 0 {
		status = http.StatusOK
	}
	return &http.Response{Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: header, Body: memoryBody{pr, gone}, ContentLength: -1, Request: req}, nil
}

// memoryWriter is the handler's http.ResponseWriter: the headers are
// handed over on the first write or flush, the body goes down the pipe.
type memoryWriter struct {
	mu     sync.Mutex
	header http.Header
	status int
	body   *io.PipeWriter
	ready  chan struct{}
	sent   bool
}

func (w *memoryWriter) Header() http.Header { return w.header }

func (w *memoryWriter) WriteHeader(status int) {
	w.mu.Lock()
	if w.status == 0 {
		w.status = status
	}
	w.mu.Unlock()
}

func (w *memoryWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.headersDone()
	return w.body.Write(p)
}

// Flush hands the headers over (the body is unbuffered).
func (w *memoryWriter) Flush() { w.headersDone() }

func (w *memoryWriter) headersDone() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.sent {
		w.sent = true
		close(w.ready)
	}
}

// memoryBody is the response body: closing it is the client going away,
// which the handler sees as a failed write.
type memoryBody struct {
	pr   *io.PipeReader
	gone context.CancelFunc
}

func (b memoryBody) Read(p []byte) (int, error) { return b.pr.Read(p) }
func (b memoryBody) Close() error {
	b.gone()
	return b.pr.CloseWithError(errClientGone)
}

var errClientGone = errors.New("llmtest: the client closed the response body")
