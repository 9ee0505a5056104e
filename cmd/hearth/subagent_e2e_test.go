package main

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/session"
)

// copyTree copies the fixture repository into the workspace.
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestE2ECodebaseInvestigator: `hearth run` in plan mode, the model hands
// the question to codebase_investigator; stream-json shows the
// investigator's steps nested under the call, its report comes back, and
// its session is stored as a child of the run's.
func TestE2ECodebaseInvestigator(t *testing.T) {
	e := newE2E(t)
	copyTree(t, "../../internal/conversation/testdata/shop", e.ws)
	report := `{"summary":"ApplyDiscount in pricing/discount.go takes the code's percentage off; Cart.Total calls it before tax.","relevant_files":[{"path":"pricing/discount.go","reason":"the codes and ApplyDiscount","lines":[{"start":14,"end":20}]},{"path":"cart/cart.go","reason":"Total applies it","lines":[{"start":26,"end":33}]}],"open_questions":[]}`
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("call_inv", "codebase_investigator", `{"task":"Where are discount codes applied?"}`)),
		llmtest.OllamaStream("m", llmtest.Call("scratchpad", `{"explored":"nothing","still_needed":"discount code handling"}`)),
		llmtest.OllamaStream("m", llmtest.Call("grep_search", `{"pattern":"ApplyDiscount"}`)),
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"pricing/discount.go"}`)),
		llmtest.OllamaStream("m", llmtest.Call("submit_report", report)),
		llmtest.OllamaStream("m", llmtest.Text("In Cart.Total, through pricing.ApplyDiscount.")),
	)
	code, out, errOut := e.run("", "run", "--approval-mode", "plan", "-o", "stream-json", "where are discount codes applied?")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var parent, child string
	var nested []string
	var result map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		switch ev["type"] {
		case "session":
			parent = ev["session_id"].(string)
		case "tool_output":
			inner, _ := ev["event"].(map[string]any)
			if ev["id"] != "call_inv" || inner == nil {
				t.Fatalf("not nested: %s", sc.Text())
			}
			nested = append(nested, inner["type"].(string))
			if inner["type"] == "session" {
				child = inner["session_id"].(string)
			}
		case "tool_result":
			result = ev
		}
	}
	if got := strings.Join(nested, " "); !strings.HasPrefix(got, "session tool_call") || !strings.HasSuffix(got, "done") {
		t.Errorf("nested events: %s", got)
	}
	if result["ok"] != true || !strings.Contains(result["output"].(string), `"path":"pricing/discount.go"`) {
		t.Errorf("result: %v", result)
	}
	st := e.store()
	kids, _ := st.List(context.Background(), session.ListOptions{ParentID: parent})
	if len(kids) != 1 || kids[0].ID != child || kids[0].ParentCall != "call_inv" || kids[0].MessageCount != 9 {
		t.Errorf("child sessions of %s: %+v (nested session %s)", parent, kids, child)
	}
}

// TestE2EMCPServerInARun: a configured stdio MCP server's tool is called in
// a headless run, and the server is gone when hearth exits.
func TestE2EMCPServerInARun(t *testing.T) {
	dir := os.Getenv("HEARTH_MCP_SERVERS")
	if dir == "" {
		t.Skip("set HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh) to run against the real npm MCP servers")
	}
	e := newE2E(t)
	pidfile := filepath.Join(e.home, "pid")
	// A wrapper that notes the server's pid: it execs node, so the pid is
	// the server's.
	wrapper := filepath.Join(e.home, "everything.sh")
	js := filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	os.WriteFile(wrapper, []byte("#!/bin/sh\necho $$ > "+pidfile+"\nexec node "+js+" stdio\n"), 0o755)
	os.WriteFile(filepath.Join(e.home, "config.toml"), []byte("[mcp_servers.everything]\ncommand = \""+wrapper+"\"\n"), 0o600)
	e.srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("everything__get-sum", `{"a":19,"b":23}`)),
		llmtest.OllamaStream("m", llmtest.Text("It is 42.")),
		llmtest.OllamaWhole("m", llmtest.Text("Sum")),
	)
	code, out, errOut := e.run("", "run", "-o", "json", "add 19 and 23")
	if code != 0 || !strings.Contains(out, "It is 42.") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	reqs := e.srv.RequestsTo("/api/chat")
	var body struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	reqs[1].JSON(t, &body)
	last := body.Messages[len(body.Messages)-1]
	if last.Role != "tool" || !strings.Contains(last.Content, "42") {
		t.Errorf("the tool result sent back: %+v", last)
	}
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil {
		t.Errorf("the MCP server (pid %d) outlived hearth", pid)
	}
}
