package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type queryArgs struct {
	Table string `json:"table" jsonschema:"the table to query"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many rows"`
}

func query(ctx context.Context, a queryArgs) (string, error) {
	if a.Table == "secrets" {
		return "", errors.New("no access to secrets")
	}
	return a.Table + ":" + strings.Repeat("r", max(a.Limit, 1)), nil
}

func TestFuncSchemaAndRun(t *testing.T) {
	tl, err := Func("query_database", "Run a read-only query", ReadOnly, query)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                       `json:"type"`
		Properties map[string]map[string]string `json:"properties"`
		Required   []string                     `json:"required"`
	}
	json.Unmarshal(tl.Spec().Parameters, &schema)
	if schema.Type != "object" || schema.Properties["table"]["description"] != "the table to query" ||
		schema.Properties["limit"]["type"] != "integer" || len(schema.Required) != 1 || schema.Required[0] != "table" {
		t.Errorf("schema: %s", tl.Spec().Parameters)
	}
	r, err := tl.Run(context.Background(), Call{Args: json.RawMessage(`{"table":"users","limit":2}`)})
	if err != nil || r.Output != "users:rr" {
		t.Errorf("run: %q %v", r.Output, err)
	}
	if _, err := tl.Run(context.Background(), Call{Args: json.RawMessage(`{"table":"secrets"}`)}); err == nil {
		t.Error("tool error lost")
	}
	if _, err := Func("bad", "", ReadOnly, func(context.Context, chan int) (string, error) { return "", nil }); err == nil {
		t.Error("a channel argument got a schema")
	}
}

func TestRegistryValidate(t *testing.T) {
	reg, err := NewRegistry(MustFunc("query_database", "q", ReadOnly, query))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args, errHas string
	}{
		{`{"table":"t"}`, ""},
		{`{"table":"t","limit":3}`, ""},
		{`{}`, "table"},
		{`{"table":5}`, "schema"},
		{`{"table":"t","extra":1}`, "schema"},
		{`[1]`, "JSON object"},
		{`{"table":`, "not valid JSON"},
	}
	for _, tc := range tests {
		err := reg.Validate("query_database", json.RawMessage(tc.args))
		if (tc.errHas == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.errHas)) {
			t.Errorf("%s: %v, want %q", tc.args, err, tc.errHas)
		}
	}
	if err := reg.Validate("nope", json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	if err := reg.Add(MustFunc("query_database", "q", ReadOnly, query)); err == nil {
		t.Error("duplicate accepted")
	}
	if err := reg.Add(MustFunc("bad name!", "q", ReadOnly, query)); err == nil {
		t.Error("bad name accepted")
	}
}

func TestProfiles(t *testing.T) {
	mk := func(n string) Tool { return MustFunc(n, n, ReadOnly, query) }
	reg, _ := NewRegistry(mk("read_file"), mk("write_file"), mk("run_shell_command"), mk("github__search"), mk("github__create_issue"))
	tests := []struct {
		tools   []string
		want    string
		wantErr string
	}{
		{[]string{"*"}, "read_file write_file run_shell_command github__search github__create_issue", ""},
		{[]string{"*", "!run_shell_command"}, "read_file write_file github__search github__create_issue", ""},
		{[]string{"github__*", "read_file"}, "read_file github__search github__create_issue", ""},
		{[]string{"read_fiel"}, "", "matches no tool"},
		{[]string{"[x"}, "", "bad pattern"},
		{nil, "", ""},
	}
	for _, tc := range tests {
		sel, err := reg.Select(Profile{Name: "p", Tools: tc.tools})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: %v", tc.tools, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(sel.Names(), " "); got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.tools, got, tc.want)
		}
	}
}

func TestSeen(t *testing.T) {
	s := NewSeen()
	if err := s.Check("/a", []byte("x")); err != nil {
		t.Error("unseen file refused")
	}
	s.Record("/a", []byte("x"))
	if err := s.Check("/a", []byte("x")); err != nil {
		t.Error(err)
	}
	if err := s.Check("/a", []byte("y")); err == nil {
		t.Error("changed file passed")
	}
	s.Forget("/a")
	if err := s.Check("/a", []byte("y")); err != nil {
		t.Error(err)
	}
}
