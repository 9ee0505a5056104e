package session

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

func open(t *testing.T) *SQLite {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func msg(role llm.Role, content string) Message {
	return Message{Message: llm.Message{Role: role, Content: content}}
}

func TestSessionsCRUD(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	a := &Session{Title: "fix the parser", Provider: "ollama", Model: "qwen3:4b", Workspace: "/w"}
	if err := s.Create(ctx, a); err != nil || !strings.HasPrefix(a.ID, "s-") {
		t.Fatalf("%v %q", err, a.ID)
	}
	b := &Session{ID: "s1"}
	if err := s.Create(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Session{ID: "s1"}); err == nil {
		t.Error("duplicate id accepted")
	}
	child := &Session{ID: "c1", ParentID: "s1", ParentCall: "call_1"}
	if err := s.Create(ctx, child); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, &Session{ParentID: "nope"}); err == nil {
		t.Error("orphan child accepted")
	}
	time.Sleep(2 * time.Millisecond) // updated_at has millisecond resolution
	s.Append(ctx, "s1", msg(llm.RoleUser, "the parser drops commas"))
	s.RecordUsage(ctx, Usage{SessionID: "s1", Model: "m", InputTokens: 100, OutputTokens: 20})
	s.RecordUsage(ctx, Usage{SessionID: "s1", Model: "m", InputTokens: 50, OutputTokens: 5})

	got, err := s.Get(ctx, "s1")
	if err != nil || got.MessageCount != 1 || got.InputTokens != 150 || got.OutputTokens != 25 {
		t.Fatalf("%+v %v", got, err)
	}
	list, _ := s.List(ctx, ListOptions{})
	if len(list) != 2 || list[0].ID != "s1" {
		t.Errorf("list (newest first, no children): %+v", list)
	}
	kids, _ := s.List(ctx, ListOptions{ParentID: "s1"})
	if len(kids) != 1 || kids[0].ParentCall != "call_1" {
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
	for _, err := range []error{
		func() error { _, err := s.Get(ctx, "s1"); return err }(),
		s.Rename(ctx, "s1", "x"),
		s.Delete(ctx, "s1"),
		func() error { _, err := s.Messages(ctx, "s1"); return err }(),
		func() error { _, err := s.Append(ctx, "s1", msg(llm.RoleUser, "x")); return err }(),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("after delete: %v", err)
		}
	}
	if c, _ := s.Get(ctx, "c1"); c.ParentID != "" {
		t.Errorf("child keeps a deleted parent: %+v", c)
	}
}

func TestMessagesRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.Create(ctx, &Session{ID: "s1"})
	in := []Message{
		msg(llm.RoleUser, "read a.txt"),
		{Message: llm.Message{Role: llm.RoleAssistant, Content: "Reading.", Thinking: "I should look",
			ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"a.txt"}`)}}}, Tokens: 42},
		{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "hello"}},
		{Message: llm.Message{Role: llm.RoleAssistant, Content: "It says hel"}, Partial: true},
		{Message: llm.Message{Role: llm.RoleUser, Content: "and this?", Images: [][]byte{{1, 2, 3}}}},
	}
	stored, err := s.Append(ctx, "s1", in...)
	if err != nil || stored[4].Seq != 5 {
		t.Fatalf("%v %+v", err, stored)
	}
	out, err := s.Messages(ctx, "s1")
	if err != nil || len(out) != 5 {
		t.Fatalf("%v %d", err, len(out))
	}
	a := out[1]
	if a.Thinking != "I should look" || a.ToolCalls[0].Name != "read_file" || string(a.ToolCalls[0].Args) != `{"path":"a.txt"}` || a.Tokens != 42 {
		t.Errorf("assistant: %+v", a)
	}
	if out[2].ToolCallID != "call_1" || out[2].ToolName != "read_file" || out[0].Tokens == 0 {
		t.Errorf("tool result: %+v", out[2])
	}
	if !out[3].Partial || string(out[4].Images[0]) != "\x01\x02\x03" {
		t.Errorf("partial / images: %+v %+v", out[3], out[4])
	}
}

func TestCompactAndHistory(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.Create(ctx, &Session{ID: "s1"})
	s.Append(ctx, "s1", msg(llm.RoleUser, "one"), msg(llm.RoleAssistant, "two"), msg(llm.RoleUser, "three"))
	if _, err := s.Compact(ctx, "s1", []int{1, 2}, 3, msg(llm.RoleUser, "Summary: one and two")); err != nil {
		t.Fatal(err)
	}
	s.Append(ctx, "s1", msg(llm.RoleAssistant, "four"))
	all, _ := s.Messages(ctx, "s1")
	h := History(all)
	var got []string
	for _, m := range h {
		got = append(got, m.Content)
	}
	if strings.Join(got, "|") != "Summary: one and two|three|four" {
		t.Errorf("history %v", got)
	}
	if len(all) != 5 || !all[0].Compacted || !all[3].Summary || all[3].Before != 3 {
		t.Errorf("stored %+v", all)
	}
}

func TestHistoryAnswersInterruptedCalls(t *testing.T) {
	calls := []llm.ToolCall{{ID: "a", Name: "read_file"}, {ID: "b", Name: "run_shell_command"}}
	msgs := []Message{
		msg(llm.RoleUser, "go"),
		{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: calls}},
		{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "a", Content: "ok"}},
		msg(llm.RoleUser, "what happened?"),
	}
	h := History(msgs)
	if len(h) != 5 || h[3].ToolCallID != "b" || !strings.Contains(h[3].Content, "interrupted") || h[4].Content != "what happened?" {
		t.Errorf("%+v", h)
	}
	if msgs[2].Compacted {
		t.Error("History changed its input")
	}
}

func TestToolRunsAndUsage(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.Create(ctx, &Session{ID: "s1"})
	s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "c1", Name: "read_file", Args: json.RawMessage(`{"p":1}`), OK: true, Output: "x", Duration: 1500 * time.Millisecond})
	s.RecordToolRun(ctx, ToolRun{SessionID: "s1", CallID: "c2", Name: "run_shell_command", Error: "refused"})
	runs, err := s.ToolRuns(ctx, "s1")
	if err != nil || len(runs) != 2 || runs[0].Duration != 1500*time.Millisecond || runs[1].OK || runs[1].Error != "refused" || string(runs[1].Args) != "{}" {
		t.Fatalf("%+v %v", runs, err)
	}
	day := time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC)
	s.RecordUsage(ctx, Usage{SessionID: "s1", InputTokens: 10, OutputTokens: 1, At: day})
	s.RecordUsage(ctx, Usage{SessionID: "s1", InputTokens: 20, OutputTokens: 2, At: day.Add(2 * time.Hour)})
	s.RecordUsage(ctx, Usage{SessionID: "s1", InputTokens: 30, OutputTokens: 3, At: day.Add(3 * time.Hour)})
	days, err := s.UsageByDay(ctx, day.Add(-time.Hour))
	if err != nil || len(days) != 2 || days[0] != (DayUsage{"2026-11-20", 10, 1}) || days[1] != (DayUsage{"2026-11-21", 50, 5}) {
		t.Errorf("%+v %v", days, err)
	}
}

func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.Create(ctx, &Session{ID: "s1"})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 10 {
				if _, err := s.Append(ctx, "s1", msg(llm.RoleUser, string(rune('a'+i))+string(rune('0'+j)))); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	all, _ := s.Messages(ctx, "s1")
	if len(all) != 80 || all[79].Seq != 80 {
		t.Fatalf("%d messages", len(all))
	}
}

func TestBadFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, data, 0o644)
		return p
	}
	// A SQLite database of another program.
	other := filepath.Join(dir, "other.db")
	o, _ := Open(ctx, filepath.Join(dir, "tmp.db"))
	o.db.Exec("PRAGMA application_id = 0")
	o.Close()
	os.Rename(filepath.Join(dir, "tmp.db"), other)
	os.Remove(filepath.Join(dir, "tmp.db-wal"))
	os.Remove(filepath.Join(dir, "tmp.db-shm"))

	newer, _ := Open(ctx, filepath.Join(dir, "newer.db"))
	newer.db.Exec("PRAGMA user_version = 99")
	newer.Close()

	tests := []struct {
		path, want string
	}{
		{write("text.db", []byte("these are my notes, not a database\n"+strings.Repeat("x", 4096))), "is not a SQLite database"},
		{other, "another program's SQLite database"},
		{filepath.Join(dir, "newer.db"), "newer Hearth"},
	}
	for _, tc := range tests {
		_, err := Open(ctx, tc.path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v, want %q and the file name", filepath.Base(tc.path), err, tc.want)
		}
	}
	// A damaged database: valid header, garbage pages.
	good := filepath.Join(dir, "good.db")
	g, _ := Open(ctx, good)
	g.Create(ctx, &Session{ID: "s1"})
	for i := range 200 {
		g.Append(ctx, "s1", msg(llm.RoleUser, strings.Repeat("message ", 50)+string(rune(i))))
	}
	g.db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	g.Close()
	data, _ := os.ReadFile(good)
	for i := 4096; i < len(data); i += 7 {
		data[i] ^= 0x5a
	}
	os.WriteFile(good, data, 0o644)
	s, err := Open(ctx, good)
	if err == nil {
		_, err = s.Messages(ctx, "s1")
		s.Close()
	}
	if err == nil || !strings.Contains(err.Error(), good) {
		t.Errorf("damaged: %v", err)
	}
}

func TestLock(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.LockTimeout = 100 * time.Millisecond
	unlock, err := s.Lock(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Lock(ctx, "s1")
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid") || time.Since(start) < 100*time.Millisecond {
		t.Errorf("second lock: %v after %v", err, time.Since(start))
	}
	u2, err := s.Lock(ctx, "s2")
	if err != nil {
		t.Errorf("another session: %v", err)
	}
	u2()
	go func() {
		time.Sleep(30 * time.Millisecond)
		unlock()
	}()
	s.LockTimeout = 2 * time.Second
	u3, err := s.Lock(ctx, "s1")
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	u3()
}

func TestHistoryPairsResultsWithTheirOwnReply(t *testing.T) {
	call := func() Message {
		return Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "read_file"}}}}
	}
	msgs := []Message{
		msg(llm.RoleUser, "one"), call(), {Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", Content: "ok"}},
		msg(llm.RoleAssistant, "done"),
		msg(llm.RoleUser, "two"), call(), // interrupted: same id as the first call
	}
	h := History(msgs)
	last := h[len(h)-1]
	if len(h) != 7 || last.Role != llm.RoleTool || !strings.Contains(last.Content, "interrupted") {
		t.Errorf("%+v", h)
	}
}

// TestFailureRecords: the record of a failed turn is kept and shown, but
// never sent to a model; the prompt before it can be run again.
func TestFailureRecords(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	s.Create(ctx, &Session{ID: "s1"})
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
	s.Append(ctx, "s1", msg(llm.RoleAssistant, "Fixed."))
	all, _ = s.Messages(ctx, "s1")
	if h := History(all); len(h) != 2 || h[1].Content != "Fixed." || Unanswered(all) {
		t.Errorf("history %+v", h)
	}
	b, _ := json.Marshal(all[1])
	if !strings.Contains(string(b), `"failure":true`) {
		t.Errorf("json %s", b)
	}
}

// TestMigrateFromSchema1: a database of the first schema keeps its
// sessions and messages, and can hold failure records.
func TestMigrateFromSchema1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Back to schema 1, as the first Hearth left it.
	for _, q := range []string{"DROP TABLE meta", "DROP TABLE tool_runs", "DROP TABLE usage", "DROP TABLE messages", "DROP TABLE sessions", "PRAGMA user_version = 0"} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	if _, err := s.db.Exec(migrations[0]); err != nil {
		t.Fatal(err)
	}
	s.db.Exec("PRAGMA user_version = 1")
	s.db.Exec("INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'Old one', 1, 1)")
	s.db.Exec("INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('old', 1, 'user', 'hello', 1)")
	s.Close()

	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	msgs, err := s.Messages(ctx, "old")
	if err != nil || v != len(migrations) || len(msgs) != 1 || msgs[0].Content != "hello" || msgs[0].Failure {
		t.Fatalf("schema %d, %v %+v", v, err, msgs)
	}
	if _, err := s.Append(ctx, "old", FailureMessage(errors.New("boom"))); err != nil {
		t.Fatal(err)
	}
}

// The file's structure is checked on open once a day, not by every run:
// the file records when it was last checked.
func TestStructureCheckedOnceADay(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	for _, step := range []struct {
		name    string
		before  func(s *SQLite)
		checked bool
	}{
		{"new file", nil, true},
		{"checked just now", nil, false},
		{"checked two days ago", func(s *SQLite) {
			s.db.Exec("UPDATE meta SET value = ? WHERE key = 'checked_at'", time.Now().Add(-48*time.Hour).UTC().Format(time.RFC3339))
		}, true},
		{"checked again", nil, false},
		{"a date in the future", func(s *SQLite) {
			s.db.Exec("UPDATE meta SET value = ? WHERE key = 'checked_at'", time.Now().Add(48*time.Hour).UTC().Format(time.RFC3339))
		}, true},
		{"no record", func(s *SQLite) { s.db.Exec("DELETE FROM meta") }, true},
	} {
		if step.before != nil {
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			step.before(s)
			s.Close()
		}
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if s.checked != step.checked {
			t.Errorf("%s: checked %v, want %v", step.name, s.checked, step.checked)
		}
		s.Close()
	}
}
