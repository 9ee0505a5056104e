package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth/session"
)

// R15: a restore interrupted by its context (Ctrl-C, a closed HTTP
// connection) stops half-way, is recorded as done with the rest
// "failed", its journal is removed, and the turn counts as undone: the
// next undo goes to the turn before, and the rest is never taken back.
func TestCancelledUndoCountsAsDone(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{"a.txt": "a0", "b.txt": "b0", "c.txt": "c0"})
	bg := context.Background()
	st, err := session.Open(bg, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.Create(bg, &session.Session{ID: "s1"})
	k := NewKeeper(newStore(t, root, Options{}), st, nil)
	take := func(kind string, turn, seq int) {
		if _, _, err := k.Take(bg, session.Checkpoint{SessionID: "s1", Kind: kind, Turn: turn, Seq: seq}, TakeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	take(session.CheckpointBefore, 1, 2)
	write(t, root, layout{"z.txt": "turn 1"})
	take(session.CheckpointAfter, 1, 4)
	take(session.CheckpointBefore, 5, 6)
	write(t, root, layout{"a.txt": "a1", "b.txt": "b1", "c.txt": "c1"})
	take(session.CheckpointAfter, 5, 8)
	p, err := k.Plan(bg, "s1", Undo, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(bg)
	testHookRestored = func(string) { cancel() } // the user presses Ctrl-C after the first file
	defer func() { testHookRestored = nil }()
	out, err := k.Apply(ctx, p, Resolve{})
	testHookRestored = nil
	t.Logf("undo: done %v, failed %v, err %v", out.Restored.Done, out.Restored.Failed, err)
	p2, err := k.Plan(bg, "s1", Undo, 0, 0)
	if err != nil {
		t.Fatalf("next undo: %v", err)
	}
	t.Logf("next undo: turn %d, changes %d", p2.Turn, len(p2.Changes))
	// Once it has begun, the undo finishes: every file is back, and the
	// next undo is the turn before.
	for _, n := range []string{"a", "b", "c"} {
		if got, _ := os.ReadFile(filepath.Join(root, n+".txt")); string(got) != n+"0" {
			t.Errorf("%s.txt was not undone: %q", n, got)
		}
	}
	if p2.Turn != 1 {
		t.Fatalf("the next undo is turn %d's", p2.Turn)
	}
}
