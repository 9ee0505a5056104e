package loader

import (
	"sort"
	"time"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/mcp"
)

// MCPServers turns the configured MCP servers into the runtime's, sorted by
// name. The config's timeout bounds both the start and each call.
func MCPServers(servers map[string]config.MCPServer) []mcp.ServerConfig {
	out := make([]mcp.ServerConfig, 0, len(servers))
	for name, s := range servers {
		sc := mcp.ServerConfig{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd,
			URL: s.URL, Headers: s.Headers, Include: s.Include, Exclude: s.Exclude}
		if t := time.Duration(s.Timeout); t > 0 {
			sc.StartTimeout, sc.CallTimeout = t, t
		}
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
