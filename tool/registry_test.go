package tool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// schemaTool is a tool with the parameters given.
type schemaTool struct {
	name   string
	params string
}

func (s schemaTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: s.name, Parameters: json.RawMessage(s.params)}
}
func (schemaTool) Kind() Kind                                { return ReadOnly }
func (schemaTool) Run(context.Context, Call) (Result, error) { return Result{}, nil }

// Schemas are resolved on a tool's first call, once for all the registries
// selected from one another; a bad one fails Add only when it is not JSON,
// else that call (CheckSchema tells at once).
func TestSchemasResolvedOnFirstCall(t *testing.T) {
	for _, tc := range []struct {
		name, params string
		addErr       string // "" when Add succeeds
		checkErr     bool
		callErr      string // the first call's, with args {"a":"x"}
	}{
		{name: "good", params: `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`},
		{name: "none", params: ``},
		{name: "not-json", params: `{"type":`, addErr: "not JSON", checkErr: true},
		{name: "bad-schema", params: `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, checkErr: true, callErr: "cannot be called"},
		{name: "mismatch", params: `{"type":"object","properties":{"a":{"type":"integer"}}}`, callErr: "do not match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := NewRegistry()
			err := r.Add(schemaTool{tc.name, tc.params})
			if (err != nil) != (tc.addErr != "") || err != nil && !strings.Contains(err.Error(), tc.addErr) {
				t.Fatalf("Add: %v, want %q", err, tc.addErr)
			}
			if err := CheckSchema(json.RawMessage(tc.params)); (err != nil) != tc.checkErr {
				t.Errorf("CheckSchema: %v, want an error %v", err, tc.checkErr)
			}
			if tc.addErr != "" {
				return
			}
			sel, err := r.Select(Profile{Name: "p", Tools: []string{"*"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, reg := range []*Registry{r, sel} {
				err := reg.Validate(tc.name, json.RawMessage(`{"a":"x"}`))
				if (err != nil) != (tc.callErr != "") || err != nil && !strings.Contains(err.Error(), tc.callErr) {
					t.Errorf("Validate: %v, want %q", err, tc.callErr)
				}
			}
			if r.schemas[tc.name] != sel.schemas[tc.name] {
				t.Error("a selected registry resolves the schema again")
			}
		})
	}
}
