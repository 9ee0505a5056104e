package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/llm"
)

// Func makes a tool from a Go function. The argument schema is inferred from
// A, a struct: fields become properties named by their json tags, fields
// without omitempty are required, and a `jsonschema:"…"` tag is the
// property's description. For example:
//
//	type args struct {
//		Table string `json:"table" jsonschema:"the table to query"`
//		Limit int    `json:"limit,omitempty" jsonschema:"at most this many rows"`
//	}
//	t, err := tool.Func("query_database", "Run a read-only query", tool.ReadOnly,
//		func(ctx context.Context, a args) (string, error) { … })
func Func[A any](name, description string, kind Kind, fn func(ctx context.Context, args A) (string, error)) (Tool, error) {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: inferring the argument schema: %w", name, err)
	}
	params, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	return &funcTool[A]{spec: llm.ToolSpec{Name: name, Description: description, Parameters: params}, kind: kind, fn: fn}, nil
}

// MustFunc is Func for tools defined at start-up, where an error is a bug.
func MustFunc[A any](name, description string, kind Kind, fn func(ctx context.Context, args A) (string, error)) Tool {
	t, err := Func(name, description, kind, fn)
	if err != nil {
		panic(err)
	}
	return t
}

type funcTool[A any] struct {
	spec llm.ToolSpec
	kind Kind
	fn   func(context.Context, A) (string, error)
}

func (t *funcTool[A]) Spec() llm.ToolSpec { return t.spec }
func (t *funcTool[A]) Kind() Kind         { return t.kind }

func (t *funcTool[A]) Run(ctx context.Context, c Call) (Result, error) {
	a, err := Decode[A](c)
	if err != nil {
		return Result{}, err
	}
	out, err := t.fn(ctx, a)
	return Result{Output: out}, err
}

// Schema returns the JSON Schema inferred from the argument struct A (see
// Func), for tools that implement Tool themselves. It panics if A cannot be
// described, which is a bug in the tool.
func Schema[A any]() json.RawMessage {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("tool.Schema: %v", err))
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool.Schema: %v", err))
	}
	return b
}

// Decode reads a call's arguments into A, refusing unknown fields.
func Decode[A any](c Call) (A, error) {
	var a A
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("reading the arguments: %v", err)
	}
	return a, nil
}
