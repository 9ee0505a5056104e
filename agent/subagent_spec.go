package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// DefaultSubAgentTools are what a configured sub-agent gets when its spec
// names no tools: the read-only ones, whichever there are (the file tools, an MCP server's
// read-only tools; never another sub-agent).
var DefaultSubAgentTools = []string{"@read-only"}

// DefaultSubAgentSelect returns the patterns of DefaultSubAgentTools that
// select something in reg (none: the sub-agent answers from its prompt).
func DefaultSubAgentSelect(reg *tool.Registry) []string {
	var pats []string
	for _, p := range DefaultSubAgentTools {
		if _, err := reg.Select(tool.Profile{Tools: []string{p}}); err == nil {
			pats = append(pats, p)
		}
	}
	return pats
}

// Delegates implements tool.Delegator: a sub-agent's kind is its tools',
// so a profile's kind selector ("@read-only") neither selects it nor asks
// it its kind.
func (*SubAgent) Delegates() {}

// SubAgentSpec is a sub-agent as the configuration describes it (one
// [subagents.NAME] table), so that users add their own without Go code.
type SubAgentSpec struct {
	// Name is the tool's name (letters, digits, _ and -).
	Name string
	// Description tells the calling model what it is for. Required.
	Description string
	// Prompt is its system prompt. Required.
	Prompt string
	// Tools are patterns over the caller's tools, as in profiles ("*",
	// "github__*", "!run_shell_command"); empty: DefaultSubAgentTools.
	Tools []string
	// Model, when set, answers instead of the caller's model (same
	// provider unless the builder is given another).
	Model string
	// MaxTurns bounds its model calls (0: DefaultSubAgentTurns).
	MaxTurns int
	// OutputSchema, when set, is a JSON Schema (an object schema, as JSON
	// text) its result must match; without it the result is its answer.
	OutputSchema string
	// Scratchpad, when above 0, makes it keep a scratchpad (see SubAgent).
	Scratchpad int
}

// Validate checks the spec without building it.
func (sp SubAgentSpec) Validate() error {
	if sp.Name == "" || len(sp.Name) > 64 || strings.Trim(sp.Name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return fmt.Errorf("sub-agent %q: use 1 to 64 letters, digits, _ or - in the name", sp.Name)
	}
	if strings.TrimSpace(sp.Description) == "" {
		return fmt.Errorf("sub-agent %s: give it a description (what it is for: the calling model reads it)", sp.Name)
	}
	if strings.TrimSpace(sp.Prompt) == "" {
		return fmt.Errorf("sub-agent %s: give it a prompt (its system prompt)", sp.Name)
	}
	if sp.MaxTurns < 0 || sp.Scratchpad < 0 {
		return fmt.Errorf("sub-agent %s: max_turns and scratchpad must not be negative", sp.Name)
	}
	if sp.OutputSchema != "" {
		if _, err := resolveObjectSchema(json.RawMessage(sp.OutputSchema)); err != nil {
			return fmt.Errorf("sub-agent %s: output_schema: %v", sp.Name, err)
		}
	}
	return nil
}

// SubAgent builds the sub-agent. Its tools are selected from `from` (the
// caller's registry) at each call, so tools that arrive late (an MCP
// server's) are included; provider, when not nil, answers instead of the
// caller's provider; runner stores its turns (nil: unstored).
func (sp SubAgentSpec) SubAgent(from *tool.Registry, provider llm.Provider, runner Runner) (*SubAgent, error) {
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	if from == nil {
		return nil, errors.New("sub-agent " + sp.Name + ": no tools to choose from")
	}
	pats := sp.Tools
	if len(pats) == 0 {
		pats = DefaultSubAgentSelect(from)
	}
	s := &SubAgent{Name: sp.Name, Description: sp.Description, System: sp.Prompt, Tools: from, Select: pats,
		Provider: provider, Model: sp.Model, MaxTurns: sp.MaxTurns, Scratchpad: sp.Scratchpad, Runner: runner}
	if len(pats) == 0 {
		s.Tools, s.Select = nil, nil // nothing to offer: it answers from its prompt
	}
	if sp.OutputSchema != "" {
		s.OutputSchema = json.RawMessage(sp.OutputSchema)
	}
	return s, nil
}
