package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// migrationSource makes a SQLite store at path with n top-level sessions,
// the first with a sub-agent's session, and returns their ids.
func migrationSource(t *testing.T, path string, n int) []string {
	t.Helper()
	ctx := context.Background()
	st, err := session.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for i := range n {
		ids = append(ids, addMigrationSession(t, st, i))
	}
	child := &session.Session{Title: "investigate", ParentID: ids[0], ParentCall: "call_7"}
	if err := st.Create(ctx, child); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, child.ID, session.Message{Message: llm.Message{Role: llm.RoleUser, Content: "look"}}); err != nil {
		t.Fatal(err)
	}
	return ids
}

// addMigrationSession adds a session of three messages (a tool call and its
// result among them), usage and a tool run, and returns its id.
func addMigrationSession(t *testing.T, st session.Store, i int) string {
	t.Helper()
	ctx := context.Background()
	se := &session.Session{Title: "session " + string(rune('a'+i)), Model: "qwen3:4b"}
	if err := st.Create(ctx, se); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"command":"make && echo <done>","n":1.0}`)
	_, err := st.Append(ctx, se.ID,
		session.Message{Message: llm.Message{Role: llm.RoleUser, Content: "build it", Images: [][]byte{{1, 2, 3}}}},
		session.Message{Message: llm.Message{Role: llm.RoleAssistant, Thinking: "make", ToolCalls: []llm.ToolCall{{ID: "c1", Name: "run_shell_command", Args: args}}}},
		session.Message{Message: llm.Message{Role: llm.RoleTool, ToolCallID: "c1", ToolName: "run_shell_command", Content: "done"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.RecordUsage(ctx, session.Usage{SessionID: se.ID, Model: "qwen3:4b", InputTokens: 100 + i, OutputTokens: 10}); err != nil {
		t.Fatal(err)
	}
	if err := st.RecordToolRun(ctx, session.ToolRun{SessionID: se.ID, CallID: "c1", Name: "run_shell_command", Args: args, OK: true, Output: "done", Duration: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	return se.ID
}

// sameArchives checks that dst holds each session of ids (with its
// children) exactly as src does.
func sameArchives(t *testing.T, src, dst session.Archiver, ids []string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range ids {
		a, err := src.Export(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		b, err := dst.Export(ctx, id)
		if err != nil {
			t.Fatalf("%s not copied: %v", id, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("session %s differs:\n%+v\n%+v", id, a, b)
		}
	}
}

// migrateJSON runs hearth migrate with --json and returns its summary.
func migrateJSON(t *testing.T, env map[string]string, args ...string) (migrateSummary, string) {
	t.Helper()
	code, out, errOut := runHearth(t, env, append([]string{"migrate", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, errOut)
	}
	var sum migrateSummary
	if err := json.Unmarshal([]byte(out), &sum); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return sum, errOut
}

func TestMigrateSQLiteToPostgres(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	ids := migrationSource(t, filepath.Join(home, "hearth.db"), 3)
	url := pgtest.URL(t)
	env := map[string]string{"HEARTH_HOME": home, "HEARTH_DATABASE_URL": url}

	// --dry-run counts, and writes no session.
	sum, errOut := migrateJSON(t, env, "--from", "sqlite", "--to", "postgres", "--dry-run")
	want := migrateSummary{From: filepath.Join(home, "hearth.db"), To: session.RedactURL(url), DryRun: true, Sessions: 3, Moved: 3, SubSessions: 1, Messages: 10,
		Workspaces: 1, WorkspacesAdded: 1}
	if sum != want || !strings.Contains(errOut, "would move 3 sessions (10 messages)") {
		t.Errorf("dry run: %+v\n%s", sum, errOut)
	}
	pg, err := session.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if got, err := pg.SessionIDs(ctx); err != nil || len(got) != 0 {
		t.Fatalf("the dry run wrote %q %v", got, err)
	}

	code, out, errOut := runHearth(t, env, "migrate", "--from", "sqlite", "--to", "postgres")
	if code != 0 || out != "" || !strings.Contains(errOut, "moved 3 sessions (10 messages), skipped 0 already in "+session.RedactURL(url)) {
		t.Fatalf("exit %d %q\n%s", code, out, errOut)
	}
	src, err := session.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	sameArchives(t, src, pg, ids)
	srcIDs, err := src.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := pg.SessionIDs(ctx); err != nil || !reflect.DeepEqual(got, srcIDs) {
		t.Errorf("top-level sessions in PostgreSQL %q %v, want %q", got, err, srcIDs)
	}
	// The source keeps everything.
	if got, err := src.SessionIDs(ctx); err != nil || len(got) != 3 {
		t.Errorf("source left with %q %v", got, err)
	}
	// Hearth now reads them from PostgreSQL.
	code, out, _ = runHearth(t, env, "sessions", "list", "--json")
	var list []session.Session
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || list[0].MessageCount != 3 {
		t.Errorf("sessions list: %d %s", code, out)
	}

	// Run again: everything is there already.
	sum, errOut = migrateJSON(t, env, "--from", "sqlite", "--to", "postgres")
	if sum.Moved != 0 || sum.Skipped != 3 || sum.Messages != 0 || !strings.Contains(errOut, "moved 0 sessions (0 messages), skipped 3 already in") {
		t.Errorf("second run: %+v\n%s", sum, errOut)
	}
	// A session added since is copied by the next run, alone.
	ids = append(ids, addMigrationSession(t, src, 3))
	sum, _ = migrateJSON(t, env, "--from", "sqlite", "--to", url)
	if sum.Moved != 1 || sum.Skipped != 3 || sum.Messages != 3 {
		t.Errorf("third run: %+v", sum)
	}
	sameArchives(t, src, pg, ids)

	// And back, into a new file.
	back := filepath.Join(t.TempDir(), "back", "hearth.db")
	sum, _ = migrateJSON(t, env, "--from", "postgres", "--to", back)
	if sum.Moved != 4 || sum.SubSessions != 1 || sum.Skipped != 0 {
		t.Errorf("back: %+v", sum)
	}
	bst, err := session.Open(ctx, back)
	if err != nil {
		t.Fatal(err)
	}
	defer bst.Close()
	sameArchives(t, src, bst, ids)
}

// TestMigrateBetweenFiles needs no PostgreSQL: SQLite to SQLite, with the
// progress a terminal shows.
func TestMigrateBetweenFiles(t *testing.T) {
	home := t.TempDir()
	ids := migrationSource(t, filepath.Join(home, "hearth.db"), 2)
	dst := filepath.Join(t.TempDir(), "copy.db")
	env := map[string]string{"HEARTH_HOME": home}

	// A --dry-run does not create the file it would write.
	sum, _ := migrateJSON(t, env, "--from", "sqlite", "--to", dst, "--dry-run")
	if sum.Moved != 2 || sum.Messages != 7 {
		t.Errorf("dry run: %+v", sum)
	}
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dry run created %s: %v", dst, err)
	}

	var out, errb bytes.Buffer
	a := &app{io: stdio{in: strings.NewReader(""), out: &out, err: &errb}, getenv: func(k string) string { return env[k] },
		isTTY: func(io.Writer) bool { return true }}
	root := a.rootCommand()
	root.SetArgs([]string{"migrate", "--from", "sqlite", "--to", dst})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := errb.String(); !strings.HasPrefix(got, "\r\033[Kmigrating 0/2 sessions…") || !strings.HasSuffix(got, "\r\033[Kmoved 2 sessions (7 messages), skipped 0 already in "+dst+"\n"+
		"added 1 workspace (names, trust levels), kept 0 that "+dst+" had already (with its name and trust)\n") {
		t.Errorf("stderr on a terminal: %q", got)
	}
	ctx := context.Background()
	src, err := session.Open(ctx, filepath.Join(home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cp, err := session.Open(ctx, dst)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	sameArchives(t, src, cp, ids)
}

func TestMigrateUsageErrors(t *testing.T) {
	home := t.TempDir()
	migrationSource(t, filepath.Join(home, "hearth.db"), 1)
	env := map[string]string{"HEARTH_HOME": home}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--from is needed"},
		{[]string{"--from", "sqlite"}, "--to is needed"},
		{[]string{"--from", "mysql", "--to", "postgres://h/db"}, "--from mysql: not a store Hearth knows: use sqlite, postgres"},
		{[]string{"--from", "sqlite", "--to", "mysql://u:hunter2@h/db"}, "--to mysql://u:xxxxx@h/db: not a store Hearth knows"},
		{[]string{"--from", "sqlite", "--to", "postgres"}, "no PostgreSQL database is configured: set HEARTH_DATABASE_URL"},
		{[]string{"--from", "sqlite", "--to", "sqlite"}, "the same store (" + filepath.Join(home, "hearth.db") + ")"},
		{[]string{"--from", filepath.Join(home, ".", "hearth.db"), "--to", "sqlite"}, "the same store"},
		{[]string{"--from", "postgres://me@db.lan/hearth", "--to", "postgresql://me:pw@db.lan:5432/hearth"}, "the same store"},
		{[]string{"--from", "sqlite", "--to", "postgres://h/db", "extra"}, "takes no arguments"},
		{[]string{"--from", "sqlite", "--to", "postgres://h/db", "--bogus"}, "unknown flag"},
	} {
		code, out, errOut := runHearth(t, env, append([]string{"migrate"}, tc.args...)...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "hunter2") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
	}
}

func TestMigrateMissingSource(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home}
	dst := filepath.Join(t.TempDir(), "copy.db")
	missing := filepath.Join(t.TempDir(), "old", "hearth.db")
	for _, tc := range []struct {
		from, want string
	}{
		{"sqlite", "no SQLite store at " + filepath.Join(home, "hearth.db")},
		{missing, "no SQLite store at " + missing},
	} {
		code, _, errOut := runHearth(t, env, "migrate", "--from", tc.from, "--to", dst)
		if code != exitFailed || !strings.Contains(errOut, tc.want) {
			t.Errorf("--from %s: exit %d, %q", tc.from, code, errOut)
		}
	}
	for _, p := range []string{filepath.Join(home, "hearth.db"), missing, filepath.Dir(missing), dst} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was created: %v", p, err)
		}
	}
}

// TestSessionsStoreSettingErrors: a HEARTH_DATABASE_URL that names no store
// Hearth can use is the user's to fix (exit 2), with a message that says
// how and hides the password.
func TestSessionsStoreSettingErrors(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"garbage", "relative path"},
		{"mysql://u:hunter2@h/x", "not one Hearth knows"},
	} {
		env := map[string]string{"HEARTH_HOME": t.TempDir(), "HEARTH_DATABASE_URL": tc.url}
		code, _, errOut := runHearth(t, env, "sessions", "list")
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "hunter2") {
			t.Errorf("%s: exit %d, %q", tc.url, code, errOut)
		}
	}
}

// TestDoctorChecksTheStore: doctor says where sessions are kept, reaches a
// PostgreSQL store, and names the fix for one it cannot reach.
func TestDoctorChecksTheStore(t *testing.T) {
	srv := fakeOllama(t)
	doctor := func(dbURL string) (int, string) {
		env := map[string]string{"HEARTH_HOME": t.TempDir(), "OLLAMA_HOST": srv.URL}
		if dbURL != "" {
			env["HEARTH_DATABASE_URL"] = dbURL
		}
		code, out, _ := runHearth(t, env, "doctor", "-m", "qwen3:4b", "--no-chat", "--json")
		return code, out
	}
	if _, out := doctor(""); !strings.Contains(out, `"name": "sessions"`) || !strings.Contains(out, "kept in SQLite") {
		t.Errorf("default store: %s", out)
	}
	if _, out := doctor("postgres://hearth:hunter2@127.0.0.1:1/hearth?connect_timeout=2"); !strings.Contains(out, "cannot connect to the database") ||
		!strings.Contains(out, "check HEARTH_DATABASE_URL") || strings.Contains(out, "hunter2") {
		t.Errorf("unreachable store: %s", out)
	}
	if _, out := doctor(pgtest.URL(t)); !strings.Contains(out, "kept in PostgreSQL") || !strings.Contains(out, "reachable, schema up to date") {
		t.Errorf("PostgreSQL store: %s", out)
	}
}
