package acpagent

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/mcp"
)

func TestMCPServers(t *testing.T) {
	tests := []struct {
		name  string
		in    string // the editor's mcpServers, as JSON
		taken []string
		want  []hearth.MCPServer
		lit   Literals
		err   string
	}{
		{"none", `[]`, nil, nil, nil, ""},
		{"stdio, its environment literal",
			`[{"name":"files","command":"npx","args":["-y","server-filesystem","/w"],"env":[{"name":"TOKEN","value":"a$HOME"}]}]`, nil,
			[]hearth.MCPServer{{Name: "files", Command: "npx", Args: []string{"-y", "server-filesystem", "/w"}, Transport: mcp.TransportStdio,
				Env: map[string]string{"TOKEN": "${hearth-acp-literal:0}"}}},
			Literals{"a$HOME"}, ""},
		{"http and sse, their headers literal",
			`[{"type":"http","name":"docs","url":"https://example.com/mcp","headers":[{"name":"Authorization","value":"Bearer x"}]},{"type":"sse","name":"old","url":"http://127.0.0.1:9/sse","headers":[]}]`, nil,
			[]hearth.MCPServer{
				{Name: "docs", URL: "https://example.com/mcp", Transport: mcp.TransportHTTP, Headers: map[string]string{"Authorization": "${hearth-acp-literal:0}"}},
				{Name: "old", URL: "http://127.0.0.1:9/sse", Transport: mcp.TransportSSE}},
			Literals{"Bearer x"}, ""},
		{"names Hearth does not take, or taken, are changed",
			`[{"name":"My Server","command":"a","args":[],"env":[]},{"name":"github","command":"b","args":[],"env":[]},{"name":"","command":"c","args":[],"env":[]},{"name":"My_Server","command":"d","args":[],"env":[]}]`,
			[]string{"github"},
			[]hearth.MCPServer{
				{Name: "My_Server", Command: "a", Transport: mcp.TransportStdio},
				{Name: "github-2", Command: "b", Transport: mcp.TransportStdio},
				{Name: "editor", Command: "c", Transport: mcp.TransportStdio},
				{Name: "My_Server-2", Command: "d", Transport: mcp.TransportStdio}},
			nil, ""},
		{"a stdio server without a command", `[{"name":"x","command":"","args":[],"env":[]}]`, nil, nil, nil, "no command"},
		{"a bad environment name", `[{"name":"x","command":"a","args":[],"env":[{"name":"A=B","value":""}]}]`, nil, nil, nil, "without '='"},
		{"a URL that is not HTTP", `[{"type":"http","name":"x","url":"ftp://h/x","headers":[]}]`, nil, nil, nil, "http://"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []acp.McpServer
			if err := json.Unmarshal([]byte(tt.in), &in); err != nil {
				t.Fatal(err)
			}
			got, lit, err := mcpServers(in, tt.taken)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(tt.want)
			if string(g) != string(w) {
				t.Errorf("servers:\n%s\nwant\n%s", g, w)
			}
			if strings.Join(lit, "|") != strings.Join(tt.lit, "|") {
				t.Errorf("literals %q, want %q", lit, tt.lit)
			}
		})
	}
}

// TestLiterals: an editor's values reach the server as given, $ and all,
// while the user's own configuration still reads the environment.
func TestLiterals(t *testing.T) {
	lit := Literals{"a$HOME", "${PATH}"}
	getenv := lit.Getenv(func(name string) string { return "env:" + name })
	for in, want := range map[string]string{
		"${hearth-acp-literal:0}":  "a$HOME",
		"${hearth-acp-literal:1}x": "${PATH}x",
		"${hearth-acp-literal:2}":  "",
		"${hearth-acp-literal:01}": "",
		"${hearth-acp-literal:-1}": "",
		"$HOME/bin":                "env:HOME/bin",
	} {
		if got := os.Expand(in, getenv); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
	if got := Literals(nil).Getenv(nil)("HOME"); got != "" {
		t.Errorf("no environment: %q", got)
	}
}

// FuzzMCPServers feeds mcpServers the MCP servers an editor may pass:
// whatever they hold, it never panics, and the servers it accepts have
// names Hearth takes, each once, and pass Hearth's own check.
func FuzzMCPServers(f *testing.F) {
	f.Add(`[{"name":"a","command":"x","args":[],"env":[{"name":"K","value":"$V"}]}]`, "a")
	f.Add(`[{"type":"http","name":"a b","url":"http://h/mcp","headers":[{"name":"X","value":"${Y}"}]},{"type":"sse","name":"a_b","url":"https://h/sse","headers":[]}]`, "")
	f.Add(`[{"type":"acp","name":"x","id":"1"}]`, "x")
	f.Add(`[{"name":"`+strings.Repeat("é", 40)+`","command":"c","args":[],"env":[]}]`, "editor")
	f.Fuzz(func(t *testing.T, raw, taken string) {
		var in []acp.McpServer
		if json.Unmarshal([]byte(raw), &in) != nil {
			return
		}
		out, lit, err := mcpServers(in, []string{taken})
		if err != nil {
			return
		}
		seen := map[string]bool{taken: true}
		for _, sc := range out {
			if seen[sc.Name] || !mcp.ValidServerName(sc.Name) {
				t.Fatalf("name %q: taken, or not one Hearth takes (%s)", sc.Name, raw)
			}
			seen[sc.Name] = true
			if err := sc.Validate(); err != nil {
				t.Fatalf("accepted a server Hearth refuses: %v (%s)", err, raw)
			}
			for _, v := range sc.Env {
				if got := os.Expand(v, lit.Getenv(nil)); !slices.Contains(lit, got) {
					t.Fatalf("env value %q does not expand to a literal", v)
				}
			}
		}
	})
}
