package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm"
)

// The Store's contract: every test in this file runs on each kind of store
// (forEachStore): SQLite and PostgreSQL, with the same assertions. Where
// the two differ on purpose (what PostgreSQL's text cannot hold), the
// test says what each does.

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// forEachStore runs f on a fresh, empty store of each kind, as subtests
// "sqlite" and "postgres" (which skips when PostgreSQL is not installed,
// see pgtest). The test runs in parallel with the others, and so do its
// subtests: each has a store of its own (a file, a database).
func forEachStore(t *testing.T, f func(t *testing.T, s Store)) {
	t.Helper()
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		f(t, open(t))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		f(t, openPostgres(t, pgtest.URL(t)))
	})
}

// openPostgres opens the store at url, closed when t ends (before pgtest
// drops the database: cleanups run last first).
func openPostgres(t testing.TB, url string) *Postgres {
	t.Helper()
	p, err := OpenPostgres(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// setLockTimeout sets how long s's Lock waits for another holder.
func setLockTimeout(s Store, d time.Duration) {
	switch s := s.(type) {
	case *SQLite:
		s.LockTimeout = d
	case *Postgres:
		s.LockTimeout = d
	default:
		panic(fmt.Sprintf("setLockTimeout: %T", s))
	}
}

func msg(role llm.Role, content string) Message {
	return Message{Message: llm.Message{Role: role, Content: content}}
}

// utcMillis says t is set, in UTC, at millisecond precision: how both
// stores return every time.
func utcMillis(t time.Time) bool {
	return !t.IsZero() && t.Location() == time.UTC && t.Nanosecond()%int(time.Millisecond) == 0
}

func TestSessionsCRUD(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		a := &Session{Title: "fix the parser", Provider: "ollama", Model: "qwen3:4b", Workspace: "/w"}
		if err := s.Create(ctx, a); err != nil || !strings.HasPrefix(a.ID, "s-") || len(a.ID) != 12 {
			t.Fatalf("%v %q", err, a.ID)
		}
		if got, err := s.Get(ctx, a.ID); err != nil || got.Title != a.Title || got.Provider != "ollama" || got.Model != "qwen3:4b" ||
			got.Workspace != "/w" || got.ParentID != "" || !got.CreatedAt.Equal(a.CreatedAt) || !got.UpdatedAt.Equal(a.UpdatedAt) {
			t.Errorf("get %+v %v, created %+v", got, err, a)
		}
		b := &Session{ID: "s1"}
		if err := s.Create(ctx, b); err != nil || b.ID != "s1" {
			t.Fatal(err, b.ID)
		}
		if err := s.Create(ctx, &Session{ID: "s1", Title: "again"}); err == nil {
			t.Error("duplicate id accepted")
		}
		if got, _ := s.Get(ctx, "s1"); got.Title != "" {
			t.Errorf("a duplicate changed the session: %+v", got)
		}
		child := &Session{ID: "c1", ParentID: "s1", ParentCall: "call_1"}
		if err := s.Create(ctx, child); err != nil {
			t.Fatal(err)
		}
		if err := s.Create(ctx, &Session{ParentID: "nope"}); err == nil {
			t.Error("orphan child accepted")
		}
		time.Sleep(2 * time.Millisecond) // updated_at has millisecond resolution
		if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, "the parser drops commas")); err != nil {
			t.Fatal(err)
		}
		for _, u := range []Usage{{SessionID: "s1", Model: "m", InputTokens: 100, OutputTokens: 20}, {SessionID: "s1", Model: "m", InputTokens: 50, OutputTokens: 5}} {
			if err := s.RecordUsage(ctx, u); err != nil {
				t.Fatal(err)
			}
		}

		got, err := s.Get(ctx, "s1")
		if err != nil || got.MessageCount != 1 || got.InputTokens != 150 || got.OutputTokens != 25 {
			t.Fatalf("%+v %v", got, err)
		}
		list, err := s.List(ctx, ListOptions{})
		if err != nil || len(list) != 2 || list[0].ID != "s1" || list[1].ID != a.ID {
			t.Errorf("list (newest first, no children): %+v %v", list, err)
		}
		if list[0].MessageCount != 1 || list[0].InputTokens != 150 || list[0].OutputTokens != 25 {
			t.Errorf("list counts: %+v", list[0])
		}
		if l, _ := s.List(ctx, ListOptions{Limit: 1}); len(l) != 1 || l[0].ID != "s1" {
			t.Errorf("limit 1: %+v", l)
		}
		kids, _ := s.List(ctx, ListOptions{ParentID: "s1"})
		if len(kids) != 1 || kids[0].ID != "c1" || kids[0].ParentID != "s1" || kids[0].ParentCall != "call_1" {
			t.Errorf("children: %+v", kids)
		}
		for q, want := range map[string]int{"parser": 2, "commas": 1, "50%": 0, "zzz": 0} {
			if l, _ := s.List(ctx, ListOptions{Query: q}); len(l) != want {
				t.Errorf("query %q: %d sessions", q, len(l))
			}
		}
		if err := s.Rename(ctx, "s1", "Commas"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "s1"); got.Title != "Commas" {
			t.Errorf("title %q", got.Title)
		}
		if err := s.Delete(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Get(ctx, "c1"); err != nil || c.ParentID != "" || c.ParentCall != "call_1" {
			t.Errorf("child keeps a deleted parent: %+v %v", c, err)
		}
		if l, _ := s.List(ctx, ListOptions{}); len(l) != 2 {
			t.Errorf("the orphaned child is listed at the top: %+v", l)
		}
	})
}

// TestNotFound: every operation on one session says ErrNotFound for one
// the store does not have (errors.Is), with the id in the message.
func TestNotFound(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "gone"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"never", "gone"} {
			for op, err := range map[string]error{
				"get":           func() error { _, err := s.Get(ctx, id); return err }(),
				"rename":        s.Rename(ctx, id, "x"),
				"delete":        s.Delete(ctx, id),
				"messages":      func() error { _, err := s.Messages(ctx, id); return err }(),
				"live messages": func() error { _, err := s.LiveMessages(ctx, id); return err }(),
				"append":        func() error { _, err := s.Append(ctx, id, msg(llm.RoleUser, "x")); return err }(),
				"add checkpoint": func() error {
					_, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: id, Kind: CheckpointAfter, Tree: "t"})
					return err
				}(),
				"checkpoints":  func() error { _, err := s.Checkpoints(ctx, id); return err }(),
				"set archived": s.SetArchived(ctx, id, true),
				"fork":         s.Fork(ctx, id, 0, &Session{}),
				"truncate":     s.Truncate(ctx, id, 0),
			} {
				if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), id) {
					t.Errorf("%s %s: %v", op, id, err)
				}
			}
			// Appending nothing, or compacting, looks the session up too.
			if _, err := s.Append(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("append nothing to %s: %v", id, err)
			}
			if _, err := s.Compact(ctx, id, []int{1}, 1, msg(llm.RoleUser, "summary")); !errors.Is(err, ErrNotFound) {
				t.Errorf("compact %s: %v", id, err)
			}
			// Records of a session that does not exist are refused (on
			// SQLite by a foreign key: an error that is not ErrNotFound).
			if err := s.RecordUsage(ctx, Usage{SessionID: id, InputTokens: 1}); err == nil {
				t.Errorf("usage of %s recorded", id)
			}
			if err := s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "c", Name: "n"}); err == nil {
				t.Errorf("tool run of %s recorded", id)
			}
			if runs, err := s.ToolRuns(ctx, id); err != nil || len(runs) != 0 {
				t.Errorf("tool runs of %s: %+v %v", id, runs, err)
			}
		}
		if l, err := s.List(ctx, ListOptions{}); err != nil || len(l) != 0 {
			t.Errorf("list %+v %v", l, err)
		}
	})
}

// TestListQuery: the search keeps sessions whose title or a message holds
// the text, ignoring the case of ASCII letters; % _ and \ are plain text.
func TestListQuery(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, se := range []struct{ id, title, message string }{
			{"pct", "50% off", ""},
			{"p50", "5000 off", ""},
			{"under", "a_b", ""},
			{"axb", "axb", ""},
			{"slash", `C:\dir`, ""},
			{"cdir", "C:dir", ""},
			{"body", "untitled", "The PARSER drops Commas"},
			{"title", "Fix the Parser", ""},
		} {
			if err := s.Create(ctx, &Session{ID: se.id, Title: se.title}); err != nil {
				t.Fatal(err)
			}
			if se.message != "" {
				if _, err := s.Append(ctx, se.id, msg(llm.RoleUser, se.message)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := s.Create(ctx, &Session{ID: "kid", Title: "parser child", ParentID: "title"}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"parser", []string{"body", "title"}},
			{"PARSER", []string{"body", "title"}},
			{"pArSeR", []string{"body", "title"}},
			{"commas", []string{"body"}},
			{"50%", []string{"pct"}},
			{"%", []string{"pct"}},
			{"a_b", []string{"under"}},
			{"_", []string{"under"}},
			{`C:\d`, []string{"slash"}},
			{`\`, []string{"slash"}},
			{"off", []string{"p50", "pct"}},
			{"nothing like it", nil},
		} {
			l, err := s.List(ctx, ListOptions{Query: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, se := range l {
				got = append(got, se.ID)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("query %q: %v, want %v", tc.query, got, tc.want)
			}
		}
		if l, _ := s.List(ctx, ListOptions{Query: "PARSER", ParentID: "title"}); len(l) != 1 || l[0].ID != "kid" {
			t.Errorf("query among children: %+v", l)
		}
		if l, _ := s.List(ctx, ListOptions{Query: "off", Limit: 1}); len(l) != 1 {
			t.Errorf("query with a limit: %+v", l)
		}
	})
}

// TestDeleteCascades: a deleted session takes its messages, usage and tool
// runs with it, and its id can be used again.
func TestDeleteCascades(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		day := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		for _, id := range []string{"s1", "s2"} {
			if err := s.Create(ctx, &Session{ID: id}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, id, msg(llm.RoleUser, "hi "+id), msg(llm.RoleAssistant, "hello")); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordUsage(ctx, Usage{SessionID: id, InputTokens: 10, OutputTokens: 1, At: day}); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "c1", Name: "read_file", OK: true}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Delete(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if runs, err := s.ToolRuns(ctx, "s1"); err != nil || len(runs) != 0 {
			t.Errorf("tool runs left: %+v %v", runs, err)
		}
		if days, err := s.UsageByDay(ctx, day.Add(-time.Hour)); err != nil || len(days) != 1 || days[0] != (DayUsage{"2026-05-01", 10, 1}) {
			t.Errorf("usage left: %+v %v", days, err)
		}
		if l, _ := s.List(ctx, ListOptions{Query: "hi s1"}); len(l) != 0 {
			t.Errorf("messages still found: %+v", l)
		}
		if m, _ := s.Messages(ctx, "s2"); len(m) != 2 {
			t.Errorf("the other session lost messages: %+v", m)
		}
		if runs, _ := s.ToolRuns(ctx, "s2"); len(runs) != 1 {
			t.Errorf("the other session lost tool runs: %+v", runs)
		}
		// The id is free again, with nothing of the old session in it.
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "s1")
		if err != nil || got.MessageCount != 0 || got.InputTokens != 0 || got.OutputTokens != 0 {
			t.Errorf("reused id: %+v %v", got, err)
		}
		if m, err := s.Append(ctx, "s1", msg(llm.RoleUser, "again")); err != nil || m[0].Seq != 1 {
			t.Errorf("reused id: seq %+v %v", m, err)
		}
	})
}

func TestMessagesRoundTrip(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		in := []Message{
			msg(llm.RoleUser, "read a.txt"),
			{Message: llm.Message{Role: llm.RoleAssistant, Content: "Reading.", Thinking: "I should look",
				ToolCalls: []llm.ToolCall{
					{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)},
					{ID: "call_2", Name: "edit", Args: json.RawMessage(`{}`), Repaired: true, FromText: true},
					{ID: "call_3", Name: "shell", Args: json.RawMessage(`{}`), ArgsError: "unexpected end of JSON input"},
				}}, Tokens: 42},
			{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "hello"}},
			{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", ToolName: "edit", Content: "done"}},
			{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_3", ToolName: "shell", Content: "Error: bad arguments"}},
			{Message: llm.Message{Role: llm.RoleAssistant, Content: "It says hel"}, Partial: true},
			{Message: llm.Message{Role: llm.RoleUser, Content: "and this?", Images: [][]byte{{1, 2, 3}, {0, 255, '\n'}}}},
			{Message: llm.Message{Role: llm.RoleAssistant, Content: "The turn failed: boom"}, Failure: true},
			{Message: llm.Message{Role: llm.RoleUser, Content: "Your plan still has 1 open step(s)"}, Reminder: true},
			{Message: llm.Message{Role: llm.RoleUser, Content: "old"}, Compacted: true},
			{Message: llm.Message{Role: llm.RoleUser, Content: "Summary: old"}, Summary: true},
		}
		stored, err := s.Append(ctx, "s1", in...)
		if err != nil || len(stored) != len(in) {
			t.Fatalf("%v %+v", err, stored)
		}
		for i, m := range stored {
			want := in[i]
			want.Seq, want.CreatedAt = i+1, m.CreatedAt
			if want.Tokens == 0 {
				want.Tokens = MessageTokens(want.Message)
			}
			if !reflect.DeepEqual(m, want) || !utcMillis(m.CreatedAt) || !m.CreatedAt.Equal(stored[0].CreatedAt) {
				t.Errorf("stored %d:\n%+v, want\n%+v", i, m, want)
			}
		}
		if stored[1].Tokens != 42 || stored[0].Tokens == 0 {
			t.Errorf("tokens: %d %d", stored[1].Tokens, stored[0].Tokens)
		}
		out, err := s.Messages(ctx, "s1")
		if err != nil || !reflect.DeepEqual(out, stored) {
			t.Fatalf("%v: read back\n%+v, stored\n%+v", err, out, stored)
		}
		live, err := s.LiveMessages(ctx, "s1")
		if err != nil || len(live) != len(in)-1 || !reflect.DeepEqual(live[:9], stored[:9]) || !reflect.DeepEqual(live[9], stored[10]) {
			t.Errorf("live messages: %v %+v", err, live)
		}
		// A second append continues the numbering.
		more, err := s.Append(ctx, "s1", msg(llm.RoleUser, "next"), msg(llm.RoleAssistant, "ok"))
		if err != nil || more[0].Seq != len(in)+1 || more[1].Seq != len(in)+2 {
			t.Errorf("%v %+v", err, more)
		}
	})
}

// TestToolCallBytes: a call's arguments are kept as the bytes the turn
// sent (a server's prompt cache compares them): key order, escapes, no
// HTML escaping (\u0026 for &) added, none removed.
func TestToolCallBytes(t *testing.T) {
	args := []string{
		`{"cmd":"a && b","z":1,"a":2}`,
		`{"cmd":"echo \"<hi>\" | tr a-z A-Z > out.txt","timeout":1.50,"env":{"Z":"1","A":null},"list":[3,2,1]}`,
		`{"text":"caf\u00e9 \u001b[31mred\u001b[0m \/ \\ \t\n","emoji":"🔥","big":12345678901234567890}`,
		`{"nul":"a\u0000b","sep":"\u2028"}`,
		`{}`,
	}
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		var calls []llm.ToolCall
		for i, a := range args {
			calls = append(calls, llm.ToolCall{ID: fmt.Sprintf("call_%d", i), Name: "run", Args: json.RawMessage(a)})
			if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: fmt.Sprintf("call_%d", i), Name: "run", Args: json.RawMessage(a), OK: true}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Append(ctx, "s1", Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}}); err != nil {
			t.Fatal(err)
		}
		out, err := s.Messages(ctx, "s1")
		if err != nil || len(out) != 1 || len(out[0].ToolCalls) != len(args) {
			t.Fatalf("%v %+v", err, out)
		}
		runs, err := s.ToolRuns(ctx, "s1")
		if err != nil || len(runs) != len(args) {
			t.Fatalf("%v %+v", err, runs)
		}
		for i, a := range args {
			if got := string(out[0].ToolCalls[i].Args); got != a {
				t.Errorf("message's call %d: %s, want %s", i, got, a)
			}
			if got := string(runs[i].Args); got != a {
				t.Errorf("tool run %d: %s, want %s", i, got, a)
			}
		}
		// History sends them as they are.
		if h := History(out); string(h[0].ToolCalls[0].Args) != args[0] {
			t.Errorf("history: %s", h[0].ToolCalls[0].Args)
		}
	})
}

// TestUnstorableText: a NUL byte and invalid UTF-8 (a command's binary
// output) never fail an Append or a RecordToolRun. SQLite keeps them as
// they are; PostgreSQL's text holds neither, so it stores U+FFFD in their
// place: one for each NUL, one for each run of invalid bytes
// (strings.ToValidUTF8).
func TestUnstorableText(t *testing.T) {
	const raw = "bin\x00ary \xff\xfe\xfd out\x00\x00put \xe2\x82 end \xc3"
	const replaced = "bin\uFFFDary \uFFFD out\uFFFD\uFFFDput \uFFFD end \uFFFD"
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		want := raw
		if _, ok := s.(*Postgres); ok {
			want = replaced
		}
		if err := s.Create(ctx, &Session{ID: "s1", Title: "title " + raw, Workspace: raw}); err != nil {
			t.Fatal(err)
		}
		stored, err := s.Append(ctx, "s1",
			Message{Message: llm.Message{Role: llm.RoleAssistant, Content: raw, Thinking: raw,
				ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "run", Args: json.RawMessage(`{"cmd":"cat a.bin"}`)}}}},
			Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "run", Content: raw}})
		if err != nil {
			t.Fatal(err)
		}
		if stored[0].Content != raw {
			t.Errorf("Append returned %q", stored[0].Content)
		}
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "call_1", Name: "run", Output: raw, Error: raw}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Compact(ctx, "s1", nil, 1, msg(llm.RoleUser, raw)); err != nil {
			t.Fatal(err)
		}
		if err := s.Rename(ctx, "s1", raw); err != nil {
			t.Fatal(err)
		}
		out, err := s.Messages(ctx, "s1")
		if err != nil || len(out) != 3 {
			t.Fatalf("%v %+v", err, out)
		}
		if out[0].Content != want || out[0].Thinking != want || out[1].Content != want || out[2].Content != want {
			t.Errorf("messages: %q %q %q %q, want %q", out[0].Content, out[0].Thinking, out[1].Content, out[2].Content, want)
		}
		// The summary (placed before seq 1), the call, its result.
		if h := History(out); len(h) != 3 || h[0].Content != want || h[2].Role != llm.RoleTool || h[2].ToolCallID != "call_1" || h[2].Content != want {
			t.Errorf("history: %+v", h)
		}
		runs, err := s.ToolRuns(ctx, "s1")
		if err != nil || len(runs) != 1 || runs[0].Output != want || runs[0].Error != want {
			t.Errorf("tool runs: %v %+v", err, runs)
		}
		got, err := s.Get(ctx, "s1")
		if err != nil || got.Title != want || got.Workspace != want {
			t.Errorf("session: %v %+v", err, got)
		}
		// The search finds the text before what was replaced; on
		// PostgreSQL the text after it too (SQLite's LIKE stops at a
		// NUL).
		if l, err := s.List(ctx, ListOptions{Query: "BIN"}); err != nil || len(l) != 1 {
			t.Errorf("search: %v %+v", err, l)
		}
		if _, ok := s.(*Postgres); ok {
			if l, err := s.List(ctx, ListOptions{Query: "put "}); err != nil || len(l) != 1 {
				t.Errorf("search after a NUL: %v %+v", err, l)
			}
		}
	})
}

// TestTimestamps: every time comes back in UTC at millisecond precision,
// and as it was returned when stored.
func TestTimestamps(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		se := &Session{ID: "s1"}
		if err := s.Create(ctx, se); err != nil {
			t.Fatal(err)
		}
		if !utcMillis(se.CreatedAt) || !se.UpdatedAt.Equal(se.CreatedAt) || !utcMillis(se.UpdatedAt) {
			t.Errorf("created: %v %v", se.CreatedAt, se.UpdatedAt)
		}
		got, err := s.Get(ctx, "s1")
		if err != nil || !utcMillis(got.CreatedAt) || !got.CreatedAt.Equal(se.CreatedAt) || !got.UpdatedAt.Equal(se.UpdatedAt) {
			t.Errorf("get: %+v %v, created %v", got, err, se.CreatedAt)
		}
		stored, err := s.Append(ctx, "s1", msg(llm.RoleUser, "hi"))
		if err != nil || !utcMillis(stored[0].CreatedAt) {
			t.Fatal(err, stored)
		}
		out, err := s.Messages(ctx, "s1")
		if err != nil || !utcMillis(out[0].CreatedAt) || !out[0].CreatedAt.Equal(stored[0].CreatedAt) {
			t.Errorf("messages: %+v %v, stored %v", out, err, stored[0].CreatedAt)
		}
		if got, _ := s.Get(ctx, "s1"); !got.UpdatedAt.Equal(stored[0].CreatedAt) || !utcMillis(got.UpdatedAt) {
			t.Errorf("updated %v, message at %v", got.UpdatedAt, stored[0].CreatedAt)
		}
		sum, err := s.Compact(ctx, "s1", []int{1}, 1, msg(llm.RoleUser, "summary"))
		if err != nil || !utcMillis(sum.CreatedAt) {
			t.Errorf("summary: %v %+v", err, sum)
		}
		if out, _ := s.Messages(ctx, "s1"); len(out) != 2 || !out[1].CreatedAt.Equal(sum.CreatedAt) || !utcMillis(out[1].CreatedAt) {
			t.Errorf("summary read back: %+v, stored %v", out, sum.CreatedAt)
		}
		// A time given in another zone, finer than a millisecond.
		at := time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("UTC+5", 5*3600))
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "c", Name: "n", At: at, Duration: 1234567 * time.Microsecond}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "d", Name: "n"}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.ToolRuns(ctx, "s1")
		if err != nil || len(runs) != 2 || !runs[0].At.Equal(time.Date(2026, 3, 4, 0, 6, 7, 891_000_000, time.UTC)) || !utcMillis(runs[0].At) ||
			runs[0].Duration != 1234*time.Millisecond || !utcMillis(runs[1].At) {
			t.Errorf("tool runs: %+v %v", runs, err)
		}
		l, err := s.List(ctx, ListOptions{})
		if err != nil || len(l) != 1 || !utcMillis(l[0].CreatedAt) || !utcMillis(l[0].UpdatedAt) || !l[0].CreatedAt.Equal(se.CreatedAt) {
			t.Errorf("list: %+v %v", l, err)
		}
	})
}

func TestCompactAndHistory(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, "one"), msg(llm.RoleAssistant, "two"), msg(llm.RoleUser, "three")); err != nil {
			t.Fatal(err)
		}
		sum, err := s.Compact(ctx, "s1", []int{1, 2}, 3, msg(llm.RoleUser, "Summary: one and two"))
		if err != nil || sum.Seq != 4 || !sum.Summary || sum.Before != 3 || sum.Tokens == 0 || sum.Content != "Summary: one and two" {
			t.Fatalf("%v %+v", err, sum)
		}
		if _, err := s.Append(ctx, "s1", msg(llm.RoleAssistant, "four")); err != nil {
			t.Fatal(err)
		}
		all, _ := s.Messages(ctx, "s1")
		h := History(all)
		var got []string
		for _, m := range h {
			got = append(got, m.Content)
		}
		if strings.Join(got, "|") != "Summary: one and two|three|four" {
			t.Errorf("history %v", got)
		}
		if len(all) != 5 || !all[0].Compacted || !all[1].Compacted || all[2].Compacted || !all[3].Summary || all[3].Before != 3 || all[4].Seq != 5 {
			t.Errorf("stored %+v", all)
		}
		if !reflect.DeepEqual(all[3], sum) {
			t.Errorf("summary read back %+v, stored %+v", all[3], sum)
		}
		live, err := s.LiveMessages(ctx, "s1")
		if err != nil || len(live) != 3 || live[0].Content != "three" || !live[1].Summary || live[2].Content != "four" {
			t.Errorf("live %+v %v", live, err)
		}
		if h := History(live); len(h) != 3 || h[0].Content != "Summary: one and two" {
			t.Errorf("history of the live messages %+v", h)
		}
		// Exactly the seqs given: a second compaction leaves the first
		// summary and the others alone.
		if _, err := s.Compact(ctx, "s1", []int{3, 4}, 5, msg(llm.RoleUser, "Summary: all but four")); err != nil {
			t.Fatal(err)
		}
		live, _ = s.LiveMessages(ctx, "s1")
		if len(live) != 2 || live[0].Content != "four" || live[1].Content != "Summary: all but four" || live[1].Seq != 6 {
			t.Errorf("after a second compaction %+v", live)
		}
		if h := History(live); len(h) != 2 || h[0].Content != "Summary: all but four" || h[1].Content != "four" {
			t.Errorf("history %+v", h)
		}
	})
}

// TestHistoryAnswersInterruptedCalls: a call whose process died before its
// result was stored gets one saying so, read back from the store.
func TestHistoryAnswersInterruptedCalls(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		calls := []llm.ToolCall{{ID: "a", Name: "read_file", Args: json.RawMessage(`{}`)}, {ID: "b", Name: "run_shell_command", Args: json.RawMessage(`{}`)}}
		if _, err := s.Append(ctx, "s1",
			msg(llm.RoleUser, "go"),
			Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}},
			Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "a", ToolName: "read_file", Content: "ok"}},
		); err != nil {
			t.Fatal(err)
		}
		// The process died here; the next run goes on.
		if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, "what happened?")); err != nil {
			t.Fatal(err)
		}
		msgs, err := s.LiveMessages(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		h := History(msgs)
		if len(h) != 5 || h[2].ToolCallID != "a" || h[3].ToolCallID != "b" || h[3].ToolName != "run_shell_command" ||
			!strings.Contains(h[3].Content, "interrupted") || h[4].Content != "what happened?" {
			t.Errorf("%+v", h)
		}
		if !Unanswered(msgs) {
			t.Error("the last prompt is not unanswered")
		}
		if again, _ := s.Messages(ctx, "s1"); len(again) != 4 {
			t.Errorf("History changed the store: %+v", again)
		}
	})
}

func TestHistoryPairsResultsWithTheirOwnReply(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		call := func() Message {
			return Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{}`)}}}}
		}
		if _, err := s.Append(ctx, "s1",
			msg(llm.RoleUser, "one"), call(), Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "ok"}},
			msg(llm.RoleAssistant, "done"),
			msg(llm.RoleUser, "two"), call(), // interrupted: same id as the first call
		); err != nil {
			t.Fatal(err)
		}
		msgs, _ := s.Messages(ctx, "s1")
		h := History(msgs)
		last := h[len(h)-1]
		if len(h) != 7 || last.Role != llm.RoleTool || last.ToolCallID != "call_1" || !strings.Contains(last.Content, "interrupted") {
			t.Errorf("%+v", h)
		}
	})
}

func TestToolRunsAndUsage(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, id := range []string{"s1", "s2"} {
			if err := s.Create(ctx, &Session{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "c1", Name: "read_file", Args: json.RawMessage(`{"p":1}`), OK: true, Output: "x", Duration: 1500 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "c2", Name: "run_shell_command", Error: "refused"}); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordToolRun(ctx, ToolRun{SessionID: "s2", CallID: "c1", Name: "other"}); err != nil {
			t.Fatal(err)
		}
		runs, err := s.ToolRuns(ctx, "s1")
		if err != nil || len(runs) != 2 || runs[0].Duration != 1500*time.Millisecond || runs[1].OK || runs[1].Error != "refused" || string(runs[1].Args) != "{}" {
			t.Fatalf("%+v %v", runs, err)
		}
		if r := runs[0]; r.SessionID != "s1" || r.CallID != "c1" || r.Name != "read_file" || !r.OK || r.Output != "x" || r.Error != "" || string(r.Args) != `{"p":1}` || !utcMillis(r.At) {
			t.Errorf("%+v", r)
		}
		if runs[1].CallID != "c2" || runs[1].Name != "run_shell_command" {
			t.Errorf("order: %+v", runs)
		}
		day := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
		for _, u := range []Usage{
			{SessionID: "s1", InputTokens: 10, OutputTokens: 1, At: day},
			{SessionID: "s1", InputTokens: 20, OutputTokens: 2, At: day.Add(2 * time.Hour)},
			{SessionID: "s2", InputTokens: 30, OutputTokens: 3, At: day.Add(3 * time.Hour)},
			// Before since: left out.
			{SessionID: "s2", InputTokens: 1000, OutputTokens: 100, At: day.Add(-time.Hour - time.Millisecond)},
			// In another zone: counted on its UTC day (21 November).
			{SessionID: "s2", InputTokens: 5, OutputTokens: 5, At: time.Date(2026, 11, 20, 22, 30, 0, 0, time.FixedZone("UTC-3", -3*3600))},
		} {
			if err := s.RecordUsage(ctx, u); err != nil {
				t.Fatal(err)
			}
		}
		days, err := s.UsageByDay(ctx, day.Add(-time.Hour))
		if err != nil || len(days) != 2 || days[0] != (DayUsage{"2026-11-20", 10, 1}) || days[1] != (DayUsage{"2026-11-21", 55, 10}) {
			t.Errorf("%+v %v", days, err)
		}
		if days, err := s.UsageByDay(ctx, day.Add(time.Hour)); err != nil || len(days) != 1 || days[0] != (DayUsage{"2026-11-21", 55, 10}) {
			t.Errorf("since the next day: %+v %v", days, err)
		}
		if days, err := s.UsageByDay(ctx, day.AddDate(0, 0, 2)); err != nil || len(days) != 0 {
			t.Errorf("since later: %+v %v", days, err)
		}
		// Usage without a time is now.
		if err := s.RecordUsage(ctx, Usage{SessionID: "s1", InputTokens: 7}); err != nil {
			t.Fatal(err)
		}
		if days, err := s.UsageByDay(ctx, time.Now().Add(-24*time.Hour)); err != nil || len(days) == 0 || days[len(days)-1].InputTokens != 7 {
			t.Errorf("today: %+v %v", days, err)
		}
		if got, _ := s.Get(ctx, "s2"); got.InputTokens != 1035 || got.OutputTokens != 108 {
			t.Errorf("session totals %+v", got)
		}
	})
}

func TestConcurrentAppends(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 10 {
					// Two messages at once: they stay together.
					if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, fmt.Sprintf("%c%d", 'a'+i, j)), msg(llm.RoleAssistant, fmt.Sprintf("%c%d'", 'a'+i, j))); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		all, err := s.Messages(ctx, "s1")
		if err != nil || len(all) != 160 {
			t.Fatalf("%d messages %v", len(all), err)
		}
		seen := map[string]bool{}
		for i, m := range all {
			if m.Seq != i+1 {
				t.Fatalf("message %d has seq %d", i, m.Seq)
			}
			if seen[m.Content] {
				t.Errorf("%q twice", m.Content)
			}
			seen[m.Content] = true
			if i%2 == 1 && m.Content != all[i-1].Content+"'" {
				t.Errorf("an append was split: %q after %q", m.Content, all[i-1].Content)
			}
		}
		if got, _ := s.Get(ctx, "s1"); got.MessageCount != 160 {
			t.Errorf("count %d", got.MessageCount)
		}
	})
}

func TestLock(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		setLockTimeout(s, 100*time.Millisecond)
		unlock, err := s.Lock(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		// Lock waits LockTimeout before it gives up (a lower bound, which
		// the loop in Lock guarantees: never a flaky upper one).
		start := time.Now()
		_, err = s.Lock(ctx, "s1")
		if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid") || !strings.Contains(err.Error(), "s1") || time.Since(start) < 100*time.Millisecond {
			t.Errorf("second lock: %v after %v", err, time.Since(start))
		}
		u2, err := s.Lock(ctx, "s2")
		if err != nil {
			t.Fatalf("another session: %v", err)
		}
		u2()
		// A cancelled wait ends with the context's error.
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		setLockTimeout(s, time.Minute)
		if _, err := s.Lock(cctx, "s1"); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled: %v", err)
		}
		// A release while another waits: the wait ends with the lock (the
		// timeout only bounds a hang).
		go func() {
			time.Sleep(30 * time.Millisecond)
			unlock()
		}()
		u3, err := s.Lock(ctx, "s1")
		if err != nil {
			t.Fatalf("after release: %v", err)
		}
		u3()
		u4, err := s.Lock(ctx, "s1")
		if err != nil {
			t.Fatalf("after unlock: %v", err)
		}
		// An unlock called again does not release the next holder.
		u3()
		setLockTimeout(s, 50*time.Millisecond)
		if _, err := s.Lock(ctx, "s1"); !errors.Is(err, ErrBusy) {
			t.Errorf("a stale unlock released the lock: %v", err)
		}
		u4()
	})
}

// TestFailureRecords: the record of a failed turn is kept and shown, but
// never sent to a model; the prompt before it can be run again.
func TestFailureRecords(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		unreachable := &llm.Error{Code: llm.CodeUnreachable, Provider: "ollama", Op: "chat", Message: "cannot reach http://127.0.0.1:11434"}
		if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, "fix the bug"), FailureMessage(unreachable)); err != nil {
			t.Fatal(err)
		}
		all, _ := s.Messages(ctx, "s1")
		if len(all) != 2 || !all[1].Failure || all[1].Role != llm.RoleAssistant || !strings.HasPrefix(all[1].Content, "Provider request failed: ollama chat: cannot reach") {
			t.Fatalf("stored %+v", all)
		}
		if h := History(all); len(h) != 1 || h[0].Content != "fix the bug" {
			t.Errorf("history %+v", h)
		}
		if !Unanswered(all) {
			t.Error("the prompt is not unanswered")
		}
		if f := FailureMessage(errors.New("stopped: the model made the same failing call 3 times in a row")); f.Content != "The turn failed: stopped: the model made the same failing call 3 times in a row" || !f.Failure {
			t.Errorf("%+v", f)
		}
		if _, err := s.Append(ctx, "s1", msg(llm.RoleAssistant, "Fixed.")); err != nil {
			t.Fatal(err)
		}
		all, _ = s.Messages(ctx, "s1")
		if h := History(all); len(h) != 2 || h[1].Content != "Fixed." || Unanswered(all) {
			t.Errorf("history %+v", h)
		}
		b, _ := json.Marshal(all[1])
		if !strings.Contains(string(b), `"failure":true`) {
			t.Errorf("json %s", b)
		}
		if live, _ := s.LiveMessages(ctx, "s1"); len(live) != 3 || !live[1].Failure {
			t.Errorf("live messages keep the record (History leaves it out): %+v", live)
		}
	})
}

// rewound is what rewindSession stored: the messages, tool runs and
// checkpoints of the session, as read back.
type rewound struct {
	id       string
	msgs     []Message
	runs     []ToolRun
	cps      []Checkpoint
	updated  time.Time
	maxCheck int64 // the largest checkpoint ID of the store
}

// rewindSession stores a session to fork and truncate, and reads it back:
//
//	 1 user       "read a and b"
//	 2 assistant  calls call_0 and call_1            (checkpoint t1, before call_0)
//	 3 tool       call_0 "A"
//	 4 tool       call_1 "B"
//	 5 assistant  "a says A, b says B"               (checkpoint t2, after the turn)
//	 6 user       "and c?", with an image
//	 7 assistant  calls call_0 again (a new reply)   (checkpoint t3, before it)
//	 8 tool       call_0 "C"
//	 9 assistant  a failure record                   (checkpoint t4, an undo)
//	10 summary of 1-5, placed before 6
//	11 user       "go on"
//	12 assistant  "Going", partial                    (checkpoint t5)
//
// Its tool runs: call_0 and call_1 of seq 2, call_0 of seq 7 (recorded
// after seq 7 was stored), and one of a call no message names.
func rewindSession(t *testing.T, s Store) rewound {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	se := &Session{Title: "rewind me", Provider: "ollama", Model: "qwen3:4b", Workspace: "/w"}
	must(s.Create(ctx, se))
	id := se.ID
	call := func(id, path string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: "read_file", Args: json.RawMessage(`{"path": "` + path + `"}`)}
	}
	result := func(id, content string) Message {
		return Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: id, ToolName: "read_file", Content: content}}
	}
	checkpoint := func(c Checkpoint) {
		t.Helper()
		c.SessionID = id
		_, err := s.AddCheckpoint(ctx, c)
		must(err)
	}
	_, err := s.Append(ctx, id, msg(llm.RoleUser, "read a and b"),
		Message{Message: llm.Message{Role: llm.RoleAssistant, Thinking: "both files", ToolCalls: []llm.ToolCall{call("call_0", "a"), call("call_1", "b")}}, Tokens: 12})
	must(err)
	checkpoint(Checkpoint{Kind: CheckpointBefore, Turn: 1, Seq: 2, CallID: "call_0", Tool: "read_file", Tree: "t1", Workspace: "/w",
		Detail: json.RawMessage(`{"files": 2,  "paths": ["a", "b"], "é": "\u00e9"}`)})
	must(s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "call_0", Name: "read_file", Args: json.RawMessage(`{"path": "a"}`), OK: true, Output: "A", Duration: 3 * time.Millisecond}))
	must(s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path": "b"}`), Error: "denied", Duration: time.Millisecond}))
	must(s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "call_x", Name: "glob", Args: json.RawMessage(`{}`), OK: true, Output: "orphan"}))
	user := msg(llm.RoleUser, "and c?")
	user.Images = [][]byte{{0x89, 'P', 'N', 'G', 0}}
	_, err = s.Append(ctx, id, result("call_0", "A"), result("call_1", "B"), msg(llm.RoleAssistant, "a says A, b says B"), user)
	must(err)
	checkpoint(Checkpoint{Kind: CheckpointAfter, Turn: 1, Seq: 5, Tree: "t2", Workspace: "/w"})
	// The next reply is stored a millisecond (the stores' precision) after
	// the runs of the first one were recorded.
	time.Sleep(2 * time.Millisecond)
	_, err = s.Append(ctx, id, Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{call("call_0", "c")}}})
	must(err)
	checkpoint(Checkpoint{Kind: CheckpointBefore, Turn: 6, Seq: 7, CallID: "call_0", Tool: "read_file", Tree: "t3", Workspace: "/w"})
	must(s.RecordToolRun(ctx, ToolRun{SessionID: id, CallID: "call_0", Name: "read_file", Args: json.RawMessage(`{"path": "c"}`), OK: true, Output: "C"}))
	_, err = s.Append(ctx, id, result("call_0", "C"), FailureMessage(errors.New("boom")))
	must(err)
	checkpoint(Checkpoint{Kind: CheckpointUndo, Seq: 9, Tree: "t4", Detail: json.RawMessage(`{"restored":"t2"}`)})
	_, err = s.Compact(ctx, id, []int{1, 2, 3, 4, 5}, 6, msg(llm.RoleUser, "[Summary] read a and b"))
	must(err)
	partial := msg(llm.RoleAssistant, "Going")
	partial.Partial = true
	_, err = s.Append(ctx, id, msg(llm.RoleUser, "go on"), partial)
	must(err)
	checkpoint(Checkpoint{Kind: CheckpointAfter, Turn: 11, Seq: 12, Tree: "t5", Workspace: "/w"})

	r := rewound{id: id}
	if r.msgs, err = s.Messages(ctx, id); err != nil || len(r.msgs) != 12 {
		t.Fatalf("%v %+v", err, r.msgs)
	}
	if r.runs, err = s.ToolRuns(ctx, id); err != nil || len(r.runs) != 4 {
		t.Fatalf("%v %+v", err, r.runs)
	}
	if r.cps, err = s.Checkpoints(ctx, id); err != nil || len(r.cps) != 5 {
		t.Fatalf("%v %+v", err, r.cps)
	}
	got, err := s.Get(ctx, id)
	must(err)
	r.updated, r.maxCheck = got.UpdatedAt, r.cps[4].ID
	return r
}

// unchanged checks that the session r is as rewindSession left it.
func (r rewound) unchanged(t *testing.T, s Store) {
	t.Helper()
	ctx := context.Background()
	if m, err := s.Messages(ctx, r.id); err != nil || !reflect.DeepEqual(m, r.msgs) {
		t.Errorf("the source's messages changed: %v\n%+v", err, m)
	}
	if runs, err := s.ToolRuns(ctx, r.id); err != nil || !reflect.DeepEqual(runs, r.runs) {
		t.Errorf("the source's tool runs changed: %v\n%+v", err, runs)
	}
	if cps, err := s.Checkpoints(ctx, r.id); err != nil || !reflect.DeepEqual(cps, r.cps) {
		t.Errorf("the source's checkpoints changed: %v\n%+v", err, cps)
	}
	if got, err := s.Get(ctx, r.id); err != nil || !got.UpdatedAt.Equal(r.updated) || got.ForkOf != "" || got.Archived {
		t.Errorf("the source changed: %v %+v", err, got)
	}
}

// upTo returns msgs up to seq last, the seqs live made live again.
func upTo(msgs []Message, last int, live ...int) []Message {
	var out []Message
	for _, m := range msgs {
		if m.Seq <= last {
			if slices.Contains(live, m.Seq) {
				m.Compacted = false
			}
			out = append(out, m)
		}
	}
	return out
}

// sameCheckpoints says whether got are want in a session id, but for
// their IDs, which must increase and be above after.
func sameCheckpoints(got, want []Checkpoint, id string, after int64) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d checkpoints, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].ID <= after {
			return fmt.Errorf("checkpoint %d: ID %d, after %d", i, got[i].ID, after)
		}
		after = got[i].ID
		g, w := got[i], want[i]
		g.ID, w.ID, w.SessionID = 0, 0, id
		if !reflect.DeepEqual(g, w) {
			return fmt.Errorf("checkpoint %d:\n%+v, want\n%+v", i, g, w)
		}
	}
	return nil
}

func trees(cps []Checkpoint) []string {
	var out []string
	for _, c := range cps {
		out = append(out, c.Tree)
	}
	return out
}

func TestCheckpoints(t *testing.T) {
	const raw = "t\x00ree \xff"
	const replaced = "t\uFFFDree \uFFFD"
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, id := range []string{"s1", "s2", "s3"} {
			if err := s.Create(ctx, &Session{ID: id}); err != nil {
				t.Fatal(err)
			}
		}
		in := []Checkpoint{
			{SessionID: "s1", Kind: CheckpointBefore, Turn: 1, Seq: 2, CallID: "call_0", Tool: "edit_file", Tree: "3f2a", Workspace: "/home/me/src",
				Detail: json.RawMessage(`{"b": 1,  "a": "caf\u00e9 é \"q\" <&>",` + "\n" + ` "n": [1.50, 2e3, null]}`)},
			{SessionID: "s2", Kind: CheckpointAfter, Turn: 1, Seq: 5, Tree: "9c1d"},
			{SessionID: "s1", Kind: CheckpointAfter, Turn: 1, Seq: 4, Tree: "77aa", Detail: json.RawMessage{}},
			{SessionID: "s1", Kind: CheckpointUndo, Seq: 4, Tree: "0b0b", Detail: json.RawMessage(`{"restored":"3f2a"}`)},
			{SessionID: "s1", Kind: CheckpointRedo, Seq: 4, Tree: "77aa", Detail: json.RawMessage(` "a JSON string" `)},
			{SessionID: "s2", Kind: CheckpointRewind, Seq: 0, Tree: "e0e0", Workspace: "/w"},
		}
		var stored []Checkpoint
		for i, c := range in {
			got, err := s.AddCheckpoint(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			want := c
			want.ID, want.CreatedAt = got.ID, got.CreatedAt
			if len(want.Detail) == 0 {
				want.Detail = nil
			}
			if !reflect.DeepEqual(got, want) || !utcMillis(got.CreatedAt) || (i > 0 && got.ID <= stored[i-1].ID) {
				t.Errorf("added %d:\n%+v, want\n%+v", i, got, want)
			}
			stored = append(stored, got)
		}
		// In the order they were added, Detail byte for byte.
		for _, tc := range []struct {
			id   string
			want []Checkpoint
		}{
			{"s1", []Checkpoint{stored[0], stored[2], stored[3], stored[4]}},
			{"s2", []Checkpoint{stored[1], stored[5]}},
			{"s3", []Checkpoint{}},
		} {
			got, err := s.Checkpoints(ctx, tc.id)
			if err != nil || got == nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s: %v\n%+v, want\n%+v", tc.id, err, got, tc.want)
			}
		}
		if got, _ := s.Checkpoints(ctx, "s1"); string(got[0].Detail) != string(in[0].Detail) || got[1].Detail != nil {
			t.Errorf("details %q %q", got[0].Detail, got[1].Detail)
		}
		// A Detail that is not JSON is refused; so is a checkpoint of a
		// session the store does not have.
		if _, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: "s1", Kind: CheckpointAfter, Detail: json.RawMessage(`{"a":`)}); err == nil ||
			errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "not JSON") {
			t.Errorf("bad detail: %v", err)
		}
		if _, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: "nope", Kind: CheckpointAfter}); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("unknown session: %v", err)
		}
		if got, _ := s.Checkpoints(ctx, "s1"); len(got) != 4 {
			t.Errorf("a refused checkpoint was stored: %+v", got)
		}
		// Text PostgreSQL cannot hold (see TestUnstorableText).
		want := raw
		if _, ok := s.(*Postgres); ok {
			want = replaced
		}
		odd, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: "s3", Kind: raw, CallID: raw, Tool: raw, Tree: raw, Workspace: raw})
		if err != nil || odd.Tree != raw {
			t.Fatalf("%+v %v", odd, err)
		}
		if got, err := s.Checkpoints(ctx, "s3"); err != nil || len(got) != 1 || got[0].Kind != want || got[0].CallID != want || got[0].Tool != want ||
			got[0].Tree != want || got[0].Workspace != want {
			t.Errorf("%+v %v", got, err)
		}
		// Deleted with their session; an ID is never given again, not even
		// the largest one's once its session is gone.
		if err := s.Delete(ctx, "s3"); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, "s1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Checkpoints(ctx, "s1"); !errors.Is(err, ErrNotFound) {
			t.Errorf("checkpoints of a deleted session: %v", err)
		}
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Checkpoints(ctx, "s1"); err != nil || len(got) != 0 {
			t.Errorf("a deleted session's checkpoints came back: %+v %v", got, err)
		}
		if got, err := s.Checkpoints(ctx, "s2"); err != nil || !reflect.DeepEqual(got, []Checkpoint{stored[1], stored[5]}) {
			t.Errorf("the other session's: %+v %v", got, err)
		}
		again, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: "s1", Kind: CheckpointAfter, Tree: "new"})
		if err != nil || again.ID <= odd.ID {
			t.Errorf("after a delete: ID %d, the last was %d (%v)", again.ID, odd.ID, err)
		}
	})
}

// TestArchived: an archived session is left out of List, unless archived
// ones are asked for; it keeps everything, and its UpdatedAt.
func TestArchived(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for _, se := range []*Session{
			{ID: "a", Title: "alpha"},
			{ID: "b", Title: "beta"},
			{ID: "kid", Title: "beta's helper", ParentID: "a"},
			{ID: "old", Title: "beta, archived at birth", Archived: true},
		} {
			if err := s.Create(ctx, se); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Append(ctx, "b", msg(llm.RoleUser, "hello beta")); err != nil {
			t.Fatal(err)
		}
		before, _ := s.Get(ctx, "b")
		if before.Archived {
			t.Fatal("archived at creation")
		}
		if err := s.SetArchived(ctx, "b", true); err != nil {
			t.Fatal(err)
		}
		if err := s.SetArchived(ctx, "b", true); err != nil {
			t.Errorf("archived twice: %v", err)
		}
		ids := func(opts ListOptions) []string {
			t.Helper()
			l, err := s.List(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, se := range l {
				if se.Archived != opts.Archived {
					t.Errorf("%+v listed with %+v", se, opts)
				}
				out = append(out, se.ID)
			}
			sort.Strings(out)
			return out
		}
		for _, tc := range []struct {
			opts ListOptions
			want []string
		}{
			{ListOptions{}, []string{"a"}},
			{ListOptions{Archived: true}, []string{"b", "old"}},
			{ListOptions{Archived: true, Query: "hello"}, []string{"b"}},
			{ListOptions{Archived: true, Limit: 1}, []string{"b"}}, // the most recently updated
			{ListOptions{Query: "beta"}, nil},
			{ListOptions{ParentID: "a"}, []string{"kid"}},
			{ListOptions{ParentID: "a", Archived: true}, nil},
		} {
			if got := ids(tc.opts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%+v: %v, want %v", tc.opts, got, tc.want)
			}
		}
		got, err := s.Get(ctx, "b")
		if err != nil || !got.Archived || got.MessageCount != 1 || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("archived %+v %v, was %+v", got, err, before)
		}
		// A child is archived on its own; its parent's archive leaves it.
		if err := s.SetArchived(ctx, "kid", true); err != nil {
			t.Fatal(err)
		}
		if err := s.SetArchived(ctx, "a", true); err != nil {
			t.Fatal(err)
		}
		if got := ids(ListOptions{ParentID: "a", Archived: true}); !reflect.DeepEqual(got, []string{"kid"}) {
			t.Errorf("archived children: %v", got)
		}
		if got := ids(ListOptions{}); got != nil {
			t.Errorf("all archived: %v", got)
		}
		// Back.
		for _, id := range []string{"a", "b", "kid"} {
			if err := s.SetArchived(ctx, id, false); err != nil {
				t.Fatal(err)
			}
		}
		if got := ids(ListOptions{}); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("brought back: %v", got)
		}
		if got := ids(ListOptions{ParentID: "a"}); !reflect.DeepEqual(got, []string{"kid"}) {
			t.Errorf("child brought back: %v", got)
		}
		if got, _ := s.Get(ctx, "b"); got.Archived || !got.UpdatedAt.Equal(before.UpdatedAt) {
			t.Errorf("brought back %+v", got)
		}
	})
}

// TestFork: a fork holds the messages up to the seq asked (all of them for
// 0 or less, or a seq past the last), with their seqs, marks, tokens and
// times; the tool runs of their calls (not a later reply's run of a call
// id used again, nor a run no message names); the checkpoints up to there,
// with new IDs. A message whose summary was not copied is live in it. The
// next message appended to it follows the last one copied, and the source
// is left as it was.
func TestFork(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		src := rewindSession(t, s)
		runs := src.runs // call_0 of 2, call_1 of 2, an orphan, call_0 of 7
		for _, tc := range []struct {
			through int
			last    int
			live    []int // compacted in the source, not in the fork
			runs    []ToolRun
			trees   []string
		}{
			{0, 12, nil, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4", "t5"}},
			{-3, 12, nil, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4", "t5"}},
			{12, 12, nil, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4", "t5"}},
			{1000, 12, nil, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4", "t5"}},
			{10, 10, nil, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4"}},
			{9, 9, []int{1, 2, 3, 4, 5}, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3", "t4"}},
			{7, 7, []int{1, 2, 3, 4, 5}, []ToolRun{runs[0], runs[1], runs[3]}, []string{"t1", "t2", "t3"}},
			{6, 6, []int{1, 2, 3, 4, 5}, []ToolRun{runs[0], runs[1]}, []string{"t1", "t2"}},
			{2, 2, []int{1, 2}, []ToolRun{runs[0], runs[1]}, []string{"t1"}},
			{1, 1, []int{1}, nil, nil},
		} {
			into := &Session{}
			if err := s.Fork(ctx, src.id, tc.through, into); err != nil {
				t.Fatalf("through %d: %v", tc.through, err)
			}
			name := fmt.Sprintf("through %d", tc.through)
			if !strings.HasPrefix(into.ID, "s-") || into.ID == src.id || into.ForkOf != src.id || into.ForkSeq != tc.last || into.Title != "rewind me" ||
				into.Provider != "ollama" || into.Model != "qwen3:4b" || into.Workspace != "/w" || into.Archived ||
				!utcMillis(into.CreatedAt) || !into.UpdatedAt.Equal(into.CreatedAt) {
				t.Errorf("%s: into %+v", name, into)
			}
			got, err := s.Get(ctx, into.ID)
			if err != nil || got.ForkOf != src.id || got.ForkSeq != tc.last || got.Title != "rewind me" || got.Provider != "ollama" || got.Workspace != "/w" ||
				got.Archived || got.ParentID != "" || got.MessageCount != tc.last || got.InputTokens != 0 ||
				!got.CreatedAt.Equal(into.CreatedAt) || !got.UpdatedAt.Equal(into.UpdatedAt) {
				t.Errorf("%s: get %+v %v", name, got, err)
			}
			want := upTo(src.msgs, tc.last, tc.live...)
			msgs, err := s.Messages(ctx, into.ID)
			if err != nil || !reflect.DeepEqual(msgs, want) {
				t.Errorf("%s: messages %v\n%+v, want\n%+v", name, err, msgs, want)
			}
			var wantRuns []ToolRun
			for _, r := range tc.runs {
				r.SessionID = into.ID
				wantRuns = append(wantRuns, r)
			}
			if got, err := s.ToolRuns(ctx, into.ID); err != nil || !reflect.DeepEqual(got, wantRuns) {
				t.Errorf("%s: tool runs %v\n%+v, want\n%+v", name, err, got, wantRuns)
			}
			var wantCps []Checkpoint
			for _, c := range src.cps {
				if slices.Contains(tc.trees, c.Tree) {
					wantCps = append(wantCps, c)
				}
			}
			cps, err := s.Checkpoints(ctx, into.ID)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameCheckpoints(cps, wantCps, into.ID, src.maxCheck); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			// The fork is what its source rewound there would be.
			h := History(msgs)
			if tc.last == 6 && (len(h) != 6 || h[0].Content != "read a and b" || h[5].Content != "and c?") {
				t.Errorf("%s: history %+v", name, h)
			}
			if tc.last == 12 && (len(h) != 6 || h[0].Content != "[Summary] read a and b" || h[1].Content != "and c?" || h[5].Content != "Going") {
				t.Errorf("%s: history %+v", name, h)
			}
			// Search sees the fork's own messages.
			for q, found := range map[string]bool{"read a and b": true, "and c?": tc.last >= 6, "go on": tc.last >= 11} {
				l, err := s.List(ctx, ListOptions{Query: q})
				if err != nil {
					t.Fatal(err)
				}
				if in := slices.ContainsFunc(l, func(se Session) bool { return se.ID == into.ID }); in != found {
					t.Errorf("%s: query %q finds the fork: %v", name, q, in)
				}
			}
			next, err := s.Append(ctx, into.ID, msg(llm.RoleUser, "next"))
			if err != nil || next[0].Seq != tc.last+1 {
				t.Errorf("%s: next append %+v %v", name, next, err)
			}
			src.unchanged(t, s)
		}
	})
}

// TestForkInto: what into says is kept (an id, a title, a parent, the
// archived mark); a fork that cannot be made leaves nothing, and into as
// it was.
func TestForkInto(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		src := rewindSession(t, s)
		into := &Session{ID: "mine", Title: "Before the rewind", Model: "other", Archived: true}
		if err := s.Fork(ctx, src.id, 5, into); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(ctx, "mine")
		if err != nil || got.Title != "Before the rewind" || got.Model != "other" || got.Provider != "ollama" || !got.Archived || got.ForkSeq != 5 || got.MessageCount != 5 {
			t.Errorf("%+v %v", got, err)
		}
		if l, _ := s.List(ctx, ListOptions{}); len(l) != 1 || l[0].ID != src.id {
			t.Errorf("the archived fork is listed: %+v", l)
		}
		if l, _ := s.List(ctx, ListOptions{Archived: true}); len(l) != 1 || l[0].ID != "mine" || l[0].ForkOf != src.id || l[0].ForkSeq != 5 {
			t.Errorf("archived: %+v", l)
		}
		// A fork of a fork names the fork.
		again := &Session{}
		if err := s.Fork(ctx, "mine", 0, again); err != nil || again.ForkOf != "mine" || again.ForkSeq != 5 || again.Title != "Before the rewind" || again.Archived {
			t.Errorf("fork of a fork %+v %v", again, err)
		}
		// A sub-agent's session, forked under its parent.
		kid := &Session{ParentID: src.id, ParentCall: "call_1"}
		if err := s.Fork(ctx, src.id, 2, kid); err != nil {
			t.Fatal(err)
		}
		if l, _ := s.List(ctx, ListOptions{ParentID: src.id}); len(l) != 1 || l[0].ID != kid.ID || l[0].ParentCall != "call_1" || l[0].ForkOf != src.id {
			t.Errorf("children %+v", l)
		}
		// An empty session.
		if err := s.Create(ctx, &Session{ID: "empty", Title: "nothing yet"}); err != nil {
			t.Fatal(err)
		}
		ef := &Session{}
		if err := s.Fork(ctx, "empty", 3, ef); err != nil || ef.ForkSeq != 0 || ef.Title != "nothing yet" {
			t.Fatalf("%+v %v", ef, err)
		}
		if m, err := s.Append(ctx, ef.ID, msg(llm.RoleUser, "first")); err != nil || m[0].Seq != 1 {
			t.Errorf("%+v %v", m, err)
		}
		// Forks that cannot be made.
		before, _ := s.List(ctx, ListOptions{Archived: true})
		for _, tc := range []struct {
			name     string
			id       string
			into     Session
			notFound bool
		}{
			{"an id in use", src.id, Session{ID: "mine"}, false},
			{"its own id", src.id, Session{ID: src.id}, false},
			{"a parent that is not there", src.id, Session{ID: "orphan", ParentID: "nope"}, false},
			{"a source that is not there", "nope", Session{ID: "fresh"}, true},
		} {
			into := tc.into
			err := s.Fork(ctx, tc.id, 0, &into)
			if err == nil || errors.Is(err, ErrNotFound) != tc.notFound || !reflect.DeepEqual(into, tc.into) {
				t.Errorf("%s: %v, into %+v", tc.name, err, into)
			}
		}
		if got, _ := s.Get(ctx, "mine"); got.MessageCount != 5 || got.ForkSeq != 5 {
			t.Errorf("a failed fork changed the session in the way: %+v", got)
		}
		for _, id := range []string{"orphan", "fresh"} {
			if _, err := s.Get(ctx, id); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s: left behind: %v", id, err)
			}
		}
		if after, _ := s.List(ctx, ListOptions{Archived: true}); len(after) != len(before) {
			t.Errorf("sessions left behind: %+v", after)
		}
		src.unchanged(t, s)
	})
}

// TestForkWhileAppending: a fork is one moment of its source: appends of
// two messages at once, made while it is taken, are in it whole or not at
// all.
func TestForkWhileAppending(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		if err := s.Create(ctx, &Session{ID: "s1"}); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 40 {
				if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, fmt.Sprint(i)), msg(llm.RoleAssistant, fmt.Sprint(i)+"'")); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		var forks []*Session
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			default:
			}
			f := &Session{}
			if err := s.Fork(ctx, "s1", 0, f); err != nil {
				t.Fatal(err)
			}
			forks = append(forks, f)
			time.Sleep(time.Millisecond) // lets the appends in (SQLite's write lock is not fair)
		}
		all, _ := s.Messages(ctx, "s1")
		if len(all) != 80 || forks[len(forks)-1].ForkSeq != 80 {
			t.Fatalf("%d messages, the last fork through %d", len(all), forks[len(forks)-1].ForkSeq)
		}
		for _, f := range forks {
			msgs, err := s.Messages(ctx, f.ID)
			if err != nil || len(msgs)%2 != 0 || len(msgs) != f.ForkSeq || len(msgs) > 0 && !reflect.DeepEqual(msgs, all[:len(msgs)]) {
				t.Errorf("fork %s (through %d): %d messages %v", f.ID, f.ForkSeq, len(msgs), err)
			}
		}
	})
}

// TestTruncate: the messages after the seq go, and the checkpoints taken
// after it; the messages their summary replaced are live again; the next
// message appended follows the seq; tool runs and usage stay.
func TestTruncate(t *testing.T) {
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		src := rewindSession(t, s)
		if err := s.RecordUsage(ctx, Usage{SessionID: src.id, InputTokens: 100, OutputTokens: 10}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			through int
			last    int
			live    []int
			trees   []string
		}{
			{1000, 12, nil, []string{"t1", "t2", "t3", "t4", "t5"}},
			{12, 12, nil, []string{"t1", "t2", "t3", "t4", "t5"}},
			{10, 10, nil, []string{"t1", "t2", "t3", "t4"}},
			{9, 9, []int{1, 2, 3, 4, 5}, []string{"t1", "t2", "t3", "t4"}},
			{6, 6, []int{1, 2, 3, 4, 5}, []string{"t1", "t2"}},
			{2, 2, []int{1, 2}, []string{"t1"}},
			{0, 0, nil, nil},
		} {
			name := fmt.Sprintf("through %d", tc.through)
			// Each on a copy of the source.
			f := &Session{}
			if err := s.Fork(ctx, src.id, 0, f); err != nil {
				t.Fatal(err)
			}
			if err := s.RecordUsage(ctx, Usage{SessionID: f.ID, InputTokens: 7, OutputTokens: 1}); err != nil {
				t.Fatal(err)
			}
			copied, _ := s.Checkpoints(ctx, f.ID)
			time.Sleep(2 * time.Millisecond) // updated_at has millisecond resolution
			if err := s.Truncate(ctx, f.ID, tc.through); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			msgs, err := s.Messages(ctx, f.ID)
			if want := upTo(src.msgs, tc.last, tc.live...); err != nil || !reflect.DeepEqual(msgs, want) {
				t.Errorf("%s: messages %v\n%+v, want\n%+v", name, err, msgs, want)
			}
			var want []Checkpoint
			for _, c := range copied {
				if slices.Contains(tc.trees, c.Tree) {
					want = append(want, c)
				}
			}
			if cps, err := s.Checkpoints(ctx, f.ID); err != nil || !reflect.DeepEqual(cps, want) && !(len(cps) == 0 && len(want) == 0) {
				t.Errorf("%s: checkpoints %v %v, want %v", name, err, trees(cps), trees(want))
			}
			if runs, err := s.ToolRuns(ctx, f.ID); err != nil || len(runs) != 3 {
				t.Errorf("%s: tool runs %+v %v", name, runs, err)
			}
			got, err := s.Get(ctx, f.ID)
			if err != nil || got.MessageCount != tc.last || got.InputTokens != 7 || !got.UpdatedAt.After(f.UpdatedAt) || got.ForkOf != src.id || got.ForkSeq != 12 {
				t.Errorf("%s: %+v %v (forked at %v)", name, got, err, f.UpdatedAt)
			}
			for q, found := range map[string]bool{"read a and b": tc.last >= 1, "and c?": tc.last >= 6, "go on": tc.last >= 11} {
				l, err := s.List(ctx, ListOptions{Query: q})
				if err != nil {
					t.Fatal(err)
				}
				if in := slices.ContainsFunc(l, func(se Session) bool { return se.ID == f.ID }); in != found {
					t.Errorf("%s: query %q finds the session: %v", name, q, in)
				}
			}
			next, err := s.Append(ctx, f.ID, msg(llm.RoleUser, "next"), msg(llm.RoleAssistant, "ok"))
			if err != nil || next[0].Seq != tc.last+1 || next[1].Seq != tc.last+2 {
				t.Errorf("%s: next append %+v %v", name, next, err)
			}
			// A checkpoint taken after the rewind is after the ones kept.
			c, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: f.ID, Kind: CheckpointRewind, Seq: tc.last + 2, Tree: "t6"})
			if cps, _ := s.Checkpoints(ctx, f.ID); err != nil || cps[len(cps)-1].ID != c.ID || (len(want) > 0 && c.ID <= want[len(want)-1].ID) {
				t.Errorf("%s: a checkpoint after: %+v %v", name, c, err)
			}
		}
		// Seq 0 keeps the checkpoints taken before the first message.
		if _, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: src.id, Kind: CheckpointBefore, Seq: 0, Tree: "t0"}); err != nil {
			t.Fatal(err)
		}
		if err := s.Truncate(ctx, src.id, -1); err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), src.id) {
			t.Errorf("a negative seq: %v", err)
		}
		if m, _ := s.Messages(ctx, src.id); len(m) != 12 {
			t.Errorf("a refused truncate removed messages: %d left", len(m))
		}
		if err := s.Truncate(ctx, src.id, 0); err != nil {
			t.Fatal(err)
		}
		if cps, err := s.Checkpoints(ctx, src.id); err != nil || len(cps) != 1 || cps[0].Tree != "t0" {
			t.Errorf("checkpoints at seq 0: %+v %v", cps, err)
		}
		if m, err := s.Append(ctx, src.id, msg(llm.RoleUser, "from scratch")); err != nil || m[0].Seq != 1 {
			t.Errorf("%+v %v", m, err)
		}
		if got, _ := s.Get(ctx, src.id); got.InputTokens != 100 {
			t.Errorf("usage %+v", got)
		}
	})
}

// TestTruncateCompactions: a compacted message is live again exactly when
// no summary left is placed after it, in the conversation's order (a
// summary stands where it is placed, not at its seq): a summary that a
// later one replaced stays replaced while that one is there, and a summary
// placed nowhere (a compaction that kept nothing) stands at its seq.
func TestTruncateCompactions(t *testing.T) {
	// chain: 1 one, 2 two, 3 three, 4 S1 (of 1-2, before 3), 5 five,
	// 6 six, 7 S2 (of S1, 3 and 5, before 6), 8 eight.
	chain := func(t *testing.T, s Store, id string) {
		ctx := context.Background()
		s.Append(ctx, id, msg(llm.RoleUser, "one"), msg(llm.RoleAssistant, "two"), msg(llm.RoleUser, "three"))
		s.Compact(ctx, id, []int{1, 2}, 3, msg(llm.RoleUser, "S1"))
		s.Append(ctx, id, msg(llm.RoleAssistant, "five"), msg(llm.RoleUser, "six"))
		s.Compact(ctx, id, []int{4, 3, 5}, 6, msg(llm.RoleUser, "S2"))
		s.Append(ctx, id, msg(llm.RoleAssistant, "eight"))
	}
	// nothingKept: 1 a, 2 b, 3 S (of 1-2, placed nowhere), 4 c.
	nothingKept := func(t *testing.T, s Store, id string) {
		ctx := context.Background()
		s.Append(ctx, id, msg(llm.RoleUser, "a"), msg(llm.RoleAssistant, "b"))
		s.Compact(ctx, id, []int{1, 2}, 0, msg(llm.RoleUser, "S"))
		s.Append(ctx, id, msg(llm.RoleUser, "c"))
	}
	tests := []struct {
		name      string
		build     func(t *testing.T, s Store, id string)
		through   int
		compacted []int
		history   string
	}{
		{"chain, all kept", chain, 8, []int{1, 2, 3, 4, 5}, "S2 six eight"},
		{"chain, the last summary kept", chain, 7, []int{1, 2, 3, 4, 5}, "S2 six"},
		{"chain, the last summary gone", chain, 6, []int{1, 2}, "S1 three five six"},
		{"chain, both summaries gone", chain, 3, nil, "one two three"},
		{"nothing kept, all kept", nothingKept, 4, []int{1, 2}, "S c"},
		{"nothing kept, the summary kept", nothingKept, 3, []int{1, 2}, "S"},
		{"nothing kept, the summary gone", nothingKept, 2, nil, "a b"},
	}
	forEachStore(t, func(t *testing.T, s Store) {
		ctx := context.Background()
		for i, tc := range tests {
			id := fmt.Sprintf("s%d", i)
			if err := s.Create(ctx, &Session{ID: id}); err != nil {
				t.Fatal(err)
			}
			tc.build(t, s, id)
			// A fork there is the same as the truncated session.
			f := &Session{}
			if err := s.Fork(ctx, id, tc.through, f); err != nil {
				t.Fatal(err)
			}
			if err := s.Truncate(ctx, id, tc.through); err != nil {
				t.Fatal(err)
			}
			msgs, err := s.Messages(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var compacted, history []string
			for _, m := range msgs {
				if m.Compacted {
					compacted = append(compacted, fmt.Sprint(m.Seq))
				}
			}
			for _, m := range History(msgs) {
				history = append(history, m.Content)
			}
			if fmt.Sprint(compacted) != fmt.Sprint(tc.compacted) || strings.Join(history, " ") != tc.history {
				t.Errorf("%s: compacted %v, history %q; want %v, %q", tc.name, compacted, history, tc.compacted, tc.history)
			}
			if fm, err := s.Messages(ctx, f.ID); err != nil || !reflect.DeepEqual(fm, msgs) {
				t.Errorf("%s: the fork differs: %v\n%+v\n%+v", tc.name, err, fm, msgs)
			}
		}
	})
}
