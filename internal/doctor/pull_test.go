package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
)

const weights = "sha256:163553aea1b1de62de7c5eb2ef5afb756b4b3133308d9ae7e42e951d8d696ef5"

// pullLines is what Ollama streams on /api/pull for a model of one large
// layer and one small one: the first line of a layer has no "completed"
// (Ollama omits a zero).
func pullLines(parts int) []string {
	lines := []string{`{"status":"pulling manifest"}`,
		fmt.Sprintf(`{"status":"pulling 163553aea1b1","digest":"%s","total":2497279808}`, weights)}
	for i := 1; i <= parts; i++ {
		lines = append(lines, fmt.Sprintf(`{"status":"pulling 163553aea1b1","digest":"%s","total":2497279808,"completed":%d}`, weights, int64(2497279808)*int64(i)/int64(parts)))
	}
	return append(lines,
		`{"status":"pulling ae370d884f10","digest":"sha256:ae370d884f108d16e7cc8fd5259ebc5773a0afa6e078b11f4ed7e39a27e0dfc4","total":1723,"completed":1723}`,
		`{"status":"verifying sha256 digest"}`, `{"status":"writing manifest"}`, `{"status":"success"}`)
}

func ndjson(lines ...string) llmtest.Scenario { return llmtest.NDJSON(lines...) }

// A fresh Ollama has no models: the model the user named is reported
// missing, with the ways to pull it.
func TestMissingModelOnFreshOllama(t *testing.T) {
	srv := llmtest.New(t)
	p := ollama.New(ollama.Options{BaseURL: srv.URL})
	r := Run(context.Background(), p, srv.URL, Options{Model: "qwen3:4b"})
	if c := find(r, "models"); c.Status != Warn {
		t.Errorf("models: %+v", c)
	}
	c := find(r, "model")
	if r.Ready || r.MissingModel != "qwen3:4b" || c.Status != Fail || !strings.Contains(c.Fix, "--pull") ||
		!strings.Contains(c.Fix, "`ollama pull qwen3:4b`") || strings.Contains(c.Fix, "choose one of") {
		t.Errorf("missing: %+v %+v", r, c)
	}
	// Without a model chosen, an empty server is a failure of its own.
	r = Run(context.Background(), p, srv.URL, Options{})
	if c := find(r, "models"); c.Status != Fail || r.MissingModel != "" {
		t.Errorf("no model chosen: %+v", r)
	}
	// An OpenAI-compatible server cannot pull.
	if _, ok := CanPull(openai.New(openai.Options{BaseURL: srv.OpenAIURL()})); ok {
		t.Error("openai can pull")
	}
}

func TestPull(t *testing.T) {
	srv := llmtest.New(t)
	srv.Enqueue("/api/pull", ndjson(pullLines(3)...))
	srv.Enqueue("/api/pull", ndjson(`{"status":"pulling manifest"}`, `{"error":"pull model manifest: file does not exist"}`))
	p := ollama.New(ollama.Options{BaseURL: srv.URL})
	pl, ok := CanPull(p)
	if !ok {
		t.Fatal("ollama cannot pull")
	}
	steps := 0
	c := Pull(context.Background(), pl, "qwen3:4b", func(ollama.PullProgress) { steps++ })
	if c.Status != OK || c.Name != "pull" || !strings.Contains(c.Detail, "qwen3:4b pulled") || !strings.Contains(c.Detail, "(2.5 GB in ") || steps != 9 {
		t.Errorf("pulled: %+v after %d steps", c, steps)
	}
	c = Pull(context.Background(), pl, "qwen3:40b", nil)
	if c.Status != Fail || !strings.Contains(c.Detail, "pulling qwen3:40b failed: pull model manifest: file does not exist") || !strings.Contains(c.Fix, "ollama.com/library") {
		t.Errorf("unknown model: %+v", c)
	}
}

// clock is a fake clock that each reading moves on by step.
type clock struct {
	t    time.Time
	step time.Duration
}

func (c *clock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

func feed(m *Meter, lines []string) {
	for _, l := range lines {
		var p ollama.PullProgress
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			panic(err)
		}
		m.Show(p)
	}
	m.Close()
}

// Not a terminal: a line per step and per layer, and a progress line only
// every few seconds however often Ollama reports.
func TestMeterPlain(t *testing.T) {
	var out bytes.Buffer
	clk := &clock{t: time.Unix(0, 0), step: 100 * time.Millisecond}
	m := &Meter{W: &out, Model: "qwen3:4b", Now: clk.now}
	feed(m, pullLines(200)) // 20 s of reports, ten a second
	text := out.String()
	if strings.ContainsAny(text, "\r\033") {
		t.Errorf("control characters in plain output: %q", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	progress := 0
	for _, l := range lines {
		if strings.Contains(l, "%)") {
			progress++
		}
	}
	// 20 s at most one every 5 s.
	if progress < 3 || progress > 4 {
		t.Errorf("%d progress lines:\n%s", progress, text)
	}
	for _, want := range []string{"qwen3:4b: pulling manifest", "qwen3:4b: pulling 163553aea1b1 (2.5 GB)", "qwen3:4b: pulling ae370d884f10 (1.7 KB)",
		"qwen3:4b: verifying sha256 digest", "qwen3:4b: writing manifest", "qwen3:4b: success"} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no line %q in:\n%s", want, text)
		}
	}
	if len(lines) != 6+progress {
		t.Errorf("%d lines:\n%s", len(lines), text)
	}
}

// downloading is the terminal line during a download: the bar, the share,
// the bytes and the speed.
var downloading = regexp.MustCompile(`qwen3:4b ▕[^▏]*▏ +\d{1,2}%  [\d.]+ [MG]B/2\.5 GB  \d+ MB/s`)

// A terminal: one line redrawn, a few times a second at most, cleared at
// the end; colour only when allowed.
func TestMeterTerminal(t *testing.T) {
	for _, color := range []bool{false, true} {
		var out bytes.Buffer
		clk := &clock{t: time.Unix(0, 0), step: 10 * time.Millisecond}
		m := &Meter{W: &out, Model: "qwen3:4b", TTY: true, Color: color, Now: clk.now}
		feed(m, pullLines(300)) // 3 s of reports, a hundred a second
		text := out.String()
		draws := strings.Count(text, "\r\033[K")
		// 3 s at ten redraws a second, plus one for each step, plus the
		// clearing.
		if draws < 20 || draws > 45 {
			t.Errorf("%d redraws", draws)
		}
		if !strings.HasSuffix(text, "\r\033[K") || strings.Contains(text, "\n") {
			t.Errorf("not one line, cleared: %q", text[max(0, len(text)-200):])
		}
		if !strings.Contains(text, "qwen3:4b: pulling manifest") || !strings.Contains(text, "100%  2.5 GB/2.5 GB  verifying sha256 digest") ||
			!strings.Contains(text, strings.Repeat("█", barWidth)) || !downloading.MatchString(text) {
			t.Errorf("content: %q", text)
		}
		if got := strings.Contains(text, "\033[32m"); got != color {
			t.Errorf("color=%v: painted %v", color, got)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 999: "999 B", 1723: "1.7 KB", 386_000_000: "386 MB", 2497279808: "2.5 GB", 42_000_000_000: "42 GB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
