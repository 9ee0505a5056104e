package conversation

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

func TestAddCost(t *testing.T) {
	p := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name string
		sum  *int64
		c    int64
		want int64
		ok   bool
	}{
		{"first", nil, 7, 7, true},
		{"first, the largest", nil, math.MaxInt64, math.MaxInt64, true},
		{"zero", p(5), 0, 5, true},
		{"sum", p(5), 7, 12, true},
		{"to the largest", p(math.MaxInt64 - 7), 7, math.MaxInt64, true},
		{"past the largest", p(math.MaxInt64 - 6), 7, 0, false},
		{"both huge", p(math.MaxInt64), math.MaxInt64, 0, false},
		{"below the smallest", p(math.MinInt64), -1, 0, false},
	} {
		got, ok := addCost(tc.sum, tc.c)
		if ok != tc.ok || (ok && *got != tc.want) {
			t.Errorf("%s: addCost = %d, %v; want %d, %v", tc.name, *got, ok, tc.want, tc.ok)
		}
	}
}

// A turn whose priced calls' sum overflows has an unknown cost (nil, every
// call counted unpriced), never a wrapped one; each call's own cost is
// still recorded.
func TestTurnCostOverflowIsUnknown(t *testing.T) {
	f := newFixture(t)
	// A price so high that one call of a million million tokens costs
	// about MaxInt64/2 micro-units.
	per := int64(math.MaxInt64/2) / 1_000_000
	prices := map[string]pricing.Rates{"m": {Input: per, Output: 0}}
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"path":"a"}`), llmtest.Usage(1_000_000_000_000, 1)),
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"path":"b"}`), llmtest.Usage(1_000_000_000_000, 1)),
		llmtest.OllamaStream("m", llmtest.Text("done"), llmtest.Usage(1_000_000_000_000, 1)),
	)
	out, evs := f.pricedTurn(t, "", "q", prices)
	if out.Cost != nil || out.Unpriced != 3 {
		t.Errorf("cost %v unpriced %d, want unknown, 3", out.Cost, out.Unpriced)
	}
	for _, e := range usageEvents(evs) {
		if e.Cost == nil {
			t.Errorf("a call's own cost is unknown: %+v", e)
		}
	}
}

// A provider's absurd token count is bounded before it is priced and
// stored, so that the store's sums cannot overflow on it.
func TestTokenCountsBounded(t *testing.T) {
	f := newFixture(t)
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("a"), llmtest.Usage(math.MaxInt64, math.MaxInt64)))
	out, _ := f.pricedTurn(t, "", "q", nil)
	u, err := f.store.UsageTotals(context.Background(), session.UsageFilter{SessionID: out.SessionID}, session.ByTotal)
	if err != nil || len(u) != 1 || u[0].InputTokens != maxTokens || u[0].OutputTokens != maxTokens {
		t.Errorf("usage %+v %v", u, err)
	}
}

// Every turn of a session that has a workspace marks it used: a resumed
// session's turn moves its last use.
func TestTurnTouchesWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var last time.Time
	id := ""
	for i := range 3 {
		f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("a")))
		out, _, err := f.turn(t, id, "q")
		if err != nil {
			t.Fatal(err)
		}
		id = out.SessionID
		w, err := f.store.Workspace(ctx, "/w")
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 && !w.LastUsed.After(last) {
			t.Errorf("turn %d: last use %v did not move from %v", i, w.LastUsed, last)
		}
		last = w.LastUsed
		time.Sleep(15 * time.Millisecond)
	}
	// Nor does a turn of a session without one.
	n := len(f.srv.RequestsTo("/api/chat"))
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("a")), llmtest.OllamaStream("m", llmtest.Text("b")))
	tr := &Turn{Store: f.store, Agent: f.a, Prompt: llm.Message{Content: "q"}}
	out, err := tr.Run(ctx, func(agent.Event) {})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(15 * time.Millisecond)
	tr = &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: out.SessionID}, Prompt: llm.Message{Content: "q2"}}
	if _, err := tr.Run(ctx, func(agent.Event) {}); err != nil {
		t.Fatal(err)
	}
	if got := len(f.srv.RequestsTo("/api/chat")) - n; got != 2 {
		t.Fatalf("%d model calls", got)
	}
	w, err := f.store.Workspace(ctx, "")
	if err != nil || !w.LastUsed.Equal(w.CreatedAt) {
		t.Errorf("the unknown workspace %+v %v: used by a turn", w, err)
	}
}

// A tool's own model call (RecordUsage, as the edit fixer's) is recorded
// in the session of the turn that ran the tool, priced, and counted in the
// turn; outside a turn it records nothing.
func TestRecordUsageFromTool(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	RecordUsage(ctx, "m", llm.Usage{InputTokens: 5, OutputTokens: 5}) // no turn: nothing
	reg, _ := tool.NewRegistry(tool.MustFunc("ask_model", "asks a model", tool.ReadOnly, func(ctx context.Context, _ struct{}) (string, error) {
		RecordUsage(ctx, "fixer", llm.Usage{InputTokens: 400, OutputTokens: 20})
		return "ok", nil
	}))
	f.a.Tools = reg
	f.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("ask_model", `{}`), llmtest.Usage(1000, 10)),
		llmtest.OllamaStream("m", llmtest.Text("done"), llmtest.Usage(1100, 10)),
	)
	prices := map[string]pricing.Rates{"m": rates(t, pricing.Price{Input: "1", Output: "1"}), "fixer": rates(t, pricing.Price{Input: "2", Output: "2"})}
	out, _ := f.pricedTurn(t, "", "q", prices)
	// A token costs 1 micro-unit of m, 2 of the fixer.
	if want := int64(1010 + 1110 + 2*420); out.Cost == nil || *out.Cost != want || out.Unpriced != 0 {
		t.Errorf("turn cost %v unpriced %d, want %d", out.Cost, out.Unpriced, want)
	}
	tot, err := f.store.UsageTotals(ctx, session.UsageFilter{}, session.ByModel)
	if err != nil || len(tot) != 2 {
		t.Fatalf("usage by model %+v %v", tot, err)
	}
	for _, x := range tot {
		want := map[string][2]int64{"m": {2, 2120}, "fixer": {1, 840}}[x.Key]
		if int64(x.Calls) != want[0] || x.Cost != want[1] || x.Unpriced != 0 {
			t.Errorf("model %s: %+v, want %d priced calls costing %d", x.Key, x, want[0], want[1])
		}
	}
	if tot, _ := f.store.UsageTotals(ctx, session.UsageFilter{}, session.BySession); len(tot) != 1 || tot[0].Key != out.SessionID {
		t.Errorf("usage by session %+v", tot)
	}
}
