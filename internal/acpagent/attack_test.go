package acpagent

import (
	"context"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/mcp"
	"os"
	"path/filepath"
)

func TestAttackCancelAfterSecondPrompt(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Text("one"), llmtest.Pause(time.Hour)),
		llmtest.OllamaStream("m", llmtest.Text("two"), llmtest.Pause(time.Hour)))
	s := f.newSession(t)
	r1 := make(chan error, 1)
	go func() { _, err := f.prompt(s.SessionId, "first"); r1 <- err }()
	time.Sleep(500 * time.Millisecond)
	r2 := make(chan acp.PromptResponse, 1)
	go func() { res, _ := f.prompt(s.SessionId, "second"); r2 <- res }()
	<-r1 // prompt 1 cancelled by the SDK when prompt 2 came
	time.Sleep(1 * time.Second)
	f.conn.Cancel(context.Background(), acp.CancelNotification{SessionId: s.SessionId})
	select {
	case res := <-r2:
		t.Logf("second prompt ended: %v", res.StopReason)
	case <-time.After(8 * time.Second):
		t.Errorf("session/cancel did not stop the second prompt")
		f.close()
	}
}

func reviewWS(t *testing.T) (*Workspaces, string) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	ws, home := filepath.Join(dir, "ws"), filepath.Join(dir, "home")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(home, 0o755)
	fake := llmtest.New(t)
	fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	env := map[string]string{"HEARTH_NO_KEYRING": "1"}
	o := loader.Options{Paths: config.Paths{ConfigDir: home, DataDir: home}, Mode: "tui",
		Provider: providers.Config{Kind: "ollama", BaseURL: fake.URL, Model: "m"},
		Getenv:   func(k string) string { return env[k] }}
	w := NewWorkspaces(o)
	t.Cleanup(func() { w.Close() })
	return w, ws
}

func TestAttackDuplicateAgent(t *testing.T) {
	w, ws := reviewWS(t)
	a1, err := w.Agent(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := w.Agent(context.Background(), ws, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Errorf("the first folder's agent is built twice (%d agents)", len(w.all))
	}
}

func TestAttackLiteralKey(t *testing.T) {
	w, ws := reviewWS(t)
	mk := func(tok string) ([]hearth.MCPServer, Literals) {
		hs, lit, err := mcpServers([]acp.McpServer{{Http: &acp.McpServerHttpInline{Type: "http", Name: "gh", Url: "http://127.0.0.1:1/mcp", Headers: []acp.HttpHeader{{Name: "Authorization", Value: tok}}}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return hs, lit
	}
	_ = mcp.TransportHTTP
	hs1, l1 := mk("Bearer A")
	hs2, l2 := mk("Bearer B")
	w.Agent(context.Background(), ws, nil, nil) // settle the first-agent key issue
	a1, err := w.Agent(context.Background(), ws, hs1, l1)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := w.Agent(context.Background(), ws, hs2, l2)
	if err != nil {
		t.Fatal(err)
	}
	if a1 == a2 {
		t.Errorf("a session whose MCP header is 'Bearer B' got the agent built with 'Bearer A'")
	}
}
