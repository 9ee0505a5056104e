package conversation

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/session"
)

func rates(t *testing.T, p pricing.Price) pricing.Rates {
	t.Helper()
	r, err := p.Rates()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// pricedTurn runs one turn of the fixture's agent with prices.
func (f *fixture) pricedTurn(t *testing.T, id, prompt string, prices map[string]pricing.Rates) (*Outcome, []agent.Event) {
	t.Helper()
	var evs []agent.Event
	tr := &Turn{Store: f.store, Agent: f.a, Session: session.Session{ID: id, Provider: "ollama", Model: "m", Workspace: "/w"},
		Prompt: llm.Message{Content: prompt}, Prices: prices}
	out, err := tr.Run(context.Background(), func(e agent.Event) { evs = append(evs, e) })
	if err != nil {
		t.Fatal(err)
	}
	return out, evs
}

func usageEvents(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventUsage {
			out = append(out, e)
		}
	}
	return out
}

// Over many calls of varied sizes, at a price with six decimals, the
// stored sums are exactly the sums of each call's rounded cost: per turn,
// per session, per model, per day and in all.
func TestCostSumsExact(t *testing.T) {
	f := newFixture(t)
	r := rates(t, pricing.Price{Input: "0.150001", Output: "0.600007", CachedInput: "0.075003"})
	prices := map[string]pricing.Rates{"m": r}
	rng := rand.New(rand.NewPCG(1, 2))
	var want int64
	calls := 0
	id := ""
	for i := range 50 {
		var turnWant int64
		in1, out1 := 1+rng.IntN(200_000), 1+rng.IntN(9_000)
		parts := [][]llmtest.Part{{llmtest.Text(fmt.Sprint("answer ", i)), llmtest.Usage(in1, out1)}}
		if i%3 == 0 { // a tool call, then the answer: two model calls
			in2, out2 := 1+rng.IntN(200_000), rng.IntN(50)
			parts = [][]llmtest.Part{{llmtest.Call("read_file", `{"path":"a"}`), llmtest.Usage(in2, out2)}, parts[0]}
		}
		for _, p := range parts {
			f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", p...))
		}
		out, evs := f.pricedTurn(t, id, fmt.Sprint("q", i), prices)
		id = out.SessionID
		ues := usageEvents(evs)
		if len(ues) != len(parts) {
			t.Fatalf("turn %d: %d usage events for %d calls", i, len(ues), len(parts))
		}
		for _, e := range ues {
			c, err := r.Cost(pricing.Tokens{Input: int64(e.InputTokens), Output: int64(e.OutputTokens)})
			if err != nil {
				t.Fatal(err)
			}
			if e.Cost == nil || *e.Cost != c {
				t.Fatalf("turn %d: usage event's cost %v, want %d", i, e.Cost, c)
			}
			turnWant += c
			calls++
		}
		if out.Cost == nil || *out.Cost != turnWant || out.Unpriced != 0 {
			t.Fatalf("turn %d: cost %v unpriced %d, want %d", i, out.Cost, out.Unpriced, turnWant)
		}
		want += turnWant
	}
	ctx := context.Background()
	for _, by := range []string{session.ByTotal, session.BySession, session.ByModel, session.ByDay} {
		tot, err := f.store.UsageTotals(ctx, session.UsageFilter{}, by)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		n := 0
		for _, x := range tot {
			sum += x.Cost
			n += x.Calls
			if x.Unpriced != 0 {
				t.Errorf("by %q: %d unpriced", by, x.Unpriced)
			}
		}
		if sum != want || n != calls {
			t.Errorf("by %q: cost %d over %d calls, want %d over %d", by, sum, n, want, calls)
		}
	}
	s, err := f.store.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cost == nil || *s.Cost != want || s.Unpriced != 0 {
		t.Errorf("session cost %v (%d unpriced), want %d", s.Cost, s.Unpriced, want)
	}
}

// A model without a price has no cost: unknown (nil), counted as unpriced,
// never 0; with another model priced, the sum is partial.
func TestCostUnknownAndPartial(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("a"), llmtest.Usage(1000, 10)))
	out, evs := f.pricedTurn(t, "", "unpriced", map[string]pricing.Rates{"other": {Input: 1, Output: 1}})
	if out.Cost != nil || out.Unpriced != 1 {
		t.Errorf("cost %v unpriced %d, want unknown, 1", out.Cost, out.Unpriced)
	}
	if ue := usageEvents(evs); len(ue) != 1 || ue[0].Cost != nil {
		t.Errorf("usage events %+v", ue)
	}
	s, _ := f.store.Get(ctx, out.SessionID)
	if s.Cost != nil || s.Unpriced != 1 {
		t.Errorf("session cost %v unpriced %d", s.Cost, s.Unpriced)
	}

	// The same session, now priced: partial.
	f.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("b"), llmtest.Usage(1_000_000, 1_000_000)))
	out2, _ := f.pricedTurn(t, out.SessionID, "priced", map[string]pricing.Rates{"m": rates(t, pricing.Price{Input: "1", Output: "2"})})
	if out2.Cost == nil || *out2.Cost != 3_000_000 || out2.Unpriced != 0 {
		t.Errorf("turn cost %v unpriced %d", out2.Cost, out2.Unpriced)
	}
	tot, err := f.store.UsageTotals(ctx, session.UsageFilter{SessionID: out.SessionID}, session.ByTotal)
	if err != nil || len(tot) != 1 || tot[0].Cost != 3_000_000 || tot[0].Unpriced != 1 || tot[0].Calls != 2 {
		t.Errorf("totals %+v %v", tot, err)
	}
}

// OpenAI's prompt_tokens_details.cached_tokens is read, recorded and priced
// at the cached rate.
func TestCostCachedInputOpenAI(t *testing.T) {
	f := newFixture(t)
	f.a.Provider = openai.New(openai.Options{BaseURL: f.srv.OpenAIURL(), MaxRetries: -1})
	sc := llmtest.OpenAIStream("m", llmtest.Text("hi"), llmtest.Usage(10_000, 100))
	found := false
	for i, c := range sc.Chunks {
		if strings.Contains(c.Data, `"prompt_tokens":10000`) {
			sc.Chunks[i].Data = strings.Replace(c.Data, `"prompt_tokens":10000`, `"prompt_tokens":10000,"prompt_tokens_details":{"cached_tokens":8000}`, 1)
			found = true
		}
	}
	if !found {
		t.Fatal("no usage chunk in the scripted stream")
	}
	f.srv.Enqueue("/v1/chat/completions", sc)
	r := rates(t, pricing.Price{Input: "2.5", Output: "10", CachedInput: "1.25"})
	out, evs := f.pricedTurn(t, "", "q", map[string]pricing.Rates{"m": r})
	// 2000 × 2.5 + 8000 × 1.25 + 100 × 10, per million: 0.016.
	const want = 16_000
	ue := usageEvents(evs)
	if len(ue) != 1 || ue[0].CachedInputTokens != 8000 || ue[0].InputTokens != 10_000 || ue[0].Cost == nil || *ue[0].Cost != want {
		t.Fatalf("usage events %+v", ue)
	}
	if out.Cost == nil || *out.Cost != want || out.Usage.CachedInputTokens != 8000 {
		t.Errorf("turn cost %v usage %+v", out.Cost, out.Usage)
	}
	tot, err := f.store.UsageTotals(context.Background(), session.UsageFilter{}, session.ByModel)
	if err != nil || len(tot) != 1 || tot[0].CachedInputTokens != 8000 || tot[0].Cost != want {
		t.Errorf("totals %+v %v", tot, err)
	}
}
