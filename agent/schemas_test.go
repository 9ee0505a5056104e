package agent

import (
	"testing"

	"github.com/hearth-agent/hearth/tool"
)

// The schemas precomputed as constants are what tool.Schema infers from
// their argument structs.
func TestPrecomputedSchemas(t *testing.T) {
	for _, tc := range []struct{ name, have, want string }{
		{"subAgentSchema", subAgentSchema, string(tool.Schema[subAgentArgs]())},
		{"padSchema", padSchema, string(tool.Schema[padArgs]())},
	} {
		if tc.have != tc.want {
			t.Errorf("%s is not what tool.Schema infers; make it:\n%s", tc.name, tc.want)
		}
	}
}
