package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/session"
)

// ageObjects makes every object of the store look old (as objects of a
// session deleted long ago do).
func ageObjects(t *testing.T, s *Store) {
	old := time.Now().Add(-2 * time.Hour)
	filepath.WalkDir(filepath.Join(s.dir, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

// R10: a long-running process (hearth serve) keeps its index and its
// "have" cache; another process prunes the objects of deleted sessions;
// the long-running one's next snapshot names objects that are gone.
func TestPruneByAnotherProcessBreaksNextSnapshot(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"a.txt": "a", "src/b.go": "b"})
	dir := StoreDir(t.TempDir(), root)
	serve, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serve.Snapshot(ctx, nil); err != nil { // a session's checkpoint; the session is deleted later
		t.Fatal(err)
	}
	ageObjects(t, serve)
	cli, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := cli.Prune(ctx, nil, time.Hour) // no live session reaches them; the grace is the CLI's default
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pruned %+v", p)
	// A new session's first checkpoint, in the long-running process.
	snap, err := serve.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	serve.trees = map[string]Files{} // as another process would read it
	if _, err := serve.Files(snap.Tree); err != nil {
		t.Fatalf("the checkpoint just taken cannot be read: %v", err)
	}
}

type failingStore struct {
	session.Store
	fail bool
}

func (f *failingStore) AddCheckpoint(ctx context.Context, c session.Checkpoint) (session.Checkpoint, error) {
	if f.fail && c.Kind == session.CheckpointUndo {
		return c, errors.New("database is locked")
	}
	return f.Store.AddCheckpoint(ctx, c)
}

// R11: recording an undo fails after the files are restored; the journal
// stays; the user goes on working; the next start re-applies the old
// restore over the user's work.
func TestFailedRecordIsReappliedLater(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"a.txt": "v0"})
	sqlite, err := session.Open(ctx, filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer sqlite.Close()
	st := &failingStore{Store: sqlite}
	if err := st.Create(ctx, &session.Session{ID: "s1"}); err != nil {
		t.Fatal(err)
	}
	dir := StoreDir(t.TempDir(), root)
	cp, _ := Open(dir, root, Options{})
	k := NewKeeper(cp, st, nil)
	// A turn: before (v0), the agent writes v1, after.
	if _, _, err := k.Take(ctx, session.Checkpoint{SessionID: "s1", Kind: session.CheckpointBefore, Turn: 1, Seq: 2}, TakeOptions{}); err != nil {
		t.Fatal(err)
	}
	write(t, root, layout{"a.txt": "v1"})
	if _, _, err := k.Take(ctx, session.Checkpoint{SessionID: "s1", Kind: session.CheckpointAfter, Turn: 1, Seq: 4}, TakeOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := k.Plan(ctx, "s1", Undo, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	st.fail = true
	_, err = k.Apply(ctx, p, Resolve{})
	t.Logf("undo: %v", err)
	st.fail = false
	// The user sees a.txt is v0 and goes on: writes v2 by hand.
	write(t, root, layout{"a.txt": "the user's v2"})
	// Next start of Hearth in this workspace.
	cp2, _ := Open(dir, root, Options{})
	n, err := NewKeeper(cp2, st, nil).Recover(ctx)
	t.Logf("recovered %d, %v", n, err)
	got, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	if string(got) != "the user's v2" {
		t.Fatalf("the next start overwrote the user's work: a.txt is %q", got)
	}
}

// R8: a process that starts while another is restoring treats the live
// restore's journal as an interrupted one, applies it again after the
// restore and records it.
func TestRecoverDuringALiveRestore(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, layout{"a.txt": "v0", "b.txt": "v0"})
	dir := StoreDir(t.TempDir(), root)
	a, _ := Open(dir, root, Options{})
	snap, _ := a.Snapshot(ctx, nil)
	write(t, root, layout{"a.txt": "v1", "b.txt": "v1"})
	b, _ := Open(dir, root, Options{})
	var once sync.Once
	var pending []Pending
	var wg sync.WaitGroup
	defer func() { testHookRestored = nil }()
	testHookRestored = func(p string) {
		once.Do(func() {
			// Another hearth starts (hearth sessions list, a second TUI).
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				pending, err = b.Recover(ctx, nil)
				if err != nil {
					t.Error(err)
				}
			}()
			time.Sleep(200 * time.Millisecond)
		})
	}
	// As Keeper.Apply does: the store is locked from the restore until it
	// is recorded and its journal gone.
	unlock, err := a.Lock()
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Restore(ctx, snap.Tree, []string{"a.txt", "b.txt"}, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	a.Done(r.Journal)
	unlock()
	// The user edits a.txt.
	write(t, root, layout{"a.txt": "user"})
	wg.Wait()
	got, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	if len(pending) > 0 {
		t.Fatalf("a live restore was finished again by another process (%d pending, paths %v); a.txt is %q", len(pending), pending[0].Done, got)
	}
}

// R12: a folder nested deeper than maxDepth is snapshotted, but its tree
// can never be read: every plan of the session fails, for good.
func TestDeepTreeBreaksPlans(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	deep := filepath.Join(root, strings.Repeat("a/", 520))
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(deep, "f"), []byte("x"), 0o644)
	s := newStore(t, root, Options{})
	snap, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if _, err := s.Files(snap.Tree); err != nil {
		t.Fatalf("a snapshot taken cannot be read: %v", err)
	}
}

// R13: a name that is not UTF-8 goes through the journal's JSON as U+FFFD:
// a restore finished by Recover misses it.
func TestRecoverNonUTF8Name(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	name := "caf\xe9.txt"
	write(t, root, layout{name: "v0"})
	s := newStore(t, root, Options{})
	snap, _ := s.Snapshot(ctx, nil)
	write(t, root, layout{name: "v1"})
	// A restore whose process died right after writing its journal.
	if err := s.writeJournal(journal{ID: "0123456789abcdef", Tree: snap.Tree, Paths: []string{name}}); err != nil {
		t.Fatal(err)
	}
	pend, err := s.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(root, name))
	if string(got) != "v0" {
		t.Fatalf("Recover did not finish the restore of %q (it restored %q): the file is %q", name, pend[0].Done, got)
	}
}
