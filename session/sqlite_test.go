package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// What only the SQLite store does: its file (another program's, damaged,
// of a newer Hearth), migrations from an old schema, the structure check.
// The Store's behaviour is tested on both stores in store_test.go.

// open opens a new SQLite store in a temporary directory.
func open(t *testing.T) *SQLite {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
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
	for _, q := range []string{"DROP TABLE meta", "DROP TABLE workspaces", "DROP TABLE checkpoints", "DROP TABLE tool_runs", "DROP TABLE usage", "DROP TABLE messages", "DROP TABLE sessions", "PRAGMA user_version = 0"} {
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

// schemaFile writes a Hearth database of schema version (the first
// version migrations, as the Hearth of that version left it) at path, and
// runs setup on it.
func schemaFile(t *testing.T, path string, version int, setup ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=foreign_keys(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range append(append(migrations[:version:version], fmt.Sprintf("PRAGMA user_version = %d; PRAGMA application_id = %d", version, appID)), setup...) {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestMigrateFromSchema3: a database of schema 3 (before checkpoints,
// forks and archived sessions) keeps everything in it; its sessions are
// not archived nor forks, have no checkpoints, and can be given them,
// forked and truncated.
func TestMigrateFromSchema3(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	schemaFile(t, path, 3,
		"INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('old', 'Old one', '/w', 1000, 2000)",
		"INSERT INTO sessions (id, title, parent_id, parent_call, created_at, updated_at) VALUES ('kid', 'Sub-agent', 'old', 'call_9', 1500, 1500)",
		`INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, tokens, created_at) VALUES
			('old', 1, 'user', 'hello', '', '', '', 3, 1000),
			('old', 2, 'assistant', '', '[{"id":"call_0","name":"read_file","args":{"path":"a"}}]', '', '', 7, 1001),
			('old', 3, 'tool', 'A', '', 'call_0', 'read_file', 1, 1002),
			('old', 4, 'assistant', 'It says A.', '', '', '', 4, 1003)`,
		"INSERT INTO tool_runs (session_id, call_id, name, args, ok, output, duration_ms, at) VALUES ('old', 'call_0', 'read_file', '{\"path\":\"a\"}', 1, 'A', 5, 1002)",
		"INSERT INTO usage (session_id, model, input_tokens, output_tokens, at) VALUES ('old', 'm', 10, 2, 1001)",
	)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) || v != 8 {
		t.Fatalf("schema %d %v", v, err)
	}
	got, err := s.Get(ctx, "old")
	if err != nil || got.Title != "Old one" || got.Workspace != "/w" || got.Archived || got.ForkOf != "" || got.ForkSeq != 0 ||
		got.MessageCount != 4 || got.InputTokens != 10 || !got.CreatedAt.Equal(fromMillis(1000)) || !got.UpdatedAt.Equal(fromMillis(2000)) {
		t.Fatalf("%+v %v", got, err)
	}
	msgs, err := s.Messages(ctx, "old")
	if err != nil || len(msgs) != 4 || msgs[1].ToolCalls[0].ID != "call_0" || string(msgs[1].ToolCalls[0].Args) != `{"path":"a"}` || msgs[2].Content != "A" {
		t.Fatalf("%+v %v", msgs, err)
	}
	if l, err := s.List(ctx, ListOptions{}); err != nil || len(l) != 1 || l[0].ID != "old" {
		t.Errorf("list %+v %v", l, err)
	}
	if l, err := s.List(ctx, ListOptions{ParentID: "old"}); err != nil || len(l) != 1 || l[0].ID != "kid" || l[0].ParentCall != "call_9" {
		t.Errorf("children %+v %v", l, err)
	}
	if cs, err := s.Checkpoints(ctx, "old"); err != nil || cs == nil || len(cs) != 0 {
		t.Errorf("checkpoints %+v %v", cs, err)
	}
	c, err := s.AddCheckpoint(ctx, Checkpoint{SessionID: "old", Kind: CheckpointAfter, Turn: 1, Seq: 4, Tree: "t1"})
	if err != nil || c.ID != 1 {
		t.Fatalf("%+v %v", c, err)
	}
	fork := &Session{}
	if err := s.Fork(ctx, "old", 3, fork); err != nil || fork.ForkOf != "old" || fork.ForkSeq != 3 || fork.Title != "Old one" {
		t.Fatalf("fork %+v %v", fork, err)
	}
	if runs, err := s.ToolRuns(ctx, fork.ID); err != nil || len(runs) != 1 || runs[0].Output != "A" {
		t.Errorf("fork's tool runs %+v %v", runs, err)
	}
	if err := s.Truncate(ctx, "old", 2); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Append(ctx, "old", msg(llm.RoleUser, "again")); err != nil || m[0].Seq != 3 {
		t.Errorf("append after truncate %+v %v", m, err)
	}
	if err := s.SetArchived(ctx, "old", true); err != nil {
		t.Fatal(err)
	}
	if l, err := s.List(ctx, ListOptions{Archived: true}); err != nil || len(l) != 1 || l[0].ID != "old" || !l[0].Archived {
		t.Errorf("archived %+v %v", l, err)
	}
}

// TestMigrateConcurrently: processes that open an old file at the same
// time all open it; one of them migrates it (a migration that adds a
// column runs once).
func TestMigrateConcurrently(t *testing.T) {
	ctx := context.Background()
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "hearth.db")
		schemaFile(t, path, 2, "INSERT INTO sessions (id, title, created_at, updated_at) VALUES ('old', 'kept', 1, 1)")
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				s, err := Open(ctx, path)
				if err == nil {
					_, err = s.Get(ctx, "old")
					s.Close()
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("round %d: %v", round, err)
			}
		}
	}
}

// TestMigrateFromSchema5: a database of schema 5 (before workspaces and
// costs), with sessions in two folders and one without, gets a workspace
// for each folder and the unknown one for the session without: untrusted,
// first used when its first session was created, last used when its last
// one was updated. Nothing else changes; the usage it had is unpriced.
func TestMigrateFromSchema5(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	schemaFile(t, path, 5,
		`INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES
			('a1', 'first in a', '/home/me/a', 1000, 5000),
			('a2', 'second in a', '/home/me/a', 3000, 9000),
			('b1', 'in b', '/home/me/b', 2000, 2500),
			('x', 'without', '', 4000, 4100)`,
		"INSERT INTO sessions (id, title, workspace, parent_id, parent_call, created_at, updated_at) VALUES ('kid', 'sub-agent', '/home/me/a', 'a1', 'c', 900, 9500)",
		"UPDATE sessions SET archived = 1 WHERE id = 'a2'",
		"INSERT INTO messages (session_id, seq, role, content, created_at) VALUES ('a1', 1, 'user', 'hello', 1000), ('x', 1, 'user', 'hi', 4000)",
		"INSERT INTO usage (session_id, model, input_tokens, output_tokens, at) VALUES ('a1', 'm', 10, 2, 1001), ('x', 'm', 30, 4, 4001)",
	)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) || v != 8 {
		t.Fatalf("schema %d %v", v, err)
	}
	ws, err := s.Workspaces(ctx)
	want := []Workspace{
		{Path: "/home/me/a", Name: "a", Trust: TrustUntrusted, CreatedAt: fromMillis(900), LastUsed: fromMillis(9500), Sessions: 2},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, CreatedAt: fromMillis(4000), LastUsed: fromMillis(4100), Sessions: 1},
		{Path: "/home/me/b", Name: "b", Trust: TrustUntrusted, CreatedAt: fromMillis(2000), LastUsed: fromMillis(2500), Sessions: 1},
	}
	if err != nil || !reflect.DeepEqual(ws, want) {
		t.Fatalf("workspaces:\n%+v %v\nwant\n%+v", ws, err, want)
	}
	for id, want := range map[string]string{"a1": "/home/me/a", "a2": "/home/me/a", "kid": "/home/me/a", "b1": "/home/me/b", "x": ""} {
		se, err := s.Get(ctx, id)
		if err != nil || se.Workspace != want {
			t.Errorf("%s: %+v %v", id, se, err)
		}
	}
	if se, err := s.Get(ctx, "a1"); err != nil || se.Title != "first in a" || se.MessageCount != 1 || se.InputTokens != 10 || se.Cost != nil || se.Unpriced != 1 ||
		!se.CreatedAt.Equal(fromMillis(1000)) || !se.UpdatedAt.Equal(fromMillis(5000)) {
		t.Errorf("a1: %+v %v", se, err)
	}
	tot, err := s.UsageTotals(ctx, UsageFilter{}, ByWorkspace)
	if err != nil || len(tot) != 2 || tot[0] != (UsageTotal{Key: "", Calls: 1, InputTokens: 30, OutputTokens: 4, Unpriced: 1}) ||
		tot[1] != (UsageTotal{Key: "/home/me/a", Calls: 1, InputTokens: 10, OutputTokens: 2, Unpriced: 1}) {
		t.Errorf("usage by workspace %+v %v", tot, err)
	}
	if l, err := s.List(ctx, ListOptions{Workspace: strp("")}); err != nil || len(l) != 1 || l[0].ID != "x" {
		t.Errorf("the unknown workspace's sessions %+v %v", l, err)
	}
	// A store whose sessions all have a workspace has no unknown one.
	path = filepath.Join(t.TempDir(), "hearth.db")
	schemaFile(t, path, 5, "INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES ('a', '/a', 1, 2)")
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if ws, err := s2.Workspaces(ctx); err != nil || len(ws) != 1 || ws[0].Path != "/a" {
		t.Errorf("%+v %v", ws, err)
	}
}

// TestMigrateFromSchema6: a database of schema 6 (before TrustChosen)
// keeps its workspaces; those trusted or read-only are marked chosen
// (only a user could have set that), the untrusted ones are not (a UI
// asks). Nothing else in them changes.
func TestMigrateFromSchema6(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	schemaFile(t, path, 6,
		`INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('r1', 'in ro', '/home/me/ro', 1000, 2000)`,
		`INSERT INTO workspaces (path, name, trust, created_at, last_used) VALUES
			('/home/me/ro', '', 'read-only', 1000, 2000),
			('/home/me/trusted', 'Mine', 'trusted', 1100, 2100),
			('/home/me/headless', '', 'untrusted', 1200, 2200),
			('', '', 'untrusted', 1300, 2300)`,
	)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) || v != 8 {
		t.Fatalf("schema %d %v", v, err)
	}
	for _, want := range []Workspace{
		{Path: "/home/me/ro", Name: "ro", Trust: TrustReadOnly, TrustChosen: true, CreatedAt: fromMillis(1000), LastUsed: fromMillis(2000), Sessions: 1},
		{Path: "/home/me/trusted", Name: "Mine", Trust: TrustTrusted, TrustChosen: true, CreatedAt: fromMillis(1100), LastUsed: fromMillis(2100)},
		{Path: "/home/me/headless", Name: "headless", Trust: TrustUntrusted, TrustChosen: false, CreatedAt: fromMillis(1200), LastUsed: fromMillis(2200)},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, TrustChosen: false, CreatedAt: fromMillis(1300), LastUsed: fromMillis(2300)},
	} {
		if got, err := s.Workspace(ctx, want.Path); err != nil || *got != want {
			t.Errorf("%q:\n%+v %v\nwant\n%+v", want.Path, got, err, want)
		}
	}
	// Past the migration, a trust given marks it chosen.
	if got, err := s.UpdateWorkspace(ctx, Workspace{Path: "/home/me/headless", Trust: TrustTrusted}); err != nil || !got.TrustChosen {
		t.Errorf("trusted after the migration: %+v %v", got, err)
	}
}

// TestMigrateFromSchema7: a database of schema 7 (before ConfigHash)
// keeps its workspaces as they were, trust and TrustChosen included;
// none has a config hash. Past the migration, a trust given stores one.
func TestMigrateFromSchema7(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "hearth.db")
	schemaFile(t, path, 7,
		`INSERT INTO sessions (id, title, workspace, created_at, updated_at) VALUES ('r1', 'in ro', '/home/me/ro', 1000, 2000)`,
		`INSERT INTO workspaces (path, name, trust, trust_chosen, created_at, last_used) VALUES
			('/home/me/ro', '', 'read-only', 1, 1000, 2000),
			('/home/me/trusted', 'Mine', 'trusted', 1, 1100, 2100),
			('/home/me/headless', '', 'untrusted', 0, 1200, 2200),
			('/home/me/asked', '', 'untrusted', 1, 1250, 2250),
			('', '', 'untrusted', 0, 1300, 2300)`,
	)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != len(migrations) || v != 8 {
		t.Fatalf("schema %d %v", v, err)
	}
	for _, want := range []Workspace{
		{Path: "/home/me/ro", Name: "ro", Trust: TrustReadOnly, TrustChosen: true, CreatedAt: fromMillis(1000), LastUsed: fromMillis(2000), Sessions: 1},
		{Path: "/home/me/trusted", Name: "Mine", Trust: TrustTrusted, TrustChosen: true, CreatedAt: fromMillis(1100), LastUsed: fromMillis(2100)},
		{Path: "/home/me/headless", Name: "headless", Trust: TrustUntrusted, CreatedAt: fromMillis(1200), LastUsed: fromMillis(2200)},
		{Path: "/home/me/asked", Name: "asked", Trust: TrustUntrusted, TrustChosen: true, CreatedAt: fromMillis(1250), LastUsed: fromMillis(2250)},
		{Path: "", Name: "unknown", Trust: TrustUntrusted, CreatedAt: fromMillis(1300), LastUsed: fromMillis(2300)},
	} {
		if got, err := s.Workspace(ctx, want.Path); err != nil || *got != want {
			t.Errorf("%q:\n%+v %v\nwant\n%+v", want.Path, got, err, want)
		}
	}
	if ws, err := s.Workspaces(ctx); err != nil || len(ws) != 5 {
		t.Errorf("%+v %v", ws, err)
	}
	// Past the migration, a trust given stores the hash; a touch keeps it.
	const hash = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	if got, err := s.UpdateWorkspace(ctx, Workspace{Path: "/home/me/trusted", Trust: TrustTrusted, ConfigHash: hash}); err != nil || got.ConfigHash != hash || got.Name != "Mine" {
		t.Errorf("trusted after the migration: %+v %v", got, err)
	}
	if got, err := s.TouchWorkspace(ctx, "/home/me/trusted"); err != nil || got.ConfigHash != hash {
		t.Errorf("touched: %+v %v", got, err)
	}
}
