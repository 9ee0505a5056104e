package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// The golden views are 80×24 with NO_COLOR and a fixed clock: the files
// under testdata are what a person would see (go test ./tui -update
// rewrites them after an intended change).

const goldenAnswer = "Here is the fix:\n\n```go\nfunc add(a, b int) int {\n\treturn a + b\n}\n```\n\n- it **adds**\n- it returns\n"

func TestGoldenViews(t *testing.T) {
	call := func(id, name, args string) agent.Event {
		return agent.Event{Type: agent.EventToolCall, ID: id, Name: name, Args: json.RawMessage(args)}
	}
	cases := []struct {
		name string
		play func(f *fixture)
	}{
		{"welcome", func(f *fixture) {}},
		{"thinking-live", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "why does the test fail?"})
			f.events(agent.Event{Type: agent.EventThinkingStart},
				agent.Event{Type: agent.EventThinkingDelta, Text: "The test compares floats with ==. I should look at the assertion and suggest a tolerance."})
			f.tick(2 * time.Second)
			f.send(tickMsg{})
		}},
		{"answer-streamed", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "fix add"})
			f.events(agent.Event{Type: agent.EventThinkingStart}, agent.Event{Type: agent.EventThinkingDelta, Text: "Simple."})
			f.tick(1500 * time.Millisecond)
			for _, c := range chunks(goldenAnswer, 5) {
				f.events(agent.Event{Type: agent.EventTextDelta, Text: c})
			}
			f.events(agent.Event{Type: agent.EventUsage, InputTokens: 3000, OutputTokens: 276}, agent.Event{Type: agent.EventDone, DoneReason: agent.DoneStop, Text: goldenAnswer})
			f.m.endJob()
			f.m.ctxLen = 32768
			f.send(tickMsg{})
		}},
		{"thinking-expanded", func(f *fixture) {
			f.busyTurn()
			f.events(agent.Event{Type: agent.EventThinkingDelta, Text: "First I read the file.\nThen I fix it."}, agent.Event{Type: agent.EventTextDelta, Text: "Done."},
				agent.Event{Type: agent.EventDone, DoneReason: agent.DoneStop})
			f.m.endJob()
			f.press("ctrl+t")
		}},
		{"approval", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "run the tests"})
			f.events(call("c1", "run_shell_command", `{"command":"go test ./..."}`),
				agent.Event{Type: agent.EventApprovalRequired, ID: "c1", Name: "run_shell_command", Reason: "run `go test ./...`"})
		}},
		{"approval-edit", func(f *fixture) {
			f.busyTurn()
			f.events(call("c1", "edit", `{"file_path":"a.go","old_string":"x := 1","new_string":"x := 2"}`),
				agent.Event{Type: agent.EventApprovalRequired, ID: "c1", Name: "edit", Reason: "edit a.go (1 change)"})
			f.press("down")
		}},
		{"tool-running", func(f *fixture) {
			f.busyTurn()
			f.events(call("c1", "run_shell_command", `{"command":"make test"}`))
			for i := 1; i <= 14; i++ {
				f.events(agent.Event{Type: agent.EventToolOutput, ID: "c1", Text: strings.Repeat("=", i) + " step\n"})
			}
			f.tick(3200 * time.Millisecond)
			f.send(tickMsg{})
		}},
		{"tool-done-diff", func(f *fixture) {
			f.busyTurn()
			f.events(call("c1", "edit", `{"file_path":"calc/add.go"}`))
			f.tick(200 * time.Millisecond)
			f.events(agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "edit", OK: true, Output: "ok",
				Display: "--- calc/add.go\n+++ calc/add.go\n@@ -1,4 +1,4 @@\n package calc\n \n-func Add(a, b int) int { return a - b }\n+func Add(a, b int) int { return a + b }\n"},
				call("c2", "read_file", `{"file_path":"/etc/shadow"}`),
				agent.Event{Type: agent.EventToolResult, ID: "c2", Name: "read_file", OK: false, Error: "refused to read /etc/shadow: it is outside the workspace ~/project"})
		}},
		{"completion", func(f *fixture) {
			f.typeText("/s")
		}},
		{"cancelled", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "write a long story"})
			f.events(agent.Event{Type: agent.EventTextDelta, Text: "Once upon a time there was a"})
			f.press("esc")
			f.events(agent.Event{Type: agent.EventDone, DoneReason: agent.DoneCancelled})
			f.send(turnDoneMsg{})
		}},
		{"resumed-failure", func(f *fixture) {
			at := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
			msg := func(seq int, role llm.Role, content string) session.Message {
				return session.Message{Seq: seq, Message: llm.Message{Role: role, Content: content}, CreatedAt: at}
			}
			failed := func(seq int, content string) session.Message {
				m := msg(seq, llm.RoleAssistant, content)
				m.Failure = true
				return m
			}
			partial := msg(3, llm.RoleAssistant, "The test compares floats with")
			partial.Partial = true
			f.send(sessionLoadedMsg{sess: &session.Session{ID: "s-7kq2m9xwa3", Title: "Why the test fails", MessageCount: 5},
				msgs: []session.Message{
					msg(1, llm.RoleUser, "hello"),
					failed(2, "Provider request failed: ollama chat: cannot reach http://127.0.0.1:11434; is Ollama running? start it with `ollama serve`"),
					msg(3, llm.RoleUser, "why does the test fail?"),
					partial,
					failed(5, "Provider request failed: ollama chat: model runner crashed"),
				}})
		}},
		{"tool-checkpoint", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "add a fixture"})
			f.events(call("c1", "write_file", `{"file_path":"testdata/big.json","content":"{}"}`),
				agent.Event{Type: agent.EventCheckpoint, ID: "c1", Name: "write_file", Checkpoint: &agent.CheckpointInfo{ID: 12, Seq: 2, Files: 230, TooLarge: []string{"data/dump.sql", "assets/video.mp4"}}})
			f.tick(300 * time.Millisecond)
			f.events(agent.Event{Type: agent.EventToolResult, ID: "c1", Name: "write_file", OK: true, Output: "Created testdata/big.json (1 lines)."})
		}},
		{"undo-preview", func(f *fixture) {
			f.restorePreview(hearth.Undo, goldenRestore())
		}},
		{"undo-conflict", func(f *fixture) {
			res := goldenRestore()
			res.Conflicts = []string{"calc/add.go"}
			f.restorePreview(hearth.Undo, res)
		}},
		{"undo-result", func(f *fixture) {
			res := goldenRestore()
			res.DryRun, res.Checkpoint, res.Kept = false, 14, []string{"calc/add.go"}
			res.Files = res.Files[1:]
			f.m.sessionID = "s-7kq2m9xwa3"
			f.m.restore = &restoreState{op: hearth.Undo, sessionID: f.m.sessionID, stage: stageWork, applying: true}
			f.send(restoreDoneMsg{res: res, turn: turnLabel{n: 3, text: "make add work"}})
		}},
		{"rewind-pick", func(f *fixture) {
			f.m.sessionID = "s-7kq2m9xwa3"
			f.send(rewindPointsMsg{sessionID: f.m.sessionID, points: []rewindPoint{
				{seq: 9, through: 8, n: 3, text: "now add a test for it"},
				{seq: 5, through: 4, n: 2, text: "make add work\nand keep it short"},
				{seq: 1, n: 1, text: "why does the test fail?"}}})
			f.press("down")
		}},
		{"rewind-preview", func(f *fixture) {
			f.m.sessionID = "s-7kq2m9xwa3"
			f.m.restore = &restoreState{op: hearth.Rewind, sessionID: f.m.sessionID, stage: stageWork,
				point: &rewindPoint{seq: 5, through: 4, n: 2, text: "make add work"}}
			res := goldenRestore()
			res.Op, res.Turn, res.Through = "rewind", 0, 4
			res.Conversation = &agent.ConversationRewind{Through: 4, Removed: 9}
			f.send(restoreDoneMsg{dry: true, res: res})
		}},
		{"plan-pinned", func(f *fixture) {
			f.busyTurn()
			f.m.tr.add(&userItem{text: "the parser drops the last token; fix it"})
			plan := func(states ...agent.PlanStatus) string {
				steps := []string{"Read the parser", "Fix the off-by-one in the token loop", "Run the tests", "Update the changelog"}
				p := agent.Plan{}
				for i, s := range states {
					p.Steps = append(p.Steps, agent.PlanStep{Step: steps[i], Status: s})
				}
				p.Steps[3].Reason = "there is none"
				b, _ := json.Marshal(p)
				return string(b)
			}
			P, I, D, S := agent.PlanPending, agent.PlanInProgress, agent.PlanDone, agent.PlanSkipped
			for i, args := range []string{plan(P, P, P, S), plan(D, I, P, S)} {
				id := fmt.Sprintf("p%d", i)
				p, _ := agent.ParsePlan(json.RawMessage(args))
				f.events(call(id, agent.PlanToolName, args), agent.Event{Type: agent.EventPlan, ID: id, Plan: p},
					agent.Event{Type: agent.EventToolResult, ID: id, Name: agent.PlanToolName, OK: true, Output: "Plan saved."})
			}
			f.events(call("c1", "read_file", `{"file_path":"parser.go"}`))
			f.tick(1200 * time.Millisecond)
			f.send(tickMsg{})
		}},
		{"unreachable", func(f *fixture) {
			f.send(healthMsg{err: errString("ollama health: connection refused; is Ollama running? start it with `ollama serve`, or set OLLAMA_HOST")})
		}},
		{"narrow", func(f *fixture) {
			f.send(tea.WindowSizeMsg{Width: 44, Height: 24})
			f.busyTurn()
			for _, c := range chunks(goldenAnswer, 7) {
				f.events(agent.Event{Type: agent.EventTextDelta, Text: c})
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 80, 24)
			tc.play(f)
			f.golden(tc.name)
		})
	}
}

// goldenRestore is the preview of an undo that changes four files, one
// of which cannot be restored.
func goldenRestore() *hearth.RestoreResult {
	return &hearth.RestoreResult{RestoreInfo: agent.RestoreInfo{Op: "undo", Turn: 5, Files: []agent.FileChange{
		{Path: "calc/add.go", Action: "modify"}, {Path: "calc/add_test.go", Action: "delete"},
		{Path: "calc/old.go", Action: "create"}, {Path: "run.sh", Action: "chmod"}},
		Failed: []agent.FileProblem{{Path: "data/dump.sql", Reason: "not kept: it was 12 MB, over the checkpoint size cap of 10 MB"}}}, DryRun: true}
}

// restorePreview shows res as the preview of op, as the worker brings it.
func (f *fixture) restorePreview(op hearth.RestoreOp, res *hearth.RestoreResult) {
	f.m.sessionID = "s-7kq2m9xwa3"
	f.m.restore = &restoreState{op: op, sessionID: f.m.sessionID, stage: stageWork}
	f.send(restoreDoneMsg{dry: true, res: res, turn: turnLabel{n: 3, text: "make add work"}})
}

type errString string

func (e errString) Error() string { return string(e) }

// chunks cuts s into pieces of n bytes, as a model streams it.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
