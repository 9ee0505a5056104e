//go:build unix

package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

// stamps records when the fake model server flushed each marked chunk.
type stamps struct {
	mu sync.Mutex
	at map[string]time.Time
}

func (s *stamps) get(marker string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[marker]
	return t, ok
}

// stampWriter notes the time each chunk carrying a marker ("x12y3") is
// flushed to the wire.
type stampWriter struct {
	http.ResponseWriter
	s    *stamps
	last string
}

func (w *stampWriter) Write(p []byte) (int, error) {
	w.last = findMarker(string(p))
	return w.ResponseWriter.Write(p)
}

// Flush notes the time just before the chunk goes out (so that a reader
// can never see a chunk before its time is noted).
func (w *stampWriter) Flush() {
	if w.last != "" {
		now := time.Now()
		w.s.mu.Lock()
		w.s.at[w.last] = now
		w.s.mu.Unlock()
		w.last = ""
	}
	w.ResponseWriter.(http.Flusher).Flush()
}

func (w *stampWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// findMarker returns the first "x<digits>y<digits>" in s.
func findMarker(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] != 'x' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i+1 || j >= len(s) || s[j] != 'y' {
			continue
		}
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j+1 {
			return s[i:k]
		}
	}
	return ""
}

func benchEnv(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// BenchmarkConcurrentSessions runs 500 turns at once, each in its own
// session, over real HTTP on loopback against the fake model server. Hearth
// runs alone in this process; the fake model server and the 500 clients run
// in a child process (TestBenchHelperProcess), as a model server and
// browsers would, so that the clients' and the fake server's work and
// garbage do not count as Hearth's.
//
// The turns start together. Once every stream is open (each client has
// its session event), the fake model answers all of them, each in 100 to
// 199 chunks 50 ms apart — 10,000 chunks a second in all. The answers start
// spread over the first 50 ms and end spread over 5 s, as real ones would
// (HEARTH_BENCH_SYNC=1 makes them start in the same instant and all last
// 100 chunks: the worst case). It reports:
//
//   - complete: streams that ended with done/stop and the whole answer (all
//     must);
//   - p50/p99/max-ms/event: the latency Hearth adds to an answer chunk, from
//     the fake server flushing it to the client reading its text_delta (the
//     provider's decoding, the agent, the SSE encoding, both loopback hops),
//     under the load of all streams at once;
//   - p50/p99-ms/start: from POST …/turns to the session event, with all
//     turns starting at once (locking, reading and saving the session);
//   - hearth-cpu-µs/event: Hearth's CPU time (this process) while the
//     answers stream, per chunk, the turns' endings included;
//   - KB/idle-session: Go heap Hearth holds per session once its turn has
//     ended (the session's state and its turn's events, kept 5 minutes for
//     reconnection);
//   - KB/open-stream: Go heap and stacks Hearth holds per turn whose stream
//     is open and quiet (the model is thinking): the connection, the turn,
//     the model request.
//
// HEARTH_BENCH_SESSIONS, HEARTH_BENCH_CHUNKS and HEARTH_BENCH_INTERVAL_MS
// change the load; HEARTH_BENCH_DEBUG=1 prints the latency of each chunk
// position.
//
// HEARTH_BENCH_STORE=postgres runs it on a shared PostgreSQL store
// (internal/pgtest starts one) with HEARTH_BENCH_INSTANCES servers
// (default 3), each with its own store (its own connections, its own
// LISTEN): the sessions are spread over them, and each turn is also
// followed through the next server (GET …/events), as a client behind a
// load balancer would after a reconnect. p99-relayed-ms/event is the added
// latency of those followers: the owner writes each event to the store and
// publishes it, the follower's server hears it and streams it.
// HEARTH_BENCH_FOLLOW=0 leaves the followers out (the turns are still
// written to the store and published, but nobody follows them).
func BenchmarkConcurrentSessions(b *testing.B) {
	cfg := helperConfig{
		N:         benchEnv("HEARTH_BENCH_SESSIONS", 500),
		Chunks:    benchEnv("HEARTH_BENCH_CHUNKS", 100),
		Interval:  time.Duration(benchEnv("HEARTH_BENCH_INTERVAL_MS", 50)) * time.Millisecond,
		Synced:    os.Getenv("HEARTH_BENCH_SYNC") != "",
		Debug:     os.Getenv("HEARTH_BENCH_DEBUG") != "",
		Instances: 1,
	}
	if os.Getenv("HEARTH_BENCH_STORE") == "postgres" {
		cfg.Postgres, cfg.Instances = true, benchEnv("HEARTH_BENCH_INSTANCES", 3)
		cfg.Follow = os.Getenv("HEARTH_BENCH_FOLLOW") != "0"
	}
	for range b.N {
		r := runConcurrent(b, cfg)
		b.ReportMetric(float64(r.Complete), "complete")
		b.ReportMetric(r.P50, "p50-ms/event")
		b.ReportMetric(r.P99, "p99-ms/event")
		b.ReportMetric(r.Max, "max-ms/event")
		if cfg.Follow {
			b.ReportMetric(float64(r.FollowComplete), "followers-complete")
			b.ReportMetric(r.RelayP50, "p50-relayed-ms/event")
			b.ReportMetric(r.RelayP99, "p99-relayed-ms/event")
		}
		b.ReportMetric(r.Start50, "p50-ms/start")
		b.ReportMetric(r.Start99, "p99-ms/start")
		b.ReportMetric(r.cpuPerEvent, "hearth-cpu-µs/event")
		b.ReportMetric(r.idleKB, "KB/idle-session")
		b.ReportMetric(r.openKB, "KB/open-stream")
		if r.Complete != cfg.N {
			b.Fatalf("%d of %d streams complete: %s", r.Complete, cfg.N, r.Err)
		}
		if cfg.Follow && r.FollowComplete != cfg.N {
			b.Fatalf("%d of %d followers complete: %s", r.FollowComplete, cfg.N, r.Err)
		}
	}
}

// helperConfig is what the child process plays.
type helperConfig struct {
	N, Chunks     int
	Interval      time.Duration
	Synced, Debug bool
	// Instances servers share the store (PostgreSQL when Postgres); with
	// Follow each turn is also streamed through the next one.
	Instances        int
	Postgres, Follow bool
}

// helperResult is what the child process measured.
type helperResult struct {
	Complete         int
	Events           int
	P50, P99, Max    float64
	Start50, Start99 float64
	Err              string
	// FollowComplete and RelayP50/RelayP99 are the followers' (Follow).
	FollowComplete     int
	RelayP50, RelayP99 float64

	cpuPerEvent, idleKB, openKB float64
}

func heapNow() (heap, stack uint64) {
	var ms runtime.MemStats
	for range 3 {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, ms.StackInuse
}

// cpuTime is the CPU time this process used so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func percentile(v []float64, p int) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)*p/100, len(v)-1)]
}

// runConcurrent serves the child process's clients and measures Hearth.
func runConcurrent(b *testing.B, cfg helperConfig) helperResult {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conf, _ := json.Marshal(cfg)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestBenchHelperProcess$")
	cmd.Env = append(os.Environ(), "HEARTH_BENCH_HELPER="+string(conf))
	cmd.Stderr = os.Stderr
	toChild, _ := cmd.StdinPipe()
	fromChild, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer cmd.Wait()
	defer toChild.Close()
	lines := bufio.NewScanner(fromChild)
	lines.Buffer(nil, 1<<20)
	expect := func(prefix string) string {
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), prefix); ok {
				return rest
			}
		}
		b.Fatalf("the helper process said no %q", prefix)
		return ""
	}
	fakeURL := expect("FAKE ")

	var urls []string
	pgURL := ""
	if cfg.Postgres {
		pgURL = pgtest.URL(b)
	}
	for range cfg.Instances {
		var store session.Store
		var err error
		if cfg.Postgres {
			store, err = session.OpenPostgres(ctx, pgURL)
		} else {
			store, err = session.Open(ctx, filepath.Join(b.TempDir(), "hearth.db"))
		}
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		bot, err := hearth.New(hearth.Config{Provider: ollama.New(ollama.Options{BaseURL: fakeURL, NumCtx: 8192, MaxRetries: -1}), Model: "m",
			Store: store, ContextLength: 8192})
		if err != nil {
			b.Fatal(err)
		}
		defer bot.Close()
		api, err := New(bot, Options{Token: testToken})
		if err != nil {
			b.Fatal(err)
		}
		hs := httptest.NewServer(api)
		defer hs.Close()
		defer api.Close() // first: ends the quiet turns, so that hs.Close need not wait
		urls = append(urls, hs.URL)
	}

	heap0, _ := heapNow()
	fmt.Fprintf(toChild, "RUN %s\n", strings.Join(urls, " "))
	expect("STREAMING")
	cpu0 := cpuTime()
	var r helperResult
	json.Unmarshal([]byte(expect("RESULT ")), &r)
	if r.Events > 0 {
		r.cpuPerEvent = float64((cpuTime()-cpu0)/time.Microsecond) / float64(r.Events)
	}
	expect("IDLE")
	heap1, _ := heapNow()
	r.idleKB = float64(int64(heap1)-int64(heap0)) / float64(cfg.N) / 1024

	heapA, stackA := heapNow()
	fmt.Fprintln(toChild, "OPEN")
	expect("OPENED")
	time.Sleep(200 * time.Millisecond) // let the model requests settle
	heapB, stackB := heapNow()
	r.openKB = float64(int64(heapB+stackB)-int64(heapA+stackA)) / float64(cfg.N) / 1024
	return r
}

// TestBenchHelperProcess is not a test: BenchmarkConcurrentSessions runs it
// in a child process to play the fake model server and the clients.
func TestBenchHelperProcess(t *testing.T) {
	var cfg helperConfig
	if json.Unmarshal([]byte(os.Getenv("HEARTH_BENCH_HELPER")), &cfg) != nil {
		t.Skip("a helper process of BenchmarkConcurrentSessions")
	}
	n := cfg.N
	fake := llmtest.NewServer()
	st := &stamps{at: map[string]time.Time{}}
	release := make(chan struct{}) // the model answers once every stream is open
	inner := fake.Config.Handler   // set before any request reaches it
	fake.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat" {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		inner.ServeHTTP(&stampWriter{ResponseWriter: w, s: st}, r)
	})
	fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	lengths := make(map[int]int) // chunks per answer, by the answer's number
	for i := range n {
		offset, length := cfg.Interval*time.Duration(i)/time.Duration(n), cfg.Chunks+i%cfg.Chunks
		if cfg.Synced {
			offset, length = 0, cfg.Chunks
		}
		lengths[i] = length
		parts := []llmtest.Part{llmtest.Pause(offset)}
		for c := range length {
			parts = append(parts, llmtest.Pause(cfg.Interval), llmtest.Text(fmt.Sprintf("x%dy%d ", i, c)))
		}
		fake.Enqueue("/api/chat", llmtest.OllamaStream("m", parts...))
	}
	fmt.Printf("FAKE %s\n", fake.URL)
	in := bufio.NewScanner(os.Stdin)
	base, ok := strings.CutPrefix(next(in), "RUN ")
	if !ok {
		os.Exit(1)
	}
	bases := strings.Fields(base)
	followers := 0
	if cfg.Follow {
		followers = n
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n + followers, MaxIdleConns: n + followers}}
	// doAt sends a request to server i (of those sharing the store).
	doAt := func(i int, method, path, body string) (*http.Response, error) {
		req, _ := http.NewRequest(method, bases[i%len(bases)]+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+testToken)
		req.Header.Set("Content-Type", "application/json")
		return client.Do(req)
	}
	do := func(method, path, body string) (*http.Response, error) { return doAt(0, method, path, body) }
	ids := make([]string, n)
	for i := range ids {
		resp, err := doAt(i, "POST", "/v1/sessions", "")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		var se sessionJSON
		json.NewDecoder(resp.Body).Decode(&se)
		resp.Body.Close()
		ids[i] = se.ID
	}

	// Every session streams a turn at once (and, with Follow, is followed
	// through the next server).
	type outcome struct {
		ok    bool
		start time.Duration
		lats  []float64
		err   string
	}
	outs := make([]outcome, n)
	follows := make([]outcome, followers)
	opened := make(chan struct{}, n+followers)
	var wg sync.WaitGroup
	// read reads a turn's stream into o; signal is called at its session
	// event.
	read := func(resp *http.Response, o *outcome, t0 time.Time, signal func()) {
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			data, _ := io.ReadAll(resp.Body)
			o.err = fmt.Sprintf("status %d: %s", resp.StatusCode, data)
			return
		}
		var text strings.Builder
		var deltas int
		lines := newLineReader(resp.Body)
		for {
			line, err := lines.next()
			if err != nil {
				break
			}
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok {
				continue
			}
			now := time.Now()
			var ev struct{ Type, Text, Reason string }
			json.Unmarshal(data, &ev)
			switch ev.Type {
			case "session":
				o.start = now.Sub(t0)
				signal()
			case "text_delta":
				deltas++
				text.WriteString(ev.Text)
				if at, ok := st.get(strings.TrimSpace(ev.Text)); ok {
					o.lats = append(o.lats, ms(now.Sub(at)))
				}
			case "done":
				answer := -1
				fmt.Sscanf(text.String(), "x%d", &answer)
				o.ok = ev.Reason == "stop" && deltas == lengths[answer] && ev.Text == text.String()
				if !o.ok {
					o.err = fmt.Sprintf("done %s after %d deltas", data, deltas)
				}
			}
		}
	}
	for i, id := range ids {
		wg.Go(func() {
			o := &outs[i]
			signal := sync.OnceFunc(func() { opened <- struct{}{} })
			defer signal()
			t0 := time.Now()
			resp, err := doAt(i, "POST", "/v1/sessions/"+id+"/turns", `{"message":"count"}`)
			if err != nil {
				o.err = err.Error()
				return
			}
			read(resp, o, t0, func() {
				signal()
				if !cfg.Follow {
					return
				}
				// Follow the turn through the next server.
				wg.Go(func() {
					fo := &follows[i]
					fsignal := sync.OnceFunc(func() { opened <- struct{}{} })
					defer fsignal()
					resp, err := doAt(i+1, "GET", "/v1/sessions/"+id+"/events", "")
					if err != nil {
						fo.err = err.Error()
						return
					}
					read(resp, fo, time.Now(), fsignal)
				})
			})
		})
	}
	for range n + followers {
		<-opened
	}
	fmt.Println("STREAMING")
	close(release)
	wg.Wait()

	var r helperResult
	var lats, starts []float64
	for _, o := range outs {
		if o.ok {
			r.Complete++
		} else if r.Err == "" {
			r.Err = o.err
		}
		lats = append(lats, o.lats...)
		starts = append(starts, ms(o.start))
	}
	r.Events = len(lats)
	slices.Sort(lats)
	slices.Sort(starts)
	r.P50, r.P99, r.Max = percentile(lats, 50), percentile(lats, 99), percentile(lats, 100)
	r.Start50, r.Start99 = percentile(starts, 50), percentile(starts, 99)
	var relayed []float64
	for _, o := range follows {
		if o.ok {
			r.FollowComplete++
		} else if r.Err == "" {
			r.Err = "follower: " + o.err
		}
		relayed = append(relayed, o.lats...)
	}
	slices.Sort(relayed)
	r.RelayP50, r.RelayP99 = percentile(relayed, 50), percentile(relayed, 99)
	if cfg.Debug {
		byChunk := map[int][]float64{}
		for _, o := range outs {
			for c, l := range o.lats {
				byChunk[c] = append(byChunk[c], l)
			}
		}
		for c := 0; c < 2*cfg.Chunks; c += max(1, cfg.Chunks/10) {
			v := byChunk[c]
			slices.Sort(v)
			fmt.Fprintf(os.Stderr, "chunk %d: p50 %.2f p99 %.2f max %.2f\n", c, percentile(v, 50), percentile(v, 99), percentile(v, 100))
		}
	}
	res, _ := json.Marshal(r)
	fmt.Printf("RESULT %s\n", res)
	client.CloseIdleConnections()
	fmt.Println("IDLE")

	// Every session opens a turn whose model stays quiet.
	if next(in) != "OPEN" {
		os.Exit(0)
	}
	for range n {
		fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Pause(time.Hour), llmtest.Text("late")))
	}
	for _, id := range ids {
		go func() {
			signal := sync.OnceFunc(func() { opened <- struct{}{} })
			defer signal()
			resp, err := do("POST", "/v1/sessions/"+id+"/turns", `{"message":"wait"}`)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			defer resp.Body.Close()
			lines := newLineReader(resp.Body)
			for {
				line, err := lines.next()
				if err != nil {
					return
				}
				if bytes.Contains(line, []byte(`"type":"session"`)) {
					signal()
				}
			}
		}()
	}
	for range ids {
		<-opened
	}
	fmt.Println("OPENED")
	next(in) // until the benchmark is done
	os.Exit(0)
}

func next(in *bufio.Scanner) string {
	if !in.Scan() {
		return ""
	}
	return in.Text()
}

// lineReader reads lines without allocating per line.
type lineReader struct {
	r   io.Reader
	buf []byte
	beg int
	end int
}

func newLineReader(r io.Reader) *lineReader { return &lineReader{r: r, buf: make([]byte, 8<<10)} }

func (l *lineReader) next() ([]byte, error) {
	for {
		if i := bytes.IndexByte(l.buf[l.beg:l.end], '\n'); i >= 0 {
			line := l.buf[l.beg : l.beg+i]
			l.beg += i + 1
			return line, nil
		}
		if l.beg > 0 {
			copy(l.buf, l.buf[l.beg:l.end])
			l.end -= l.beg
			l.beg = 0
		}
		if l.end == len(l.buf) {
			return nil, fmt.Errorf("line too long")
		}
		n, err := l.r.Read(l.buf[l.end:])
		l.end += n
		if err != nil && n == 0 {
			return nil, err
		}
	}
}
