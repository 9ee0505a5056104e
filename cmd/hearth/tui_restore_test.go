package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// TestTUIUndoRedoRewind drives /undo, /redo and /rewind in the real
// binary: a turn edits a file and writes a new one; /undo previews and
// takes both back; /redo brings them back; after a second turn, /rewind to
// before the first message brings the files to where they started, empties
// the conversation, and puts the first prompt back in the input box.
func TestTUIUndoRedoRewind(t *testing.T) {
	e := newE2E(t)
	notes := filepath.Join(e.ws, "notes.txt")
	os.WriteFile(notes, []byte("first draft\n"), 0o644)
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("edit", `{"file_path":"notes.txt","old_string":"first draft","new_string":"second draft"}`)),
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"todo.txt","content":"ship it\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Edited the notes and wrote a todo.")),
		llmtest.OllamaWhole("m", llmtest.Text("Draft work")))
	s := startTUI(t, e, 100, 40, "--approval-mode", "auto_edit")
	s.send("update the notes")
	sc := s.waitText("Edited the notes and wrote a todo.")
	if !strings.Contains(sc, "◦ checkpoint") {
		t.Errorf("the cards do not show their checkpoints:\n%s", sc)
	}
	s.waitText("Draft work") // the title: the model's last scripted reply is used
	file := func(name string) string {
		data, err := os.ReadFile(filepath.Join(e.ws, name))
		if err != nil {
			return "<none>"
		}
		return string(data)
	}
	files := func(what, wantNotes, wantTodo, wantExtra string) {
		t.Helper()
		if got := file("notes.txt"); got != wantNotes {
			t.Errorf("%s: notes.txt %q, want %q", what, got, wantNotes)
		}
		if got := file("todo.txt"); got != wantTodo {
			t.Errorf("%s: todo.txt %q, want %q", what, got, wantTodo)
		}
		if got := file("extra.txt"); got != wantExtra {
			t.Errorf("%s: extra.txt %q, want %q", what, got, wantExtra)
		}
	}
	files("after the turn", "second draft\n", "ship it\n", "<none>")

	s.send("/undo")
	s.waitText("Undo turn 1 “update the notes”?")
	sc = s.waitText("y/enter undo · n/esc cancel") // the preview's last line: all of it is drawn
	for _, want := range []string{"modify  notes.txt", "delete  todo.txt", "y/enter undo · n/esc cancel"} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in the preview:\n%s", want, sc)
		}
	}
	files("after the preview", "second draft\n", "ship it\n", "<none>")
	s.keys("y")
	s.waitText("Undid turn 1 “update the notes”: 2 files restored.")
	files("after /undo", "first draft\n", "<none>", "<none>")

	s.send("/redo")
	s.waitText("Redo turn 1 “update the notes”?")
	sc = s.waitText("n/esc cancel")
	if !strings.Contains(sc, "create  todo.txt") || !strings.Contains(sc, "modify  notes.txt") {
		t.Errorf("the redo preview:\n%s", sc)
	}
	s.keys("Enter")
	s.waitText("Redid turn 1 “update the notes”: 2 files restored.")
	files("after /redo", "second draft\n", "ship it\n", "<none>")

	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"extra.txt","content":"more\n"}`)),
		llmtest.OllamaStream("m", llmtest.Text("Wrote the extra file.")))
	s.send("add an extra file")
	s.waitText("Wrote the extra file.")
	files("after the second turn", "second draft\n", "ship it\n", "more\n")

	s.send("/rewind")
	sc = s.waitText("Rewind to before which message?")
	if !strings.Contains(sc, "› 2. add an extra file") || !strings.Contains(sc, "1. update the notes") {
		t.Errorf("the messages offered:\n%s", sc)
	}
	s.keys("Down")
	s.waitText("› 1. update the notes")
	s.keys("Enter")
	s.waitText("› 1. Files and conversation")
	s.keys("Enter")
	s.waitText("Rewind to before message 1 “update the notes” (files and conversation)?")
	sc = s.waitText("the 10 messages after it removed") // the preview's last line: all of it is drawn
	for _, want := range []string{"modify  notes.txt", "delete  todo.txt", "delete  extra.txt", "the 10 messages after it removed"} {
		if !strings.Contains(sc, want) {
			t.Errorf("no %q in the preview:\n%s", want, sc)
		}
	}
	files("after the rewind's preview", "second draft\n", "ship it\n", "more\n")
	s.keys("y")
	sc = s.waitText("Rewound to before message 1 “update the notes”: 3 files restored, 10 messages removed.")
	files("after /rewind", "first draft\n", "<none>", "<none>")
	for _, gone := range []string{"Edited the notes", "Wrote the extra file.", "add an extra file"} {
		if strings.Contains(sc, gone) {
			t.Errorf("%q is still on the screen after the rewind:\n%s", gone, sc)
		}
	}
	inInput := false
	for _, l := range strings.Split(sc, "\n") {
		if strings.TrimRight(l, " ") == " › update the notes" { // a prompt in the conversation
			t.Errorf("the first prompt is still in the conversation:\n%s", sc)
		}
		if strings.HasPrefix(l, "│ › update the notes ") { // the input box
			inInput = true
		}
	}
	if !inInput {
		t.Errorf("the prompt is not back in the input box:\n%s", sc)
	}
	list, err := e.store().List(context.Background(), session.ListOptions{Archived: true})
	if err != nil || len(list) != 1 {
		t.Fatalf("archived sessions: %+v %v", list, err)
	}

	// Sent again as it is, it continues the session, now empty.
	e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("A fresh start.")))
	s.keys("Enter")
	s.waitText("A fresh start.")
}
