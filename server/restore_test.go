package server

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// fileTools gives the fixture the built-in file tools, in yolo mode, with
// checkpoints kept in a directory of the test.
func fileTools(t *testing.T) func(*setup) {
	return func(o *setup) {
		o.Profile.Tools = []string{"read_file", "write_file", "edit"}
		o.Profile.Mode = hearth.ModeYolo
		o.Checkpoints = t.TempDir()
	}
}

// writeTurn runs a turn whose model writes path, then answers; it returns
// the turn's events.
func (f *fixture) writeTurn(id, prompt, path, content, answer string) []frame {
	f.t.Helper()
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("w-"+path, "write_file", `{"file_path":"`+path+`","content":"`+content+`"}`)),
		llmtest.OllamaStream("m", llmtest.Text(answer)))
	frs := f.turn(id, map[string]any{"message": prompt}).rest()
	if last := frs[len(frs)-1]; last.Type != "done" || last.str("reason") != "stop" {
		f.t.Fatalf("turn %q: %v", prompt, datas(frs))
	}
	return frs
}

func (f *fixture) read(rel string) string {
	f.t.Helper()
	data, err := os.ReadFile(filepath.Join(f.ws, rel))
	if os.IsNotExist(err) {
		return "<none>"
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return string(data)
}

// restoreAnswerJSON is restoreJSON as a client decodes it.
type restoreAnswerJSON struct {
	Type       string `json:"type"`
	Op         string `json:"op"`
	Checkpoint int64  `json:"checkpoint"`
	Turn       int    `json:"turn"`
	Through    int    `json:"through"`
	Files      []struct {
		Path   string `json:"path"`
		Action string `json:"action"`
	} `json:"files"`
	Kept         []string `json:"kept"`
	Conflicts    []string `json:"conflicts"`
	DryRun       bool     `json:"dry_run"`
	Conversation *struct {
		Through  int    `json:"through"`
		Removed  int    `json:"removed"`
		Archived string `json:"archived"`
	} `json:"conversation"`
}

func (r restoreAnswerJSON) changes() []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Action+" "+f.Path)
	}
	return out
}

// TestUndoRedoRewindOverHTTP: a turn's checkpoint events come in its
// stream between the call and its result; undo previews, then takes the
// files back; redo brings them again; a file the user changed is a
// conflict (nothing changes until the client says overwrite or keep), and
// what an overwrite replaced comes back with a rewind to the restore's
// own checkpoint; a rewind to a message cuts the conversation and keeps it
// whole in an archived session.
func TestUndoRedoRewindOverHTTP(t *testing.T) {
	f := newFixture(t, fileTools(t))
	id := f.newSession()
	base := "/v1/sessions/" + id

	frs := f.writeTurn(id, "write one", "one.txt", "1\\n", "one")
	var order []string
	for _, fr := range frs {
		if fr.Type == "tool_call" || fr.Type == "checkpoint" || fr.Type == "tool_result" {
			order = append(order, fr.Type+" "+fr.str("id"))
		}
		if fr.Type == "checkpoint" {
			if n, _ := fr.ev["checkpoint"].(float64); n <= 0 || fr.str("name") != "write_file" {
				t.Errorf("checkpoint event %s", fr.Data)
			}
		}
	}
	if want := []string{"tool_call w-one.txt", "checkpoint w-one.txt", "tool_result w-one.txt"}; !slices.Equal(order, want) {
		t.Fatalf("events %v, want %v", order, want)
	}
	f.writeTurn(id, "write two", "two.txt", "2\\n", "two")
	if f.read("one.txt") != "1\n" || f.read("two.txt") != "2\n" {
		t.Fatal("the turns did not write")
	}

	var cps struct{ Checkpoints []session.Checkpoint }
	f.call("GET", base+"/checkpoints", nil, http.StatusOK, &cps)
	var kinds []string
	for _, c := range cps.Checkpoints {
		kinds = append(kinds, c.Kind)
	}
	if len(kinds) < 4 || kinds[0] != "before" || cps.Checkpoints[0].CallID != "w-one.txt" || cps.Checkpoints[0].SessionID != id {
		t.Fatalf("checkpoints %v: %+v", kinds, cps.Checkpoints)
	}

	// A preview changes nothing.
	var res restoreAnswerJSON
	f.call("POST", base+"/undo", map[string]any{"dry_run": true}, http.StatusOK, &res)
	if !res.DryRun || res.Type != "restore" || res.Op != "undo" || res.Turn != 5 || !slices.Equal(res.changes(), []string{"delete two.txt"}) || res.Conflicts == nil || len(res.Conflicts) > 0 {
		t.Fatalf("preview %+v", res)
	}
	if f.read("two.txt") != "2\n" {
		t.Fatal("the preview changed a file")
	}
	// Undo, undo, and nothing left to undo; an empty body is fine.
	res = restoreAnswerJSON{}
	f.call("POST", base+"/undo", nil, http.StatusOK, &res)
	if res.DryRun || res.Checkpoint == 0 || !slices.Equal(res.changes(), []string{"delete two.txt"}) || f.read("two.txt") != "<none>" {
		t.Fatalf("undo %+v; two.txt %q", res, f.read("two.txt"))
	}
	f.call("POST", base+"/undo", map[string]any{}, http.StatusOK, &res)
	if f.read("one.txt") != "<none>" {
		t.Fatal("the second undo left one.txt")
	}
	if status, code, msg := f.errorCode(f.request("POST", base+"/undo", nil)); status != http.StatusConflict || code != "nothing_to_undo" {
		t.Errorf("a third undo: %d %s %s", status, code, msg)
	}
	// Redo in the reverse order.
	f.call("POST", base+"/redo", nil, http.StatusOK, &res)
	if res.Op != "redo" || res.Turn != 1 || f.read("one.txt") != "1\n" || f.read("two.txt") != "<none>" {
		t.Fatalf("redo %+v", res)
	}
	f.call("POST", base+"/redo", nil, http.StatusOK, &res)
	if f.read("two.txt") != "2\n" {
		t.Fatal("the second redo did not bring two.txt back")
	}
	if status, code, _ := f.errorCode(f.request("POST", base+"/redo", nil)); status != http.StatusConflict || code != "nothing_to_redo" {
		t.Errorf("a third redo: %d %s", status, code)
	}

	// The user changes two.txt: undo would overwrite it.
	os.WriteFile(filepath.Join(f.ws, "two.txt"), []byte("the user's\n"), 0o644)
	res = restoreAnswerJSON{}
	f.call("POST", base+"/undo", map[string]any{"dry_run": true}, http.StatusOK, &res)
	if !slices.Equal(res.Conflicts, []string{"two.txt"}) {
		t.Fatalf("preview of a conflict: %+v", res)
	}
	var conflict struct{ Error errorBody }
	f.call("POST", base+"/undo", nil, http.StatusConflict, &conflict)
	if conflict.Error.Code != "restore_conflict" || !slices.Equal(conflict.Error.Paths, []string{"two.txt"}) || !strings.Contains(conflict.Error.Message, `"overwrite": true`) {
		t.Fatalf("conflict %+v", conflict)
	}
	if f.read("two.txt") != "the user's\n" {
		t.Fatal("a refused undo changed the file")
	}
	res = restoreAnswerJSON{}
	f.call("POST", base+"/undo", map[string]any{"overwrite": true}, http.StatusOK, &res)
	if f.read("two.txt") != "<none>" || res.Checkpoint == 0 {
		t.Fatalf("undo with overwrite %+v", res)
	}
	// The user's version is in the undo's own checkpoint.
	f.call("POST", base+"/rewind", map[string]any{"checkpoint": res.Checkpoint}, http.StatusOK, &res)
	if f.read("two.txt") != "the user's\n" {
		t.Fatalf("the user's version did not come back: %q", f.read("two.txt"))
	}

	// A rewind to the end of the first turn: files and conversation. The
	// user changes one.txt first, and keeps the change.
	os.WriteFile(filepath.Join(f.ws, "one.txt"), []byte("mine\n"), 0o644)
	res = restoreAnswerJSON{}
	f.call("POST", base+"/rewind", map[string]any{"through": 4, "dry_run": true}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 4 || res.Conversation.Archived != "" ||
		!slices.Equal(res.Conflicts, []string{"one.txt"}) || !slices.Equal(res.changes(), []string{"modify one.txt", "delete two.txt"}) {
		t.Fatalf("rewind preview %+v", res)
	}
	res = restoreAnswerJSON{}
	f.call("POST", base+"/rewind", map[string]any{"through": 4, "keep": []string{"one.txt"}}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 4 || res.Conversation.Archived == "" || !slices.Equal(res.Kept, []string{"one.txt"}) {
		t.Fatalf("rewind %+v", res)
	}
	if f.read("one.txt") != "mine\n" || f.read("two.txt") != "<none>" {
		t.Fatalf("after the rewind: one %q two %q", f.read("one.txt"), f.read("two.txt"))
	}
	var d sessionDetail
	f.call("GET", base, nil, http.StatusOK, &d)
	if len(d.Messages) != 4 || d.Messages[3].Content != "one" {
		t.Fatalf("after the rewind: %+v", d.Messages)
	}
	// The rewind's record stays, at the message rewound to (the web UI
	// shows it there); those of the part removed go with it.
	cps.Checkpoints = nil
	f.call("GET", base+"/checkpoints", nil, http.StatusOK, &cps)
	last := cps.Checkpoints[len(cps.Checkpoints)-1]
	if last.Kind != "rewind" || last.Seq != 4 || last.ID != res.Checkpoint {
		t.Errorf("the rewind's record: %+v (answer %+v)", last, res)
	}
	for _, c := range cps.Checkpoints {
		if c.Seq > 4 {
			t.Errorf("a record of the removed messages is left: %+v", c)
		}
	}
	var list struct{ Sessions []sessionJSON }
	f.call("GET", "/v1/sessions?archived=true", nil, http.StatusOK, &list)
	if len(list.Sessions) != 1 || list.Sessions[0].ID != res.Conversation.Archived || !list.Sessions[0].Archived || list.Sessions[0].MessageCount != 8 {
		t.Fatalf("archived sessions: %+v", list.Sessions)
	}
	// The conversation alone, back to the first prompt.
	f.call("POST", base+"/rewind", map[string]any{"through": 1, "conversation_only": true}, http.StatusOK, &res)
	d = sessionDetail{}
	f.call("GET", base, nil, http.StatusOK, &d)
	if len(d.Messages) != 1 || f.read("one.txt") != "mine\n" {
		t.Fatalf("after a rewind of the conversation: %d messages, one.txt %q", len(d.Messages), f.read("one.txt"))
	}
}

// TestRewindToTheStart: "start" takes the session back to before its
// first prompt: no message, the files as they were.
func TestRewindToTheStart(t *testing.T) {
	f := newFixture(t, fileTools(t))
	id := f.newSession()
	base := "/v1/sessions/" + id
	f.writeTurn(id, "write one", "one.txt", "1\\n", "one")
	var res restoreAnswerJSON
	f.call("POST", base+"/rewind", map[string]any{"start": true, "dry_run": true}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 4 || !slices.Equal(res.changes(), []string{"delete one.txt"}) || f.read("one.txt") != "1\n" {
		t.Fatalf("preview of a rewind to the start: %+v", res)
	}
	res = restoreAnswerJSON{}
	f.call("POST", base+"/rewind", map[string]any{"start": true}, http.StatusOK, &res)
	var d sessionDetail
	f.call("GET", base, nil, http.StatusOK, &d)
	if len(d.Messages) != 0 || f.read("one.txt") != "<none>" || res.Conversation == nil || res.Conversation.Archived == "" {
		t.Fatalf("after a rewind to the start: %d messages, one.txt %q, %+v", len(d.Messages), f.read("one.txt"), res)
	}
}

func TestRestoreRefusals(t *testing.T) {
	f := newFixture(t, fileTools(t))
	id := f.newSession()
	f.writeTurn(id, "write one", "one.txt", "1\\n", "one")
	base := "/v1/sessions/" + id
	tests := []struct {
		name, path string
		body       any
		status     int
		code       string
	}{
		{"rewind without a body", "/rewind", nil, 400, "bad_request"},
		{"rewind to nowhere", "/rewind", map[string]any{"dry_run": true}, 400, "bad_request"},
		{"rewind to a message and a checkpoint", "/rewind", map[string]any{"through": 1, "checkpoint": 1}, 400, "bad_request"},
		{"rewind to a message and the start", "/rewind", map[string]any{"through": 1, "start": true}, 400, "bad_request"},
		{"rewind to a checkpoint and the start", "/rewind", map[string]any{"checkpoint": 1, "start": true}, 400, "bad_request"},
		{"files only and conversation only", "/rewind", map[string]any{"through": 1, "files_only": true, "conversation_only": true}, 400, "bad_request"},
		{"a checkpoint's conversation", "/rewind", map[string]any{"checkpoint": 1, "conversation_only": true}, 400, "bad_request"},
		{"a message it does not have", "/rewind", map[string]any{"through": 99}, 400, "bad_request"},
		{"a checkpoint it does not have", "/rewind", map[string]any{"checkpoint": 99999}, 400, "bad_request"},
		{"a negative seq", "/rewind", map[string]any{"through": -1}, 400, "bad_request"},
		{"undo of a message", "/undo", map[string]any{"through": 1}, 400, "bad_request"},
		{"fork at a message it does not have", "/fork", map[string]any{"through": 99}, 400, "bad_request"},
		{"fork of the files at no message", "/fork", map[string]any{"files": true}, 400, "bad_request"},
		{"fork with a two-line title", "/fork", map[string]any{"title": "a\nb"}, 400, "bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, msg := f.errorCode(f.request("POST", base+tt.path, tt.body))
			if status != tt.status || code != tt.code {
				t.Errorf("%d %s (%s), want %d %s", status, code, msg, tt.status, tt.code)
			}
		})
	}
	for _, req := range []struct {
		path string
		body any
	}{{"/undo", nil}, {"/redo", map[string]any{"dry_run": true}}, {"/rewind", map[string]any{"through": 1}}, {"/fork", nil}} {
		path := req.path
		status, code, _ := f.errorCode(f.request("POST", "/v1/sessions/s-nope"+path, req.body))
		if status != 404 || code != "not_found" {
			t.Errorf("POST %s of a missing session: %d %s", path, status, code)
		}
	}
	if status, code, _ := f.errorCode(f.request("GET", "/v1/sessions/s-nope/checkpoints", nil)); status != 404 || code != "not_found" {
		t.Errorf("checkpoints of a missing session: %d %s", status, code)
	}
	if f.read("one.txt") != "1\n" {
		t.Error("a refused request changed a file")
	}
}

// TestRestoreWithoutCheckpoints: a server that keeps no checkpoints says
// so, and still rewinds a conversation.
func TestRestoreWithoutCheckpoints(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.NoCheckpoints = true })
	id := f.newSession()
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("hello")))
	f.turn(id, map[string]any{"message": "hi"}).rest()
	base := "/v1/sessions/" + id
	for _, req := range []struct {
		path string
		body any
	}{{"/undo", nil}, {"/redo", nil}, {"/rewind", map[string]any{"through": 1}}} {
		if status, code, msg := f.errorCode(f.request("POST", base+req.path, req.body)); status != http.StatusConflict || code != "checkpoints_off" {
			t.Errorf("%s: %d %s %s", req.path, status, code, msg)
		}
	}
	var cps struct{ Checkpoints []session.Checkpoint }
	f.call("GET", base+"/checkpoints", nil, http.StatusOK, &cps)
	if cps.Checkpoints == nil || len(cps.Checkpoints) != 0 {
		t.Errorf("checkpoints %+v", cps.Checkpoints)
	}
	var res restoreAnswerJSON
	f.call("POST", base+"/rewind", map[string]any{"through": 1, "conversation_only": true}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 1 {
		t.Errorf("rewind of the conversation: %+v", res)
	}
}

// TestRestoreWhileATurnRuns: undo, rewind and fork wait for the turn (409
// session_busy), even a preview; nothing changes.
func TestRestoreWhileATurnRuns(t *testing.T) {
	f := newFixture(t, func(o *setup) { o.Checkpoints = t.TempDir() })
	id := f.newSession()
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("c1", "write_note", `{"text":"x"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	st := f.turn(id, map[string]any{"message": "write"})
	st.until("approval_required")
	base := "/v1/sessions/" + id
	for _, req := range []struct {
		path string
		body any
	}{
		{"/undo", nil}, {"/undo", map[string]any{"dry_run": true}}, {"/redo", nil},
		{"/rewind", map[string]any{"through": 1}}, {"/fork", nil},
	} {
		if status, code, msg := f.errorCode(f.request("POST", base+req.path, req.body)); status != http.StatusConflict || code != "session_busy" || !strings.Contains(msg, "cancel it") {
			t.Errorf("%s %v: %d %s %s", req.path, req.body, status, code, msg)
		}
	}
	f.call("POST", "/v1/approvals/c1", map[string]any{"decision": "allow", "session_id": id}, http.StatusOK, nil)
	var checkpoint bool
	for _, fr := range st.rest() {
		checkpoint = checkpoint || fr.Type == "checkpoint" && fr.str("id") == "c1"
	}
	if !checkpoint {
		t.Error("no checkpoint event before the edit tool ran")
	}
	// Once it has ended the session is free: its turn changed no file
	// (write_note keeps its note in the test), so there is nothing to undo.
	if status, code, msg := f.errorCode(f.request("POST", base+"/undo", map[string]any{"dry_run": true})); status != http.StatusConflict || code != "nothing_to_undo" {
		t.Errorf("undo after the turn: %d %s %s", status, code, msg)
	}
	var res restoreAnswerJSON
	f.call("POST", base+"/rewind", map[string]any{"through": 1, "dry_run": true}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 3 {
		t.Errorf("preview of a rewind after the turn: %+v", res)
	}
}

// TestForkOverHTTP: a fork at a message takes the conversation up to it
// and, when asked, brings the files back; it is a session of its own.
func TestForkOverHTTP(t *testing.T) {
	f := newFixture(t, fileTools(t))
	id := f.newSession()
	f.writeTurn(id, "write one", "one.txt", "1\\n", "one")
	f.writeTurn(id, "write two", "two.txt", "2\\n", "two")

	var fork forkJSON
	resp := f.send(f.request("POST", "/v1/sessions/"+id+"/fork", map[string]any{"through": 4, "files": true, "title": "Only one"}))
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("fork: %d %s", resp.StatusCode, body)
	}
	loc := resp.Header.Get("Location")
	f.call("GET", loc, nil, http.StatusOK, &fork.sessionJSON)
	if fork.ForkOf != id || fork.ForkSeq != 4 || fork.Title != "Only one" || fork.MessageCount != 4 || fork.Archived {
		t.Fatalf("fork %+v", fork.sessionJSON)
	}
	if f.read("two.txt") != "<none>" || f.read("one.txt") != "1\n" {
		t.Fatalf("the fork's files: one %q two %q", f.read("one.txt"), f.read("two.txt"))
	}
	// The original keeps its conversation.
	var d sessionDetail
	f.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if len(d.Messages) != 8 {
		t.Errorf("the original has %d messages", len(d.Messages))
	}
	// A fork of everything, without files, answers the session whole.
	var all struct {
		sessionJSON
		Files *restoreAnswerJSON `json:"files"`
	}
	f.call("POST", "/v1/sessions/"+id+"/fork", nil, http.StatusCreated, &all)
	if all.ForkOf != id || all.MessageCount != 8 || all.Files != nil || !strings.HasSuffix(all.Title, "(fork)") {
		t.Errorf("fork of all: %+v", all)
	}
	var withFiles struct {
		sessionJSON
		Files *restoreAnswerJSON `json:"files"`
	}
	// Back to the end of the second turn, from the first fork's files: the
	// first fork's restore was not the original's doing, so it asks.
	code, errCode, _ := f.errorCode(f.request("POST", "/v1/sessions/"+id+"/fork", map[string]any{"through": 8, "files": true}))
	if code != http.StatusConflict || errCode != "restore_conflict" {
		t.Fatalf("fork over the other fork's files: %d %s", code, errCode)
	}
	f.call("POST", "/v1/sessions/"+id+"/fork", map[string]any{"through": 8, "files": true, "overwrite": true}, http.StatusCreated, &withFiles)
	if withFiles.Files == nil || withFiles.Files.Type != "restore" || f.read("two.txt") != "2\n" {
		t.Errorf("fork with files: %+v, two.txt %q", withFiles.Files, f.read("two.txt"))
	}
}

// TestArchiveOverHTTP: an archived session leaves the list, is listed with
// archived=true, is still readable, and comes back.
func TestArchiveOverHTTP(t *testing.T) {
	f := newFixture(t)
	a, b := f.newSession(), f.newSession()
	var se sessionJSON
	f.call("PATCH", "/v1/sessions/"+a, map[string]any{"archived": true}, http.StatusOK, &se)
	if !se.Archived || se.ID != a {
		t.Fatalf("archived %+v", se)
	}
	ids := func(q string) []string {
		var list struct{ Sessions []sessionJSON }
		f.call("GET", "/v1/sessions"+q, nil, http.StatusOK, &list)
		var out []string
		for _, s := range list.Sessions {
			out = append(out, s.ID)
		}
		return out
	}
	if got := ids(""); !slices.Equal(got, []string{b}) {
		t.Errorf("default list %v", got)
	}
	if got := ids("?archived=true"); !slices.Equal(got, []string{a}) {
		t.Errorf("archived list %v", got)
	}
	if got := ids("?archived=0"); !slices.Equal(got, []string{b}) {
		t.Errorf("archived=0 %v", got)
	}
	f.call("GET", "/v1/sessions/"+a, nil, http.StatusOK, nil)
	// Rename and bring back at once.
	se = sessionJSON{}
	f.call("PATCH", "/v1/sessions/"+a, map[string]any{"archived": false, "title": "Back"}, http.StatusOK, &se)
	if se.Archived || se.Title != "Back" {
		t.Errorf("unarchived %+v", se)
	}
	if got := ids(""); len(got) != 2 {
		t.Errorf("after unarchive %v", got)
	}
	for _, tt := range []struct {
		method, path string
		body         any
		status       int
		code         string
	}{
		{"GET", "/v1/sessions?archived=maybe", nil, 400, "bad_request"},
		{"PATCH", "/v1/sessions/" + a, map[string]any{"archived": "yes"}, 400, "bad_request"},
		{"PATCH", "/v1/sessions/s-nope", map[string]any{"archived": true}, 404, "not_found"},
	} {
		if status, code, msg := f.errorCode(f.request(tt.method, tt.path, tt.body)); status != tt.status || code != tt.code {
			t.Errorf("%s %s %v: %d %s %s", tt.method, tt.path, tt.body, status, code, msg)
		}
	}
}

// TestRestoreWaitsForTheStoreLock: a session held in the store (by a turn
// another process is starting, say) is busy for a restore too.
func TestRestoreWaitsForTheStoreLock(t *testing.T) {
	f := newFixture(t, fileTools(t))
	id := f.newSession()
	f.writeTurn(id, "write one", "one.txt", "1\\n", "one")
	unlock, err := f.store.Lock(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/undo", "/fork"} {
		body := map[string]any{}
		if path == "/fork" {
			body = map[string]any{"through": 4, "files": true}
		}
		if status, code, msg := f.errorCode(f.request("POST", "/v1/sessions/"+id+path, body)); status != http.StatusConflict || code != "session_busy" {
			t.Errorf("%s while the session is locked: %d %s %s", path, status, code, msg)
		}
	}
	if f.read("one.txt") != "1\n" {
		t.Error("a refused undo changed the file")
	}
	unlock()
	f.call("POST", "/v1/sessions/"+id+"/undo", nil, http.StatusOK, nil)
	if f.read("one.txt") != "<none>" {
		t.Error("the undo did not happen once the lock was free")
	}
}

// TestSharedStoreRestoreWaitsForATurnElsewhere: on a shared store, an
// undo or a rewind through B of a session whose turn runs on A is refused
// with session_busy, naming A; the turn's checkpoint event reaches B's
// stream as A sent it.
func TestSharedStoreRestoreWaitsForATurnElsewhere(t *testing.T) {
	fx := sharedFixtures(t, 2)
	a, b := fx[0], fx[1]
	id := a.newSession()
	a.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("c1", "write_note", `{"text":"x"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Done.")))
	own := a.turn(id, map[string]any{"message": "write"})
	first := own.until("approval_required")
	viaB := b.follow(id, "")
	// B approves once it has seen the approval asked (the relay may lag).
	seenB := viaB.until("approval_required")
	for _, req := range []struct {
		path string
		body any
	}{{"/undo", nil}, {"/rewind", map[string]any{"through": 1, "conversation_only": true}}, {"/fork", nil}} {
		status, code, msg := b.errorCode(b.request("POST", "/v1/sessions/"+id+req.path, req.body))
		if status != http.StatusConflict || code != "session_busy" || !strings.Contains(msg, "hearth on ") {
			t.Errorf("%s through B: %d %s %s", req.path, status, code, msg)
		}
	}
	b.call("POST", "/v1/approvals/c1", map[string]any{"decision": "allow"}, http.StatusOK, nil)
	all := append(first, own.rest()...)
	gotB := append(seenB, viaB.rest()...)
	if !slices.Equal(datas(gotB), datas(all)) {
		t.Errorf("B streamed\n%s\nA streamed\n%s", strings.Join(datas(gotB), "\n"), strings.Join(datas(all), "\n"))
	}
	if !slices.ContainsFunc(gotB, func(fr frame) bool {
		return fr.Type == "checkpoint" && fr.str("id") == "c1" && fr.str("name") == "write_note"
	}) {
		t.Errorf("no checkpoint event in B's stream: %v", types(gotB))
	}
	// Once it has ended, B rewinds the conversation.
	var res restoreAnswerJSON
	b.call("POST", "/v1/sessions/"+id+"/rewind", map[string]any{"through": 1, "conversation_only": true}, http.StatusOK, &res)
	if res.Conversation == nil || res.Conversation.Removed != 3 {
		t.Errorf("rewind through B: %+v", res)
	}
	var d sessionDetail
	a.call("GET", "/v1/sessions/"+id, nil, http.StatusOK, &d)
	if len(d.Messages) != 1 {
		t.Errorf("A sees %d messages after B's rewind", len(d.Messages))
	}
}
