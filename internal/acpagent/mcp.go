package acpagent

import (
	"fmt"
	"strings"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/mcp"
)

// literalPrefix names the values the editor gave for its MCP servers'
// environment and headers: Hearth expands $VAR in those of its config
// files, but an editor's are literal, so each is passed as ${literalPrefix
// N} and read back by Literals.Getenv.
const literalPrefix = "hearth-acp-literal:"

// Literals holds the literal values of the editor's MCP servers (see
// mcpServers), for the agent's Getenv.
type Literals []string

// Getenv returns a literal for its name, and asks next for any other
// name.
func (l Literals) Getenv(next func(string) string) func(string) string {
	return func(name string) string {
		if rest, ok := strings.CutPrefix(name, literalPrefix); ok {
			var i int
			if _, err := fmt.Sscanf(rest, "%d", &i); err == nil && i >= 0 && i < len(l) && fmt.Sprint(i) == rest {
				return l[i]
			}
			return ""
		}
		if next == nil {
			return ""
		}
		return next(name)
	}
}

// mcpServers maps the MCP servers an editor passes in session/new or
// session/load to Hearth's: stdio servers and HTTP ones (streamable HTTP,
// or SSE). taken are the names already used (the user's configured
// servers): an editor's server of the same name, or whose name Hearth does
// not take as it is (it prefixes the tools' names), gets a name of its own.
// The values of environment variables and headers are literal (see
// Literals).
func mcpServers(in []acp.McpServer, taken []string) ([]hearth.MCPServer, Literals, error) {
	var out []hearth.MCPServer
	var lit Literals
	used := map[string]bool{}
	for _, n := range taken {
		used[n] = true
	}
	literal := func(v string) string {
		lit = append(lit, v)
		return fmt.Sprintf("${%s%d}", literalPrefix, len(lit)-1)
	}
	for i, s := range in {
		var sc hearth.MCPServer
		switch {
		case s.Stdio != nil:
			sc = hearth.MCPServer{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: append([]string(nil), s.Stdio.Args...), Transport: mcp.TransportStdio}
			if sc.Command == "" {
				return nil, nil, fmt.Errorf("MCP server %d (%q) has no command: give the command that starts it", i+1, s.Stdio.Name)
			}
			for _, e := range s.Stdio.Env {
				if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
					return nil, nil, fmt.Errorf("MCP server %q: environment variable %q: a name without '=' is needed", s.Stdio.Name, e.Name)
				}
				if sc.Env == nil {
					sc.Env = map[string]string{}
				}
				sc.Env[e.Name] = literal(e.Value)
			}
		case s.Http != nil:
			sc = hearth.MCPServer{Name: s.Http.Name, URL: s.Http.Url, Transport: mcp.TransportHTTP}
			sc.Headers = headers(s.Http.Headers, literal)
		case s.Sse != nil:
			sc = hearth.MCPServer{Name: s.Sse.Name, URL: s.Sse.Url, Transport: mcp.TransportSSE}
			sc.Headers = headers(s.Sse.Headers, literal)
		default:
			return nil, nil, fmt.Errorf("MCP server %d: Hearth starts stdio servers and reaches HTTP and SSE ones; this one is none of them", i+1)
		}
		sc.Name = uniqueName(sc.Name, used)
		used[sc.Name] = true
		if err := sc.Validate(); err != nil {
			return nil, nil, err
		}
		out = append(out, sc)
	}
	return out, lit, nil
}

// headers maps an editor's HTTP headers, their values literal.
func headers(hs []acp.HttpHeader, literal func(string) string) map[string]string {
	if len(hs) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, h := range hs {
		m[h.Name] = literal(h.Value)
	}
	return m
}

// uniqueName makes name one Hearth takes for an MCP server (letters,
// digits, _ and -, at most 32 bytes) and that used does not hold.
func uniqueName(name string, used map[string]bool) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	base := b.String()
	if base == "" {
		base = "editor"
	}
	if len(base) > 28 {
		base = base[:28]
	}
	n := base
	for i := 2; used[n] || !mcp.ValidServerName(n); i++ {
		n = fmt.Sprintf("%s-%d", base, i)
		if i > 999 {
			break
		}
	}
	return n
}
