package prompted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/openai"
)

func TestFileMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hearth", "tool-modes.json")
	at := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	a := NewFileMemory(path, "http://127.0.0.1:11434/")
	if _, ok := a.Refused("gemma3"); ok {
		t.Fatal("refused before anything was remembered")
	}
	if err := a.RememberRefused("gemma3", at); err != nil {
		t.Fatal(err)
	}
	// Another instance (another process) on the same file and server.
	b := NewFileMemory(path, "http://127.0.0.1:11434")
	if got, ok := b.Refused("gemma3"); !ok || !got.Equal(at) {
		t.Fatalf("Refused = %v, %v", got, ok)
	}
	if _, ok := b.Refused("qwen3"); ok {
		t.Fatal("another model refused")
	}
	// Another server keeps its own models.
	other := NewFileMemory(path, "http://gpu:8000/v1")
	if _, ok := other.Refused("gemma3"); ok {
		t.Fatal("refused on another server")
	}
	if err := other.RememberRefused("gemma3", at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := a.Refused("gemma3"); !got.Equal(at) {
		t.Fatalf("the other server's entry replaced this one's: %v", got)
	}
	raw, _ := os.ReadFile(path)
	var f memoryFile
	if err := json.Unmarshal(raw, &f); err != nil || f.Version != fileVersion || len(f.Servers) != 2 {
		t.Fatalf("file %s: %v", raw, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v", fi.Mode())
	}
}

func TestFileMemoryCorruptFileIsEmptyAndLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tool-modes.json")
	os.WriteFile(path, []byte(`{"version":1,"servers":{`), 0o600)
	var logs bytes.Buffer
	m := NewFileMemory(path, "s")
	m.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, ok := m.Refused("x"); ok {
		t.Fatal("a corrupt file said something")
	}
	if !strings.Contains(logs.String(), "not valid JSON") {
		t.Fatalf("not logged: %q", logs.String())
	}
	if err := m.RememberRefused("x", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Refused("x"); !ok {
		t.Fatal("the corrupt file was not replaced")
	}
}

func TestFileMemorySeveralWriters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tool-modes.json")
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := NewFileMemory(path, "s") // one per "process"
			for i := range 20 {
				if err := m.RememberRefused(fmt.Sprintf("m%d-%d", w, i), time.Now()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	// Readers never see a torn file.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 200 {
			if b, err := os.ReadFile(path); err == nil && !json.Valid(b) {
				t.Errorf("a torn file: %q", b)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	b, err := os.ReadFile(path)
	if err != nil || !json.Valid(b) {
		t.Fatalf("file %q: %v", b, err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
	if len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestFileMemoryForgetsAfterTTL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tool-modes.json")
	at := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	m := NewFileMemory(path, "s")
	if err := m.RememberRefused("gemma3", at); err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return at.Add(RefusalTTL - time.Minute) }
	if _, ok := m.Refused("gemma3"); !ok {
		t.Fatal("forgotten before the TTL")
	}
	m.now = func() time.Time { return at.Add(RefusalTTL + time.Minute) }
	if _, ok := m.Refused("gemma3"); ok {
		t.Fatal("remembered after the TTL")
	}
}

// fakeMemory is a Memory in a map, recording what it is told.
type fakeMemory struct {
	mu         sync.Mutex
	at         map[string]time.Time
	remembered []time.Time
}

func (m *fakeMemory) Refused(model string) (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.at[model]
	return at, ok
}

func (m *fakeMemory) RememberRefused(model string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.at[model] = at
	m.remembered = append(m.remembered, at)
	return nil
}

// TestRefusalExpires: a refusal older than RefusalTTL, remembered by a
// Memory or in this process, is forgotten: native tools are tried again,
// and a new refusal is remembered again.
func TestRefusalExpires(t *testing.T) {
	srv := llmtest.New(t)
	// The server does not say whether the model calls tools.
	srv.AddModel(llmtest.Model{Name: "m"})
	refusal := llmtest.JSONResponse(400, map[string]any{"object": "error", "message": `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`})
	reply := llmtest.OpenAIStream("m", llmtest.Text("ok"))
	srv.Enqueue("/v1/chat/completions", reply, refusal, reply, refusal, reply)

	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	mem := &fakeMemory{at: map[string]time.Time{"m": now.Add(-RefusalTTL - time.Hour)}}
	p := New(openai.New(openai.Options{BaseURL: srv.OpenAIURL(), Model: "m", MaxRetries: -1}), Options{Memory: mem})
	p.now = func() time.Time { return now }
	tools := []llm.ToolSpec{{Name: "read_file", Parameters: json.RawMessage(`{"type":"object"}`)}}
	req := &llm.Request{Model: "m", Tools: tools, Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}
	native := func() bool {
		t.Helper()
		if _, err := llm.Collect(p.Chat(context.Background(), req)); err != nil {
			t.Fatal(err)
		}
		reqs := srv.RequestsTo("/v1/chat/completions")
		var body struct{ Tools []json.RawMessage }
		reqs[len(reqs)-1].JSON(t, &body)
		return len(body.Tools) > 0
	}

	// The remembered refusal is 7 days and an hour old: native again.
	if d := p.Decide(context.Background(), "m"); d.Mode != Native {
		t.Fatalf("an expired refusal decided %+v", d)
	}
	if !native() {
		t.Fatal("not native after the refusal expired")
	}
	// The server refuses again: remembered again, with the new time.
	if native() {
		t.Fatal("the refusal was not retried prompted")
	}
	if len(mem.remembered) != 1 || !mem.remembered[0].Equal(now) {
		t.Fatalf("remembered %v", mem.remembered)
	}
	if d := p.Decide(context.Background(), "m"); d.Mode != Prompted {
		t.Fatalf("after a new refusal: %+v", d)
	}
	// Within the TTL the process keeps it; past it, native again.
	now = now.Add(RefusalTTL - time.Minute)
	if d := p.Decide(context.Background(), "m"); d.Mode != Prompted {
		t.Fatalf("within the TTL: %+v", d)
	}
	now = now.Add(2 * time.Minute)
	if d := p.Decide(context.Background(), "m"); d.Mode != Native {
		t.Fatalf("past the TTL: %+v", d)
	}
	if native() {
		t.Fatal("the refusal was not retried prompted")
	}
	if len(mem.remembered) != 2 || !mem.remembered[1].Equal(now) {
		t.Fatalf("remembered %v", mem.remembered)
	}
	if srv.Pending() != 0 {
		t.Errorf("%d scenarios left", srv.Pending())
	}
}
