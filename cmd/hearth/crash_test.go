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
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

var committed = regexp.MustCompile(`msg="message committed" session=(\S+) seq=(\d+)`)

// TestCrashSafety kills hearth with SIGKILL at random points of 200 runs
// and checks after each that the database opens, passes PRAGMA
// integrity_check, and holds every message the run had committed (each
// commit is logged with HEARTH_LOG=debug before the kill can be sent).
func TestCrashSafety(t *testing.T) {
	e := newE2E(t)
	os.WriteFile(filepath.Join(e.ws, "a.txt"), []byte("hello\n"), 0o644)
	rng := rand.New(rand.NewPCG(7, 11))
	// Each run: reasoning, a tool call, its result, then an answer, with
	// small pauses so that kills land everywhere.
	e.srv.Always("/api/chat", llmtest.OllamaStream("m",
		llmtest.Thinking("let me read it"), llmtest.Pause(3*time.Millisecond),
		llmtest.Text("Reading."), llmtest.Call("read_file", `{"file_path":"a.txt"}`), llmtest.Usage(1600, 10)))
	want := map[string]map[int]bool{} // session → committed seqs
	runs := 200
	if testing.Short() {
		runs = 20
	}
	killedMid := 0
	for i := range runs {
		id := fmt.Sprintf("s%d", i%20) // sessions are continued after crashes
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := e.cmd(ctx, "", "run", "--context", id, "--max-turns", "3", fmt.Sprintf("step %d", i))
		cmd.Env = append(cmd.Env, "HEARTH_LOG=debug")
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(120)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		cancel()
		if st, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			killedMid++
		}
		for _, m := range committed.FindAllStringSubmatch(errb.String(), -1) {
			n, _ := strconv.Atoi(m[2])
			if want[m[1]] == nil {
				want[m[1]] = map[int]bool{}
			}
			want[m[1]][n] = true
		}
		checkDatabase(t, filepath.Join(e.home, "hearth.db"), want)
		if t.Failed() {
			t.Fatalf("after run %d\nstderr:\n%s", i, errb.String())
		}
	}
	total := 0
	for _, seqs := range want {
		total += len(seqs)
	}
	t.Logf("%d runs, %d killed before they finished, %d committed messages checked", runs, killedMid, total)
	if killedMid < runs/4 || total == 0 {
		t.Errorf("the kills did not land mid-run often enough to test anything (%d of %d)", killedMid, runs)
	}
}

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
	for id, seqs := range want {
		msgs, err := st.Messages(context.Background(), id)
		if err != nil {
			t.Fatalf("session %s: %v", id, err)
		}
		have := map[int]bool{}
		for _, m := range msgs {
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
				delete(calls, m.ToolCallID)
			}
		}
		if len(calls) > 0 {
			t.Errorf("session %s: calls without results in the history: %v", id, calls)
		}
	}
}
