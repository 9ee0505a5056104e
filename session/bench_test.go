package session

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// BenchmarkResume measures what continuing a long session costs before the
// model is called: open the store, check it, read the live messages and
// build the history sent to the model. A 10,000-message session cannot fit
// any model's window: compression has summarised all but a recent tail, as
// in "compacted" (9,800 of them summarised, 200 live); "all live" is the
// worst case, every message read.
func BenchmarkResume(b *testing.B) {
	for _, tc := range []struct {
		name string
		live int
	}{{"compacted", 200}, {"all live", 10000}} {
		b.Run(tc.name, func(b *testing.B) { benchResume(b, tc.live) })
	}
}

func benchResume(b *testing.B, live int) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "h.db")
	s, err := Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	s.Create(ctx, &Session{ID: "long"})
	text := strings.Repeat("some words of a typical message ", 8)
	batch := make([]Message, 0, 100)
	for i := range 10000 {
		m := Message{Message: llm.Message{Role: llm.RoleUser, Content: text}}
		switch i % 3 {
		case 1:
			m.Role = llm.RoleAssistant
			m.ToolCalls = []llm.ToolCall{{ID: fmt.Sprintf("c%d", i), Name: "read_file", Args: json.RawMessage(`{"file_path":"a.go"}`)}}
		case 2:
			m.Role, m.ToolCallID, m.ToolName = llm.RoleTool, fmt.Sprintf("c%d", i-1), "read_file"
		}
		batch = append(batch, m)
		if len(batch) == cap(batch) {
			if _, err := s.Append(ctx, "long", batch...); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if live < 10000 {
		var cut []int
		for q := 1; q <= 10000-live; q++ {
			cut = append(cut, q)
		}
		if _, err := s.Compact(ctx, "long", cut, 10000-live+1, Message{Message: llm.Message{Role: llm.RoleUser, Content: "summary"}}); err != nil {
			b.Fatal(err)
		}
	}
	s.Close()
	b.ResetTimer()
	for b.Loop() {
		st, err := Open(ctx, path)
		if err != nil {
			b.Fatal(err)
		}
		msgs, err := st.LiveMessages(ctx, "long")
		if err != nil || len(msgs) < live {
			b.Fatal(err, len(msgs))
		}
		if h := History(msgs); len(h) < live {
			b.Fatal(len(h))
		}
		st.Close()
	}
}

// BenchmarkAppend measures committing one message (a transaction, WAL).
func BenchmarkAppend(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	s.Create(ctx, &Session{ID: "s"})
	m := Message{Message: llm.Message{Role: llm.RoleAssistant, Content: strings.Repeat("answer text ", 40)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Append(ctx, "s", m); err != nil {
			b.Fatal(err)
		}
	}
}
