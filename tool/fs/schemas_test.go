package fs

import (
	"testing"

	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/internal/schematest"
)

// TestPrecomputedSchemas keeps the schemas in schemas.go equal to what
// Define would infer from the argument structs. After changing one, run
// HEARTH_UPDATE_SCHEMAS=1 go test ./tool/fs -run TestPrecomputedSchemas.
func TestPrecomputedSchemas(t *testing.T) {
	schematest.Check(t, "fs", map[string]tool.SchemaSource{"readFileSchema": readFileDef, "readManySchema": readManyDef,
		"writeFileSchema": writeFileDef, "listDirSchema": listDirDef, "globSchema": globDef, "grepSchema": grepDef})
}
