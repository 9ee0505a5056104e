package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// A sub-agent's report: the state of one call, the report's checks, and
// submit_report.

// errReported ends a child's turn once its report is accepted.
var errReported = errors.New("the report was accepted")

type childState struct {
	schema *jsonschema.Resolved
	check  func(json.RawMessage) error
	every  int // scratchpad: most other calls between updates (0: none kept)
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	explored string
	needed   string
	updates  int
	since    int
	report   json.RawMessage
}

func (s *SubAgent) newState() (*childState, error) {
	st := &childState{check: s.Check, every: s.Scratchpad}
	if s.OutputSchema != nil {
		rs, err := resolveObjectSchema(s.OutputSchema)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		st.schema = rs
	}
	return st, nil
}

func resolveObjectSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var sch jsonschema.Schema
	if err := json.Unmarshal(raw, &sch); err != nil {
		return nil, fmt.Errorf("not a JSON Schema: %w", err)
	}
	if sch.Type != "object" {
		return nil, errors.New(`want an object schema ("type": "object")`)
	}
	return sch.Resolve(nil)
}

func (st *childState) reported() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.report != nil
}

// validate checks a report against the schema and Check.
func (st *childState) validate(report json.RawMessage) error {
	var v any
	if err := json.Unmarshal(report, &v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if err := st.schema.Validate(v); err != nil {
		return fmt.Errorf("it does not match the report schema: %v", err)
	}
	if st.check != nil {
		if err := st.check(report); err != nil {
			return err
		}
	}
	return nil
}

// result is the child's report: the one submit_report accepted, else a
// valid JSON report in its final answer. why says what was wrong.
func (st *childState) result(res *Result) (json.RawMessage, string) {
	st.mu.Lock()
	r := st.report
	st.mu.Unlock()
	if r != nil {
		return r, ""
	}
	switch res.Reason {
	case DoneStop:
	case DoneMaxTurns:
		return nil, "you reached your turn limit"
	default:
		return nil, "your turn ended: " + string(res.Reason)
	}
	raw := extractJSON(res.Text)
	if raw == nil {
		return nil, "your answer held no JSON report"
	}
	if err := st.validate(raw); err != nil {
		return nil, err.Error()
	}
	return compactRaw(raw), ""
}

// extractJSON finds a JSON object in a model's answer: the whole text, a
// fenced block, or the span from the first { to the last }.
func extractJSON(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "```"); i >= 0 {
		rest := s[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 && json.Valid([]byte(strings.TrimSpace(rest[:j]))) {
			return json.RawMessage(strings.TrimSpace(rest[:j]))
		}
	}
	if i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}'); i >= 0 && j > i && json.Valid([]byte(s[i:j+1])) {
		return json.RawMessage(s[i : j+1])
	}
	return nil
}

// submitTool takes the child's report.
type submitTool struct {
	s  *SubAgent
	st *childState
}

func (t *submitTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: SubmitToolName,
		Description: "Send your final report to the agent that asked. Call it once, when you are done; your work ends when it is accepted.",
		Parameters:  t.s.OutputSchema}
}

func (t *submitTool) Kind() tool.Kind { return tool.ReadOnly }

func (t *submitTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	st := t.st
	st.mu.Lock()
	noPad := st.every > 0 && st.updates == 0
	st.mu.Unlock()
	if noPad {
		return tool.Result{}, fmt.Errorf("update your %s first (what you explored, what is still open), then send the report", ScratchpadToolName)
	}
	if err := st.validate(c.Args); err != nil {
		return tool.Result{}, fmt.Errorf("report not accepted: %v. Correct it and call %s again", err, SubmitToolName)
	}
	st.mu.Lock()
	st.report = compactRaw(c.Args)
	st.mu.Unlock()
	st.cancel(errReported)
	return tool.Result{Output: "Report accepted."}, nil
}
