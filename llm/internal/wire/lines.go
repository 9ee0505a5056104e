// Package wire holds what the provider dialects need on the wire: readers
// for Server-Sent Events and NDJSON streams, a watchdog that ends a stream
// that went silent, the mapping of HTTP and network failures to *llm.Error,
// and retries before any output.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line a stream may send (a single JSON chunk).
const MaxLine = 16 << 20

// ErrLineTooLong is returned for a line over MaxLine.
var ErrLineTooLong = fmt.Errorf("stream line longer than %d bytes", MaxLine)

// lineReader returns lines without their line ending, reusing one buffer.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) lineReader {
	return lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line. The slice is valid until the next call. At the
// end of the input it returns io.EOF; a last line without a newline is
// returned first.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == nil {
		return trimEOL(line), nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			return trimEOL(line), nil
		}
		return nil, err
	}
	// A line longer than the reader's buffer: gather it.
	l.buf = append(l.buf[:0], line...)
	for {
		line, err = l.r.ReadSlice('\n')
		l.buf = append(l.buf, line...)
		if len(l.buf) > MaxLine {
			return nil, ErrLineTooLong
		}
		switch {
		case err == nil:
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(l.buf) > 0:
			return trimEOL(l.buf), nil
		default:
			return nil, err
		}
	}
}

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// NDJSON reads a stream of JSON values, one per line.
type NDJSON struct{ lr lineReader }

// NewNDJSON returns a reader of r.
func NewNDJSON(r io.Reader) *NDJSON { return &NDJSON{lr: newLineReader(r)} }

// Next returns the next non-empty line, valid until the next call, or io.EOF.
func (d *NDJSON) Next() ([]byte, error) {
	for {
		line, err := d.lr.next()
		if err != nil {
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// SSEvent is one Server-Sent Event.
type SSEvent struct {
	// Event is the event type ("" for the default "message").
	Event []byte
	// Data is the event's data, its lines joined with "\n".
	Data []byte
	// ID is the last event id seen.
	ID []byte
	// Error holds the value of a non-standard "error:" field, which older
	// llama.cpp servers send instead of a data line to report a failure.
	Error []byte
}

// SSE reads a stream of Server-Sent Events.
type SSE struct {
	lr        lineReader
	ev        SSEvent
	has       bool // the event being read has a field
	dataLines int  // data lines of the event being read
}

// NewSSE returns a reader of r.
func NewSSE(r io.Reader) *SSE { return &SSE{lr: newLineReader(r)} }

// Next returns the next event, valid until the next call, or io.EOF.
// Comments and retry fields are skipped; an event still open at the end of
// the input is returned before io.EOF.
func (s *SSE) Next() (*SSEvent, error) {
	s.ev.Event = s.ev.Event[:0]
	s.ev.Data = s.ev.Data[:0]
	s.ev.Error = s.ev.Error[:0]
	s.has = false
	s.dataLines = 0
	for {
		line, err := s.lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) && s.has {
				return &s.ev, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if s.has {
				return &s.ev, nil
			}
			continue
		}
		if line[0] == ':' {
			continue // comment
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if s.dataLines > 0 {
				s.ev.Data = append(s.ev.Data, '\n')
			}
			s.ev.Data = append(s.ev.Data, value...)
			s.dataLines++
			s.has = true
		case "event":
			s.ev.Event = append(s.ev.Event[:0], value...)
			s.has = true
		case "id":
			s.ev.ID = append(s.ev.ID[:0], value...)
		case "error":
			s.ev.Error = append(s.ev.Error[:0], value...)
			s.has = true
		}
	}
}
