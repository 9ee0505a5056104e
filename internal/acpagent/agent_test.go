package acpagent

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/session"
)

// editor is the client side of a test: it records what Hearth sends and
// answers permission requests with answer (an option id), writes through
// its files.
type editor struct {
	mu          sync.Mutex
	updates     []acp.SessionNotification
	permissions []acp.RequestPermissionRequest
	writes      map[string]string
	answer      string
}

func (e *editor) ReadTextFile(_ context.Context, p acp.ReadTextFileRequest) (acp.ReadTextFileResponse, error) {
	b, err := os.ReadFile(p.Path)
	return acp.ReadTextFileResponse{Content: string(b)}, err
}

func (e *editor) WriteTextFile(_ context.Context, p acp.WriteTextFileRequest) (acp.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.writes == nil {
		e.writes = map[string]string{}
	}
	e.writes[p.Path] = p.Content
	return acp.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}

func (e *editor) RequestPermission(_ context.Context, p acp.RequestPermissionRequest) (acp.RequestPermissionResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.permissions = append(e.permissions, p)
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Selected: &acp.RequestPermissionOutcomeSelected{OptionId: acp.PermissionOptionId(e.answer), Outcome: "selected"}}}, nil
}

func (e *editor) SessionUpdate(_ context.Context, n acp.SessionNotification) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.updates = append(e.updates, n)
	return nil
}

func (e *editor) CreateTerminal(context.Context, acp.CreateTerminalRequest) (acp.CreateTerminalResponse, error) {
	return acp.CreateTerminalResponse{}, errors.New("no terminals")
}
func (e *editor) KillTerminal(context.Context, acp.KillTerminalRequest) (acp.KillTerminalResponse, error) {
	return acp.KillTerminalResponse{}, errors.New("no terminals")
}
func (e *editor) TerminalOutput(context.Context, acp.TerminalOutputRequest) (acp.TerminalOutputResponse, error) {
	return acp.TerminalOutputResponse{}, errors.New("no terminals")
}
func (e *editor) ReleaseTerminal(context.Context, acp.ReleaseTerminalRequest) (acp.ReleaseTerminalResponse, error) {
	return acp.ReleaseTerminalResponse{}, errors.New("no terminals")
}
func (e *editor) WaitForTerminalExit(context.Context, acp.WaitForTerminalExitRequest) (acp.WaitForTerminalExitResponse, error) {
	return acp.WaitForTerminalExitResponse{}, errors.New("no terminals")
}

// fixture is hearth acp served in the test's process to an editor.
type fixture struct {
	conn   *acp.ClientSideConnection
	ed     *editor
	fake   *llmtest.Server
	ws     string
	home   string
	close  func() // closes the connection (the editor quits)
	served chan error
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	f := &fixture{ed: &editor{answer: optionAllow}, fake: llmtest.New(t), ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home"), served: make(chan error, 1)}
	f.fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	os.MkdirAll(f.ws, 0o755)
	os.MkdirAll(f.home, 0o755)
	env := map[string]string{"HEARTH_NO_KEYRING": "1"}
	o := loader.Options{Paths: config.Paths{ConfigDir: f.home, DataDir: f.home}, Mode: "tui",
		Provider: providers.Config{Kind: "ollama", BaseURL: f.fake.URL, Model: "m"},
		Getenv:   func(k string) string { return env[k] }}
	ws := NewWorkspaces(o)
	toAgent, fromClient := io.Pipe()
	toClient, fromAgent := io.Pipe()
	go func() {
		f.served <- Serve(context.Background(), toAgent, fromAgent, Options{Workspaces: ws, Version: "test", StopWait: 5 * time.Second})
		fromAgent.Close()
		ws.Close()
	}()
	f.conn = acp.NewClientSideConnection(f.ed, fromClient, toClient)
	f.conn.SetLogger(slog.New(slog.DiscardHandler))
	var once sync.Once
	f.close = func() {
		once.Do(func() {
			fromClient.Close()
			select {
			case <-f.served:
			case <-time.After(20 * time.Second):
				t.Error("Serve did not return after the editor left")
			}
		})
	}
	t.Cleanup(f.close)
	ctx := context.Background()
	if _, err := f.conn.Initialize(ctx, acp.InitializeRequest{ProtocolVersion: acp.ProtocolVersionNumber,
		ClientCapabilities: acp.ClientCapabilities{Fs: acp.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fixture) newSession(t *testing.T) acp.NewSessionResponse {
	t.Helper()
	s, err := f.conn.NewSession(context.Background(), acp.NewSessionRequest{Cwd: f.ws, McpServers: []acp.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *fixture) prompt(sid acp.SessionId, text string) (acp.PromptResponse, error) {
	return f.conn.Prompt(context.Background(), acp.PromptRequest{SessionId: sid, Prompt: []acp.ContentBlock{acp.TextBlock(text)}})
}

// code is the JSON-RPC code of err, and its message.
func code(err error) (int, string) {
	var re *acp.RequestError
	if errors.As(err, &re) {
		return re.Code, re.Message
	}
	return 0, ""
}

func TestAgentRefusals(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.conn.NewSession(ctx, acp.NewSessionRequest{Cwd: "rel/dir", McpServers: []acp.McpServer{}}); err == nil {
		t.Error("a relative cwd was taken")
	} else if c, msg := code(err); c != -32602 || !strings.Contains(msg, "absolute") {
		t.Errorf("relative cwd: %d %s", c, msg)
	}
	if _, err := f.prompt("s-nothere", "hi"); err == nil {
		t.Error("a prompt to an unknown session")
	} else if c, msg := code(err); c != -32002 || !strings.Contains(msg, "session/new") {
		t.Errorf("unknown session: %d %s", c, msg)
	}
	s := f.newSession(t)
	// An untrusted folder: no mode above Ask.
	if _, err := f.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "yolo"}); err == nil {
		t.Error("yolo in an untrusted folder")
	} else if c, msg := code(err); c != -32602 || !strings.Contains(msg, "hearth workspaces trust") {
		t.Errorf("yolo: %d %s", c, msg)
	}
	if _, err := f.conn.SetSessionMode(ctx, acp.SetSessionModeRequest{SessionId: s.SessionId, ModeId: "plan"}); err != nil {
		t.Errorf("plan: %v", err)
	}
	_, err := f.conn.Prompt(ctx, acp.PromptRequest{SessionId: s.SessionId, Prompt: []acp.ContentBlock{acp.ImageBlock("AAAA", "image/png")}})
	if c, msg := code(err); c != -32602 || !strings.Contains(msg, "image") {
		t.Errorf("an image: %d %s", c, msg)
	}
	_, err = f.conn.LoadSession(ctx, acp.LoadSessionRequest{SessionId: "s-nothere", Cwd: f.ws, McpServers: []acp.McpServer{}})
	if c, msg := code(err); c != -32002 || !strings.Contains(msg, "hearth sessions list") {
		t.Errorf("load of an unknown session: %d %s", c, msg)
	}
}

// TestAgentTrusted: a trusted folder offers every mode, and "allow
// always" lets the same tool run unasked for the rest of the session.
func TestAgentAllowAlways(t *testing.T) {
	f := newFixture(t)
	st, err := session.Open(context.Background(), filepath.Join(f.home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.AddWorkspace(context.Background(), session.Workspace{Path: f.ws, Trust: session.TrustTrusted}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	f.ed.answer = optionAllowAlways
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("w1", "write_file", `{"file_path":"one.txt","content":"1\n"}`), llmtest.Usage(1600, 5)),
		llmtest.OllamaStream("m", llmtest.CallID("w2", "write_file", `{"file_path":"two.txt","content":"2\n"}`), llmtest.Usage(1600, 5)),
		llmtest.OllamaStream("m", llmtest.Text("Both written."), llmtest.Usage(1600, 5)))
	s := f.newSession(t)
	var ids []string
	for _, m := range s.Modes.AvailableModes {
		ids = append(ids, string(m.Id))
	}
	if strings.Join(ids, ",") != "default,auto_edit,yolo,plan" {
		t.Errorf("a trusted folder's modes: %v", ids)
	}
	res, err := f.prompt(s.SessionId, "write both")
	if err != nil || res.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(f.ed.permissions) != 1 {
		t.Errorf("%d permission requests, want 1 (allow always)", len(f.ed.permissions))
	}
	if f.ed.writes[filepath.Join(f.ws, "one.txt")] != "1\n" || f.ed.writes[filepath.Join(f.ws, "two.txt")] != "2\n" {
		t.Errorf("the editor wrote %v", f.ed.writes)
	}
}

// TestAgentFailedTurn: a turn that fails answers with an error saying why.
func TestAgentFailedTurn(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", llmtest.OllamaError(404, "model 'm' not found"))
	s := f.newSession(t)
	_, err := f.prompt(s.SessionId, "hi")
	if c, msg := code(err); c != -32603 || !strings.Contains(msg, "not found") {
		t.Errorf("failed turn: %d %q (%v)", c, msg, err)
	}
}

// TestAgentEditorLeaves: the editor quitting mid-turn ends the turn, which
// is stored as cancelled, and Serve returns.
func TestAgentEditorLeaves(t *testing.T) {
	f := newFixture(t)
	f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("Half"), llmtest.Pause(time.Hour), llmtest.Text(" done")))
	s := f.newSession(t)
	go f.prompt(s.SessionId, "go")
	deadline := time.Now().Add(30 * time.Second)
	for {
		f.ed.mu.Lock()
		n := len(f.ed.updates)
		f.ed.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no update")
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.close()
	st, err := session.Open(context.Background(), filepath.Join(f.home, "hearth.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	msgs, err := st.Messages(context.Background(), string(s.SessionId))
	if err != nil || len(msgs) != 2 || msgs[1].Content != "Half" || !msgs[1].Partial {
		t.Errorf("stored: %+v %v", msgs, err)
	}
}
