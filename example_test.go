package hearth_test

import (
	"context"
	"fmt"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
)

type lookupArgs struct {
	OrderID int `json:"order_id" jsonschema:"the order's number"`
}

// An agent with one host tool answers a question about the page the user
// is on. (The model here is the scripted fake server; use hearth.Ollama("")
// and a real model name in a program.)
func Example() {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("lookup_order", `{"order_id":1042}`)),
		llmtest.OllamaStream("m", llmtest.Text("Order 1042 waits for payment.")))

	bot, err := hearth.New(hearth.Config{
		Provider: hearth.Ollama(fake.URL),
		Model:    "m",
		Tools: []hearth.Tool{
			hearth.Func("lookup_order", "Look up an order", hearth.ReadOnly, func(ctx context.Context, a lookupArgs) (string, error) {
				return fmt.Sprintf("order %d: status pending, payment not received", a.OrderID), nil
			}),
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bot.Close()

	turn := bot.NewTurn(context.Background(), hearth.Request{
		Message: "Why is this order stuck?",
		Context: "The user is looking at order 1042.",
	})
	for ev := range turn.Events() {
		switch ev.Type {
		case hearth.EventToolCall:
			fmt.Printf("calls %s %s\n", ev.Name, ev.Args)
		case hearth.EventToolResult:
			fmt.Printf("gets %q\n", ev.Output)
		case hearth.EventApprovalRequired:
			turn.Approve(ev.ID, hearth.Allow)
		case hearth.EventDone:
			fmt.Printf("answers %q (%s)\n", ev.Text, ev.DoneReason)
		}
	}
	// Output:
	// calls lookup_order {"order_id":1042}
	// gets "order 1042: status pending, payment not received"
	// answers "Order 1042 waits for payment." (stop)
}
