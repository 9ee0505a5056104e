package hearth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

// Config.Prices prices each model call: the result sums the turn's cost,
// and a model without a price is counted as unpriced, never as 0.
func TestPrices(t *testing.T) {
	srv := llmtest.New(t)
	bot, err := hearth.New(hearth.Config{Provider: hearth.Ollama(srv.URL), Model: "m",
		Prices: map[string]hearth.Price{"m": {Input: "0.5", Output: "1.5"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("a"), llmtest.Usage(3000, 100)),
		llmtest.OllamaStream("other", llmtest.Text("b"), llmtest.Usage(3000, 100)))
	ctx := context.Background()
	turn := bot.NewTurn(ctx, hearth.Request{Message: "q"})
	var usageCost *int64
	for ev := range turn.Events() {
		if ev.Type == hearth.EventUsage {
			usageCost = ev.Cost
		}
	}
	res, err := turn.Result()
	const want = 3000*0.5 + 100*1.5 // micro-units
	if err != nil || res.Cost == nil || *res.Cost != want || res.Unpriced != 0 || usageCost == nil || *usageCost != want {
		t.Fatalf("%+v %v (usage event cost %v)", res, err, usageCost)
	}
	res, err = bot.NewTurn(ctx, hearth.Request{SessionID: res.SessionID, Model: "other", Message: "q2"}).Result()
	if err != nil || res.Cost != nil || res.Unpriced != 1 {
		t.Fatalf("unpriced model: %+v %v", res, err)
	}
}

func TestBadPrice(t *testing.T) {
	for _, p := range []hearth.Price{{Input: "0.1"}, {Input: "x", Output: "1"}, {Input: "0.0000001", Output: "1"}, {Input: "-1", Output: "1"}} {
		_, err := hearth.New(hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Model: "m", Prices: map[string]hearth.Price{"m": p}})
		if err == nil || !strings.Contains(err.Error(), `model "m"`) {
			t.Errorf("%+v: %v", p, err)
		}
	}
}
