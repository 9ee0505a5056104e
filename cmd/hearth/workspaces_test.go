package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
)

// TestWorkspacesCommand: a folder Hearth ran in is listed; trust adds or
// changes one; a file, a missing folder or a typo'd level is a usage
// error; rm forgets a folder and keeps its sessions.
func TestWorkspacesCommand(t *testing.T) {
	home := t.TempDir()
	ws := t.TempDir()
	real, _ := filepath.EvalSymlinks(ws)
	srv := llmtest.New(t)
	srv.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	srv.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("ok")))
	env := map[string]string{"HEARTH_HOME": home, "OLLAMA_HOST": srv.URL, "NO_COLOR": "1"}

	if code, _, errOut := runHearth(t, env, "workspaces"); code != 0 || !strings.Contains(errOut, "No workspaces yet") {
		t.Fatalf("empty: %d %s", code, errOut)
	}
	if code, _, errOut := runHearth(t, env, "-m", "m", "-w", ws, "run", "hi"); code != 0 {
		t.Fatalf("run: %d %s", code, errOut)
	}
	list := func() []map[string]any {
		t.Helper()
		code, out, errOut := runHearth(t, env, "workspaces", "list", "--json")
		var l []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
			t.Fatalf("list: %d %s %s", code, out, errOut)
		}
		return l
	}
	l := list()
	if len(l) != 1 || l[0]["path"] != real || l[0]["trust"] != "untrusted" || l[0]["sessions"] != float64(1) {
		t.Fatalf("after a run: %v", l)
	}
	if code, _, errOut := runHearth(t, env, "workspaces", "trust", ws, "trusted"); code != 0 || !strings.Contains(errOut, "trusted") {
		t.Fatalf("trust: %d %s", code, errOut)
	}
	other := t.TempDir()
	if code, _, errOut := runHearth(t, env, "workspaces", "add", other, "--name", "other", "--trust", "read-only"); code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	l = list()
	if len(l) != 2 {
		t.Fatalf("%v", l)
	}
	trust := map[string]string{}
	for _, w := range l {
		trust[w["name"].(string)] = w["trust"].(string)
	}
	if trust["other"] != "read-only" || trust[filepath.Base(real)] != "trusted" {
		t.Errorf("trust levels: %v", trust)
	}
	file := filepath.Join(other, "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, args := range [][]string{
		{"workspaces", "add", file},
		{"workspaces", "add", filepath.Join(other, "missing")},
		{"workspaces", "trust", ws, "very"},
		{"workspaces", "trust", ws},
		{"workspaces", "rm", filepath.Join(other, "never-known")},
	} {
		if code, _, errOut := runHearth(t, env, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if code, _, errOut := runHearth(t, env, "workspaces", "rm", ws); code != 0 || !strings.Contains(errOut, "its sessions are kept") {
		t.Fatalf("rm: %d %s", code, errOut)
	}
	if l = list(); len(l) != 1 || l[0]["name"] != "other" {
		t.Errorf("after rm: %v", l)
	}
	if code, out, _ := runHearth(t, env, "sessions", "list"); code != 0 || !strings.Contains(out, "hi") {
		t.Errorf("the session went with its folder: %s", out)
	}
}

// TestWorkspaceNamesStayInTheirCell: a name is one line of text; a folder
// whose own name holds a tab or a line break is shown escaped, never as a
// row or a column of its own.
func TestWorkspaceNamesStayInTheirCell(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home, "NO_COLOR": "1"}
	dir := t.TempDir()
	if code, _, errOut := runHearth(t, env, "workspaces", "add", dir, "--name", "mine\tuntrusted\t0\n/etc"); code != 2 || !strings.Contains(errOut, "one line of text") {
		t.Fatalf("a forged name: exit %d %s", code, errOut)
	}
	odd := filepath.Join(t.TempDir(), "a\tb\nc")
	os.Mkdir(odd, 0o755)
	if code, _, errOut := runHearth(t, env, "workspaces", "add", odd); code != 0 {
		t.Fatalf("add: %d %s", code, errOut)
	}
	code, out, _ := runHearth(t, env, "workspaces")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); code != 0 || len(lines) != 2 || !strings.Contains(out, `a\tb\nc`) {
		t.Errorf("table:\n%s", out)
	}
}
