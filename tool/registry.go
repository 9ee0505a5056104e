package tool

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hearth-agent/hearth/llm"
)

// Registry holds the tools an agent may offer, by name. It is safe for
// concurrent use.
type Registry struct {
	mu      sync.RWMutex
	tools   map[string]Tool
	order   []string
	schemas map[string]*schema
}

// schema is a tool's parameters schema, resolved on first use (the first
// call to validate): resolving every tool's schema when the tools are
// registered cost a headless run a tenth of its start-up, for tools most
// runs never call. Registries selected from one another share it, so it is
// resolved once.
type schema struct {
	params json.RawMessage
	once   sync.Once
	rs     *jsonschema.Resolved
	err    error
}

func (s *schema) resolved() (*jsonschema.Resolved, error) {
	s.once.Do(func() { s.rs, s.err = resolveSchema(s.params) })
	return s.rs, s.err
}

// CheckSchema reports whether params is a JSON Schema a registry can
// validate calls against, with what is wrong. A registry resolves a tool's
// schema on its first call; check tools that come from elsewhere (a
// program's own, an MCP server's) when they arrive, to refuse a bad one
// at once.
func CheckSchema(params json.RawMessage) error {
	_, err := resolveSchema(params)
	return err
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) (*Registry, error) {
	r := &Registry{tools: map[string]Tool{}, schemas: map[string]*schema{}}
	for _, t := range tools {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// ValidName reports whether s is a tool name every provider accepts as a
// function name: 1 to 64 letters, digits, _ or -.
func ValidName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Add registers t. Its name must be unique and its parameters JSON; the
// schema itself is resolved on the first call (Validate), and a bad one
// fails that call (CheckSchema checks one at once).
func (r *Registry) Add(t Tool) error {
	spec := t.Spec()
	if !ValidName(spec.Name) {
		return fmt.Errorf("tool name %q: use 1 to 64 letters, digits, _ or -", spec.Name)
	}
	if len(spec.Parameters) > 0 && !json.Valid(spec.Parameters) {
		return fmt.Errorf("tool %s: its parameters are not JSON", spec.Name)
	}
	return r.add(t, &schema{params: spec.Parameters})
}

func (r *Registry) add(t Tool, s *schema) error {
	name := t.Spec().Name
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return fmt.Errorf("tool %s is registered twice", name)
	}
	r.tools[name] = t
	r.schemas[name] = s
	r.order = append(r.order, name)
	return nil
}

func resolveSchema(params json.RawMessage) (*jsonschema.Resolved, error) {
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(params, &s); err != nil {
		return nil, fmt.Errorf("parameters are not a JSON Schema: %w", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("parameters schema: %w", err)
	}
	return rs, nil
}

// Get returns the tool with that name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Names returns the registered names in the order they were added.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.order)
}

// Specs returns the specs of the registered tools, in order.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]llm.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		out = append(out, r.tools[n].Spec())
	}
	return out
}

// Validate checks a call's arguments against the tool's schema. The error
// says what is wrong in words a model can act on.
func (r *Registry) Validate(name string, args json.RawMessage) error {
	r.mu.RLock()
	sc := r.schemas[name]
	r.mu.RUnlock()
	if sc == nil {
		return fmt.Errorf("unknown tool %q", name)
	}
	rs, err := sc.resolved()
	if err != nil {
		return fmt.Errorf("the tool %s cannot be called: its %v (a bug in the tool, not in your call)", name, err)
	}
	var v any
	if err := json.Unmarshal(args, &v); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return errors.New("arguments must be a JSON object")
	}
	if err := rs.Validate(v); err != nil {
		return fmt.Errorf("arguments do not match the schema: %v", err)
	}
	return nil
}

// Profile is a named set of enabled tools. Its patterns are applied in
// order, each adding the tools it matches, or removing them when it begins
// with "!":
//
//   - a path.Match glob over tool names: "*" for all, "read_file",
//     "github__*" for one MCP server's tools;
//   - a kind selector, "@" and the name of a kind: "@read-only", "@edit" or
//     "@execute", for every tool of that kind (built-in, host or MCP),
//     except the tools that call other tools (sub-agents, see Delegator),
//     which are enabled by name.
//
// So ["@read-only"] is every tool that only looks, ["*", "!@execute"] every
// tool that runs no program, and ["@read-only", "codebase_investigator"]
// adds a sub-agent to the read-only tools.
type Profile struct {
	Name  string
	Tools []string
}

// kindSelectors are the kind selectors a profile may use, by name.
var kindSelectors = map[string]Kind{"@" + ReadOnly.String(): ReadOnly, "@" + Edit.String(): Edit, "@" + Execute.String(): Execute}

// Select returns a registry holding the tools the profile enables, in the
// order they were registered. A pattern that matches nothing is an error
// (a glob, or a kind no tool has), so that a typo in a profile does not
// silently disable a tool; so is an unknown kind.
func (r *Registry) Select(p Profile) (*Registry, error) {
	r.mu.RLock()
	names := slices.Clone(r.order)
	tools := make([]Tool, len(names))
	schemas := make([]*schema, len(names))
	for i, n := range names {
		tools[i], schemas[i] = r.tools[n], r.schemas[n]
	}
	r.mu.RUnlock()
	// The tools' kinds, asked once and only if a kind selector needs them,
	// without holding the registry's lock (a tool may work its kind out
	// from a registry of its own). A Delegator is never asked.
	var kinds []Kind
	kindOf := func(i int) (Kind, bool) {
		if _, delegates := tools[i].(Delegator); delegates {
			return 0, false
		}
		if kinds == nil {
			kinds = make([]Kind, len(tools))
			for j, t := range tools {
				if _, delegates := t.(Delegator); !delegates {
					kinds[j] = t.Kind()
				}
			}
		}
		return kinds[i], true
	}
	on := map[string]bool{}
	for _, pat := range p.Tools {
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		var match func(i int) (bool, error)
		if strings.HasPrefix(pat, "@") {
			k, ok := kindSelectors[pat]
			if !ok {
				return nil, fmt.Errorf("profile %s: unknown kind %q: the kind selectors are @read-only, @edit and @execute", p.Name, pat)
			}
			match = func(i int) (bool, error) {
				tk, ok := kindOf(i)
				return ok && tk == k, nil
			}
		} else {
			match = func(i int) (bool, error) { return path.Match(pat, names[i]) }
		}
		matched := false
		for i, n := range names {
			ok, err := match(i)
			if err != nil {
				return nil, fmt.Errorf("profile %s: bad pattern %q: %v", p.Name, pat, err)
			}
			if ok {
				matched = true
				on[n] = !neg
			}
		}
		if !matched {
			return nil, fmt.Errorf("profile %s: %q matches no tool (have: %s)", p.Name, pat, strings.Join(sorted(names), ", "))
		}
	}
	out, _ := NewRegistry()
	for i, n := range names {
		if on[n] {
			if err := out.add(tools[i], schemas[i]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// Allows applies a profile's patterns to one tool, as Select would: globs
// over its name and kind selectors, in order, "!" removing. Unlike Select, a
// pattern that matches nothing is not an error (and a bad one matches
// nothing): it is for tools that come and go, an MCP server's.
func Allows(patterns []string, t Tool) bool {
	name := t.Spec().Name
	_, delegates := t.(Delegator)
	on := false
	for _, pat := range patterns {
		neg := strings.HasPrefix(pat, "!")
		pat = strings.TrimPrefix(pat, "!")
		var ok bool
		if k, isKind := kindSelectors[pat]; isKind {
			ok = !delegates && t.Kind() == k
		} else {
			ok, _ = path.Match(pat, name)
		}
		if ok {
			on = !neg
		}
	}
	return on
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
