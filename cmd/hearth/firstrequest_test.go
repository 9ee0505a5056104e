package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestFirstRequestBytes measures what Hearth sends before the user's first
// word, as the server receives it (the body of the first chat request of
// a headless run in a workspace without project notes): with the plan
// tool and without it, natively and by the prompted protocol. A small
// model's prompt processing is what its user waits for, so each addition
// has a budget. -v logs the figures (docs/benchmarks.md has them).
func TestFirstRequestBytes(t *testing.T) {
	measure := func(t *testing.T, config string, flags ...string) int {
		t.Helper()
		e := newE2E(t)
		if config != "" {
			os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(config), 0o600)
		}
		e.srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
		if code, out, errOut := e.run("", append(flags, "run", "hi")...); code != 0 || !strings.Contains(out, "ok") {
			t.Fatalf("exit %d: %s %s", code, out, errOut)
		}
		return len(e.srv.RequestsTo("/api/chat")[0].Body)
	}
	noPlan := "[profiles.headless]\ntools = [\"*\", \"!update_plan\"]\n"
	native := measure(t, "")
	nativeNoPlan := measure(t, noPlan)
	prompted := measure(t, "", "--tool-mode", "prompted")
	promptedNoPlan := measure(t, noPlan, "--tool-mode", "prompted")
	t.Logf("first request: native %d bytes (%d without update_plan: +%d); prompted %d bytes (%d without update_plan: +%d)",
		native, nativeNoPlan, native-nativeNoPlan, prompted, promptedNoPlan, prompted-promptedNoPlan)
	if d := native - nativeNoPlan; d <= 0 || d > 800 {
		t.Errorf("the plan tool adds %d bytes to the native request: keep it under 800", d)
	}
	if d := prompted - promptedNoPlan; d <= 0 || d > 500 {
		t.Errorf("the plan tool adds %d bytes to the prompted request: keep it under 500", d)
	}
	if prompted >= native {
		t.Errorf("the prompted request (%d bytes) is not smaller than the native one (%d)", prompted, native)
	}
}
