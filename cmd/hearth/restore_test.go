package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// tree reads every path of a workspace: kind, mode and content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "link " + target
		case fi.IsDir():
			out[rel] = "dir " + fi.Mode().String()
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = fi.Mode().String() + " " + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails the test where got differs from want.
func sameTree(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if want[k] != got[k] {
			t.Errorf("%s: %s: want %q, got %q", what, k, want[k], got[k])
		}
	}
}

// restoreEnv is a runEnv whose workspace has a few files, and the
// session s1 after a turn in yolo mode that edits, creates, deletes and
// chmods files and runs a command that writes.
func restoreEnv(t *testing.T) (r *runEnv, before, after map[string]string) {
	t.Helper()
	r = newRunEnv(t)
	os.WriteFile(filepath.Join(r.ws, "a.txt"), []byte("alpha\n"), 0o644)
	os.WriteFile(filepath.Join(r.ws, "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	os.WriteFile(filepath.Join(r.ws, "old.txt"), []byte("to delete\n"), 0o600)
	before = tree(t, r.ws)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"a.txt","old_string":"alpha","new_string":"ALPHA"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"sub/new.txt","content":"created\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"rm old.txt && chmod 600 run.sh && printf out > cmd.out"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	code, out, errOut := r.run(t, "run", "--context", "s1", "--approval-mode", "yolo", "--trust", "trusted", "change things")
	if code != 0 || out != "Done.\n" {
		t.Fatalf("the turn: exit %d\n%s\n%s", code, out, errOut)
	}
	after = tree(t, r.ws)
	if after["a.txt"] != "-rw-r--r-- ALPHA\n" || after["cmd.out"] == "" || after["old.txt"] != "" || !strings.HasPrefix(after["run.sh"], "-rw------- ") {
		t.Fatalf("the turn did not change the files: %v", after)
	}
	return r, before, after
}

// sessions runs `hearth sessions ARGS` without --workspace: in the
// session's own.
func (r *runEnv) sessions(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runHearth(t, r.env, append([]string{"sessions"}, args...)...)
}

// TestSessionsUndoRedo: undo brings back every byte and mode bit, redo
// re-applies the turn; neither has anything to do twice.
func TestSessionsUndoRedo(t *testing.T) {
	r, before, after := restoreEnv(t)

	code, out, errOut := r.sessions(t, "undo", "s1", "--dry-run")
	if code != 0 || !strings.Contains(out, `Undoing turn 1 ("change things") of session s1 would restore 6 files`) ||
		!regexp.MustCompile(`(?m)^  delete +sub/new\.txt$`).MatchString(out) || !regexp.MustCompile(`(?m)^  create +old\.txt$`).MatchString(out) ||
		!strings.Contains(out, "Nothing was changed (--dry-run).") {
		t.Errorf("undo --dry-run: exit %d\n%s\n%s", code, out, errOut)
	}
	sameTree(t, "after a dry run", after, tree(t, r.ws))

	code, out, errOut = r.sessions(t, "undo", "s1")
	if code != 0 || !strings.Contains(out, `Undid turn 1 ("change things") of session s1: 6 files restored in `) ||
		!regexp.MustCompile(`(?m)^  modify +a\.txt$`).MatchString(out) || !regexp.MustCompile(`(?m)^  chmod +run\.sh$`).MatchString(out) ||
		!regexp.MustCompile("`hearth sessions rewind s1 --checkpoint [0-9]+` brings them back").MatchString(out) {
		t.Errorf("undo: exit %d\n%s\n%s", code, out, errOut)
	}
	sameTree(t, "after undo", before, tree(t, r.ws))

	code, _, errOut = r.sessions(t, "undo", "s1")
	if code != exitFailed || !strings.Contains(errOut, "hearth: nothing to undo in session s1") || strings.Contains(errOut, "--help") {
		t.Errorf("a second undo: exit %d %q", code, errOut)
	}

	code, out, errOut = r.sessions(t, "redo", "s1", "--json")
	var res struct {
		Op         string
		Turn       int
		Checkpoint int64
		Files      []struct{ Path, Action string }
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Op != "redo" || res.Turn != 1 || res.Checkpoint == 0 || len(res.Files) != 6 {
		t.Errorf("redo --json: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	sameTree(t, "after redo", after, tree(t, r.ws))

	code, _, errOut = r.sessions(t, "redo", "s1")
	if code != exitFailed || !strings.Contains(errOut, "hearth: nothing to redo in session s1") {
		t.Errorf("a second redo: exit %d %q", code, errOut)
	}
}

// TestSessionsUndoRefusesOverTheUsersWork: a file the user changed after
// the agent makes undo refuse, change nothing and say what to do;
// --overwrite restores it and keeps the user's version in a checkpoint
// that a rewind brings back; --keep leaves it.
func TestSessionsUndoRefusesOverTheUsersWork(t *testing.T) {
	r, before, _ := restoreEnv(t)
	os.WriteFile(filepath.Join(r.ws, "a.txt"), []byte("the user's work\n"), 0o644)
	mine := tree(t, r.ws)

	code, out, errOut := r.sessions(t, "undo", "s1")
	for _, want := range []string{
		"hearth: undo would overwrite changes made to 1 file after the agent changed it:\n  a.txt\nNothing was changed.",
		"hearth sessions undo s1 --overwrite\n",
		"hearth sessions checkpoints s1",
		"hearth sessions rewind s1 --checkpoint N",
		"hearth sessions undo s1 --keep a.txt\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the refusal lacks %q:\n%s", want, errOut)
		}
	}
	if code != exitFailed || out != "" {
		t.Errorf("a refused undo: exit %d, stdout %q", code, out)
	}
	sameTree(t, "after a refused undo", mine, tree(t, r.ws))

	// In JSON: the preview, with the conflicts.
	code, out, _ = r.sessions(t, "undo", "s1", "--json")
	var preview struct {
		DryRun    bool `json:"dry_run"`
		Conflicts []string
	}
	if err := json.Unmarshal([]byte(out), &preview); code != exitFailed || err != nil || !preview.DryRun || len(preview.Conflicts) != 1 || preview.Conflicts[0] != "a.txt" {
		t.Errorf("undo --json over a conflict: exit %d %v\n%s", code, err, out)
	}
	sameTree(t, "after a refused undo --json", mine, tree(t, r.ws))

	code, out, errOut = r.sessions(t, "undo", "s1", "--overwrite")
	m := regexp.MustCompile(`Your changes to a\.txt were overwritten; your version is kept in checkpoint ([0-9]+)\.`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("undo --overwrite: exit %d\n%s\n%s", code, out, errOut)
	}
	sameTree(t, "after undo --overwrite", before, tree(t, r.ws))

	// The user's version comes back from the undo's checkpoint.
	code, out, errOut = r.sessions(t, "rewind", "s1", "--checkpoint", m[1])
	if code != 0 || !strings.Contains(out, "Rewound session s1 to checkpoint "+m[1]) {
		t.Fatalf("rewind --checkpoint: exit %d\n%s\n%s", code, out, errOut)
	}
	sameTree(t, "after rewind --checkpoint", mine, tree(t, r.ws))

	// --keep: undo the rest, leave the user's file.
	r2, _, _ := restoreEnv(t)
	os.WriteFile(filepath.Join(r2.ws, "a.txt"), []byte("the user's work\n"), 0o644)
	code, out, errOut = r2.sessions(t, "undo", "s1", "--keep", "a.txt")
	got := tree(t, r2.ws)
	if code != 0 || got["a.txt"] != "-rw-r--r-- the user's work\n" || got["sub/new.txt"] != "" || got["old.txt"] != before["old.txt"] ||
		!strings.Contains(out, "Left as you changed them: a.txt") {
		t.Errorf("undo --keep: exit %d\n%s\n%s\n%v", code, out, errOut, got)
	}
}

// twoTurns is a session s1 of two turns, each writing files: messages 1-4
// and 5-10. It returns the files before, after the first and at the end.
func twoTurns(t *testing.T) (r *runEnv, initial, first, final map[string]string) {
	t.Helper()
	r = newRunEnv(t)
	os.WriteFile(filepath.Join(r.ws, "keep.txt"), []byte("kept\n"), 0o644)
	initial = tree(t, r.ws)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	if code, _, errOut := r.run(t, "run", "--context", "s1", "--approval-mode", "auto_edit", "--trust", "trusted", "first"); code != 0 {
		t.Fatalf("first turn: %d %s", code, errOut)
	}
	first = tree(t, r.ws)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"one.txt","old_string":"1","new_string":"uno"}`)),
		llmtest.OllamaStream("m", llmtest.Text("two")))
	if code, _, errOut := r.run(t, "run", "--context", "s1", "--approval-mode", "auto_edit", "--trust", "trusted", "second"); code != 0 {
		t.Fatalf("second turn: %d %s", code, errOut)
	}
	final = tree(t, r.ws)
	return r, initial, first, final
}

// messages returns the number of messages session id holds.
func (r *runEnv) messages(t *testing.T, id string) int {
	t.Helper()
	msgs, err := r.store(t).Messages(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return len(msgs)
}

// TestSessionsRewind: rewind --to brings the files, the conversation or
// both to their state after a message; what the conversation loses is
// kept in an archived session.
func TestSessionsRewind(t *testing.T) {
	tests := []struct {
		name     string
		to       string
		flags    []string
		files    string // "initial", "first" or "final": the files expected after
		deleted  string // a file the summary says is deleted ("": none)
		messages int
		archived bool
	}{
		{"files and conversation", "4", nil, "first", "two.txt", 4, true},
		{"files only", "4", []string{"--files-only"}, "first", "two.txt", 10, false},
		{"conversation only", "4", []string{"--conversation-only"}, "final", "", 4, true},
		{"to the start", "0", nil, "initial", "one.txt", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, initial, first, final := twoTurns(t)
			want := map[string]map[string]string{"initial": initial, "first": first, "final": final}[tc.files]
			where := "message " + tc.to
			if tc.to == "0" {
				where = "its start"
			}

			code, out, errOut := r.sessions(t, append([]string{"rewind", "s1", "--to", tc.to, "--dry-run"}, tc.flags...)...)
			if code != 0 || !strings.Contains(out, "Rewinding session s1 to "+where+" would change:") || !strings.Contains(out, "Nothing was changed") {
				t.Errorf("--dry-run: exit %d\n%s\n%s", code, out, errOut)
			}
			sameTree(t, "after a dry run", final, tree(t, r.ws))
			if n := r.messages(t, "s1"); n != 10 {
				t.Errorf("a dry run cut the conversation to %d messages", n)
			}

			code, out, errOut = r.sessions(t, append([]string{"rewind", "s1", "--to", tc.to}, tc.flags...)...)
			if code != 0 || !strings.Contains(out, "Rewound session s1 to "+where+"\n") {
				t.Fatalf("rewind: exit %d\n%s\n%s", code, out, errOut)
			}
			sameTree(t, "after rewind", want, tree(t, r.ws))
			if n := r.messages(t, "s1"); n != tc.messages {
				t.Errorf("%d messages after rewind, want %d", n, tc.messages)
			}
			if tc.deleted != "" && !regexp.MustCompile(`(?m)^  delete +`+regexp.QuoteMeta(tc.deleted)+`$`).MatchString(out) || tc.deleted == "" && strings.Contains(out, "delete") {
				t.Errorf("the summary does not say what happened to the files:\n%s", out)
			}
			m := regexp.MustCompile("kept in the archived session (s-[a-z0-9]+) ").FindStringSubmatch(out)
			if tc.messages == 0 {
				m = regexp.MustCompile("all 10 messages were removed; they are kept in the archived session (s-[a-z0-9]+) ").FindStringSubmatch(out)
			}
			if tc.archived != (m != nil) {
				t.Fatalf("archived session: %v\n%s", m, out)
			}
			if m != nil {
				_, list, _ := r.sessions(t, "list", "--archived")
				if !strings.Contains(list, m[1]) {
					t.Errorf("list --archived lacks %s:\n%s", m[1], list)
				}
				if n := r.messages(t, m[1]); n != 10 {
					t.Errorf("the archived session holds %d messages", n)
				}
			}
		})
	}
}

// TestSessionsFork: fork --at starts a new session from a message, with
// the files of that point when --files says so.
func TestSessionsFork(t *testing.T) {
	r, _, first, final := twoTurns(t)

	code, out, errOut := r.sessions(t, "fork", "s1", "--at", "4", "--title", "another way")
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "s-") || strings.Contains(id, "\n") || !strings.Contains(errOut, "hearth run --context "+id) {
		t.Fatalf("fork: exit %d\n%q\n%s", code, out, errOut)
	}
	sameTree(t, "after a fork without --files", final, tree(t, r.ws))
	if n := r.messages(t, id); n != 4 {
		t.Errorf("the fork holds %d messages", n)
	}
	if n := r.messages(t, "s1"); n != 10 {
		t.Errorf("the session holds %d messages after a fork", n)
	}
	code, out, _ = r.sessions(t, "show", id)
	if code != 0 || !strings.Contains(out, "# another way\n") || !strings.Contains(out, "forked from `s1` (up to message 4)") || !strings.Contains(out, "## You (#1)") {
		t.Errorf("show the fork: %d\n%s", code, out)
	}

	code, out, errOut = r.sessions(t, "fork", "s1", "--at", "4", "--files", "--json")
	var res struct {
		Session session.Session
		Files   struct {
			Files []struct{ Path, Action string }
		}
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Session.ForkOf != "s1" || res.Session.ForkSeq != 4 || len(res.Files.Files) != 2 {
		t.Fatalf("fork --files --json: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	sameTree(t, "after a fork with --files", first, tree(t, r.ws))

	// Without --json: the id on stdout, the files on stderr.
	os.WriteFile(filepath.Join(r.ws, "one.txt"), []byte("edited by hand\n"), 0o644)
	code, out, errOut = r.sessions(t, "fork", "s1", "--at", "1", "--files")
	if code != exitFailed || out != "" || !strings.Contains(errOut, "hearth sessions fork s1 --at 1 --files --overwrite") || !strings.Contains(errOut, "  one.txt\n") {
		t.Errorf("fork over the user's change: exit %d\n%q\n%s", code, out, errOut)
	}
	code, out, errOut = r.sessions(t, "fork", "s1", "--at", "1", "--files", "--overwrite")
	if code != 0 || !strings.HasPrefix(out, "s-") || !regexp.MustCompile(`(?m)^  delete  one\.txt$`).MatchString(errOut) {
		t.Errorf("fork --files --overwrite: exit %d\n%q\n%s", code, out, errOut)
	}
	if got := tree(t, r.ws); got["one.txt"] != "" || got["keep.txt"] == "" {
		t.Errorf("the files after a fork at message 1: %v", got)
	}
}

// TestSessionsArchive: an archived session leaves the list for the
// archived one, and comes back.
func TestSessionsArchive(t *testing.T) {
	r, _, _, _ := twoTurns(t)
	listed := func(args ...string) string {
		t.Helper()
		code, out, errOut := r.sessions(t, append([]string{"list"}, args...)...)
		if code != 0 {
			t.Fatalf("list %v: exit %d %s", args, code, errOut)
		}
		return out + errOut
	}
	if !strings.Contains(listed(), "s1") || strings.Contains(listed("--archived"), "s1") {
		t.Fatal("s1 is not listed, or listed as archived")
	}
	if code, _, errOut := r.sessions(t, "archive", "s1"); code != 0 || !strings.Contains(errOut, "archived s1") {
		t.Fatalf("archive: exit %d %s", code, errOut)
	}
	if strings.Contains(listed(), "s1") || !strings.Contains(listed("--archived"), "s1") {
		t.Errorf("after archive: list\n%s\nlist --archived\n%s", listed(), listed("--archived"))
	}
	var list []session.Session
	if err := json.Unmarshal([]byte(listed("--archived", "--json")), &list); err != nil || len(list) != 1 || !list[0].Archived {
		t.Errorf("list --archived --json: %v %+v", err, list)
	}
	if _, out, _ := r.sessions(t, "show", "s1"); !strings.Contains(out, "· archived") {
		t.Errorf("show does not say s1 is archived:\n%s", out)
	}
	if code, _, errOut := r.sessions(t, "unarchive", "s1"); code != 0 || !strings.Contains(errOut, "unarchived s1") {
		t.Fatalf("unarchive: exit %d %s", code, errOut)
	}
	if !strings.Contains(listed(), "s1") || !strings.Contains(listed("--archived"), "No archived sessions.") {
		t.Errorf("after unarchive: list\n%s", listed())
	}
	if code, _, errOut := r.sessions(t, "archive", "nope"); code != exitFailed || !strings.Contains(errOut, `no session "nope"`) {
		t.Errorf("archive nope: exit %d %s", code, errOut)
	}
}

// TestSessionsCheckpoints: the table and the JSON of a session's
// checkpoints.
func TestSessionsCheckpoints(t *testing.T) {
	r, _, _ := restoreEnv(t)
	code, out, errOut := r.sessions(t, "checkpoints", "s1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !regexp.MustCompile(`^ID +KIND +TURN +SEQ +TOOL/CALL +FILES +WHEN$`).MatchString(lines[0]) {
		t.Fatalf("checkpoints: exit %d\n%s\n%s", code, out, errOut)
	}
	for i, want := range []string{`^1 +before +1 +2 +edit \S+ +3 +\d{4}-`, `^2 +before +1 +\d+ +write_file \S+ +3 `, `^3 +before +1 +\d+ +run_shell_command \S+ +4 `, `^4 +after +1 +\d+ +- +4 `} {
		if !regexp.MustCompile(want).MatchString(lines[i+1]) {
			t.Errorf("row %d: %q, want %s", i+1, lines[i+1], want)
		}
	}
	r.sessions(t, "undo", "s1")
	code, out, _ = r.sessions(t, "checkpoints", "s1", "--json")
	var cps []session.Checkpoint
	if err := json.Unmarshal([]byte(out), &cps); code != 0 || err != nil || len(cps) != 5 || cps[4].Kind != "undo" || cps[0].Tool != "edit" {
		t.Fatalf("checkpoints --json: exit %d %v\n%s", code, err, out)
	}
	if _, out, _ := r.sessions(t, "checkpoints", "s1"); !regexp.MustCompile(`(?m)^5 +undo +- +\d+ +- +6 restored `).MatchString(out) {
		t.Errorf("the undo's row:\n%s", out)
	}
	if code, _, errOut := r.sessions(t, "checkpoints", "nope"); code != exitFailed || !strings.Contains(errOut, `no session "nope"`) {
		t.Errorf("checkpoints nope: exit %d %s", code, errOut)
	}
}

// TestSessionsCheckpointsOff: with [checkpoints] enabled = false, a turn
// takes none, and undo says checkpoints are off.
func TestSessionsCheckpointsOff(t *testing.T) {
	r := newRunEnv(t)
	os.WriteFile(filepath.Join(r.env["HEARTH_HOME"], "config.toml"), []byte("[checkpoints]\nenabled = false\n"), 0o644)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("one")))
	if code, _, errOut := r.run(t, "run", "--context", "s1", "--approval-mode", "auto_edit", "--trust", "trusted", "first"); code != 0 {
		t.Fatalf("the turn: %d %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(r.env["HEARTH_HOME"], "checkpoints")); !os.IsNotExist(err) {
		t.Errorf("a checkpoint store was made: %v", err)
	}
	if code, _, errOut := r.sessions(t, "checkpoints", "s1"); code != 0 || !strings.Contains(errOut, "Session s1 has no checkpoints") {
		t.Errorf("checkpoints: exit %d %s", code, errOut)
	}
	code, _, errOut := r.sessions(t, "undo", "s1")
	if code != exitFailed || !strings.Contains(errOut, "hearth: checkpoints are off in your config ([checkpoints] enabled = false in ") {
		t.Errorf("undo: exit %d %s", code, errOut)
	}
}

// TestSessionsRestoreErrors: usage errors exit 2 before anything is
// opened; a session, a message or a workspace that is not there exits 1
// with what to do.
func TestSessionsRestoreErrors(t *testing.T) {
	r, _, _ := restoreEnv(t)
	usage := []struct {
		args []string
		want string
	}{
		{[]string{"undo"}, "takes 1 argument(s), got 0"},
		{[]string{"redo", "s1", "s2"}, "takes 1 argument(s), got 2"},
		{[]string{"rewind", "s1"}, "say where to: --to MSG"},
		{[]string{"rewind", "s1", "--to", "1", "--checkpoint", "2"}, "not both"},
		{[]string{"rewind", "s1", "--to", "1", "--files-only", "--conversation-only"}, "--files-only or --conversation-only, not both"},
		{[]string{"rewind", "s1", "--checkpoint", "2", "--conversation-only"}, "--checkpoint rewinds files only"},
		{[]string{"rewind", "s1", "--to", "-1"}, "numbered from 1 (--to 0 is the start"},
		{[]string{"fork", "s1", "--at", "0"}, "numbered from 1"},
		{[]string{"prune", "--grace", "-1s"}, "want a duration of 0 or more"},
		{[]string{"fork", "s1", "--files"}, "--files needs --at MSG"},
		{[]string{"fork"}, "takes 1 argument(s)"},
		{[]string{"undo", "s1", "--bogus"}, "unknown flag"},
		{[]string{"archive"}, "name at least one session id"},
	}
	for _, tc := range usage {
		code, out, errOut := r.sessions(t, tc.args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "hearth --help") {
			t.Errorf("%v: exit %d %q, want 2 with %q", tc.args, code, errOut, tc.want)
		}
	}
	failed := []struct {
		args []string
		want string
	}{
		{[]string{"undo", "nope"}, `no session "nope"`},
		{[]string{"rewind", "s1", "--to", "99"}, "session s1 has no message 99 (its messages are 1 to "},
		{[]string{"fork", "s1", "--at", "99"}, "session s1 has no message 99"},
	}
	for _, tc := range failed {
		code, _, errOut := r.sessions(t, tc.args...)
		if code != exitFailed || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "hearth --help") {
			t.Errorf("%v: exit %d %q, want 1 with %q", tc.args, code, errOut, tc.want)
		}
	}

	// --workspace elsewhere is said, and the session's checkpoints are
	// not found there.
	other := t.TempDir()
	code, _, errOut := runHearth(t, r.env, "-w", other, "sessions", "undo", "s1", "--dry-run")
	if code != exitFailed || !strings.Contains(errOut, "hearth: session s1 worked in "+r.ws+"; restoring in "+other+", as --workspace says") || strings.Contains(errOut, "hearth: hearth:") {
		t.Errorf("undo -w elsewhere: exit %d %s", code, errOut)
	}
	// A workspace that is gone.
	os.RemoveAll(r.ws)
	code, _, errOut = r.sessions(t, "undo", "s1")
	if code != exitFailed || !strings.Contains(errOut, "which is not a folder here (any more): its files can be restored only there") {
		t.Errorf("undo in a workspace that is gone: exit %d %s", code, errOut)
	}
}

// TestSessionsRestoreHelp: each command's help has an example.
func TestSessionsRestoreHelp(t *testing.T) {
	for _, c := range []string{"undo", "redo", "rewind", "fork", "archive", "unarchive", "checkpoints", "prune"} {
		code, out, _ := runHearth(t, nil, "sessions", c, "--help")
		if code != 0 || !strings.Contains(out, "Examples:\n  hearth sessions ") {
			t.Errorf("%s --help: exit %d\n%s", c, code, out)
		}
	}
	_, out, _ := runHearth(t, nil, "sessions", "rewind", "--help")
	for _, want := range []string{"--to MSG", "--checkpoint N", "--files-only", "--conversation-only", "--dry-run", "--overwrite", "--keep PATH"} {
		if !strings.Contains(out, want) {
			t.Errorf("rewind --help lacks %q", want)
		}
	}
}

// TestSessionsPrune: the snapshots of a removed session go.
func TestSessionsPrune(t *testing.T) {
	r, _, _, _ := twoTurns(t)
	prune := func() (removed int) {
		t.Helper()
		code, out, errOut := r.run(t, "sessions", "prune", "--grace", "0", "--json")
		var p struct{ Objects, Kept int }
		if err := json.Unmarshal([]byte(out), &p); code != 0 || err != nil {
			t.Fatalf("prune: exit %d %v\n%s\n%s", code, err, out, errOut)
		}
		return p.Objects
	}
	prune()
	if n := prune(); n != 0 {
		t.Errorf("a second prune removed %d objects", n)
	}
	if code, _, errOut := r.sessions(t, "rm", "s1"); code != 0 {
		t.Fatalf("rm: %d %s", code, errOut)
	}
	code, out, errOut := r.run(t, "sessions", "prune", "--grace", "0")
	if code != 0 || !regexp.MustCompile(`^Removed [1-9][0-9]* objects \(.+\) from the checkpoints of .+; [0-9]+ kept\.\n$`).MatchString(out) {
		t.Errorf("prune after rm: exit %d %q %s", code, out, errOut)
	}
}

// TestRunSaysWhatCheckpointsCannotKeep: a file over the size cap is named
// once on stderr, and in the checkpoints' table.
func TestRunSaysWhatCheckpointsCannotKeep(t *testing.T) {
	r := newRunEnv(t)
	os.WriteFile(filepath.Join(r.env["HEARTH_HOME"], "config.toml"), []byte("[checkpoints]\nmax_file_size = 16\n"), 0o644)
	os.WriteFile(filepath.Join(r.ws, "big.bin"), []byte(strings.Repeat("x", 100)), 0o644)
	r.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"one.txt","content":"1\n"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"two.txt","content":"2\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("done")))
	code, out, errOut := r.run(t, "run", "--context", "s1", "--approval-mode", "auto_edit", "--trust", "trusted", "write")
	const want = "hearth: checkpoints do not keep big.bin: larger than their size cap ([checkpoints] max_file_size), so an undo cannot bring it back\n"
	if code != 0 || out != "done\n" || strings.Count(errOut, want) != 1 {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if _, out, _ := r.sessions(t, "checkpoints", "s1"); !strings.Contains(out, "(1 too large)") {
		t.Errorf("checkpoints:\n%s", out)
	}
}
