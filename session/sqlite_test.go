package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
