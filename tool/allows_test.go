package tool

import (
	"context"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// kindTool is a tool of a given name and kind.
type kindTool struct {
	name string
	kind Kind
}

func (k kindTool) Spec() llm.ToolSpec { return llm.ToolSpec{Name: k.name} }
func (k kindTool) Kind() Kind         { return k.kind }
func (k kindTool) Run(context.Context, Call) (Result, error) {
	return Result{}, nil
}

// delegating is a Delegator (a sub-agent): never matched by kind.
type delegating struct{ kindTool }

func (delegating) Delegates() {}

func TestAllows(t *testing.T) {
	read := kindTool{"fs__read", ReadOnly}
	write := kindTool{"fs__write_file", Edit}
	run := kindTool{"fs__run", Execute}
	sub := delegating{kindTool{"reviewer", ReadOnly}}
	tests := []struct {
		pats []string
		tool Tool
		want bool
	}{
		{[]string{"*", "!fs__write*"}, read, true},
		{[]string{"*", "!fs__write*"}, write, false},
		{[]string{"read_file"}, read, false},
		{[]string{"@read-only"}, read, true},
		{[]string{"@read-only"}, write, false},
		{[]string{"*", "!@execute"}, run, false},
		{[]string{"*", "!@execute"}, write, true},
		{[]string{"@edit", "fs__run"}, run, true},
		{[]string{"@read-only"}, sub, false},
		{[]string{"@read-only", "reviewer"}, sub, true},
		{[]string{"@nonsense"}, read, false},
		{[]string{"["}, read, false},
		{nil, read, false},
	}
	for _, tt := range tests {
		if got := Allows(tt.pats, tt.tool); got != tt.want {
			t.Errorf("Allows(%q, %s) = %v, want %v", tt.pats, tt.tool.Spec().Name, got, tt.want)
		}
	}
}
