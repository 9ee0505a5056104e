package loader

import (
	"testing"
	"time"

	"github.com/hearth-agent/hearth/config"
)

func TestMCPServers(t *testing.T) {
	cs := MCPServers(map[string]config.MCPServer{
		"b": {URL: "http://127.0.0.1:1/sse", Timeout: config.Duration(5 * time.Second)},
		"a": {Command: "npx", Args: []string{"-y", "x"}},
	})
	if len(cs) != 2 || cs[0].Name != "a" || cs[1].StartTimeout != 5*time.Second || cs[1].CallTimeout != 5*time.Second {
		t.Fatalf("%+v", cs)
	}
	if cs[0].TransportName() != "stdio" || cs[1].TransportName() != "sse" || cs[0].Target() != "npx -y x" {
		t.Errorf("%s %s %s", cs[0].TransportName(), cs[1].TransportName(), cs[0].Target())
	}
}
