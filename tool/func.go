package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/llm"
)

// Def is what the model and the approvals know of a tool made by Define:
// everything but what it does. The argument schema is inferred from A, a
// struct, as for Func: fields become properties named by their json tags,
// fields without omitempty are required, and a `jsonschema:"…"` tag is the
// property's description (keep it short: every description is sent with
// every request).
type Def[A any] struct {
	Name        string
	Description string
	Kind        Kind
	// Describe, when set, says in a line what a call will do, for an
	// approval prompt ("read main.go"). It gets the call's arguments; a
	// call whose arguments cannot be read is described as "NAME (invalid
	// arguments)", and without Describe a call is described by the tool's
	// name.
	Describe func(args A) string
	// Tune, when set, adjusts the inferred schema before it is used: a
	// "minimum", an enum, or additionalProperties dropped (the arguments are
	// then read without refusing unknown fields, as the schema lets them
	// through). What it leaves must be a valid schema for A.
	Tune func(s *jsonschema.Schema)
	// Schema, when set, is the schema Define would infer (with Tune),
	// precomputed: inferring and encoding it at every start of a program
	// costs more than a short run has to spare. A test keeps the two equal
	// (StaleSchemas); Define then takes it as it is.
	Schema json.RawMessage
}

// Inferred returns the schema Define infers for d: from A, tuned by Tune,
// and checked when tuned.
func (d Def[A]) Inferred() (json.RawMessage, error) {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		return nil, fmt.Errorf("tool %s: inferring the argument schema: %w", d.Name, err)
	}
	if d.Tune != nil {
		d.Tune(s)
	}
	params, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", d.Name, err)
	}
	if d.Tune != nil {
		if _, err := resolveSchema(params); err != nil {
			return nil, fmt.Errorf("tool %s: the tuned schema: %w", d.Name, err)
		}
	}
	return params, nil
}

// SchemaSource is a definition whose schema may be precomputed: a Def.
type SchemaSource interface {
	// Inferred returns the schema inferred from the definition.
	Inferred() (json.RawMessage, error)
	precomputed() (name string, schema json.RawMessage)
}

func (d Def[A]) precomputed() (string, json.RawMessage) { return d.Name, d.Schema }

// StaleSchemas returns, by tool name, the inferred schema of each
// definition whose precomputed Schema is missing or differs from it: the
// test of a package that precomputes its tools' schemas fails on any, and
// prints them to paste.
func StaleSchemas(defs ...SchemaSource) (map[string]json.RawMessage, error) {
	stale := map[string]json.RawMessage{}
	for _, d := range defs {
		want, err := d.Inferred()
		if err != nil {
			return nil, err
		}
		if name, have := d.precomputed(); !bytes.Equal(have, want) {
			stale[name] = want
		}
	}
	return stale, nil
}

// RunFunc does a call of a tool made by Define. The call gives its id and
// Progress (for output as it comes); Result.Display sets what a UI shows
// instead of the model's output.
type RunFunc[A any] func(ctx context.Context, c Call, args A) (Result, error)

// Define makes a tool from its definition and the function that runs it;
// the arguments are decoded into A before run is called. It is for tools
// defined in code: a definition whose schema cannot be inferred or tuned
// into a valid one is a bug, and Define panics. For example:
//
//	var readDef = tool.Def[readArgs]{Name: "read_file", Kind: tool.ReadOnly,
//		Description: "Read a text file.",
//		Describe:    func(a readArgs) string { return "read " + a.Path }}
//	t := tool.Define(readDef, func(ctx context.Context, c tool.Call, a readArgs) (tool.Result, error) { … })
//
// The tool is a Describer.
func Define[A any](d Def[A], run RunFunc[A]) *Defined[A] {
	t, err := define(d, run)
	if err != nil {
		panic(err)
	}
	return t
}

// Defined is a tool made by Define. Embed it to give a type of one's own
// the tool's methods.
type Defined[A any] struct {
	spec     llm.ToolSpec
	kind     Kind
	strict   bool // unknown fields are refused (the schema says so)
	describe func(A) string
	run      RunFunc[A]
}

var _ Describer = (*Defined[struct{}])(nil)

func define[A any](d Def[A], run RunFunc[A]) (*Defined[A], error) {
	params := d.Schema
	if len(params) == 0 {
		var err error
		if params, err = d.Inferred(); err != nil {
			return nil, err
		}
	}
	var top struct {
		AdditionalProperties json.RawMessage `json:"additionalProperties"`
	}
	if err := json.Unmarshal(params, &top); err != nil {
		return nil, fmt.Errorf("tool %s: the schema is not a JSON object: %w", d.Name, err)
	}
	strict := string(bytes.TrimSpace(top.AdditionalProperties)) == "false"
	return &Defined[A]{spec: llm.ToolSpec{Name: d.Name, Description: d.Description, Parameters: params},
		kind: d.Kind, strict: strict, describe: d.Describe, run: run}, nil
}

// Spec implements Tool.
func (t *Defined[A]) Spec() llm.ToolSpec { return t.spec }

// Kind implements Tool.
func (t *Defined[A]) Kind() Kind { return t.kind }

// Run implements Tool: it decodes the arguments and runs the call.
func (t *Defined[A]) Run(ctx context.Context, c Call) (Result, error) {
	a, err := decode[A](c.Args, t.strict)
	if err != nil {
		return Result{}, err
	}
	return t.run(ctx, c, a)
}

// Describe implements Describer.
func (t *Defined[A]) Describe(args json.RawMessage) string {
	if t.describe == nil {
		return t.spec.Name
	}
	a, err := decode[A](args, false)
	if err != nil {
		return t.spec.Name + " (invalid arguments)"
	}
	return t.describe(a)
}

// Func makes a tool from a Go function, its argument schema inferred from A
// as for Define. For example:
//
//	type args struct {
//		Table string `json:"table" jsonschema:"the table to query"`
//		Limit int    `json:"limit,omitempty" jsonschema:"at most this many rows"`
//	}
//	t, err := tool.Func("query_database", "Run a read-only query", tool.ReadOnly,
//		func(ctx context.Context, a args) (string, error) { … })
func Func[A any](name, description string, kind Kind, fn func(ctx context.Context, args A) (string, error)) (Tool, error) {
	t, err := define(Def[A]{Name: name, Description: description, Kind: kind},
		func(ctx context.Context, _ Call, a A) (Result, error) {
			out, err := fn(ctx, a)
			return Result{Output: out}, err
		})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// MustFunc is Func for tools defined at start-up, where an error is a bug.
func MustFunc[A any](name, description string, kind Kind, fn func(ctx context.Context, args A) (string, error)) Tool {
	t, err := Func(name, description, kind, fn)
	if err != nil {
		panic(err)
	}
	return t
}

// Schema returns the JSON Schema inferred from the argument struct A (see
// Def), for tools that implement Tool themselves. It panics if A cannot be
// described, which is a bug in the tool.
func Schema[A any]() json.RawMessage {
	t, err := define(Def[A]{}, nil)
	if err != nil {
		panic(fmt.Sprintf("tool.Schema: %v", err))
	}
	return t.spec.Parameters
}

// Decode reads a call's arguments into A, refusing unknown fields.
func Decode[A any](c Call) (A, error) { return decode[A](c.Args, true) }

func decode[A any](args json.RawMessage, strict bool) (A, error) {
	var a A
	dec := json.NewDecoder(bytes.NewReader(args))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(&a); err != nil {
		return a, fmt.Errorf("reading the arguments: %v", err)
	}
	return a, nil
}
