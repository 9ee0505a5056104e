package checkpoint

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth/session"
)

func review2Keeper(t *testing.T, root string) (*Keeper, session.Store) {
	ctx := context.Background()
	st, err := session.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Create(ctx, &session.Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(StoreDir(t.TempDir(), root), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Close() })
	return NewKeeper(cp, st, nil), st
}

func take(t *testing.T, k *Keeper, kind string, turn, seq int, force ...string) {
	t.Helper()
	if _, _, err := k.Take(context.Background(), session.Checkpoint{SessionID: "s1", Kind: kind, Turn: turn, Seq: seq}, TakeOptions{Force: force}); err != nil {
		t.Fatal(err)
	}
}

func undo(t *testing.T, k *Keeper, op Op) *Outcome {
	t.Helper()
	p, err := k.Plan(context.Background(), "s1", op, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s plan: turn %d changes %d conflicts %v unrestorable %v", op, p.Turn, len(p.Changes), p.Conflicts, p.Unrestorable)
	for _, c := range p.Changes {
		t.Logf("  %s: %v -> %v", c.Path, c.From, c.To)
	}
	out, err := k.Apply(context.Background(), p, Resolve{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A turn creates a tracked file with a command, then edits it with the
// edit tool: undo of the turn must remove it.
func TestUndoOfFileCreatedByShellThenEdited(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{"a.txt": "a"})
	k, _ := review2Keeper(t, root)
	take(t, k, session.CheckpointBefore, 1, 1) // run_shell_command "echo v1 > x.txt"
	write(t, root, layout{"x.txt": "v1"})
	take(t, k, session.CheckpointBefore, 1, 3, "x.txt") // edit x.txt
	write(t, root, layout{"x.txt": "v2"})
	take(t, k, session.CheckpointAfter, 1, 5)
	undo(t, k, Undo)
	if data, err := os.ReadFile(filepath.Join(root, "x.txt")); err == nil {
		t.Fatalf("undo of the turn that created x.txt left it, as %q", data)
	}
}

// Same across turns: T1 creates x.txt by a command, T2 edits it. Undo,
// undo: x.txt must be gone.
func TestUndoTwiceFileCreatedByShellEditedLater(t *testing.T) {
	root := t.TempDir()
	write(t, root, layout{"a.txt": "a"})
	k, _ := review2Keeper(t, root)
	take(t, k, session.CheckpointBefore, 1, 1)
	write(t, root, layout{"x.txt": "v1"})
	take(t, k, session.CheckpointAfter, 1, 3)
	take(t, k, session.CheckpointBefore, 5, 5, "x.txt")
	write(t, root, layout{"x.txt": "v2"})
	take(t, k, session.CheckpointAfter, 5, 7)
	undo(t, k, Undo)
	undo(t, k, Undo)
	if data, err := os.ReadFile(filepath.Join(root, "x.txt")); err == nil {
		t.Fatalf("undoing both turns left x.txt, as %q", data)
	}
}
