package checkpoint

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The child side of TestRestoreKilledMidwayIsFinished: it restores and is
// killed while it does.
func TestRestoreChild(t *testing.T) {
	spec := os.Getenv("HEARTH_CHECKPOINT_CHILD")
	if spec == "" {
		t.Skip("run by TestRestoreKilledMidwayIsFinished")
	}
	parts := strings.Split(spec, "\n")
	s, err := Open(parts[0], parts[1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	testHookRestored = func(p string) {
		fmt.Println("restored", p)
		time.Sleep(time.Millisecond)
	}
	paths := strings.Split(parts[3], ",")
	if _, err := s.Restore(context.Background(), parts[2], paths, []byte(`{"n":1}`)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("finished")
	select {} // the parent kills us before this
}

// A restore killed with SIGKILL part-way leaves each file old or new,
// never torn, and opening the store again finishes it.
func TestRestoreKilledMidwayIsFinished(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	ctx := context.Background()
	root := t.TempDir()
	const n = 400
	oldContent := func(i int) string { return strings.Repeat(fmt.Sprintf("old %d\n", i), 200) }
	newContent := func(i int) string { return strings.Repeat(fmt.Sprintf("new %d\n", i), 300) }
	var paths []string
	for i := range n {
		p := fmt.Sprintf("f/%03d.txt", i)
		paths = append(paths, p)
		os.MkdirAll(filepath.Join(root, "f"), 0o755)
		os.WriteFile(filepath.Join(root, p), []byte(newContent(i)), 0o644)
	}
	dir := StoreDir(t.TempDir(), root)
	s, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	target, err := s.Snapshot(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		os.WriteFile(filepath.Join(root, p), []byte(oldContent(i)), 0o644)
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreChild$", "-test.v")
	cmd.Env = append(os.Environ(), "HEARTH_CHECKPOINT_CHILD="+strings.Join([]string{dir, root, target.Tree, strings.Join(paths, ",")}, "\n"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	done := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "restored ") {
			done++
		}
		if done == n/3 {
			cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	cmd.Wait()
	if done < n/3 {
		t.Fatalf("the child restored %d files before it ended", done)
	}

	olds, news := 0, 0
	for i, p := range paths {
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		switch string(data) {
		case oldContent(i):
			olds++
		case newContent(i):
			news++
		default:
			t.Fatalf("%s is torn: %d bytes", p, len(data))
		}
	}
	if olds == 0 || news == 0 {
		t.Fatalf("the kill did not land mid-restore: %d old, %d new", olds, news)
	}

	s2, err := Open(dir, root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := s2.Recover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || string(pending[0].Note) != `{"n":1}` || len(pending[0].Failed) > 0 {
		t.Fatalf("pending: %+v", pending)
	}
	s2.Done(pending[0].Journal)
	for i, p := range paths {
		data, _ := os.ReadFile(filepath.Join(root, p))
		if string(data) != newContent(i) {
			t.Fatalf("%s was not finished", p)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(root, "f", ".*hearth-restore-*")); len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	if again, _ := s2.Recover(ctx, nil); len(again) != 0 {
		t.Fatalf("the journal stayed: %+v", again)
	}
}
