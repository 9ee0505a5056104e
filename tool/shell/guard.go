package shell

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// The interpreter runs inside Hearth's process, so a script that recurses
// without end, spawns goroutines without end ($(f | f &) in a loop) or
// doubles a variable in a loop could take Hearth down with it. These
// guards stop the run first.

// maxFrames bounds the Go stack depth at which a shell command may still
// run: deep enough for any sane recursion (a shell function call takes 8
// frames and some 6 KB of stack: this allows about 1,200 nested calls), far
// below Go's 1 GB stack limit, whose overflow is fatal to the whole
// process. Measuring the depth costs time in proportion to it, so the
// interpreter samples it every stackCheckEvery calls.
const (
	maxFrames       = 10000
	stackCheckEvery = 16
)

var framesPool = sync.Pool{New: func() any { b := make([]uintptr, maxFrames); return &b }}

// stackTooDeep reports whether the calling goroutine's stack is deeper
// than maxFrames.
func stackTooDeep() bool {
	b := framesPool.Get().(*[]uintptr)
	n := runtime.Callers(0, *b)
	framesPool.Put(b)
	return n >= maxFrames
}

// memWatch cancels runs whose interpreter grows the heap past their
// limit. One goroutine samples the heap while any run is registered.
var memWatch struct {
	mu   sync.Mutex
	runs map[*memRun]struct{}
	on   bool
}

type memRun struct {
	base  uint64
	limit uint64
	stop  func()
	fired bool
}

var heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
var heapMu sync.Mutex

func heapBytes() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return heapSample[0].Value.Uint64()
}

// watchMemory calls stop once the heap has grown by more than limit bytes
// since now; the returned function ends the watch.
func watchMemory(limit int64, stop func()) (end func()) {
	if limit <= 0 {
		return func() {}
	}
	r := &memRun{base: heapBytes(), limit: uint64(limit), stop: stop}
	memWatch.mu.Lock()
	if memWatch.runs == nil {
		memWatch.runs = map[*memRun]struct{}{}
	}
	memWatch.runs[r] = struct{}{}
	if !memWatch.on {
		memWatch.on = true
		go memLoop()
	}
	memWatch.mu.Unlock()
	return func() {
		memWatch.mu.Lock()
		delete(memWatch.runs, r)
		memWatch.mu.Unlock()
	}
}

func memLoop() {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		h := heapBytes()
		memWatch.mu.Lock()
		if len(memWatch.runs) == 0 {
			memWatch.on = false
			memWatch.mu.Unlock()
			return
		}
		for r := range memWatch.runs {
			if !r.fired && h > r.base && h-r.base > r.limit {
				r.fired = true
				go r.stop()
			}
		}
		memWatch.mu.Unlock()
	}
}
