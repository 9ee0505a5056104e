package acpagent

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
)

// wire is an update as the editor receives it.
func wire(t *testing.T, u acp.SessionUpdate) map[string]any {
	t.Helper()
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// summary is an update in a line: its kind, then what the test looks at.
func summary(t *testing.T, u acp.SessionUpdate) string {
	m := wire(t, u)
	s := m["sessionUpdate"].(string)
	for _, k := range []string{"toolCallId", "kind", "status", "title"} {
		if v, ok := m[k]; ok {
			s += " " + k + "=" + v.(string)
		}
	}
	if c, ok := m["content"].(map[string]any); ok {
		s += " " + c["text"].(string)
	}
	if cs, ok := m["content"].([]any); ok {
		for _, c := range cs {
			c := c.(map[string]any)
			switch c["type"] {
			case "diff":
				s += " diff(" + c["path"].(string)
				if o, ok := c["oldText"].(string); ok {
					s += " " + o + "→"
				} else {
					s += " "
				}
				s += c["newText"].(string) + ")"
			case "content":
				s += " text(" + c["content"].(map[string]any)["text"].(string) + ")"
			}
		}
	}
	if es, ok := m["entries"].([]any); ok {
		for _, e := range es {
			e := e.(map[string]any)
			s += " [" + e["status"].(string) + " " + e["content"].(string) + "]"
		}
	}
	return s
}

func TestTurnMapperEvents(t *testing.T) {
	const root = "/work/proj"
	describe := func(name string, args json.RawMessage) string {
		if name == "run_shell_command" {
			return "run `go test`"
		}
		return ""
	}
	tests := []struct {
		name   string
		events []hearth.Event
		want   []string
	}{
		{"reasoning and answer stream in order", []hearth.Event{
			{Type: hearth.EventSession, SessionID: "s-1"},
			{Type: hearth.EventThinkingStart},
			{Type: hearth.EventThinkingDelta, Text: "Let me"},
			{Type: hearth.EventThinkingDelta, Text: ""},
			{Type: hearth.EventThinkingDelta, Text: " think."},
			{Type: hearth.EventThinkingEnd},
			{Type: hearth.EventTextDelta, Text: "Hello"},
			{Type: hearth.EventTextDelta, Text: ", world"},
			{Type: hearth.EventUsage, InputTokens: 10, OutputTokens: 3},
			{Type: hearth.EventDone, DoneReason: hearth.DoneStop, Text: "Hello, world"},
		}, []string{
			"agent_thought_chunk Let me",
			"agent_thought_chunk  think.",
			"agent_message_chunk Hello",
			"agent_message_chunk , world",
		}},
		{"a read: announced, then completed with its output", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "c1", Name: "read_file", Args: json.RawMessage(`{"file_path":"a.txt"}`)},
			{Type: hearth.EventToolResult, ID: "c1", Name: "read_file", OK: true, Output: "hi\n"},
		}, []string{
			"tool_call toolCallId=c1 kind=read status=pending title=read_file",
			"tool_call_update toolCallId=c1 status=completed text(```\nhi\n```)",
		}},
		{"an edit carries its diff, announced and finished", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "c2", Name: "edit", Args: json.RawMessage(`{"file_path":"src/a.go","old_string":"x := 1","new_string":"x := 2"}`)},
			{Type: hearth.EventApprovalRequired, ID: "c2", Name: "edit", Args: json.RawMessage(`{"file_path":"src/a.go","old_string":"x := 1","new_string":"x := 2"}`), Reason: "edit src/a.go"},
			{Type: hearth.EventCheckpoint, ID: "c2", Name: "edit"},
			{Type: hearth.EventToolResult, ID: "c2", Name: "edit", OK: true, Output: "Edited src/a.go"},
		}, []string{
			"tool_call toolCallId=c2 kind=edit status=pending title=edit diff(/work/proj/src/a.go x := 1→x := 2)",
			"tool_call_update toolCallId=c2 status=completed diff(/work/proj/src/a.go x := 1→x := 2) text(Edited src/a.go)",
		}},
		{"a new file's diff has no old text", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "c3", Name: "write_file", Args: json.RawMessage(`{"file_path":"n.txt","content":"new\n"}`)},
		}, []string{
			"tool_call toolCallId=c3 kind=edit status=pending title=write_file diff(/work/proj/n.txt new\n)",
		}},
		{"a path out of the workspace is not shown", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "c4", Name: "write_file", Args: json.RawMessage(`{"file_path":"../../etc/passwd","content":"x"}`)},
		}, []string{
			"tool_call toolCallId=c4 kind=edit status=pending title=write_file",
		}},
		{"a command: its output, then its result, failed", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "c5", Name: "run_shell_command", Args: json.RawMessage(`{"command":"go test"}`)},
			{Type: hearth.EventToolOutput, ID: "c5", Name: "run_shell_command", Text: "ok  \tpkg\n"},
			{Type: hearth.EventToolOutput, ID: "c5", Name: "run_shell_command", Text: "more\n"}, // within outputEvery: held
			{Type: hearth.EventToolResult, ID: "c5", Name: "run_shell_command", OK: false, Error: "exit status 1"},
		}, []string{
			"tool_call toolCallId=c5 kind=execute status=pending title=run `go test`",
			"tool_call_update toolCallId=c5 status=in_progress text(```\nok  \tpkg\n```)",
			"tool_call_update toolCallId=c5 status=failed text(exit status 1)",
		}},
		{"the plan: its tool is not shown, its steps are", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "p1", Name: "update_plan", Args: json.RawMessage(`{"steps":[]}`)},
			{Type: hearth.EventPlan, ID: "p1", Plan: &hearth.Plan{Steps: []hearth.PlanStep{
				{Step: "Read", Status: hearth.PlanDone}, {Step: "Fix", Status: hearth.PlanInProgress},
				{Step: "Test", Status: hearth.PlanSkipped, Reason: "none"}, {Step: "Ship", Status: hearth.PlanPending}}}},
			{Type: hearth.EventToolResult, ID: "p1", Name: "update_plan", OK: true, Output: "Plan saved"},
			{Type: hearth.EventPlan, Plan: &hearth.Plan{}},
		}, []string{
			"plan [completed Read] [in_progress Fix] [completed Test (skipped: none)] [pending Ship]",
			"plan",
		}},
		{"a sub-agent's call asks first: announced before its approval", []hearth.Event{
			{Type: hearth.EventToolCall, ID: "inv", Name: "codebase_investigator", Args: json.RawMessage(`{"task":"find"}`)},
			{Type: hearth.EventToolOutput, ID: "inv", Name: "codebase_investigator", Text: "→ grep_search\n", Nested: &hearth.Event{Type: hearth.EventToolCall}},
			{Type: hearth.EventApprovalRequired, ID: "sub1", Name: "write_file", Args: json.RawMessage(`{"file_path":"x","content":""}`), Reason: "write x"},
			{Type: hearth.EventToolOutput, ID: "inv", Name: "codebase_investigator", Text: "✗ write_file: denied\n",
				Nested: &hearth.Event{Type: hearth.EventToolResult, ID: "sub1", Name: "write_file", Error: "denied"}},
			{Type: hearth.EventToolResult, ID: "inv", Name: "codebase_investigator", OK: true, Output: "{}"},
		}, []string{
			"tool_call toolCallId=inv kind=think status=pending title=codebase_investigator",
			"tool_call_update toolCallId=inv status=in_progress text(```\n→ grep_search\n```)",
			"tool_call toolCallId=sub1 kind=edit status=pending title=write_file diff(/work/proj/x )",
			"tool_call_update toolCallId=sub1 status=failed text(denied)",
			"tool_call_update toolCallId=inv status=completed text(```\n{}\n```)",
		}},
		{"errors and the end say nothing of their own", []hearth.Event{
			{Type: hearth.EventError, Code: hearth.CodeProviderUnreachable, Error: "no server"},
			{Type: hearth.EventDone, DoneReason: hearth.DoneError},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newTurnMapper(root, describe)
			clock := time.Unix(1000, 0)
			m.now = func() time.Time { return clock }
			var got []string
			for _, ev := range tt.events {
				for _, u := range m.event(ev) {
					got = append(got, summary(t, u))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("updates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestTurnMapperEnd(t *testing.T) {
	m := newTurnMapper("/w", nil)
	m.event(hearth.Event{Type: hearth.EventError, Error: "the model server is down: start it"})
	m.event(hearth.Event{Type: hearth.EventDone, DoneReason: hearth.DoneError, Text: "partial"})
	if m.reason != hearth.DoneError || m.errMsg != "the model server is down: start it" || m.text != "partial" {
		t.Errorf("end: %q %q %q", m.reason, m.errMsg, m.text)
	}
}

func TestPermissionCall(t *testing.T) {
	m := newTurnMapper("/w", nil)
	ev := hearth.Event{Type: hearth.EventApprovalRequired, ID: "c1", Name: "write_file", Args: json.RawMessage(`{"file_path":"a.txt","content":"A"}`), Reason: "write a.txt (1 lines)"}
	tc := m.permissionCall(ev)
	b, _ := json.Marshal(tc)
	want := `{"content":[{"newText":"A","path":"/w/a.txt","type":"diff"}],"kind":"edit","locations":[{"path":"/w/a.txt"}],"rawInput":{"content":"A","file_path":"a.txt"},"status":"pending","title":"write a.txt (1 lines)","toolCallId":"c1"}`
	if string(b) != want {
		t.Errorf("permission's call:\n%s\nwant\n%s", b, want)
	}
	opts := permissionOptions("write_file")
	var kinds []string
	for _, o := range opts {
		kinds = append(kinds, string(o.Kind)+"="+string(o.OptionId))
	}
	if strings.Join(kinds, " ") != "allow_once=allow allow_always=allow_always reject_once=reject" {
		t.Errorf("options: %v", kinds)
	}
}

func TestDecision(t *testing.T) {
	sel := func(id string) acp.RequestPermissionOutcome {
		return acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: acp.PermissionOptionId(id), Outcome: "selected"}}
	}
	tests := []struct {
		name string
		out  acp.RequestPermissionOutcome
		d    hearth.Decision
		ok   bool
	}{
		{"allow once", sel(optionAllow), hearth.Allow, true},
		{"allow always", sel(optionAllowAlways), hearth.AllowAlways, true},
		{"reject", sel(optionReject), hearth.Deny, true},
		{"an option Hearth did not offer", sel("yes please"), hearth.Deny, false},
		{"cancelled", acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}, hearth.Deny, false},
		{"nothing", acp.RequestPermissionOutcome{}, hearth.Deny, false},
	}
	for _, tt := range tests {
		if d, ok := decision(tt.out); d != tt.d || ok != tt.ok {
			t.Errorf("%s: %v %v, want %v %v", tt.name, d, ok, tt.d, tt.ok)
		}
	}
}

func TestToolKind(t *testing.T) {
	for name, want := range map[string]acp.ToolKind{
		"read_file": "read", "read_many_files": "read", "grep_search": "search", "glob": "search", "list_directory": "search",
		"edit": "edit", "write_file": "edit", "run_shell_command": "execute", "codebase_investigator": "think",
		"github__create_issue": "other", "": "other",
	} {
		if got := toolKind(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

func TestHeadTailFence(t *testing.T) {
	if got := head("héllo", 2); got != "h\n… [5 more bytes]" {
		t.Errorf("head cuts inside a rune: %q", got)
	}
	if got := tail("héllo", 4); got != "[3 bytes before] …\nllo" {
		t.Errorf("tail cuts inside a rune: %q", got)
	}
	if got := head("abc", 3); got != "abc" {
		t.Errorf("head of a short text: %q", got)
	}
	if got := fence("a ``` b\n"); got != "````\na ``` b\n````" {
		t.Errorf("fence: %q", got)
	}
	if fence("") != "" {
		t.Error("an empty text is fenced")
	}
}

func TestLocations(t *testing.T) {
	m := newTurnMapper("/w", nil)
	got := m.locations(json.RawMessage(`{"paths":["a.go","src/*.go","/w/b.go","/etc/passwd"],"path":"sub","file_path":"../x"}`))
	var ps []string
	for _, l := range got {
		ps = append(ps, l.Path)
	}
	if strings.Join(ps, " ") != "/w/sub /w/a.go /w/b.go" {
		t.Errorf("locations: %v", ps)
	}
	if m.locations(json.RawMessage(`not json`)) != nil {
		t.Error("locations of arguments that are not JSON")
	}
}

// FuzzCallPaths feeds the mapping the arguments a model may give a call
// (a hostile model among them): the files it shows the editor, as
// locations and diffs, are always inside the workspace.
func FuzzCallPaths(f *testing.F) {
	f.Add("write_file", `{"file_path":"../../etc/passwd","content":"x"}`)
	f.Add("edit", `{"file_path":"/w/../w2/a","old_string":"a","new_string":"b"}`)
	f.Add("read_many_files", `{"paths":["a","/etc/shadow","./../x","/w/./b"]}`)
	f.Add("list_directory", `{"path":"/w"}`)
	f.Add("grep_search", `{"path":"\u0000"}`)
	f.Fuzz(func(t *testing.T, name, args string) {
		const root = "/w"
		m := newTurnMapper(root, nil)
		inside := func(p string) bool {
			return p == root || strings.HasPrefix(p, root+"/") && !strings.Contains(p, "/../") && !strings.HasSuffix(p, "/..")
		}
		for _, l := range m.locations(json.RawMessage(args)) {
			if !inside(l.Path) {
				t.Fatalf("location %q out of the workspace, from %s", l.Path, args)
			}
		}
		for _, c := range m.diff(name, json.RawMessage(args)) {
			if c.Diff == nil || !inside(c.Diff.Path) {
				t.Fatalf("diff out of the workspace, from %s", args)
			}
		}
		_ = m.event(hearth.Event{Type: hearth.EventToolCall, ID: "c", Name: name, Args: json.RawMessage(args)})
		_ = m.permissionCall(hearth.Event{Type: hearth.EventApprovalRequired, ID: "c", Name: name, Args: json.RawMessage(args)})
		_ = m.event(hearth.Event{Type: hearth.EventToolResult, ID: "c", Name: name, OK: true, Output: args})
	})
}

// TestOutputBounded: a command that streams without end keeps a bounded
// tail, and what the editor is sent counts every byte before it.
func TestOutputBounded(t *testing.T) {
	m := newTurnMapper("/w", nil)
	clock := time.Unix(0, 0)
	m.now = func() time.Time { return clock }
	m.event(hearth.Event{Type: hearth.EventToolCall, ID: "c", Name: "run_shell_command", Args: json.RawMessage(`{"command":"yes"}`)})
	chunk := strings.Repeat("x", 999) + "\n"
	total := 0
	var last string
	for range 1000 {
		clock = clock.Add(time.Second) // every chunk is sent
		total += len(chunk)
		for _, u := range m.event(hearth.Event{Type: hearth.EventToolOutput, ID: "c", Name: "run_shell_command", Text: chunk}) {
			if u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0 && u.ToolCallUpdate.Content[0].Content != nil {
				last = u.ToolCallUpdate.Content[0].Content.Content.Text.Text
			}
		}
	}
	if n := m.calls["c"].output.Len(); n > 4*maxShown {
		t.Fatalf("kept %d bytes of %d", n, total)
	}
	want := strings.Replace("[N bytes before]", "N", strconv.Itoa(total-maxShown), 1)
	if !strings.Contains(last, want) || len(last) > maxShown+200 {
		t.Errorf("last update (%d bytes) begins %q, want %q", len(last), last[:min(len(last), 80)], want)
	}
}
