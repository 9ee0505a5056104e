package agent

import (
	"bytes"
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/tool"
)

// fullParent is an agent with every field of Agent set, so that a field
// added to Agent later must be set here too, and is then checked to pass to
// a sub-agent's child.
func fullParent(t *testing.T) *Agent {
	t.Helper()
	reg, _ := tool.NewRegistry()
	p := &Agent{
		Provider:      ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:1", MaxRetries: -1}),
		Model:         "parent-model",
		System:        "you lead",
		Tools:         reg,
		Mode:          ModeAutoEdit,
		Think:         &llm.Think{Enabled: true, Level: "high"},
		ContextLength: 8192,
		MaxTurns:      11,
		MaxRepeats:    5,
		MaxToolOutput: 1234,
		CompressAt:    0.6,
		Logger:        slog.New(slog.DiscardHandler),
		Prepare:       func(context.Context) {},
		StrictPlan:    true, // inherited, and idle: a child has no plan tool
		// Inherited: a child's call to a tool the workspace withholds
		// says why, as the caller's does.
		Withheld: func(string) string { return "withheld" },
	}
	v := reflect.ValueOf(p).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullParent leaves Agent.%s unset: set it, and say in TestSubAgentChildInherits whether a child inherits it", v.Type().Field(i).Name)
		}
	}
	return p
}

// TestSubAgentChildInherits: a child starts from the caller's
// configuration, every field of it but those the sub-agent sets itself
// (System, Tools, MaxTurns, Provider/Model when set) and Prepare.
func TestSubAgentChildInherits(t *testing.T) {
	own := ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:2", MaxRetries: -1})
	approvals := &Approvals{}
	approver := ApproverFunc(func(context.Context, Request) (Answer, error) { return Answer{Decision: Allow}, nil })
	// The child's own fields, and what the rest must be.
	notInherited := map[string]bool{"System": true, "Tools": true, "MaxTurns": true, "Provider": true, "Model": true, "Prepare": true}
	tests := []struct {
		name      string
		sub       SubAgent
		runModel  string // the calling run's RunOptions.Model
		noCaller  bool
		wantModel string
		wantOwnP  bool // the child answers with the sub-agent's Provider
		wantTurns int
	}{
		{name: "the caller's provider and model", sub: SubAgent{MaxTurns: 4}, wantModel: "parent-model", wantTurns: 4},
		{name: "the calling run's model", sub: SubAgent{}, runModel: "run-model", wantModel: "run-model", wantTurns: DefaultSubAgentTurns},
		{name: "a model of its own", sub: SubAgent{Model: "small"}, runModel: "run-model", wantModel: "small", wantTurns: DefaultSubAgentTurns},
		{name: "a provider of its own comes with its model", sub: SubAgent{Provider: own}, wantModel: "", wantOwnP: true, wantTurns: DefaultSubAgentTurns},
		{name: "a provider and model of its own", sub: SubAgent{Provider: own, Model: "m2", MaxTurns: 2}, wantModel: "m2", wantOwnP: true, wantTurns: 2},
		{name: "no caller", sub: SubAgent{Provider: own, Model: "m2"}, noCaller: true, wantModel: "m2", wantOwnP: true, wantTurns: DefaultSubAgentTurns},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			parent := fullParent(t)
			s := tc.sub
			s.Name, s.System = "probe", "you probe"
			var sc *scope
			if !tc.noCaller {
				r := &run{a: parent, approvals: approvals, o: RunOptions{
					Model: tc.runModel, Approver: approver, Mode: func() Mode { return ModeYolo }, Approvals: approvals,
					SessionID: "s-parent", OnMessage: func(llm.Message, bool) {}, OnCompact: func(int, llm.Message) {},
					Hooks: Hooks{Before: func(context.Context, tool.Call, string) error { return nil }},
				}}
				sc = &scope{r: r, id: "c1", name: "probe"}
			}
			st, err := s.newState()
			if err != nil {
				t.Fatal(err)
			}
			child, opts, err := s.child(sc, st)
			if err != nil {
				t.Fatal(err)
			}
			if child.System != "you probe" || child.Tools == nil || child.Tools == parent.Tools || child.MaxTurns != tc.wantTurns || child.Model != tc.wantModel || child.Prepare != nil {
				t.Errorf("the child's own fields: %+v", child)
			}
			wantP := parent.Provider
			if tc.wantOwnP {
				wantP = own
			}
			if child.Provider != wantP {
				t.Errorf("provider: got %p, want %p", child.Provider, wantP)
			}
			pv, cv := reflect.ValueOf(parent).Elem(), reflect.ValueOf(child).Elem()
			for i := range pv.NumField() {
				name := pv.Type().Field(i).Name
				if notInherited[name] {
					continue
				}
				want := pv.Field(i).Interface()
				if tc.noCaller {
					want = reflect.Zero(pv.Field(i).Type()).Interface()
				}
				if pv.Field(i).Kind() == reflect.Func {
					// Functions compare by what they point to.
					wantPtr := uintptr(0)
					if !tc.noCaller {
						wantPtr = pv.Field(i).Pointer()
					}
					if got := cv.Field(i).Pointer(); got != wantPtr {
						t.Errorf("Agent.%s: the child has another function", name)
					}
					continue
				}
				if got := cv.Field(i).Interface(); !reflect.DeepEqual(got, want) {
					t.Errorf("Agent.%s: the child has %v, want %v", name, got, want)
				}
			}
			// Of the run, the child shares who answers approvals only.
			if tc.noCaller {
				if !reflect.DeepEqual(opts, RunOptions{}) {
					t.Errorf("options without a caller: %+v", opts)
				}
				return
			}
			if opts.Approver == nil || opts.Mode == nil || opts.Mode() != ModeYolo || opts.Approvals != approvals {
				t.Errorf("the child's approvals: %+v", opts)
			}
			if opts.SessionID != "" || opts.Model != "" || opts.OnMessage != nil || opts.OnCompact != nil || opts.Hooks.Before != nil {
				t.Errorf("the child got the caller's own run options: %+v", opts)
			}
		})
	}
}

// TestSubAgentInheritsOverTheWire: the caller's reasoning, window and
// logger reach the child's model calls and tool runs.
func TestSubAgentInheritsOverTheWire(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{Select: []string{"read_file", "crash"}})
	var logged bytes.Buffer
	a.Think = &llm.Think{Enabled: true, Level: "high"}
	a.ContextLength = 4096
	a.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	srv.Enqueue("/api/chat",
		stream(llmtest.CallID("p1", "probe", `{"task":"q"}`)),
		stream(llmtest.Call("crash", `{}`)), // the child's tool panics: its logger says so
		stream(llmtest.Text("it crashed")),
		stream(llmtest.Text("done")),
	)
	rec := &recorder{}
	if res := a.Run(context.Background(), user("go"), rec.emit); res.Text != "done" {
		t.Fatalf("%+v", res)
	}
	reqs := srv.RequestsTo("/api/chat")
	if len(reqs) != 4 {
		t.Fatalf("%d model calls", len(reqs))
	}
	for i, r := range reqs {
		var body struct {
			Think   any            `json:"think"`
			Options map[string]any `json:"options"`
		}
		r.JSON(t, &body)
		if body.Think != "high" || body.Options["num_ctx"] != float64(4096) {
			t.Errorf("call %d: think %v, options %v", i, body.Think, body.Options)
		}
	}
	if !strings.Contains(logged.String(), "tool panic") || !strings.Contains(logged.String(), "tool=crash") {
		t.Errorf("the parent's logger did not hear of the child's tool panic: %q", logged.String())
	}
}

// TestSubAgentLinksToTheCallingRun: the calling run's session and call reach
// the Runner, given through the run (RunOptions.SessionID), not the context.
func TestSubAgentLinksToTheCallingRun(t *testing.T) {
	tests := []struct {
		name, session string
	}{
		{"a stored run", "s-parent"},
		{"an unstored run", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []ChildRun
			srv, a, _ := subSetup(t, &SubAgent{Runner: func(ctx context.Context, run ChildRun, emit func(Event)) (*Result, string, error) {
				got = append(got, run)
				return RunChild(ctx, run, emit)
			}})
			srv.Enqueue("/api/chat",
				stream(llmtest.CallID("p1", "probe", `{"task":"q"}`)),
				stream(llmtest.Text("child answer")),
				stream(llmtest.Text("done")),
			)
			approvals := &Approvals{}
			rec := &recorder{}
			a.RunWith(context.Background(), user("go"), RunOptions{SessionID: tc.session, Approvals: approvals}, rec.emit)
			if len(got) != 1 {
				t.Fatalf("runner called %d times", len(got))
			}
			run := got[0]
			if run.ParentSession != tc.session || run.ParentCall != "p1" || run.Name != "probe" || run.SessionID != "" {
				t.Errorf("the child's links: %+v", run)
			}
			if run.Options.SessionID != "" || run.Options.Approvals != approvals {
				t.Errorf("the child's options: %+v", run.Options)
			}
			if r := rec.results(); len(r) != 1 || r[0].Output != "child answer" {
				t.Errorf("%+v", r)
			}
		})
	}
}

// TestSubAgentPanicIsAFailedCall: a sub-agent run by an agent is run with
// the run's scope, still under safeRun: its panic fails the call, not the
// turn.
func TestSubAgentPanicIsAFailedCall(t *testing.T) {
	srv, a, _ := subSetup(t, &SubAgent{Runner: func(context.Context, ChildRun, func(Event)) (*Result, string, error) {
		panic("runner bug")
	}})
	srv.Enqueue("/api/chat",
		stream(llmtest.CallID("p1", "probe", `{"task":"q"}`)),
		stream(llmtest.Text("it failed")),
	)
	rec := &recorder{}
	res := a.Run(context.Background(), user("go"), rec.emit)
	if res.Reason != DoneStop || res.Text != "it failed" {
		t.Fatalf("%+v", res)
	}
	if r := rec.results(); len(r) != 1 || r[0].OK || !strings.Contains(r[0].Error, "the tool crashed (runner bug)") {
		t.Errorf("%+v", r)
	}
}

// TestDelegateOnlySubAgents: the run hands its scope to sub-agents only;
// the wrappers of a child's tools do not pass it on, and a child never has
// a sub-agent to wrap.
func TestDelegateOnlySubAgents(t *testing.T) {
	var log []string
	reg := testTools(t, &log)
	s := &SubAgent{Name: "s", Description: "d", Tools: reg, Scratchpad: 2, OutputSchema: answerSchema}
	if err := reg.Add(s); err != nil {
		t.Fatal(err)
	}
	var _ delegate = s
	st, _ := s.newState()
	if _, _, err := s.child(nil, st); err == nil {
		t.Fatal("a child without a provider")
	}
	s.Provider = ollama.New(ollama.Options{BaseURL: "http://127.0.0.1:1", MaxRetries: -1})
	child, _, err := s.child(nil, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range child.Tools.Names() {
		tl, _ := child.Tools.Get(n)
		if _, ok := tl.(delegate); ok {
			t.Errorf("the child's %s runs another agent", n)
		}
		if g, ok := tl.(*padGate); ok {
			if _, nested := g.Tool.(*SubAgent); nested {
				t.Errorf("the child's %s wraps a sub-agent", n)
			}
		}
	}
	if _, ok := any(&padGate{Tool: s}).(delegate); ok {
		t.Error("a padGate passes the scope on")
	}
	if names := strings.Join(child.Tools.Names(), ","); names != "read_file,write_file,run_shell_command,crash,scratchpad,submit_report" {
		t.Errorf("the child's tools: %s", names)
	}
}
