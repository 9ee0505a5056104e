package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// A sub-agent's scratchpad: the notes a child keeps, and the gate that
// holds its other calls until they are up to date.

func (st *childState) padText() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.updates == 0 {
		return ""
	}
	return fmt.Sprintf("explored: %s; still needed: %s", st.explored, orNothing(st.needed))
}

func orNothing(s string) string {
	if strings.TrimSpace(s) == "" {
		return "nothing"
	}
	return s
}

// padTool is the scratchpad.
type padTool struct{ st *childState }

type padArgs struct {
	Explored    string `json:"explored" jsonschema:"what you have looked at so far, and what you learned"`
	StillNeeded string `json:"still_needed" jsonschema:"what you still need to find out; empty when you are ready to report"`
}

func (t *padTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ScratchpadToolName,
		Description: "Keep your notes: what you have explored and what you still need to find. Update it at the start and after every few steps.",
		Parameters:  json.RawMessage(padSchema)}
}

// padSchema is tool.Schema[padArgs](), precomputed (a test keeps them
// equal).
const padSchema = `{"type":"object","properties":{"explored":{"type":"string","description":"what you have looked at so far, and what you learned"},"still_needed":{"type":"string","description":"what you still need to find out; empty when you are ready to report"}},"required":["explored","still_needed"],"additionalProperties":false}`

func (t *padTool) Kind() tool.Kind { return tool.ReadOnly }

func (t *padTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	a, err := tool.Decode[padArgs](c)
	if err != nil {
		return tool.Result{}, err
	}
	st := t.st
	st.mu.Lock()
	st.explored, st.needed = a.Explored, a.StillNeeded
	st.updates++
	st.since = 0
	st.mu.Unlock()
	if strings.TrimSpace(a.StillNeeded) == "" {
		return tool.Result{Output: fmt.Sprintf("Scratchpad saved. Nothing is left to find: call %s.", SubmitToolName)}, nil
	}
	return tool.Result{Output: "Scratchpad saved. Next: " + a.StillNeeded}, nil
}

// padGate refuses a child's tool call when its scratchpad is overdue.
type padGate struct {
	tool.Tool
	st *childState
}

func (g *padGate) Describe(args json.RawMessage) string {
	if d, ok := g.Tool.(tool.Describer); ok {
		return d.Describe(args)
	}
	return g.Spec().Name
}

func (g *padGate) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	st := g.st
	st.mu.Lock()
	overdue := st.since >= st.every
	if !overdue {
		st.since++
	}
	st.mu.Unlock()
	if overdue {
		return tool.Result{}, fmt.Errorf("not run: update your %s first (what you have explored, what you still need to find), then call %s again", ScratchpadToolName, g.Spec().Name)
	}
	return g.Tool.Run(ctx, c)
}
