package shell

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// output collects a command's standard output and error, interleaved as a
// terminal would show them. It keeps the first and last halves of cap
// bytes and counts what it drops between; it streams what it keeps of the
// start to progress as it arrives; past limit bytes in all, it calls
// onLimit (which stops the command) and drops the rest. Memory stays
// bounded whatever the command prints.
type output struct {
	mu       sync.Mutex
	cap      int
	limit    int64
	head     []byte
	tail     []byte // ring buffer of cap/2 bytes once the head is full
	tailPos  int
	tailFull bool
	total    int64
	onLimit  func()
	limitHit bool
	closed   bool

	progress func(string)
	pending  []byte // an incomplete UTF-8 sequence held back from progress
	streamed int
	noted    bool
}

func newOutput(cap int, limit int64, progress func(string), onLimit func()) *output {
	if cap < 2 {
		cap = 2
	}
	return &output{cap: cap, limit: limit, progress: progress, onLimit: onLimit}
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := len(p)
	if o.closed || o.limitHit {
		return n, nil
	}
	o.total += int64(n)
	if o.limit > 0 && o.total > o.limit {
		o.limitHit = true
		if o.onLimit != nil {
			o.onLimit()
		}
	}
	headCap := o.cap / 2
	if room := headCap - len(o.head); room > 0 {
		take := min(room, len(p))
		o.head = append(o.head, p[:take]...)
		o.stream(p[:take])
		p = p[take:]
	}
	if len(p) > 0 {
		o.keepTail(p)
		if !o.noted && o.progress != nil {
			o.noted = true
			o.flushPending()
			o.progress("\n[… output continues; the rest is shown when the command ends …]\n")
		}
	}
	return n, nil
}

func (o *output) keepTail(p []byte) {
	tailCap := o.cap - o.cap/2
	if o.tail == nil {
		o.tail = make([]byte, tailCap)
	}
	if len(p) >= tailCap {
		copy(o.tail, p[len(p)-tailCap:])
		o.tailPos, o.tailFull = 0, true
		return
	}
	k := copy(o.tail[o.tailPos:], p)
	if k < len(p) {
		copy(o.tail, p[k:])
		o.tailFull = true
	}
	o.tailPos = (o.tailPos + len(p)) % tailCap
	if o.tailPos == 0 {
		o.tailFull = true
	}
}

// stream sends p to progress, holding back an incomplete UTF-8 sequence
// at its end so that no chunk splits a character.
func (o *output) stream(p []byte) {
	if o.progress == nil || len(p) == 0 {
		return
	}
	buf := append(o.pending, p...)
	cut := len(buf)
	// Find the start of a trailing incomplete sequence, if any.
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-utf8.UTFMax; i-- {
		if utf8.RuneStart(buf[i]) {
			if !utf8.FullRune(buf[i:]) {
				cut = i
			}
			break
		}
	}
	o.pending = append([]byte(nil), buf[cut:]...)
	if cut > 0 {
		o.streamed += cut
		o.progress(strings.ToValidUTF8(string(buf[:cut]), "\uFFFD"))
	}
}

func (o *output) flushPending() {
	if len(o.pending) > 0 && o.progress != nil {
		o.progress(strings.ToValidUTF8(string(o.pending), "\uFFFD"))
	}
	o.pending = nil
}

// notify shows s to progress only: the model gets it another way.
func (o *output) notify(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.progress == nil {
		return
	}
	o.flushPending()
	o.progress(s)
}

// close stops further writes (from processes that outlive the run) from
// reaching progress, and returns what was kept.
func (o *output) close() (text string, total int64, dropped int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.closed {
		o.flushPending()
	}
	o.closed = true
	var tail []byte
	if o.tailFull {
		tail = append(append([]byte(nil), o.tail[o.tailPos:]...), o.tail[:o.tailPos]...)
	} else if o.tail != nil {
		tail = o.tail[:o.tailPos]
	}
	kept := int64(len(o.head) + len(tail))
	dropped = o.total - kept
	var b strings.Builder
	b.Write(o.head)
	if dropped > 0 {
		fmt.Fprintf(&b, "\n[… %d bytes of output dropped …]\n", dropped)
		// Start the tail at a line boundary when one is near.
		if i := strings.IndexByte(string(tail[:min(len(tail), 200)]), '\n'); i >= 0 {
			tail = tail[i+1:]
		}
	}
	b.Write(tail)
	return strings.ToValidUTF8(b.String(), "\uFFFD"), o.total, dropped
}

// limitWriter passes at most n bytes to w, then fails: for output captured
// in memory by the interpreter ($(…)), which must not grow without bound.
type limitWriter struct {
	mu      sync.Mutex
	w       io.Writer
	n       int64
	onLimit func()
}

var errSubstLimit = errors.New("command substitution output too large")

func (l *limitWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if int64(len(p)) > l.n {
		k, _ := l.w.Write(p[:l.n])
		l.n -= int64(k)
		if l.onLimit != nil {
			l.onLimit()
			l.onLimit = nil
		}
		return k, errSubstLimit
	}
	k, err := l.w.Write(p)
	l.n -= int64(k)
	return k, err
}
