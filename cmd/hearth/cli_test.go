package main

import (
	"strings"
	"testing"
)

// TestUnknownCommand: a mistyped command gets cobra's suggestion, a prompt
// given as a command the commands that take one; both exit 2.
func TestUnknownCommand(t *testing.T) {
	tr := newTranscript()
	for _, args := range [][]string{{"rn", "hi"}, {"sessions", "lst"}, {"what does this project do?"}} {
		code, out, errOut := runHearth(t, nil, args...)
		tr.add(args, code, out, errOut)
		if code != exitUsage {
			t.Errorf("%v: exit %d", args, code)
		}
	}
	golden(t, "unknown-command", tr.String())
}

// TestBadBaseURL: an address that cannot be a server's is a usage error
// (exit 2) naming where it came from, not an unreachable server.
func TestBadBaseURL(t *testing.T) {
	tr := newTranscript()
	home := t.TempDir()
	for _, c := range []struct {
		env  map[string]string
		args []string
	}{
		{nil, []string{"--base-url", "htp://x", "run", "-m", "m", "hi"}},
		{nil, []string{"--base-url", "http://", "models"}},
		{nil, []string{"--base-url", "http://[::1", "doctor"}},
		{nil, []string{"--provider", "openai", "--base-url", "http//localhost:8000/v1", "models"}},
		{map[string]string{"OLLAMA_HOST": "http://localhost:99999"}, []string{"models"}},
	} {
		env := map[string]string{"HEARTH_HOME": home}
		for k, v := range c.env {
			env[k] = v
		}
		code, out, errOut := runHearth(t, env, c.args...)
		var vars []string
		for k, v := range c.env {
			vars = append(vars, k+"="+v)
		}
		tr.addEnv(vars, c.args, code, out, errOut)
		if code != exitUsage || strings.Contains(errOut, "is Ollama running") {
			t.Errorf("%v: exit %d %q", c.args, code, errOut)
		}
	}
	golden(t, "bad-base-url", tr.String())
}

// TestHelpTypesAndPlaceholders: flags show their types and placeholders.
func TestHelpTypesAndPlaceholders(t *testing.T) {
	_, out, _ := runHearth(t, nil, "--help")
	for _, want := range []string{"-p, --prompt PROMPT ", "--max-turns int ", "--timeout duration ", "--context ID ", "--base-url URL ", "HEARTH_LOG ", "HEARTH_LOG_FORMAT "} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	if strings.Contains(out, "--prompt hearth") || strings.Contains(out, "--max-turns string") || strings.Contains(out, "--timeout string") {
		t.Errorf("--help:\n%s", out)
	}
	// The environment is still the default, and bad values still say so.
	env := map[string]string{"HEARTH_MAX_TURNS": "many"}
	if code, _, errOut := runHearth(t, env, "run", "hi"); code != exitUsage || !strings.Contains(errOut, `HEARTH_MAX_TURNS="many": want a positive number`) {
		t.Errorf("HEARTH_MAX_TURNS: %d %q", code, errOut)
	}
	if code, _, errOut := runHearth(t, nil, "run", "--timeout", "soon", "hi"); code != exitUsage || !strings.Contains(errOut, `--timeout "soon": want a duration such as 10m`) {
		t.Errorf("--timeout: %d %q", code, errOut)
	}
	if code, _, errOut := runHearth(t, map[string]string{"HEARTH_TIMEOUT": "-1s"}, "-p", "hi"); code != exitUsage || !strings.Contains(errOut, `HEARTH_TIMEOUT="-1s": want a duration such as 10m`) {
		t.Errorf("HEARTH_TIMEOUT: %d %q", code, errOut)
	}
}
