package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/llm"
)

type fileArgs struct {
	Path  string   `json:"path" jsonschema:"the file"`
	Count int      `json:"count,omitempty" jsonschema:"how many"`
	Tags  []string `json:"tags,omitempty"`
}

// fileRun echoes its arguments, reports progress and sets a Display.
func fileRun(_ context.Context, c Call, a fileArgs) (Result, error) {
	if a.Path == "fail" {
		return Result{}, fmt.Errorf("cannot read %s", a.Path)
	}
	if c.Progress != nil {
		c.Progress("reading " + a.Path)
	}
	return Result{Output: fmt.Sprintf("%s %d %v", a.Path, a.Count, a.Tags), Display: "shown: " + a.Path}, nil
}

func TestDefine(t *testing.T) {
	describe := func(a fileArgs) string { return "read " + a.Path }
	minOne := func(s *jsonschema.Schema) { s.Properties["count"].Minimum = jsonschema.Ptr(1.0) }
	lenient := func(s *jsonschema.Schema) { s.AdditionalProperties = nil }
	tests := []struct {
		name string
		def  Def[fileArgs]
		// params is the schema as sent, exactly.
		params string
		args   string
		// out is the Output of Run, or the error it gives ("error: …").
		out      string
		display  string
		progress string
		describe string
	}{{
		name:     "inferred",
		def:      Def[fileArgs]{Name: "f", Kind: ReadOnly, Describe: describe},
		params:   `{"type":"object","properties":{"path":{"type":"string","description":"the file"},"count":{"type":"integer","description":"how many"},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`,
		args:     `{"path":"a.go","count":2,"tags":["x"]}`,
		out:      "a.go 2 [x]",
		display:  "shown: a.go",
		progress: "reading a.go",
		describe: "read a.go",
	}, {
		name:     "unknown fields are refused when the schema refuses them",
		def:      Def[fileArgs]{Name: "f", Kind: ReadOnly, Describe: describe},
		args:     `{"path":"a.go","extra":1}`,
		out:      `error: reading the arguments: json: unknown field "extra"`,
		describe: "read a.go",
	}, {
		name:     "and read past when a tuned schema lets them through",
		def:      Def[fileArgs]{Name: "f", Kind: Edit, Describe: describe, Tune: lenient},
		params:   `{"type":"object","properties":{"path":{"type":"string","description":"the file"},"count":{"type":"integer","description":"how many"},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["path"]}`,
		args:     `{"path":"a.go","extra":1}`,
		out:      "a.go 0 []",
		display:  "shown: a.go",
		progress: "reading a.go",
		describe: "read a.go",
	}, {
		name:     "tuned",
		def:      Def[fileArgs]{Name: "f", Kind: Execute, Tune: minOne},
		params:   `{"type":"object","properties":{"path":{"type":"string","description":"the file"},"count":{"type":"integer","description":"how many","minimum":1},"tags":{"type":["null","array"],"items":{"type":"string"}}},"required":["path"],"additionalProperties":false}`,
		args:     `{"path":"b"}`,
		out:      "b 0 []",
		display:  "shown: b",
		progress: "reading b",
		describe: "f", // no Describe: the name
	}, {
		name:     "the run's error",
		def:      Def[fileArgs]{Name: "f", Kind: ReadOnly, Describe: describe},
		args:     `{"path":"fail"}`,
		out:      "error: cannot read fail",
		describe: "read fail",
	}, {
		name:     "arguments that are not JSON",
		def:      Def[fileArgs]{Name: "f", Kind: ReadOnly, Describe: describe},
		args:     `{"path":`,
		out:      "error: reading the arguments: unexpected EOF",
		describe: "f (invalid arguments)",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := Define(tc.def, fileRun)
			spec := tl.Spec()
			if spec.Name != tc.def.Name || spec.Description != tc.def.Description || tl.Kind() != tc.def.Kind {
				t.Errorf("spec %+v, kind %v", spec, tl.Kind())
			}
			if tc.params != "" && string(spec.Parameters) != tc.params {
				t.Errorf("parameters\n got %s\nwant %s", spec.Parameters, tc.params)
			}
			if _, err := NewRegistry(tl); err != nil {
				t.Errorf("the registry refuses the schema: %v", err)
			}
			var progress strings.Builder
			r, err := tl.Run(context.Background(), Call{ID: "c", Args: json.RawMessage(tc.args), Progress: func(s string) { progress.WriteString(s) }})
			got := r.Output
			if err != nil {
				got = "error: " + err.Error()
			}
			if got != tc.out || r.Display != tc.display || progress.String() != tc.progress {
				t.Errorf("Run: %q, display %q, progress %q; want %q, %q, %q", got, r.Display, progress.String(), tc.out, tc.display, tc.progress)
			}
			var d Describer = tl
			if got := d.Describe(json.RawMessage(tc.args)); got != tc.describe {
				t.Errorf("Describe: %q, want %q", got, tc.describe)
			}
		})
	}
}

func TestDefineValidates(t *testing.T) {
	reg, _ := NewRegistry(Define(Def[fileArgs]{Name: "f", Tune: func(s *jsonschema.Schema) { s.Properties["count"].Minimum = jsonschema.Ptr(1.0) }}, fileRun))
	tests := []struct{ args, errHas string }{
		{`{"path":"a","count":1}`, ""},
		{`{"path":"a","count":0}`, "minimum"},
		{`{"count":1}`, "path"},
		{`{"path":"a","more":1}`, "schema"},
	}
	for _, tc := range tests {
		err := reg.Validate("f", json.RawMessage(tc.args))
		if (tc.errHas == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.errHas) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.errHas)
		}
	}
}

func TestDefinePanicsOnABadDefinition(t *testing.T) {
	tests := []struct {
		name   string
		define func()
		want   string
	}{
		{"an argument with no schema", func() {
			Define(Def[struct{ C chan int }]{Name: "c"}, func(context.Context, Call, struct{ C chan int }) (Result, error) { return Result{}, nil })
		}, "inferring the argument schema"},
		{"a tuned schema that is not valid", func() {
			Define(Def[fileArgs]{Name: "p", Tune: func(s *jsonschema.Schema) { s.Properties["path"].Pattern = "[" }}, fileRun)
		}, "the tuned schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("recovered %v, want %q", r, tc.want)
				}
			}()
			tc.define()
		})
	}
}

// sub is a Delegator, as a sub-agent is: its kind is its tools', worked out
// by selecting them from a registry, maybe the one it is in.
type sub struct {
	name  string
	reg   *Registry
	pats  []string
	asked *int
}

func (s *sub) Spec() llm.ToolSpec { return llm.ToolSpec{Name: s.name} }
func (s *sub) Run(context.Context, Call) (Result, error) {
	return Result{}, nil
}
func (s *sub) Delegates() {}
func (s *sub) Kind() Kind {
	*s.asked++
	k := ReadOnly
	if s.reg != nil {
		sel, err := s.reg.Select(Profile{Name: s.name, Tools: s.pats})
		if err != nil {
			return Execute
		}
		for _, n := range sel.Names() {
			if t, _ := sel.Get(n); t != Tool(s) {
				if _, nested := t.(Delegator); !nested {
					k = max(k, t.Kind())
				}
			}
		}
	}
	return k
}

func TestProfileKindSelectors(t *testing.T) {
	mk := func(n string, k Kind) Tool { return MustFunc(n, n, k, query) }
	asked := 0
	inv := &sub{name: "investigator", asked: &asked}
	runner := &sub{name: "runner", pats: []string{"@execute"}, asked: &asked}
	reg, err := NewRegistry(mk("read_file", ReadOnly), mk("write_file", Edit), mk("run_shell_command", Execute),
		mk("github__search", ReadOnly), mk("github__create_issue", Execute), inv, runner)
	if err != nil {
		t.Fatal(err)
	}
	inv.reg, inv.pats = reg, []string{"@read-only"} // selects by kind from the registry it is in
	runner.reg = reg
	tests := []struct {
		tools   []string
		want    string
		wantErr string
	}{
		{[]string{"@read-only"}, "read_file github__search", ""},
		{[]string{"@edit"}, "write_file", ""},
		{[]string{"@execute"}, "run_shell_command github__create_issue", ""},
		{[]string{"@read-only", "@edit"}, "read_file write_file github__search", ""},
		{[]string{"*", "!@execute"}, "read_file write_file github__search investigator runner", ""},
		{[]string{"@read-only", "!github__*"}, "read_file", ""},
		{[]string{"github__*", "!@read-only"}, "github__create_issue", ""},
		{[]string{"@read-only", "investigator"}, "read_file github__search investigator", ""},
		{[]string{"@read-only", "!@read-only"}, "", ""},
		{[]string{"@readonly"}, "", `unknown kind "@readonly"`},
		{[]string{"@"}, "", `unknown kind "@"`},
		{[]string{"!@Edit"}, "", `unknown kind "@Edit"`},
		{[]string{"@read-*"}, "", "unknown kind"},
	}
	for _, tc := range tests {
		sel, err := reg.Select(Profile{Name: "p", Tools: tc.tools})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v, want %q", tc.tools, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.tools, err)
			continue
		}
		if got := strings.Join(sel.Names(), " "); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.tools, got, tc.want)
		}
	}
	if asked != 0 {
		t.Errorf("a kind selector asked a Delegator its kind %d times", asked)
	}
	// A sub-agent selecting its tools by kind from the registry it is in
	// works its kind out without asking itself.
	if k := inv.Kind(); k != ReadOnly {
		t.Errorf("investigator: %v", k)
	}
	if k := runner.Kind(); k != Execute {
		t.Errorf("runner: %v", k)
	}

	// A kind no tool has matches nothing: an error, as a glob's typo is.
	few, _ := NewRegistry(mk("read_file", ReadOnly), &sub{name: "s", asked: &asked})
	for _, pats := range [][]string{{"@edit"}, {"*", "!@execute"}, {"@read-only", "!@edit"}} {
		if _, err := few.Select(Profile{Name: "p", Tools: pats}); err == nil || !strings.Contains(err.Error(), "matches no tool") {
			t.Errorf("%v: %v", pats, err)
		}
	}
	// A Delegator is no tool of any kind, even one whose kind is
	// read-only: @read-only alone does not select it.
	if sel, err := few.Select(Profile{Name: "p", Tools: []string{"@read-only"}}); err != nil || strings.Join(sel.Names(), " ") != "read_file" {
		t.Errorf("%v %v", sel.Names(), err)
	}
}
