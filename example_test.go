package hearth_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

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

// The agent writes a file in a workspace; an undo takes it back, after a
// preview of what it will change.
func ExampleSession_Restore() {
	fake := llmtest.NewServer()
	defer fake.Close()
	fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"notes.txt","content":"draft\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Wrote notes.txt.")))
	dir, _ := os.MkdirTemp("", "example-workspace-")
	defer os.RemoveAll(dir)

	bot, err := hearth.New(hearth.Config{
		Provider:  hearth.Ollama(fake.URL),
		Model:     "m",
		Workspace: dir, // checkpoints: a temporary store, as no Config.Checkpoints is set
		Profile:   hearth.Profile{Tools: []string{"write_file"}, Mode: hearth.ModeAutoEdit},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer bot.Close()
	turn := bot.NewTurn(context.Background(), hearth.Request{Message: "Start a notes file"})
	for ev := range turn.Events() {
		if ev.Type == hearth.EventCheckpoint {
			fmt.Printf("checkpoint before %s\n", ev.Name)
		}
	}

	s := turn.Session()
	preview, err := s.Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo, DryRun: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range preview.Files {
		fmt.Printf("undo would %s %s\n", f.Action, f.Path)
	}
	var conflict *hearth.ConflictError
	res, err := s.Restore(context.Background(), hearth.RestoreRequest{Op: hearth.Undo})
	switch {
	case errors.As(err, &conflict):
		fmt.Println("changed since the agent did:", conflict.Paths) // ask, then Overwrite or Keep
		return
	case err != nil:
		fmt.Println(err)
		return
	}
	_, statErr := os.Stat(filepath.Join(dir, "notes.txt"))
	fmt.Printf("undid turn %d; notes.txt exists: %v\n", res.Turn, statErr == nil)
	// Output:
	// checkpoint before write_file
	// undo would delete notes.txt
	// undid turn 1; notes.txt exists: false
}
