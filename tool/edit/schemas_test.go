package edit

import (
	"testing"

	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/schematest"
)

// TestPrecomputedSchemas keeps the schema in schemas.go equal to what
// Define would infer from Args. After changing it, run
// HEARTH_UPDATE_SCHEMAS=1 go test ./tool/edit -run TestPrecomputedSchemas.
func TestPrecomputedSchemas(t *testing.T) {
	schematest.Check(t, "edit", map[string]tool.SchemaSource{"editSchema": def})
}
