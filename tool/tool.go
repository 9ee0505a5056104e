// Package tool defines what a tool is to Hearth's agent: a name, a
// description and a JSON Schema for its arguments (what the model sees), a
// kind that decides how approvals treat it, and a Run method. It also holds
// the registry that profiles select tools from (by name, or by kind:
// "@read-only"), and Define and Func, which make a tool from a Go function
// with its schema inferred from the argument struct.
package tool

import (
	"context"
	"encoding/json"

	"github.com/hearth-agent/hearth/llm"
)

// Kind says what a tool may do to the user's machine; approvals are decided
// by it.
type Kind int

// The kinds of tool.
const (
	// ReadOnly tools only look (read, list, search). Allowed in every mode.
	ReadOnly Kind = iota
	// Edit tools change files in the workspace.
	Edit
	// Execute tools run programs or reach outside the process.
	Execute
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case ReadOnly:
		return "read-only"
	case Edit:
		return "edit"
	case Execute:
		return "execute"
	}
	return "unknown"
}

// Tool is something the model can call.
type Tool interface {
	// Spec is what the model sees: name, description, argument schema.
	Spec() llm.ToolSpec
	// Kind says what the tool may do.
	Kind() Kind
	// Run performs one call. Args has been validated against the schema.
	// An error is returned to the model as the call's result, so it should
	// say what was wrong and what to do instead.
	Run(ctx context.Context, call Call) (Result, error)
}

// Call is one call of a tool.
type Call struct {
	// ID is the model's id for the call.
	ID string
	// Args are the call's arguments, a JSON object valid for the schema.
	Args json.RawMessage
	// Progress, if not nil, receives output as the tool produces it (a
	// shell command's output), for a UI to show while the call runs.
	Progress func(chunk string)
}

// Result is what a successful call gives back.
type Result struct {
	// Output is what the model sees.
	Output string
	// Display, when set, is what a UI shows instead of Output (a diff).
	Display string
}

// Describer is implemented by tools that can say in a line what a call will
// do, for an approval prompt ("run `go test ./...`").
type Describer interface {
	Describe(args json.RawMessage) string
}

// Delegator is implemented by a tool that does its work by calling other
// tools: a sub-agent, whose kind is the most powerful of the tools it is
// given. A kind selector in a profile ("@read-only") never selects one, and
// never asks it its kind (which would select its tools, maybe by kind
// again): name it to enable it.
type Delegator interface {
	Tool
	// Delegates marks the tool as a Delegator; it does nothing.
	Delegates()
}
