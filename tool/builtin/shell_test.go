package builtin

import (
	"testing"
	"time"

	"github.com/hearth-agent/hearth/tool/shell"
)

func shellForTest(t *testing.T) shell.Config {
	return shell.Config{TempRoot: t.TempDir(), Home: t.TempDir()}
}

var fixedNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
