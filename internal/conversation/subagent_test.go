package conversation

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/investigator"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/fs"
)

// TestCodebaseInvestigatorEndToEnd: the main agent hands a question about
// the fixture repository (testdata/shop) to codebase_investigator, which
// searches and reads it with the real read-only tools, keeps its scratchpad
// and reports; the report names the right files, and the investigator's
// conversation is stored in SQLite as a child session of the main one,
// linked to the calling tool call.
func TestCodebaseInvestigatorEndToEnd(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.New(t)
	store, err := session.Open(ctx, filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	root, _ := filepath.Abs("testdata/shop")
	ws, err := sandbox.New(root)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := tool.NewRegistry(fs.Tools(ws, tool.NewSeen(), fs.Limits{})...)
	inv, err := agent.CodebaseInvestigator(agent.InvestigatorOptions{Tools: reg, Root: ws.Root(), Runner: SubAgentRunner(store, nil, nil, "")})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Add(inv); err != nil {
		t.Fatal(err)
	}
	report := `{"summary":"Discount codes are looked up in pricing/discount.go (ApplyDiscount) and applied to the cart's sum in Cart.Total, before tax.",
		"relevant_files":[
			{"path":"pricing/discount.go","reason":"the codes and ApplyDiscount","lines":[{"start":6,"end":20}]},
			{"path":"cart/cart.go","reason":"Total calls ApplyDiscount on the items' sum","lines":[{"start":26,"end":33}]}],
		"open_questions":["Should codes stack?"]}`
	srv.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Text("Let me delegate."), llmtest.CallID("call_inv", "codebase_investigator", `{"task":"Where are discount codes applied to the cart total?"}`)),
		// the investigator
		llmtest.OllamaStream("m", llmtest.Call("scratchpad", `{"explored":"nothing yet","still_needed":"where discount codes are handled"}`)),
		llmtest.OllamaStream("m", llmtest.Call("grep_search", `{"pattern":"(?i)discount"}`)),
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"pricing/discount.go"}`)),
		llmtest.OllamaStream("m", llmtest.Call("read_file", `{"file_path":"cart/cart.go"}`)),
		llmtest.OllamaStream("m", llmtest.Call("scratchpad", `{"explored":"grep for discount; read pricing/discount.go and cart/cart.go","still_needed":""}`)),
		llmtest.OllamaStream("m", llmtest.Call("submit_report", report)),
		// the main agent again
		llmtest.OllamaStream("m", llmtest.Text("Discounts are applied in Cart.Total via pricing.ApplyDiscount.")),
	)
	a := &agent.Agent{Provider: ollama.New(ollama.Options{BaseURL: srv.URL, MaxRetries: -1}), Model: "m", Tools: reg, Mode: agent.ModePlan}
	var events []agent.Event
	out, err := (&Turn{Store: store, Agent: a, Prompt: llm.Message{Content: "How do discount codes work here?"}}).Run(ctx, func(e agent.Event) { events = append(events, e) })
	if err != nil {
		t.Fatal(err)
	}
	if out.Reason != agent.DoneStop || !strings.Contains(out.Text, "Cart.Total") {
		t.Fatalf("%+v", out.Result)
	}

	// The report, as the main agent got it.
	var result agent.Event
	var childSession string
	var grepOutput string
	for _, e := range events {
		switch {
		case e.Type == agent.EventToolResult && e.ID == "call_inv":
			result = e
		case e.Type == agent.EventToolOutput && e.Nested != nil && e.Nested.Type == agent.EventSession:
			childSession = e.Nested.SessionID
		case e.Type == agent.EventToolOutput && e.Nested != nil && e.Nested.Type == agent.EventToolResult && e.Nested.Name == "grep_search":
			grepOutput = e.Nested.Output
		}
	}
	if !result.OK {
		t.Fatalf("investigator failed: %s", result.Error)
	}
	var rep investigator.Report
	if err := json.Unmarshal([]byte(result.Output), &rep); err != nil {
		t.Fatalf("not a report: %v\n%s", err, result.Output)
	}
	var files []string
	for _, f := range rep.RelevantFiles {
		files = append(files, f.Path)
	}
	sort.Strings(files)
	if strings.Join(files, ",") != "cart/cart.go,pricing/discount.go" || len(rep.OpenQuestions) != 1 || rep.Summary == "" {
		t.Errorf("report: %+v", rep)
	}
	// The real grep found the files the report names.
	if !strings.Contains(grepOutput, "pricing/discount.go") || !strings.Contains(grepOutput, "cart/cart.go") {
		t.Errorf("grep_search output: %q", grepOutput)
	}

	// The child session is stored and linked.
	kids, err := store.List(ctx, session.ListOptions{ParentID: out.SessionID})
	if err != nil || len(kids) != 1 {
		t.Fatalf("children of %s: %+v %v", out.SessionID, kids, err)
	}
	kid := kids[0]
	if kid.ID != childSession || kid.ParentID != out.SessionID || kid.ParentCall != "call_inv" || !strings.HasPrefix(kid.Title, "codebase_investigator: Where are discount codes") {
		t.Errorf("child session: %+v (nested session event: %s)", kid, childSession)
	}
	top, _ := store.List(ctx, session.ListOptions{})
	if len(top) != 1 || top[0].ID != out.SessionID {
		t.Errorf("the child is listed as a top-level session: %+v", top)
	}
	msgs, _ := store.Messages(ctx, kid.ID)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, string(m.Role))
	}
	// task, then six replies each with its tool result
	if len(msgs) != 13 || msgs[0].Content != "Where are discount codes applied to the cart total?" || msgs[12].Content != "Report accepted." {
		t.Errorf("child messages: %v", roles)
	}
	runs, _ := store.ToolRuns(ctx, kid.ID)
	if len(runs) != 6 || runs[1].Name != "grep_search" || !runs[1].OK {
		t.Errorf("child tool runs: %+v", runs)
	}
	parentRuns, _ := store.ToolRuns(ctx, out.SessionID)
	if len(parentRuns) != 1 || parentRuns[0].Name != "codebase_investigator" || !strings.Contains(parentRuns[0].Output, "pricing/discount.go") {
		t.Errorf("parent tool runs: %+v", parentRuns)
	}
	parentMsgs, _ := store.Messages(ctx, out.SessionID)
	if len(parentMsgs) != 4 || parentMsgs[2].Role != llm.RoleTool || !strings.Contains(parentMsgs[2].Content, "relevant_files") {
		t.Errorf("parent messages: %+v", parentMsgs)
	}
}
