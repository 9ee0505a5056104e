package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm"
)

// archiveStore is a store that can archive: *SQLite or *Postgres.
type archiveStore interface {
	Store
	Archiver
}

// archiveSQLite opens a new SQLite store, closed when t ends.
func archiveSQLite(t *testing.T) *SQLite {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// archivePostgres opens a store on a new PostgreSQL database, closed when
// t ends (before pgtest drops the database).
func archivePostgres(t *testing.T) *Postgres {
	t.Helper()
	p, err := OpenPostgres(context.Background(), pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// forEachArchiver runs f on a fresh, empty store of each kind.
func forEachArchiver(t *testing.T, f func(t *testing.T, s archiveStore)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { f(t, archiveSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, archivePostgres(t)) })
}

// richSession stores, through the Store's own methods, a session with
// everything a session can hold: reasoning, tool calls (arguments that
// JSON encoders like to rewrite), their results, images, a partial reply,
// a compaction (the summary placed before a later message), the record of
// a failed turn, usage, tool runs, checkpoints (a Detail that JSON encoders
// would rewrite), the archived mark, and a sub-agent's session with one of
// its own (a fork of the sub-agent's). It returns the top-level session's
// id.
func richSession(t *testing.T, s Store) string {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	top := &Session{Title: "fix the parser", Provider: "ollama", Model: "qwen3:4b", Workspace: "/home/me/src"}
	must(s.Create(ctx, top))
	text := func(role llm.Role, content string) Message {
		return Message{Message: llm.Message{Role: role, Content: content}}
	}
	calls := []llm.ToolCall{
		{ID: "call_0", Name: "run_shell_command", Args: json.RawMessage(`{"command":"go test ./... && echo <ok> 'é' \u2028","timeout":1.50,"env":{"B":"2","A":"1"}}`)},
		{ID: "call_1", Name: "read_file", Args: json.RawMessage(`{"path":"main.go","lines":[1,2e3]}`), Repaired: true},
		{ID: "call_2", Name: "bogus", Args: json.RawMessage(`{}`), ArgsError: "unexpected end of JSON", FromText: true},
	}
	user := text(llm.RoleUser, "what does this screenshot show?")
	user.Images = [][]byte{{0x89, 'P', 'N', 'G', 0, 1, 2, 0xff}, []byte("second image")}
	assistant := Message{Message: llm.Message{Role: llm.RoleAssistant, Content: "Let me look.", Thinking: "the user wants…", ToolCalls: calls}, Tokens: 42}
	_, err := s.Append(ctx, top.ID, user, assistant,
		Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_0", ToolName: "run_shell_command", Content: "ok\n"}},
		Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "call_1", ToolName: "read_file", Content: "package main\n"}})
	must(err)
	// call_2 has no result: History answers it.
	_, err = s.Append(ctx, top.ID, text(llm.RoleAssistant, "It is a parser."), text(llm.RoleUser, "and then?"))
	must(err)
	partial := text(llm.RoleAssistant, "Then it")
	partial.Partial = true
	_, err = s.Append(ctx, top.ID, partial)
	must(err)
	summary := text(llm.RoleUser, "[Summary of the earlier conversation]\nThey looked at a parser.")
	_, err = s.Compact(ctx, top.ID, []int{1, 2, 3, 4, 5}, 6, summary)
	must(err)
	_, err = s.Append(ctx, top.ID, text(llm.RoleUser, "go on"), FailureMessage(errors.New("connection refused")))
	must(err)
	at := time.Date(2025, 3, 4, 5, 6, 7, 891_000_000, time.UTC)
	must(s.RecordUsage(ctx, Usage{SessionID: top.ID, Model: "qwen3:4b", InputTokens: 1200, CachedInputTokens: 800, OutputTokens: 80, Cost: i64(4_000_000_000_000_123), At: at}))
	must(s.RecordUsage(ctx, Usage{SessionID: top.ID, Model: "qwen3:8b", InputTokens: 1300, OutputTokens: 90, At: at.Add(time.Hour)}))
	must(s.RecordToolRun(ctx, ToolRun{SessionID: top.ID, CallID: "call_0", Name: "run_shell_command", Args: calls[0].Args, OK: true,
		Output: "ok\n", Duration: 1234 * time.Millisecond, At: at.Add(time.Second)}))
	must(s.RecordToolRun(ctx, ToolRun{SessionID: top.ID, CallID: "call_1", Name: "read_file", Args: calls[1].Args, OK: false,
		Error: "no such file", Duration: 7 * time.Millisecond, At: at.Add(2 * time.Second)}))
	for _, c := range []Checkpoint{
		{SessionID: top.ID, Kind: CheckpointBefore, Turn: 1, Seq: 2, CallID: "call_0", Tool: "run_shell_command", Tree: "4b825dc6", Workspace: top.Workspace,
			Detail: json.RawMessage(`{"files": 2, "z": [1.50, "é\u00e9 <&>"],  "a": null}`)},
		{SessionID: top.ID, Kind: CheckpointAfter, Turn: 1, Seq: 5, Tree: "9f1e22aa", Workspace: top.Workspace},
		{SessionID: top.ID, Kind: CheckpointUndo, Seq: 7, Tree: "4b825dc6", Detail: json.RawMessage(`{"restored":"9f1e22aa"}`)},
	} {
		_, err := s.AddCheckpoint(ctx, c)
		must(err)
	}
	must(s.SetArchived(ctx, top.ID, true))

	child := &Session{Title: "investigate", Model: "qwen3:4b", ParentID: top.ID, ParentCall: "call_9"}
	must(s.Create(ctx, child))
	_, err = s.Append(ctx, child.ID, text(llm.RoleUser, "find the parser"),
		Message{Message: llm.Message{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "c", Name: "glob", Args: json.RawMessage(`{"pattern":"**/*.go"}`)}}}},
		Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "c", ToolName: "glob", Content: "parser.go"}},
		text(llm.RoleAssistant, `{"files":["parser.go"]}`))
	must(err)
	must(s.RecordUsage(ctx, Usage{SessionID: child.ID, Model: "qwen3:4b", InputTokens: 300, OutputTokens: 20, Cost: i64(0), At: at}))
	must(s.RecordToolRun(ctx, ToolRun{SessionID: child.ID, CallID: "c", Name: "glob", Args: json.RawMessage(`{"pattern":"**/*.go"}`), OK: true,
		Output: "parser.go", Duration: time.Millisecond, At: at}))
	_, err = s.AddCheckpoint(ctx, Checkpoint{SessionID: child.ID, Kind: CheckpointAfter, Turn: 1, Seq: 1, Tree: "c0ffee"})
	must(err)
	grandchild := &Session{Title: "deeper", ParentID: child.ID, ParentCall: "c2"}
	must(s.Fork(ctx, child.ID, 1, grandchild))
	return top.ID
}

// storedCallsText returns the tool calls' JSON of each message of a
// session, as the store keeps it.
func storedCallsText(t *testing.T, s Store, id string) []string {
	t.Helper()
	var out []string
	switch s := s.(type) {
	case *SQLite:
		rows, err := s.db.Query("SELECT tool_calls FROM messages WHERE session_id = ? ORDER BY seq", id)
		if err != nil {
			t.Fatal(err)
		}
		if out, err = collectIDs(rows); err != nil {
			t.Fatal(err)
		}
	case *Postgres:
		rows, err := s.pool.Query(context.Background(), "SELECT tool_calls FROM messages WHERE session_id = $1 ORDER BY seq", id)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
	}
	return out
}

// sameSessions checks that what every reader of b sees of session id and
// its children is what it sees in a.
func sameSessions(t *testing.T, a, b Store, id string) {
	t.Helper()
	ctx := context.Background()
	ga, err := a.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	gb, err := b.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ga, gb) {
		t.Errorf("Get %s:\n%+v\n%+v", id, ga, gb)
	}
	if gb.CreatedAt.Location() != time.UTC || !gb.CreatedAt.Equal(ga.CreatedAt) || !gb.UpdatedAt.Equal(ga.UpdatedAt) {
		t.Errorf("times of %s: %v %v, want %v %v", id, gb.CreatedAt, gb.UpdatedAt, ga.CreatedAt, ga.UpdatedAt)
	}
	for _, read := range []struct {
		name string
		f    func(Store) ([]Message, error)
	}{
		{"Messages", func(s Store) ([]Message, error) { return s.Messages(ctx, id) }},
		{"LiveMessages", func(s Store) ([]Message, error) { return s.LiveMessages(ctx, id) }},
	} {
		ma, err := read.f(a)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := read.f(b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ma, mb) {
			t.Errorf("%s of %s differ:\n%+v\n%+v", read.name, id, ma, mb)
		}
		if ha, hb := History(ma), History(mb); !reflect.DeepEqual(ha, hb) {
			t.Errorf("History of %s's %s differ:\n%+v\n%+v", id, read.name, ha, hb)
		}
	}
	ra, err := a.ToolRuns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.ToolRuns(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ra, rb) {
		t.Errorf("ToolRuns of %s:\n%+v\n%+v", id, ra, rb)
	}
	cpa, err := a.Checkpoints(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	cpb, err := b.Checkpoints(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameCheckpoints(cpb, cpa, id, 0); err != nil {
		t.Errorf("Checkpoints of %s: %v", id, err)
	}
	if ca, cb := storedCallsText(t, a, id), storedCallsText(t, b, id); !reflect.DeepEqual(ca, cb) {
		t.Errorf("the stored tool calls' JSON of %s differ:\n%q\n%q", id, ca, cb)
	}
	la, err := a.List(ctx, ListOptions{ParentID: id})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.List(ctx, ListOptions{ParentID: id})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(la, lb) {
		t.Errorf("children of %s:\n%+v\n%+v", id, la, lb)
	}
	for _, c := range la {
		sameSessions(t, a, b, c.ID)
	}
}

func TestArchiveRoundTrip(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src)
	other := &Session{Title: "another"}
	if err := src.Create(ctx, other); err != nil {
		t.Fatal(err)
	}

	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := a.Count(); n != 3 || m != 15 || len(a.Children) != 1 || len(a.Children[0].Children) != 1 {
		t.Fatalf("exported %d sessions, %d messages: %+v", n, m, a)
	}
	if len(a.Usage) != 2 || len(a.ToolRuns) != 2 || a.Messages[0].Images == nil {
		t.Fatalf("export lacks usage, tool runs or images: %+v", a)
	}
	child, grandchild := a.Children[0], a.Children[0].Children[0]
	if !a.Session.Archived || len(a.Checkpoints) != 3 || string(a.Checkpoints[0].Detail) != `{"files": 2, "z": [1.50, "é\u00e9 <&>"],  "a": null}` ||
		a.Checkpoints[1].Detail != nil || len(child.Checkpoints) != 1 || child.Session.Archived ||
		grandchild.Session.ForkOf != child.Session.ID || grandchild.Session.ForkSeq != 1 || len(grandchild.Checkpoints) != 1 || grandchild.Checkpoints[0].Tree != "c0ffee" {
		t.Fatalf("export lacks the archived mark, checkpoints or forks: %+v", a)
	}

	pg := archivePostgres(t)
	if err := pg.Import(ctx, a); err != nil {
		t.Fatal(err)
	}
	sameSessions(t, src, pg, id)
	b, err := pg.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// Checkpoint IDs included: the stores are new, and take the
	// checkpoints in the order the first one gave their IDs (see
	// TestArchiveCheckpointIDs for a store that has some already).
	if !reflect.DeepEqual(a, b) {
		t.Errorf("exported from PostgreSQL:\n%+v\nfrom SQLite:\n%+v", b, a)
	}
	if day, _ := pg.UsageByDay(ctx, time.Time{}); len(day) != 1 || day[0].InputTokens != 2800 || day[0].OutputTokens != 190 {
		t.Errorf("usage by day: %+v", day)
	}
	// The costs moved exactly: nil (no price) stays nil, 0 stays 0.
	if a.Usage[0].Cost == nil || *a.Usage[0].Cost != 4_000_000_000_000_123 || a.Usage[0].CachedInputTokens != 800 || a.Usage[1].Cost != nil ||
		child.Usage[0].Cost == nil || *child.Usage[0].Cost != 0 || a.Session.Cost == nil || *a.Session.Cost != 4_000_000_000_000_123 || a.Session.Unpriced != 1 {
		t.Errorf("exported usage %+v %+v, session %+v", a.Usage, child.Usage, a.Session)
	}
	if tot, err := pg.UsageTotals(ctx, UsageFilter{}, ByTotal); err != nil || len(tot) != 1 ||
		tot[0] != (UsageTotal{Calls: 3, InputTokens: 2800, OutputTokens: 190, CachedInputTokens: 800, Cost: 4_000_000_000_000_123, Unpriced: 1}) {
		t.Errorf("imported usage totals %+v %v", tot, err)
	}

	back := archiveSQLite(t)
	if err := back.Import(ctx, b); err != nil {
		t.Fatal(err)
	}
	sameSessions(t, src, back, id)
	c, err := back.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, c) {
		t.Errorf("exported after the round trip:\n%+v\nbefore:\n%+v", c, a)
	}

	// What was moved goes on as any session: an append follows the last seq.
	for _, s := range []Store{pg, back} {
		got, err := s.Append(ctx, id, Message{Message: llm.Message{Role: llm.RoleUser, Content: "more"}})
		if err != nil || got[0].Seq != 11 {
			t.Errorf("%T: append after import: %+v %v", s, got, err)
		}
	}
}

func TestArchiveSessionIDs(t *testing.T) {
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		ctx := context.Background()
		if ids, err := s.SessionIDs(ctx); err != nil || len(ids) != 0 {
			t.Fatalf("empty store: %q %v", ids, err)
		}
		t0 := time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.UTC)
		mk := func(id, parent string, created time.Time) Archive {
			return Archive{Session: Session{ID: id, ParentID: parent, CreatedAt: created, UpdatedAt: created.Add(time.Minute)}}
		}
		newer := mk("s-newer", "", t0.Add(time.Hour))
		newer.Children = []Archive{mk("s-child", "s-newer", t0.Add(-time.Hour))}
		for _, a := range []Archive{newer, mk("s-older", "", t0), mk("s-same-b", "", t0.Add(time.Minute)), mk("s-same-a", "", t0.Add(time.Minute))} {
			if err := s.Import(ctx, &a); err != nil {
				t.Fatal(err)
			}
		}
		if ids, err := s.SessionIDs(ctx); err != nil || strings.Join(ids, " ") != "s-older s-same-a s-same-b s-newer" {
			t.Errorf("ids %q %v", ids, err)
		}
		got, err := s.Get(ctx, "s-child")
		if err != nil || got.ParentID != "s-newer" || !got.CreatedAt.Equal(t0.Add(-time.Hour)) || !got.UpdatedAt.Equal(t0.Add(-time.Hour+time.Minute)) {
			t.Errorf("child %+v %v", got, err)
		}
		if _, err := s.Export(ctx, "s-nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("export of a missing session: %v", err)
		}
	})
}

func TestArchiveExists(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src)
	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		err := s.Import(ctx, a)
		if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), id) {
			t.Errorf("second import: %v", err)
		}
		sameSessions(t, src, s, id)
	})
	// Into the store it came from.
	if err := src.Import(ctx, a); !errors.Is(err, ErrExists) {
		t.Errorf("import into its own store: %v", err)
	}
}

// TestArchiveAtomic: an import that fails part way leaves nothing of the
// session behind, its parent's rows included.
func TestArchiveAtomic(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src)
	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	grandchild := a.Children[0].Children[0].Session.ID
	// copy returns a copy of a that change may alter, a's children included.
	copyArchive := func(change func(b *Archive)) *Archive {
		data, _ := json.Marshal(a)
		var b Archive
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		change(&b)
		return &b
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		archive *Archive
		exists  bool // the error wraps ErrExists
		want    string
	}{
		{"a child's parent is wrong", ctx, copyArchive(func(b *Archive) { b.Children[0].Children[0].Session.ParentID = "s-elsewhere" }), false, "parent"},
		{"a child's message seq twice", ctx, copyArchive(func(b *Archive) {
			m := b.Children[0].Messages
			b.Children[0].Messages = append(m, m[1])
		}), false, "seq"},
		{"a child exists", ctx, copyArchive(func(*Archive) {}), true, grandchild},
		{"a child's checkpoint of another session", ctx, copyArchive(func(b *Archive) { b.Children[0].Checkpoints[0].SessionID = "s-elsewhere" }), false, "checkpoint"},
		{"a checkpoint's detail is not JSON", ctx, copyArchive(func(b *Archive) { b.Checkpoints[2].Detail = json.RawMessage(`{"restored":`) }), false, "not JSON"},
		{"cancelled", cancelled, copyArchive(func(*Archive) {}), false, ""},
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		// The grandchild is there already, under a parent of its own.
		owner := &Session{Title: "owner"}
		if err := s.Create(ctx, owner); err != nil {
			t.Fatal(err)
		}
		if err := s.Import(ctx, &Archive{Session: Session{ID: grandchild, ParentID: owner.ID, CreatedAt: time.UnixMilli(0).UTC()}}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			err := s.Import(tc.ctx, tc.archive)
			if err == nil || errors.Is(err, ErrExists) != tc.exists || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v", tc.name, err)
			}
			for _, sid := range []string{id, a.Children[0].Session.ID} {
				if _, err := s.Get(ctx, sid); !errors.Is(err, ErrNotFound) {
					t.Errorf("%s: session %s left behind: %v", tc.name, sid, err)
				}
			}
			if day, err := s.UsageByDay(ctx, time.Time{}); err != nil || len(day) != 0 {
				t.Errorf("%s: usage left behind: %+v %v", tc.name, day, err)
			}
			if ids, err := s.SessionIDs(ctx); err != nil || len(ids) != 1 || ids[0] != owner.ID {
				t.Errorf("%s: sessions %q %v", tc.name, ids, err)
			}
		}
		// Without the grandchild in the way, the same archive goes in whole.
		if err := s.Delete(ctx, grandchild); err != nil {
			t.Fatal(err)
		}
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		sameSessions(t, src, s, id)
	})
}

// TestArchiveUnstorableText: what PostgreSQL's text cannot hold (NUL,
// invalid UTF-8) is imported as the store keeps it on any write, U+FFFD
// in its place, rather than failing the import.
func TestArchiveUnstorableText(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	se := &Session{Title: "binary\x00"}
	if err := src.Create(ctx, se); err != nil {
		t.Fatal(err)
	}
	if _, err := src.Append(ctx, se.ID, Message{Message: llm.Message{Role: llm.RoleTool, ToolName: "read_file", Content: "PK\x03\x04\x00\xff"}}); err != nil {
		t.Fatal(err)
	}
	if err := src.RecordToolRun(ctx, ToolRun{SessionID: se.ID, CallID: "c", Name: "read_file", Output: "\xff\x00", OK: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddCheckpoint(ctx, Checkpoint{SessionID: se.ID, Kind: CheckpointAfter, Tree: "tree\x00", Workspace: "/w\xff"}); err != nil {
		t.Fatal(err)
	}
	a, err := src.Export(ctx, se.ID)
	if err != nil {
		t.Fatal(err)
	}
	pg := archivePostgres(t)
	if err := pg.Import(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, _ := pg.Get(ctx, se.ID)
	msgs, _ := pg.Messages(ctx, se.ID)
	runs, _ := pg.ToolRuns(ctx, se.ID)
	if got == nil || got.Title != "binary\uFFFD" || len(msgs) != 1 || msgs[0].Content != "PK\x03\x04\uFFFD\uFFFD" || len(runs) != 1 || runs[0].Output != "\uFFFD\uFFFD" {
		t.Errorf("%+v %+v %+v", got, msgs, runs)
	}
	if cps, err := pg.Checkpoints(ctx, se.ID); err != nil || len(cps) != 1 || cps[0].Tree != "tree\uFFFD" || cps[0].Workspace != "/w\uFFFD" {
		t.Errorf("checkpoints %+v %v", cps, err)
	}
}

// TestArchiveCheckpointIDs: a checkpoint's ID is its store's, so Import
// gives the archive's new ones, above those the store gave before, in the
// archive's order; the rest is as exported.
func TestArchiveCheckpointIDs(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src)
	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		// The store has checkpoints of its own, more than the archive's.
		if err := s.Create(ctx, &Session{ID: "mine"}); err != nil {
			t.Fatal(err)
		}
		var last Checkpoint
		for i := range 10 {
			if last, err = s.AddCheckpoint(ctx, Checkpoint{SessionID: "mine", Kind: CheckpointAfter, Seq: i, Tree: fmt.Sprint(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Import(ctx, a); err != nil {
			t.Fatal(err)
		}
		b, err := s.Export(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		after := last.ID
		for _, pair := range [][2]*Archive{{a, b}, {&a.Children[0], &b.Children[0]}, {&a.Children[0].Children[0], &b.Children[0].Children[0]}} {
			want, got := pair[0], pair[1]
			if err := sameCheckpoints(got.Checkpoints, want.Checkpoints, want.Session.ID, after); err != nil {
				t.Errorf("%s: %v", want.Session.ID, err)
			}
			after = got.Checkpoints[len(got.Checkpoints)-1].ID
			// But for the IDs, the same archive.
			for i := range got.Checkpoints {
				got.Checkpoints[i].ID = want.Checkpoints[i].ID
			}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("exported after the import:\n%+v\nwas:\n%+v", b, a)
		}
		if cps, err := s.Checkpoints(ctx, "mine"); err != nil || len(cps) != 10 || !reflect.DeepEqual(cps[9], last) {
			t.Errorf("the store's own checkpoints: %+v %v", cps, err)
		}
		// New checkpoints come after the imported ones.
		c, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: id, Kind: CheckpointAfter, Seq: 9, Tree: "next"})
		if err != nil || c.ID <= after {
			t.Errorf("after the import: %+v %v", c, err)
		}
	})
}

// TestArchiveOldFormat: an archive written before sessions had
// checkpoints, forks and an archived mark is imported: a session with
// none, not archived.
func TestArchiveOldFormat(t *testing.T) {
	const old = `{"Session":{"id":"s-old","title":"From before","model":"m","created_at":"2025-01-02T03:04:05.006Z","updated_at":"2025-01-02T03:05:00Z",
			"message_count":2,"input_tokens":0,"output_tokens":0},
		"Messages":[{"role":"user","content":"hi","seq":1,"created_at":"2025-01-02T03:04:05.006Z"},
			{"role":"assistant","content":"hello","seq":2,"tokens":3,"created_at":"2025-01-02T03:05:00Z"}],
		"Usage":null,"ToolRuns":[{"session_id":"s-old","call_id":"c","name":"n","args":{},"ok":true,"duration":1000000,"at":"2025-01-02T03:04:06Z"}],
		"Children":[{"Session":{"id":"s-kid","title":"helper","parent_id":"s-old","parent_call":"c","created_at":"2025-01-02T03:04:05.5Z","updated_at":"2025-01-02T03:04:05.5Z","message_count":0,"input_tokens":0,"output_tokens":0},
			"Messages":null,"Usage":null,"ToolRuns":null,"Children":null}]}`
	var a Archive
	if err := json.Unmarshal([]byte(old), &a); err != nil {
		t.Fatal(err)
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		ctx := context.Background()
		if err := s.Import(ctx, &a); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"s-old", "s-kid"} {
			got, err := s.Get(ctx, id)
			if err != nil || got.Archived || got.ForkOf != "" || got.ForkSeq != 0 {
				t.Errorf("%s: %+v %v", id, got, err)
			}
			if cps, err := s.Checkpoints(ctx, id); err != nil || len(cps) != 0 {
				t.Errorf("%s: checkpoints %+v %v", id, cps, err)
			}
		}
		if l, err := s.List(ctx, ListOptions{}); err != nil || len(l) != 1 || l[0].ID != "s-old" || l[0].MessageCount != 2 {
			t.Errorf("list %+v %v", l, err)
		}
		b, err := s.Export(ctx, "s-old")
		if err != nil || len(b.Messages) != 2 || len(b.ToolRuns) != 1 || len(b.Children) != 1 || b.Checkpoints != nil {
			t.Errorf("export %+v %v", b, err)
		}
	})
}

// TestArchiveWorkspaces: an import keeps each session's workspace path and
// makes the workspace known: untrusted, with the sessions' times, when it
// is new; a known one keeps its name and trust, its first use moves back
// and its last use on to the imported sessions'.
func TestArchiveWorkspaces(t *testing.T) {
	ctx := context.Background()
	src := archiveSQLite(t)
	id := richSession(t, src) // in /home/me/src; its sub-agents' sessions in the unknown workspace
	a, err := src.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	other := &Session{Title: "elsewhere", Workspace: "/home/me/other"}
	if err := src.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	b, err := src.Export(ctx, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	forEachArchiver(t, func(t *testing.T, s archiveStore) {
		// Known, trusted and named, used before and after the session.
		if _, err := s.AddWorkspace(ctx, Workspace{Path: "/home/me/other", Name: "Other", Trust: TrustTrusted}); err != nil {
			t.Fatal(err)
		}
		known, err := s.Workspace(ctx, "/home/me/other")
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []*Archive{a, b} {
			if err := s.Import(ctx, x); err != nil {
				t.Fatal(err)
			}
		}
		ws, err := s.Workspaces(ctx)
		if err != nil || len(ws) != 3 {
			t.Fatalf("%+v %v", ws, err)
		}
		byPath := map[string]Workspace{}
		for _, w := range ws {
			byPath[w.Path] = w
		}
		top, kid := a.Session, a.Children[0].Session
		if w := byPath["/home/me/src"]; w.Trust != TrustUntrusted || w.Name != "src" || w.Sessions != 1 || !w.CreatedAt.Equal(top.CreatedAt) || !w.LastUsed.Equal(top.UpdatedAt) {
			t.Errorf("new workspace %+v, session %+v", w, top)
		}
		if w := byPath[""]; w.Trust != TrustUntrusted || w.Name != "unknown" || w.Sessions != 0 || !w.CreatedAt.Equal(kid.CreatedAt) {
			t.Errorf("the sub-agents' workspace %+v", w)
		}
		if w := byPath["/home/me/other"]; w.Trust != TrustTrusted || w.Name != "Other" || w.Sessions != 1 || !w.CreatedAt.Equal(b.Session.CreatedAt) ||
			!w.LastUsed.Equal(known.LastUsed) {
			t.Errorf("a known workspace %+v (before the import %+v; the session %+v)", w, known, b.Session)
		}
		if se, err := s.Get(ctx, id); err != nil || se.Workspace != "/home/me/src" {
			t.Errorf("%+v %v", se, err)
		}
	})
}
