package builtin

import (
	"testing"

	"github.com/hearth-agent/hearth/tool/shell"
)

func shellForTest(t *testing.T) shell.Config {
	return shell.Config{TempRoot: t.TempDir(), Home: t.TempDir()}
}
