package hearth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/llm/llmtest"
	"github.com/hearth-agent/hearth/llm/ollama"
)

// TestTrustAndModes: an untrusted workspace runs in default at most — New
// refuses a profile above it, SetMode a switch above it (ErrNotTrusted);
// read-only and trusted workspaces, and "" (no limits), take every mode.
func TestTrustAndModes(t *testing.T) {
	trusts := []hearth.Trust{"", hearth.TrustUntrusted, hearth.TrustReadOnly, hearth.TrustTrusted, " Untrusted ", "readonly"}
	modes := []hearth.Mode{"", hearth.ModePlan, hearth.ModeDefault, hearth.ModeAutoEdit, "auto-edit", hearth.ModeYolo}
	for _, tr := range trusts {
		untrusted := strings.TrimSpace(strings.ToLower(string(tr))) == "untrusted"
		for _, m := range modes {
			refused := untrusted && (m == hearth.ModeAutoEdit || m == "auto-edit" || m == hearth.ModeYolo)
			t.Run(string(tr)+"/"+string(m), func(t *testing.T) {
				c := hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Model: "m", Trust: tr, Profile: hearth.Profile{Name: "mine", Mode: m}}
				bot, err := hearth.New(c)
				if refused {
					if err == nil {
						bot.Close()
						t.Fatal("New accepted the mode")
					}
					if !errors.Is(err, hearth.ErrNotTrusted) || !strings.Contains(err.Error(), "trust") || !strings.Contains(err.Error(), "mine") {
						t.Errorf("New: %v", err)
					}
				} else if err != nil {
					t.Fatalf("New: %v", err)
				} else {
					bot.Close()
				}

				// The same mode by SetMode, from default.
				c.Profile.Mode = hearth.ModeDefault
				bot, err = hearth.New(c)
				if err != nil {
					t.Fatal(err)
				}
				defer bot.Close()
				s := bot.Session("s")
				err = s.SetMode(m)
				switch {
				case refused && !errors.Is(err, hearth.ErrNotTrusted):
					t.Errorf("SetMode(%q): %v, want ErrNotTrusted", m, err)
				case refused && s.Mode() != hearth.ModeDefault:
					t.Errorf("a refused SetMode changed the mode to %q", s.Mode())
				case !refused && err != nil:
					t.Errorf("SetMode(%q): %v", m, err)
				}
			})
		}
	}
	// A trust level that is none is an error, not "no limits".
	if bot, err := hearth.New(hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Trust: "sure"}); err == nil {
		bot.Close()
		t.Error("New took the trust level \"sure\"")
	}
}

// deployTool is a host tool that runs programs (Execute).
func deployTool(ran *[]string, mu *sync.Mutex) hearth.Tool {
	return hearth.Func("deploy", "Deploy the app", hearth.Execute, func(ctx context.Context, a struct{}) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		*ran = append(*ran, "deploy")
		return "deployed", nil
	})
}

// TestReadOnlyTools: in a read-only workspace only what reads is offered —
// the read-only built-ins and host tools, the shell (confined read-only),
// the sub-agents — whatever the profile selects; other trust levels offer
// everything.
func TestReadOnlyTools(t *testing.T) {
	ws := t.TempDir()
	var mu sync.Mutex
	var ran []string
	a := &app{flags: map[string]bool{}}
	tools := append(a.tools(), deployTool(&ran, &mu))
	subs := []hearth.SubAgentSpec{{Name: "helper", Description: "d", Prompt: "p", Tools: []string{"*"}}}
	edits := []string{"write_file", "edit", "set_feature_flag", "deploy"}
	reads := []string{"read_file", "grep_search", "run_shell_command", "get_app_config", "query_database", "codebase_investigator", "helper"}
	tests := []struct {
		trust   hearth.Trust
		profile []string
		offered []string
		held    []string // not offered
	}{
		{"", []string{"*"}, append(slices.Clone(reads), edits...), nil},
		{hearth.TrustTrusted, []string{"*"}, append(slices.Clone(reads), edits...), nil},
		{hearth.TrustUntrusted, []string{"*"}, append(slices.Clone(reads), edits...), nil},
		{hearth.TrustReadOnly, []string{"*"}, reads, edits},
		{hearth.TrustReadOnly, []string{"@edit", "@execute", "read_file"}, []string{"read_file", "run_shell_command"}, edits},
		{hearth.TrustReadOnly, []string{"write_file", "read_file"}, []string{"read_file"}, []string{"write_file"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.trust)+"/"+strings.Join(tc.profile, ","), func(t *testing.T) {
			bot, err := hearth.New(hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Model: "m", Tools: tools, SubAgents: subs,
				Trust: tc.trust, Profile: hearth.Profile{Tools: tc.profile, Mode: hearth.ModeYolo}, Workspace: ws,
				Sandbox: hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}})
			if tc.trust == hearth.TrustUntrusted {
				// Yolo is refused there: the tools are what matters here.
				if !errors.Is(err, hearth.ErrNotTrusted) {
					t.Fatalf("untrusted yolo: %v", err)
				}
				bot, err = hearth.New(hearth.Config{Provider: hearth.Ollama("http://127.0.0.1:1"), Model: "m", Tools: tools, SubAgents: subs,
					Trust: tc.trust, Profile: hearth.Profile{Tools: tc.profile}, Workspace: ws,
					Sandbox: hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close()
			got := bot.Tools()
			for _, n := range tc.offered {
				if !slices.Contains(got, n) {
					t.Errorf("%s is not offered: %v", n, got)
				}
			}
			for _, n := range tc.held {
				if slices.Contains(got, n) {
					t.Errorf("%s is offered: %v", n, got)
				}
				if _, ok := bot.ToolKind(n); ok {
					t.Errorf("ToolKind(%s) says it is offered", n)
				}
				if _, ok := bot.Session("s").Tool(n); ok {
					t.Errorf("the session's Tool(%s) gives it", n)
				}
			}
			if tc.trust == hearth.TrustReadOnly {
				if reason, ok := bot.Files().ReadOnlyRoot(); !ok || !strings.Contains(reason, "read-only") {
					t.Errorf("the workspace is not read-only to the file tools: %q", reason)
				}
			} else if _, ok := bot.Files().ReadOnlyRoot(); ok {
				t.Error("the workspace is read-only")
			}
		})
	}
}

// hostileCall is one tool call of a hostile script, and what must come of it.
type hostileCall struct {
	name, args string
	// readOnly is in the call's result when the workspace is read-only
	// ("": the call succeeds there too).
	readOnly string
}

// TestReadOnlyHostileModel: a model told to change things, in a read-only
// workspace in yolo (or in default, every approval granted): it calls
// write_file and edit (not offered), host tools that edit or execute,
// commands that write; nothing changes and each result says why. The same
// script in a trusted workspace changes everything (the test can fail).
func TestReadOnlyHostileModel(t *testing.T) {
	script := []hostileCall{
		{"write_file", `{"file_path":"new.txt","content":"planted"}`, "write_file is not available: this workspace is read-only"},
		{"edit", `{"file_path":"f.txt","old_string":"original","new_string":"pwned"}`, "edit is not available: this workspace is read-only"},
		{"set_feature_flag", `{"name":"fast_checkout","on":true}`, "set_feature_flag is not available: this workspace is read-only"},
		{"deploy", `{}`, "deploy is not available: this workspace is read-only"},
		{"run_shell_command", `{"command":"echo x > f.txt"}`, "read-only"},
		{"run_shell_command", `{"command":"touch g.txt"}`, "read-only"},
		{"run_shell_command", `{"command":"rm f.txt"}`, "read-only"},
		{"read_file", `{"file_path":"f.txt"}`, ""},
		{"run_shell_command", `{"command":"cat f.txt"}`, ""},
	}
	tests := []struct {
		trust hearth.Trust
		mode  hearth.Mode
	}{
		{hearth.TrustReadOnly, hearth.ModeYolo},
		{hearth.TrustReadOnly, hearth.ModeDefault},
		{hearth.TrustTrusted, hearth.ModeYolo},
	}
	for _, tc := range tests {
		t.Run(string(tc.trust)+"/"+string(tc.mode), func(t *testing.T) {
			ws := t.TempDir()
			os.WriteFile(filepath.Join(ws, "f.txt"), []byte("original"), 0o644)
			before := files(t, ws)
			f := newFixture(t, func(c *hearth.Config) {
				c.Workspace, c.Trust = ws, tc.trust
				c.Profile = hearth.Profile{Tools: []string{"*"}, Mode: tc.mode}
				c.Sandbox = hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}
				c.Checkpoints = t.TempDir()
				c.Tools = append(c.Tools, deployTool(new([]string), new(sync.Mutex)))
			})
			for i, c := range script {
				f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.CallID("c"+string(rune('a'+i)), c.name, c.args)))
			}
			f.fake.Enqueue("/api/chat", llmtest.OllamaStream("m", llmtest.Text("done")))
			turn := f.bot.NewTurn(context.Background(), hearth.Request{SessionID: "s", Message: "change everything"})
			results := map[string]hearth.Event{}
			for _, ev := range collect(t, turn, func(ev hearth.Event) { turn.Approve(ev.ID, hearth.Allow) }) {
				if ev.Type == hearth.EventToolResult {
					results[ev.ID] = ev
				}
			}
			if _, err := turn.Result(); err != nil {
				t.Fatal(err)
			}
			for i, c := range script {
				r, ok := results["c"+string(rune('a'+i))]
				if !ok {
					t.Errorf("%s %s: no result", c.name, c.args)
					continue
				}
				text := r.Error + r.Output
				switch {
				case tc.trust == hearth.TrustReadOnly && c.readOnly != "":
					if r.OK || !strings.Contains(text, c.readOnly) || !strings.Contains(text, "hearth workspaces trust") {
						t.Errorf("%s %s: ok %v, %q; want a refusal with %q", c.name, c.args, r.OK, text, c.readOnly)
					}
				case tc.trust == hearth.TrustReadOnly:
					if !r.OK || !strings.Contains(text, "original") {
						t.Errorf("%s %s: ok %v, %q; want the file read", c.name, c.args, r.OK, text)
					}
				default:
					if !r.OK && c.name != "read_file" && c.name != "run_shell_command" {
						t.Errorf("trusted: %s %s: %q", c.name, c.args, text)
					}
				}
			}
			after := files(t, ws)
			if tc.trust == hearth.TrustReadOnly {
				sameFiles(t, "read-only workspace", before, after)
				if len(f.app.ran()) != 0 {
					t.Errorf("host tools ran: %v", f.app.ran())
				}
			} else {
				if _, ok := after["new.txt"]; !ok || len(f.app.ran()) != 1 {
					t.Errorf("trusted: nothing was changed: %v, ran %v", after, f.app.ran())
				}
				if _, ok := after["f.txt"]; ok {
					t.Errorf("trusted: f.txt was not removed: %v", after)
				}
			}
		})
	}
}

// TestReadOnlyWritesTheShellPolicyCannotSee: a program that writes the
// workspace on its own (the policy sees only "python3 -c"): the sandbox
// refuses it where it is active.
func TestReadOnlyWritesTheShellPolicyCannotSee(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ws := t.TempDir()
	f := newFixture(t, func(c *hearth.Config) {
		c.Workspace, c.Trust = ws, hearth.TrustReadOnly
		c.Profile = hearth.Profile{Tools: []string{"run_shell_command"}, Mode: hearth.ModeYolo}
		c.Sandbox = hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}
	})
	if !f.bot.Sandbox().Active {
		t.Skipf("commands are not confined here (%s): the policy alone stands", f.bot.Sandbox().Note)
	}
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("run_shell_command", `{"command":"`+py+` -c \"open('p.txt','w').write('x')\""}`)),
		llmtest.OllamaStream("m", llmtest.Text("done")))
	var res hearth.Event
	turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "write"})
	for _, ev := range collect(t, turn, nil) {
		if ev.Type == hearth.EventToolResult {
			res = ev
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "p.txt")); err == nil {
		t.Fatalf("a program wrote into the read-only workspace: %+v", res)
	}
	// The command ran and failed: its output says why.
	if !strings.Contains(res.Error+res.Output, "this workspace is read-only") {
		t.Errorf("result %+v", res)
	}
}

// TestReadOnlySubAgentWritesNothing: a sub-agent that may use every tool,
// in a read-only workspace, gets no tool that writes: its write_file call
// changes nothing. In a trusted one it writes.
func TestReadOnlySubAgentWritesNothing(t *testing.T) {
	for _, trust := range []hearth.Trust{hearth.TrustReadOnly, hearth.TrustTrusted} {
		t.Run(string(trust), func(t *testing.T) {
			ws := t.TempDir()
			f := newFixture(t, func(c *hearth.Config) {
				c.Workspace, c.Trust = ws, trust
				c.Profile = hearth.Profile{Tools: []string{"*"}, Mode: hearth.ModeYolo}
				c.Sandbox = hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}
				c.SubAgents = []hearth.SubAgentSpec{{Name: "helper", Description: "Does anything.", Prompt: "Do it.", Tools: []string{"*"}}}
			})
			f.fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.Call("helper", `{"task":"write sub.txt"}`)),
				llmtest.OllamaStream("m", llmtest.Call("write_file", `{"file_path":"sub.txt","content":"planted"}`)),
				llmtest.OllamaStream("m", llmtest.Text("tried")),
				llmtest.OllamaStream("m", llmtest.Text("done")))
			if _, err := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"}).Result(); err != nil {
				t.Fatal(err)
			}
			_, err := os.Stat(filepath.Join(ws, "sub.txt"))
			if wrote := err == nil; wrote != (trust == hearth.TrustTrusted) {
				t.Errorf("trust %s: sub.txt written: %v", trust, wrote)
			}
		})
	}
}

// mcpServer serves two MCP tools over streamable HTTP: peek (read-only)
// and poke (not: it records its calls).
func mcpServer(t *testing.T) (url string, pokes func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, nil)
	type in struct {
		Text string `json:"text,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "peek", Description: "Look.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "seen"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "poke", Description: "Change something."},
		func(ctx context.Context, req *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			mu.Lock()
			n++
			mu.Unlock()
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "poked"}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(hs.Close)
	return hs.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestReadOnlyMCPTools: an MCP server's tool that is not read-only is not
// offered in a read-only workspace, and a call to it says why; its
// read-only tool is.
func TestReadOnlyMCPTools(t *testing.T) {
	for _, trust := range []hearth.Trust{hearth.TrustReadOnly, hearth.TrustTrusted} {
		t.Run(string(trust), func(t *testing.T) {
			url, pokes := mcpServer(t)
			f := newFixture(t, func(c *hearth.Config) {
				c.Workspace, c.Trust = t.TempDir(), trust
				c.Profile = hearth.Profile{Tools: []string{"*"}, Mode: hearth.ModeYolo}
				c.Sandbox = hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}
				c.MCPServers = []hearth.MCPServer{{Name: "srv", URL: url}}
			})
			deadline := time.Now().Add(10 * time.Second)
			for !slices.Contains(f.bot.Tools(), "srv__peek") {
				if time.Now().After(deadline) {
					t.Fatalf("the MCP server's tools never came: %v %+v", f.bot.Tools(), f.bot.MCPStatus())
				}
				time.Sleep(10 * time.Millisecond)
			}
			readOnly := trust == hearth.TrustReadOnly
			if got := slices.Contains(f.bot.Tools(), "srv__poke"); got == readOnly {
				t.Errorf("srv__poke offered: %v (%v)", got, f.bot.Tools())
			}
			f.fake.Enqueue("/api/chat",
				llmtest.OllamaStream("m", llmtest.CallID("p1", "srv__poke", `{"text":"x"}`)),
				llmtest.OllamaStream("m", llmtest.CallID("p2", "srv__peek", `{}`)),
				llmtest.OllamaStream("m", llmtest.Text("done")))
			turn := f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"})
			res := map[string]hearth.Event{}
			for _, ev := range collect(t, turn, nil) {
				if ev.Type == hearth.EventToolResult {
					res[ev.ID] = ev
				}
			}
			if !res["p2"].OK {
				t.Errorf("peek: %+v", res["p2"])
			}
			if readOnly {
				if res["p1"].OK || !strings.Contains(res["p1"].Error, "srv__poke is not available: this workspace is read-only") || pokes() != 0 {
					t.Errorf("poke in a read-only workspace: %+v, ran %d times", res["p1"], pokes())
				}
			} else if !res["p1"].OK || pokes() != 1 {
				t.Errorf("poke in a trusted workspace: %+v, ran %d times", res["p1"], pokes())
			}
		})
	}
}

// TestWithheldIsNotUnknown: in a read-only workspace a tool that does not
// exist is still unknown (the message lists the tools), only those kept
// back say read-only; without a trust, nothing is kept back.
func TestWithheldIsNotUnknown(t *testing.T) {
	ws := t.TempDir()
	f := newFixture(t, func(c *hearth.Config) {
		c.Workspace, c.Trust = ws, hearth.TrustReadOnly
		c.Profile = hearth.Profile{Tools: []string{"read_file"}, Mode: hearth.ModeYolo}
		c.Sandbox = hearth.Sandbox{TempRoot: t.TempDir(), Home: t.TempDir()}
	})
	f.fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.CallID("a", "nuke_everything", `{}`)),
		llmtest.OllamaStream("m", llmtest.CallID("b", "write_file", `{"file_path":"x","content":"y"}`)),
		llmtest.OllamaStream("m", llmtest.Text("done")))
	res := map[string]hearth.Event{}
	for _, ev := range collect(t, f.bot.NewTurn(context.Background(), hearth.Request{Message: "go"}), nil) {
		if ev.Type == hearth.EventToolResult {
			res[ev.ID] = ev
		}
	}
	if e := res["a"].Error; !strings.Contains(e, `unknown tool "nuke_everything"`) || strings.Contains(e, "read-only") {
		t.Errorf("an unknown tool: %q", e)
	}
	if e := res["b"].Error; !strings.Contains(e, "write_file is not available") {
		t.Errorf("write_file: %q", e)
	}
	if _, err := os.Stat(filepath.Join(ws, "x")); err == nil {
		t.Error("x was written")
	}
}

// TestReadOnlyUserToolsAreNotRun: without a workspace, a read-only agent
// still keeps the host's edit tools back, in yolo too.
func TestReadOnlyUserToolsAreNotRun(t *testing.T) {
	fake := llmtest.New(t)
	fake.AddModel(llmtest.Model{Name: "m", Capabilities: []string{"completion", "tools"}, ContextLength: 32768})
	a := &app{flags: map[string]bool{}}
	bot, err := hearth.New(hearth.Config{Provider: ollama.New(ollama.Options{BaseURL: fake.URL, NumCtx: 8192, MaxRetries: -1}), Model: "m",
		Tools: a.tools(), Trust: hearth.TrustReadOnly, Profile: hearth.Profile{Mode: hearth.ModeYolo}})
	if err != nil {
		t.Fatal(err)
	}
	defer bot.Close()
	// Without a workspace: the host's edit tool is still kept back.
	if slices.Contains(bot.Tools(), "set_feature_flag") || !slices.Contains(bot.Tools(), "get_app_config") {
		t.Errorf("tools %v", bot.Tools())
	}
	fake.Enqueue("/api/chat",
		llmtest.OllamaStream("m", llmtest.Call("set_feature_flag", `{"name":"x","on":true}`)),
		llmtest.OllamaStream("m", llmtest.Text("done")))
	if _, err := bot.NewTurn(context.Background(), hearth.Request{Message: "go"}).Result(); err != nil {
		t.Fatal(err)
	}
	if len(a.ran()) != 0 {
		t.Errorf("ran %v", a.ran())
	}
}
