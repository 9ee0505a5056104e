package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// evalRecord is what Ollama said of one /api/chat request's prompt.
type evalRecord struct {
	// Count is prompt_eval_count: this Ollama reports the whole prompt,
	// cached or not.
	Count int `json:"prompt_eval_count"`
	// Duration is prompt_eval_duration: what evaluating the prompt took,
	// which shows how much of it the cache spared.
	Duration time.Duration `json:"prompt_eval_duration"`
}

// evalProxy stands between hearth and a real Ollama and records, for each
// /api/chat request, the prompt figures of its last line. Told to break
// the prefix (setBreak), it puts a line that changes on every request at
// the start of the system prompt (as a clock in the prompt would): the
// change that a prompt cache cannot survive.
type evalProxy struct {
	*httptest.Server
	mu          sync.Mutex
	breakPrefix bool
	records     []evalRecord
}

func (p *evalProxy) setBreak(b bool) {
	p.mu.Lock()
	p.breakPrefix = b
	p.mu.Unlock()
}

func newEvalProxy(t *testing.T, target string) *evalProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &evalProxy{}
	n := 0
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		r := pr.Out
		p.mu.Lock()
		breakPrefix := p.breakPrefix
		p.mu.Unlock()
		if r.URL.Path != "/api/chat" || !breakPrefix {
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if json.Unmarshal(body, &req) == nil {
			if msgs, _ := req["messages"].([]any); len(msgs) > 0 {
				if m, _ := msgs[0].(map[string]any); m != nil && m["role"] == "system" {
					n++
					m["content"] = fmt.Sprintf("Request %d.\n", n) + m["content"].(string)
					body, _ = json.Marshal(req)
				}
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/api/chat" || resp.StatusCode != http.StatusOK {
			return nil
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		var last []byte
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				last = append(last[:0], line...)
			}
		}
		var rec evalRecord
		if json.Unmarshal(last, &rec) == nil && rec.Count > 0 {
			p.mu.Lock()
			p.records = append(p.records, rec)
			p.mu.Unlock()
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return nil
	}
	p.Server = httptest.NewServer(rp)
	t.Cleanup(p.Close)
	return p
}

func (p *evalProxy) recorded() []evalRecord {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]evalRecord(nil), p.records...)
}

// perToken is the prompt evaluation time per prompt token.
func (r evalRecord) perToken() time.Duration {
	return r.Duration / time.Duration(max(1, r.Count))
}

// TestPeerPromptCache runs a session of several `hearth run --context`
// turns against the real Ollama of ../shared/ollama-peer and reads Ollama's
// own prompt figures: the first turn evaluates the whole prompt (system
// prompt and tools: some 4,000 tokens of this byte-level model), and every
// later turn begins with the previous one's tokens, so Ollama evaluates the
// new ones only. The session then goes on with a change that breaks the
// prefix, made on purpose (a line that differs in every request put first
// in the system prompt, as a clock there would): those turns are as slow as
// the first, which shows that the measure sees a break. This Ollama
// reports the whole prompt in prompt_eval_count, cached or not, so the
// measure is the evaluation time per prompt token, each turn's against the
// first's, in one run: a comparison with a wide margin (a cached turn is
// some 50-100 times cheaper), not a time limit.
//
// HEARTH_PEER_TURNS=N runs N turns, then N with the prefix broken (default:
// 3, then 1); with -v the test logs each turn's figures, with the tokens
// evaluated estimated from the time (docs/benchmarks.md).
func TestPeerPromptCache(t *testing.T) {
	target := os.Getenv("HEARTH_OLLAMA_URL")
	if target == "" {
		t.Skip("set HEARTH_OLLAMA_URL (scripts/test.sh starts ../shared/ollama-peer and sets it) to run against a real Ollama")
	}
	resp, err := http.Post(target+"/api/show", "application/json", strings.NewReader(`{"model":"tiny-answer"}`))
	if err != nil {
		t.Fatalf("HEARTH_OLLAMA_URL=%s does not answer: %v", target, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the peer has no model tiny-answer: run scripts/peer-models.sh")
	}
	stable, broken := 3, 1
	if s := os.Getenv("HEARTH_PEER_TURNS"); s != "" {
		if stable, err = strconv.Atoi(s); err != nil || stable < 2 {
			t.Fatalf("HEARTH_PEER_TURNS=%q: want a number of turns, 2 or more", s)
		}
		broken = stable
	}
	e := newE2E(t)
	proxy := newEvalProxy(t, target)
	for i := range stable + broken {
		proxy.setBreak(i >= stable)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := e.cmd(ctx, "", "-m", "tiny-answer", "run", "--context", "s1", fmt.Sprintf("step %d: go on", i+1))
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+proxy.URL)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "Done.") {
			t.Fatalf("turn %d: %v\n%s", i+1, err, out)
		}
	}
	recs := proxy.recorded()
	if len(recs) != stable+broken {
		t.Fatalf("%d chat requests recorded, want %d (one per turn)", len(recs), stable+broken)
	}
	cold := recs[0].perToken()
	for i, r := range recs {
		what := "stable prefix"
		if i >= stable {
			what = "prefix broken"
		}
		t.Logf("turn %2d (%s): prompt %5d tokens, evaluated in %8.1f ms (%6.3f ms per token, %5.1f%% of the first turn's): ≈%d tokens evaluated",
			i+1, what, r.Count, float64(r.Duration.Microseconds())/1000, float64(r.perToken().Microseconds())/1000,
			100*float64(r.perToken())/float64(cold), int64(r.Duration/max(1, cold)))
	}
	// Each later turn of the stable prefix against the first; each turn
	// of the broken one against the slowest of those (not the first: the
	// machine's load may have changed since).
	var cachedMax time.Duration
	for i, r := range recs[1:stable] {
		if r.perToken()*4 >= cold {
			t.Errorf("turn %d: %s per prompt token against %s for the first: the prompt cache was not used; each request must begin with the previous one's bytes", i+2, r.perToken(), cold)
		}
		cachedMax = max(cachedMax, r.perToken())
	}
	for i, r := range recs[stable:] {
		if r.perToken() < 4*cachedMax {
			t.Errorf("turn %d: %s per prompt token with the prefix broken, against %s at most with it whole: the measure does not see a broken prefix", stable+i+1, r.perToken(), cachedMax)
		}
	}
}
