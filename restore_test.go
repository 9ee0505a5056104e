package hearth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/pgtest"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/session"
)

// files reads every path of a workspace but .git: kind, mode and content.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, _ := os.Lstat(p)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = "dir " + fi.Mode().String()
		default:
			data, _ := os.ReadFile(p)
			out[rel] = fi.Mode().String() + " " + string(data)
		}
		return nil
	})
	return out
}

// gitState hashes every file of .git with its mode.
func gitState(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(filepath.Join(root, ".git"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := os.Lstat(p)
		data, _ := os.ReadFile(p)
		sum := sha256.Sum256(data)
		out[p] = fi.Mode().String() + " " + hex.EncodeToString(sum[:])
		return nil
	})
	return out
}

func sameFiles(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			t.Errorf("%s: %s: want %q, got %q", what, k, want[k], got[k])
		}
	}
}

type restoreFixture struct {
	fake  *llmtest.Server
	bot   *hearth.Agent
	root  string
	cpDir string // Config.Checkpoints
}

// stores are the session stores every restore test runs on: the same
// records and plans must work on both.
var stores = []string{"sqlite", "postgres"}

func openStore(t *testing.T, kind string) session.Store {
	t.Helper()
	var st session.Store
	var err error
	if kind == "postgres" {
		st, err = session.OpenPostgres(context.Background(), pgtest.URL(t))
	} else {
		st, err = session.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newRestoreFixture(t *testing.T, git bool, storeKind ...string) *restoreFixture {
	t.Helper()
	kind := "sqlite"
	if len(storeKind) > 0 {
		kind = storeKind[0]
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(root, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	os.WriteFile(filepath.Join(root, "old.txt"), []byte("to delete\n"), 0o600)
	os.WriteFile(filepath.Join(root, "mv.txt"), []byte("to rename\n"), 0o644)
	if git {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"commit", "-qm", "first"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "GIT_CONFIG_GLOBAL=/dev/null")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	fake := llmtest.New(t)
	fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	st := openStore(t, kind)
	cpDir := t.TempDir()
	bot, err := hearth.New(hearth.Config{
		Provider: ollama.New(ollama.Options{BaseURL: fake.URL, MaxRetries: -1}), Model: "m", ContextLength: 32768,
		Workspace: root, Store: st, Checkpoints: cpDir, Sandbox: hearth.Sandbox{Home: t.TempDir()},
		Profile: hearth.Profile{Tools: []string{"read_file", "edit", "write_file", "run_shell_command"}, Mode: hearth.ModeYolo},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bot.Close() })
	return &restoreFixture{fake: fake, bot: bot, root: root, cpDir: cpDir}
}

func (f *restoreFixture) turn(t *testing.T, id, prompt string) []hearth.Event {
	t.Helper()
	var evs []hearth.Event
	for ev := range f.bot.NewTurn(context.Background(), hearth.Request{SessionID: id, Message: prompt}).Events() {
		evs = append(evs, ev)
		if ev.Type == hearth.EventToolResult && !ev.OK {
			t.Errorf("%s failed: %s", ev.Name, ev.Error)
		}
	}
	return evs
}

// A turn that edits, creates, deletes, renames and chmods files and runs a
// command that writes: undo brings every byte and mode back, redo
// re-applies it, and the project's .git is never touched.
func TestUndoRedoEveryKindOfChange(t *testing.T) {
	for _, c := range []struct {
		git   bool
		store string
	}{{true, "sqlite"}, {false, "sqlite"}, {true, "postgres"}} {
		name := c.store + ", not a git repository"
		if c.git {
			name = c.store + ", git repository"
		}
		git := c.git
		t.Run(name, func(t *testing.T) {
			f := newRestoreFixture(t, git, c.store)
			before := files(t, f.root)
			var gitBefore map[string]string
			if git {
				gitBefore = gitState(t, f.root)
			}
			f.fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`)),
				llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"sub/new.txt","content":"created\n"}`)),
				llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"rm old.txt && mv mv.txt moved.txt && chmod 644 run.sh && printf out > cmd.out && ln -s a.txt link"}`)),
				llmtest.OllamaStream("m", llmtest.Text("Done.")))
			evs := f.turn(t, "s1", "change things")
			var cps []hearth.Event
			open := map[string]bool{} // calls made and not answered (ids are reused)
			for _, ev := range evs {
				switch ev.Type {
				case hearth.EventToolCall:
					open[ev.ID] = true
				case hearth.EventToolResult:
					delete(open, ev.ID)
				case hearth.EventCheckpoint:
					cps = append(cps, ev)
					if !open[ev.ID] {
						t.Errorf("checkpoint %d is not between its call and its result", len(cps))
					}
				}
			}
			if len(cps) != 3 || cps[0].Name != "edit" || cps[2].Name != "run_shell_command" || cps[0].Checkpoint.Files != 4 {
				t.Fatalf("checkpoint events: %+v", cps)
			}
			after := files(t, f.root)
			if after["a.txt"] != "-rw-r--r-- ALPHA\n" || after["cmd.out"] == "" || after["old.txt"] != "" || after["run.sh"][:10] != "-rw-r--r--" {
				t.Fatalf("the turn did not change the files: %v", after)
			}
			s := f.bot.Session("s1")
			ctx := context.Background()

			preview, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo, DryRun: true})
			if err != nil {
				t.Fatal(err)
			}
			if len(preview.Files) != 9 || !preview.DryRun || len(preview.Conflicts) > 0 {
				t.Fatalf("preview: %+v", preview)
			}
			sameFiles(t, "after the preview", after, files(t, f.root))

			res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
			if err != nil {
				t.Fatal(err)
			}
			sameFiles(t, "after undo", before, files(t, f.root))
			if res.Turn != 1 || res.Checkpoint == 0 || len(res.Failed) > 0 {
				t.Fatalf("undo: %+v", res)
			}
			if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo}); !errors.Is(err, hearth.ErrNothingToUndo) {
				t.Fatalf("a second undo: %v", err)
			}
			if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Redo}); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, "after redo", after, files(t, f.root))
			if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Redo}); !errors.Is(err, hearth.ErrNothingToRedo) {
				t.Fatalf("a second redo: %v", err)
			}
			if git {
				sameFiles(t, ".git", gitBefore, gitState(t, f.root))
			}
		})
	}
}

// Undo never overwrites what the user changed after the agent: it refuses,
// says which files, and with Overwrite keeps the user's version as a
// checkpoint that a rewind brings back.
func TestUndoKeepsTheUsersWork(t *testing.T) {
	f := newRestoreFixture(t, false)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"a.txt","old_string":"alpha","new_string":"agent"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"b.txt","content":"agent b\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	f.turn(t, "s1", "edit")
	os.WriteFile(filepath.Join(f.root, "a.txt"), []byte("the user's work\n"), 0o644)
	s := f.bot.Session("s1")
	ctx := context.Background()

	_, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
	var ce *hearth.ConflictError
	if !errors.As(err, &ce) || len(ce.Paths) != 1 || ce.Paths[0] != "a.txt" {
		t.Fatalf("undo over the user's change: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "b.txt")); string(got) != "agent b\n" {
		t.Fatal("a refused undo changed files")
	}
	// Keep the user's file, undo the rest.
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo, Keep: []string{"a.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kept) != 1 {
		t.Fatalf("kept: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(f.root, "b.txt")); !os.IsNotExist(err) {
		t.Fatal("b.txt was not undone")
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "a.txt")); string(got) != "the user's work\n" {
		t.Fatalf("a.txt: %q", got)
	}

	// A redo would put the agent's a.txt over the user's: it asks too.
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Redo}); !errors.As(err, &ce) || ce.Paths[0] != "a.txt" {
		t.Fatalf("redo over the user's file: %v", err)
	}
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Redo, Keep: []string{"a.txt"}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "b.txt")); string(got) != "agent b\n" {
		t.Fatalf("b.txt after redo: %q", got)
	}

	// An undo that overwrites: the user's version stays in the undo's own
	// checkpoint, and a rewind to it brings it back.
	res, err = s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "a.txt")); string(got) != "alpha\n" {
		t.Fatalf("a.txt after an overwriting undo: %q", got)
	}
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Checkpoint: res.Checkpoint, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "a.txt")); string(got) != "the user's work\n" {
		t.Fatalf("the user's version was lost: %q", got)
	}
}

// Rewind to a message brings the files and the conversation to their state
// there; what the conversation lost is kept in an archived session; a
// fork starts a new session from any point.
func TestRewindAndFork(t *testing.T) {
	for _, kind := range stores {
		t.Run(kind, func(t *testing.T) { testRewindAndFork(t, kind) })
	}
}

func testRewindAndFork(t *testing.T, kind string) {
	f := newRestoreFixture(t, false, kind)
	initial := files(t, f.root)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	f.turn(t, "s1", "first")
	afterFirst := files(t, f.root)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"one.txt","old_string":"1","new_string":"uno"}`)),
		llmtest.OllamaStream("m", llmtest.Text("two")))
	f.turn(t, "s1", "second")
	final := files(t, f.root)
	ctx := context.Background()
	st := f.bot.Store()
	msgs, _ := st.Messages(ctx, "s1")
	// first: user 1, call 2, result 3, answer 4; second: user 5, …, answer 10.
	if len(msgs) != 10 {
		t.Fatalf("%d messages", len(msgs))
	}
	s := f.bot.Session("s1")

	// A fork at the end of the first turn, with its files.
	fork, err := s.Fork(ctx, hearth.ForkRequest{Through: 4, Files: true})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "the fork's files", afterFirst, files(t, f.root))
	fmsgs, _ := st.Messages(ctx, fork.Session.ID)
	if len(fmsgs) != 4 || fork.Session.ForkOf != "s1" {
		t.Fatalf("fork: %+v, %d messages", fork.Session, len(fmsgs))
	}
	// For the original session, the fork's restore is someone else's
	// change: bringing its files to its end asks first.
	_, err = s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 10, FilesOnly: true})
	var ce *hearth.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("rewind over the fork's files: %v", err)
	}
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 10, FilesOnly: true, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "files rewound to the end", final, files(t, f.root))

	// Rewind to the first prompt: files and conversation.
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 1})
	if err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "after rewind", initial, files(t, f.root))
	if res.Conversation == nil || res.Conversation.Removed != 9 || res.Conversation.Archived == "" {
		t.Fatalf("rewind: %+v", res.Conversation)
	}
	msgs, _ = st.Messages(ctx, "s1")
	if len(msgs) != 1 || msgs[0].Content != "first" {
		t.Fatalf("the conversation after rewind: %+v", msgs)
	}
	kept, _ := st.Messages(ctx, res.Conversation.Archived)
	arch, _ := st.Get(ctx, res.Conversation.Archived)
	if len(kept) != 10 || !arch.Archived {
		t.Fatalf("the archived conversation: %d messages, %+v", len(kept), arch)
	}
	listed, _ := st.List(ctx, session.ListOptions{})
	for _, l := range listed {
		if l.ID == arch.ID {
			t.Fatal("an archived session is listed")
		}
	}

	// To the very start: no message, the files as before the session.
	os.WriteFile(filepath.Join(f.root, "one.txt"), []byte("1\n"), 0o644)
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Start: true, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "after a rewind to the start", initial, files(t, f.root))
	if msgs, _ = st.Messages(ctx, "s1"); len(msgs) != 0 {
		t.Fatalf("%d messages after a rewind to the start", len(msgs))
	}

	// The next turn is told its files were restored.
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	f.turn(t, "s1", "again")
	reqs := f.fake.RequestsTo("/api/chat")
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "restored files") {
		t.Fatalf("the model was not told of the rewind: %s", last)
	}
}

// A hostile model (prompt injection makes one) cannot use checkpoints to
// reach outside the workspace: its commands can neither read nor write the
// snapshots, and a folder it swaps for a link to a place outside (or into
// .git, whose hooks run later) is never written through by a restore.
func TestHostileModelAndRestores(t *testing.T) {
	f := newRestoreFixture(t, true)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "f.txt"), []byte("canary\n"), 0o644)
	hooks := filepath.Join(f.root, ".git", "hooks")
	gitBefore := gitState(t, f.root)
	store := filepath.Join(f.cpDir, "checkpoints")

	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"d/f.txt","content":"mine\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"h/pre-commit","content":"#!/bin/sh\ntrue\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("ok")))
	f.turn(t, "s1", "first")
	swap := "rm -rf d h && ln -s " + outside + " d && ln -s " + hooks + " h"
	// What the policy cannot see (python's own file calls): the sandbox
	// must stop it.
	reach := `python3 -c "
import os
out = open('seen.txt', 'w')
try:
    open('` + store + `/planted', 'w').write('planted')
    out.write('wrote\n')
except OSError as e:
    out.write('write refused: %s\n' % e)
for d, _, names in os.walk('` + store + `'):
    for n in names:
        try:
            out.write(open(os.path.join(d, n), 'rb').read().decode('latin1'))
        except OSError as e:
            out.write('read refused: %s\n' % e)
out.write('listed %s\n' % os.path.exists('` + store + `'))
"`
	if _, err := exec.LookPath("python3"); err != nil {
		reach = "true"
	}
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", mustArgs(t, map[string]string{"command": swap}))),
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", mustArgs(t, map[string]string{"command": reach}))),
		llmtest.OllamaStream("m", llmtest.Call("read_file", mustArgs(t, map[string]string{"file_path": store}))),
		llmtest.OllamaStream("m", llmtest.Text("done")))
	var readErr string
	for ev := range f.bot.NewTurn(context.Background(), hearth.Request{SessionID: "s1", Message: "second"}).Events() {
		if ev.Type == hearth.EventToolResult && ev.Name == "read_file" {
			readErr = ev.Error
		}
		if ev.Type == hearth.EventToolResult && ev.Name == "run_shell_command" {
			t.Logf("the attack: ok %v, %s%s", ev.OK, ev.Output, ev.Error)
		}
	}
	if readErr == "" {
		t.Fatal("read_file read the checkpoint store")
	}
	if _, err := os.Stat(filepath.Join(store, "planted")); err == nil {
		t.Fatal("a command wrote into the checkpoint store")
	}
	seen, _ := os.ReadFile(filepath.Join(f.root, "seen.txt"))
	t.Logf("what the command saw: %s", seen)
	if strings.Contains(string(seen), "mine") || strings.Contains(string(seen), "HTREE") || strings.Contains(string(seen), "wrote") {
		t.Fatalf("a command read the checkpoint store:\n%s", seen)
	}
	if fi, err := os.Lstat(filepath.Join(f.root, "d")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the attack's link is not there: %v", err)
	}

	ctx := context.Background()
	s := f.bot.Session("s1")
	// Undo the attack: the folders come back, nothing is written where
	// the links led.
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(f.root, "d", "f.txt")); string(got) != "mine\n" {
		t.Fatalf("d/f.txt: %q", got)
	}
	// The links again, then a rewind to before the first turn, which
	// removes d/f.txt and h/pre-commit: through the links they would be
	// the canary and a git hook.
	os.RemoveAll(filepath.Join(f.root, "d"))
	os.RemoveAll(filepath.Join(f.root, "h"))
	os.Symlink(outside, filepath.Join(f.root, "d"))
	os.Symlink(hooks, filepath.Join(f.root, "h"))
	os.WriteFile(filepath.Join(hooks, "pre-commit"), []byte("#!/bin/sh\necho planted\n"), 0o755)
	gitPlanted := gitState(t, f.root)
	if _, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Rewind, Through: 1, FilesOnly: true, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "f.txt")); string(got) != "canary\n" {
		t.Fatalf("the canary outside the workspace changed: %q", got)
	}
	sameFiles(t, ".git after the rewind", gitPlanted, gitState(t, f.root))
	os.Remove(filepath.Join(hooks, "pre-commit"))
	sameFiles(t, ".git", gitBefore, gitState(t, f.root))
	if _, err := os.Lstat(filepath.Join(f.root, "d")); !os.IsNotExist(err) {
		t.Fatalf("the link d is still there: %v", err)
	}
}

func mustArgs(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Deleting a session and pruning frees its snapshots; the other
// sessions' undo still works.
func TestPruneCheckpoints(t *testing.T) {
	f := newRestoreFixture(t, false)
	ctx := context.Background()
	for _, id := range []string{"s1", "s2"} {
		f.fake.Enqueue("/api/chat",
			llmtest.OllamaStream("m", llmtest.Call("write_file", mustArgs(t, map[string]string{"file_path": id + ".txt", "content": strings.Repeat(id, 1000)}))),
			llmtest.OllamaStream("m", llmtest.Text("ok")))
		f.turn(t, id, "write")
	}
	if p, err := f.bot.PruneCheckpoints(ctx, 0); err != nil || p.Objects != 0 {
		t.Fatalf("a prune with every session there removed %+v (%v)", p, err)
	}
	if err := f.bot.Store().Delete(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(f.root, "s1.txt"))
	// s2's after-turn snapshot still holds s1.txt; s1's own before and
	// after are gone with it, and what only they reached.
	p, err := f.bot.PruneCheckpoints(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Objects == 0 {
		t.Fatalf("nothing pruned: %+v", p)
	}
	if _, err := f.bot.Session("s2").Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "s2.txt")); !os.IsNotExist(err) {
		t.Fatal("s2's undo did not remove s2.txt")
	}
}

// A turn whose changes the user took back by hand: its undo changes
// nothing and is recorded, so that the next undo goes to the turn before.
func TestUndoOfChangesAlreadyTakenBack(t *testing.T) {
	f := newRestoreFixture(t, false)
	for i, name := range []string{"one.txt", "two.txt"} {
		f.fake.Enqueue("/api/chat",
			llmtest.OllamaStream("m", llmtest.Call("write_file", mustArgs(t, map[string]string{"file_path": name, "content": "x\n"}))),
			llmtest.OllamaStream("m", llmtest.Text("ok")))
		f.turn(t, "s1", "turn "+string(rune('1'+i)))
	}
	os.Remove(filepath.Join(f.root, "two.txt")) // by hand
	ctx := context.Background()
	s := f.bot.Session("s1")
	res, err := s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
	if err != nil || len(res.Files) != 0 || res.Turn != 5 {
		t.Fatalf("undo of the second turn: %+v %v", res, err)
	}
	res, err = s.Restore(ctx, hearth.RestoreRequest{Op: hearth.Undo})
	if err != nil || res.Turn != 1 || len(res.Files) != 1 || res.Files[0].Path != "one.txt" {
		t.Fatalf("undo of the first turn: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(f.root, "one.txt")); !os.IsNotExist(err) {
		t.Fatal("one.txt is still there")
	}
}
