package shell

import "testing"

// slow skips, under -short, a test that runs confined processes for
// seconds (fork bombs, timeouts, detached processes, network probes): the
// unit stage stays fast, and the race stage (scripts/test.sh race) runs it.
func slow(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: runs confined processes for seconds (the race stage runs it)")
	}
}
