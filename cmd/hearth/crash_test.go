package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// committed is the debug line the conversation (store-agnostic) logs once
// a message's transaction has committed, before the next step: whatever
// the store, the message must survive a kill from then on.
var committed = regexp.MustCompile(`msg="message committed" session=(\S+) seq=(\d+)`)

// firstCommit finds the time of the first commit a run logged.
var firstCommit = regexp.MustCompile(`time=(\S+) level=DEBUG msg="message committed"`)

// TestCrashSafety kills hearth with SIGKILL at random points of many runs
// and checks after each that the store holds every message the run had
// committed (each commit is logged with HEARTH_LOG=debug before the kill
// can be sent), with unique seqs and a history that can be continued:
//
//   - sqlite: 200 runs; the database also opens and passes PRAGMA
//     integrity_check;
//   - postgres: 100 runs on one PostgreSQL database (HEARTH_DATABASE_URL,
//     pgtest); the store also opens (its schema lock taken and released),
//     and at the end no session is held: the killed runs' locks died with
//     them.
func TestCrashSafety(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		e := newE2E(t)
		path := filepath.Join(e.home, "hearth.db")
		crashLoop(t, e, crashRuns{runs: 200, sessions: 20, window: 120 * time.Millisecond,
			check: func(t *testing.T, want map[string]map[int]bool) { checkDatabase(t, path, want) }})
	})
	t.Run("postgres", func(t *testing.T) {
		e := newE2E(t) // skips under -short before PostgreSQL is started
		url := pgtest.URL(t)
		ids := crashLoop(t, e, crashRuns{
			env:  []string{"HEARTH_DATABASE_URL=" + url},
			runs: 100,
			// A killed run's lock may stay taken for the store's grace
			// period (a process is taken for dead some seconds after its
			// last sign of life): a session comes round again after
			// longer than that, so that its next run is not refused.
			sessions: 40,
			// A run takes longer to reach its first commit here (it
			// connects to the database and checks its schema first): the
			// window is measured.
			check: func(t *testing.T, want map[string]map[int]bool) { checkPostgres(t, url, want) },
		})
		if _, err := os.Stat(filepath.Join(e.home, "hearth.db")); err == nil {
			t.Error("the runs made a SQLite database: they did not use PostgreSQL")
		}
		waitUnlocked(t, url, ids)
	})
}

// crashRuns says how crashLoop runs hearth.
type crashRuns struct {
	// env is added to each run's environment.
	env []string
	// runs is how many runs; sessions how many sessions they take in
	// turn (continued after the crashes).
	runs, sessions int
	// window bounds the random delay before each kill; 0: measured, as
	// the time of the fastest of three runs left to finish (after one to
	// warm up; their messages are checked too), and then every other
	// kill comes after the time such a run first commits (where a
	// connection and a schema check take most of a run, kills spread
	// evenly would mostly land before any commit).
	window time.Duration
	// check checks the store after each run, given every message
	// committed so far (session → seqs).
	check func(t *testing.T, want map[string]map[int]bool)
}

// crashLoop runs hearth as c says, SIGKILLs each run after a random delay
// under c.window, and checks the store after each. It returns the
// sessions the runs used.
func crashLoop(t *testing.T, e *e2e, c crashRuns) (sessions []string) {
	os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("hello\n"), 0o644)
	rng := rand.New(rand.NewPCG(7, 11))
	// Each run: reasoning, a tool call, its result, then an answer, with
	// small pauses so that kills land everywhere.
	e.srv.Always("/api/chat", llmtest.OllamaStream("m",
		llmtest.Thinking("let me read it"), llmtest.Pause(3*time.Millisecond),
		llmtest.Text("Reading."), llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(1600, 10)))
	want := map[string]map[int]bool{} // session → committed seqs
	runs, window := c.runs, c.window
	if testing.Short() {
		runs = 20
	}
	// run runs hearth, killed after delay (never when delay < 0), and
	// notes what it committed.
	var started time.Time
	run := func(id, prompt string, delay time.Duration) (*os.ProcessState, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		started = time.Now()
		cmd := e.cmd(ctx, "", "run", "--context", id, "--max-turns", "3", prompt)
		cmd.Env = append(cmd.Env, c.env...)
		cmd.Env = append(cmd.Env, "HEARTH_LOG=debug")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if delay >= 0 {
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		cmd.Wait()
		for _, m := range committed.FindAllStringSubmatch(errb.String(), -1) {
			n, _ := strconv.Atoi(m[2])
			if want[m[1]] == nil {
				want[m[1]] = map[int]bool{}
			}
			want[m[1]][n] = true
		}
		return cmd.ProcessState, errb.String()
	}
	// busy is when a run commits its first message; every other kill
	// lands after it, where the commits are.
	var busy time.Duration
	if window == 0 {
		var took, first []time.Duration
		for i := range 4 {
			st, stderr := run("calibration", fmt.Sprintf("calibration %d", i), -1)
			d := time.Since(started)
			m := firstCommit.FindStringSubmatch(stderr)
			if st.ExitCode() != 1 || m == nil { // 1: the turn limit
				t.Fatalf("an uninterrupted run: exit %d, commits logged: %v\nstderr:\n%s", st.ExitCode(), m != nil, stderr)
			}
			at, err := time.Parse(time.RFC3339Nano, m[1])
			if err != nil {
				t.Fatal(err)
			}
			if i > 0 { // the first is a cold start: the first connections, caches
				took, first = append(took, d), append(first, at.Sub(started))
			}
		}
		// The fastest: a window longer than a run would let many runs
		// finish before their kill.
		window = slices.Min(took)
		busy = min(slices.Min(first), window*3/4)
		c.check(t, want)
		sessions = append(sessions, "calibration")
	}
	t.Logf("kills within %v of the start (every other one after %v)", window.Round(time.Millisecond), busy.Round(time.Millisecond))
	began := time.Now()
	killedMid := 0
	for i := range runs {
		id := fmt.Sprintf("s%d", i%c.sessions) // sessions are continued after crashes
		if i < c.sessions {
			sessions = append(sessions, id)
		}
		lo := time.Duration(0)
		if i%2 == 1 {
			lo = busy
		}
		delay := lo + time.Duration(rng.IntN(max(1, int((window-lo)/time.Millisecond))))*time.Millisecond
		st, stderr := run(id, fmt.Sprintf("step %d", i), delay)
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killedMid++
		}
		c.check(t, want)
		if t.Failed() {
			t.Fatalf("after run %d\nstderr:\n%s", i, stderr)
		}
	}
	total := 0
	for _, seqs := range want {
		total += len(seqs)
	}
	// The time is for whoever reads -v, not an assertion.
	t.Logf("%d runs in %v, %d killed before they finished, %d committed messages checked",
		runs, time.Since(began).Round(time.Millisecond), killedMid, total)
	if killedMid < runs/4 || total == 0 {
		t.Errorf("the kills did not land mid-run often enough to test anything (%d of %d)", killedMid, runs)
	}
	return sessions
}

// checkDatabase checks the SQLite database at path: it passes PRAGMA
// integrity_check, opens, and holds what checkSessions wants.
func checkDatabase(t *testing.T, path string, want map[string]map[int]bool) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return // killed before the database was made
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	st, err := session.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("the store does not open: %v", err)
	}
	defer st.Close()
	checkSessions(t, st, want)
}

// checkPostgres checks the PostgreSQL database at url: the store opens
// (so the database answers, and its schema lock is free) and holds what
// checkSessions wants.
func checkPostgres(t *testing.T, url string, want map[string]map[int]bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang detector
	defer cancel()
	st, err := session.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatalf("the store does not open: %v", err)
	}
	defer st.Close()
	checkSessions(t, st, want)
}

// waitUnlocked waits until no live process holds the sessions ids: the
// locks of the killed runs died with them (once the database took them
// for dead, which may take the store's grace period).
func waitUnlocked(t *testing.T, url string, ids []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang detector
	defer cancel()
	st, err := session.OpenPostgres(ctx, url)
	if err != nil {
		t.Fatalf("the store does not open: %v", err)
	}
	defer st.Close()
	began := time.Now()
	for _, id := range ids {
		for {
			holder, err := st.Holder(ctx, id)
			if err != nil {
				t.Fatalf("who holds session %s: %v", id, err)
			}
			if holder == "" {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatalf("session %s is still held by %s, which was killed", id, holder)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	// For whoever reads -v; not an assertion.
	t.Logf("no session is held %v after the last run", time.Since(began).Round(time.Millisecond))
}

// checkSessions checks that the store holds every committed message of
// want, each session's seqs once each, and a history that can be
// continued (every tool call has its result, every result its call).
func checkSessions(t *testing.T, st session.Store, want map[string]map[int]bool) {
	t.Helper()
	for id, seqs := range want {
		msgs, err := st.Messages(context.Background(), id)
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		have := map[int]bool{}
		for _, m := range msgs {
			if have[m.Seq] {
				t.Errorf("session %s holds seq %d twice", id, m.Seq)
			}
			have[m.Seq] = true
		}
		for seq := range seqs {
			if !have[seq] {
				t.Errorf("session %s lost committed message %d", id, seq)
			}
		}
		// And what is there makes a valid history to continue from.
		h := session.History(msgs)
		calls := map[string]bool{}
		for _, m := range h {
			for _, tc := range m.ToolCalls {
				calls[tc.ID] = true
			}
			if m.Role == "tool" {
				if !calls[m.ToolCallID] {
					t.Errorf("session %s: a tool result without its call in the history: %q", id, m.ToolCallID)
				}
				delete(calls, m.ToolCallID)
			}
		}
		if len(calls) > 0 {
			t.Errorf("session %s: calls without results in the history: %v", id, calls)
		}
	}
}
