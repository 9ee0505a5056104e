package loader

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/mcp"
	"github.com/hearth-agent/hearth/tool"
)

func TestCodebaseInvestigatorOffered(t *testing.T) {
	o, _ := setup(t, "", "", nil)
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, ok := a.bot.Session("t").Tool(agent.InvestigatorName); !ok {
		t.Errorf("headless tools: %s", names(a))
	}
	if a.bot.MCP() != nil || a.mcp() != nil {
		t.Error("an MCP manager without servers")
	}
	o.Mode = "api"
	b, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, ok := b.bot.Session("t").Tool(agent.InvestigatorName); ok {
		t.Error("the api profile names its tools: the investigator is not among them")
	}
}

func TestConfiguredSubAgents(t *testing.T) {
	o, _ := setup(t, "", "", nil)
	o.SubAgents = []agent.SubAgentSpec{
		{Name: "reviewer", Description: "reviews code", Prompt: "You review."},
		{Name: "runner", Description: "runs things", Prompt: "You run.", Tools: []string{"run_shell_command"}},
	}
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sess := a.bot.Session("t")
	rv, ok := sess.Tool("reviewer")
	if !ok {
		t.Fatalf("tools: %s", names(a))
	}
	s := rv.(*agent.SubAgent)
	if s.Tools == nil {
		t.Fatalf("reviewer: no tools (%v)", s.Select)
	}
	if sel, err := s.Tools.Select(tool.Profile{Tools: s.Select}); err != nil || strings.Join(sel.Names(), ",") != "read_file,read_many_files,list_directory,glob,grep_search,update_plan" {
		// (The child itself is not given update_plan: the plan is the
		// main agent's.)
		t.Errorf("reviewer: %v %v", s.Select, err)
	}
	rn, _ := sess.Tool("runner")
	if rn.Kind().String() != "execute" {
		t.Errorf("runner kind %s", rn.Kind())
	}
	o.SubAgents = []agent.SubAgentSpec{{Name: "bad"}}
	if _, err := start(context.Background(), o); err == nil {
		t.Error("a bad sub-agent spec passed")
	} else if !errors.As(err, new(ConfigError)) {
		t.Errorf("%T %v", err, err)
	}
}

func TestMCPServerThatFailsDoesNotStopTheApp(t *testing.T) {
	user := `
[mcp_servers.ghost]
command = "hearth-no-such-mcp-server"

[profiles.mine]
tools = ["read_file", "ghost__*"]
`
	o, _ := setup(t, user, "", nil)
	o.Profile = "mine"
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.bot.MCP() == nil || a.mcp() == nil {
		t.Fatal("no MCP manager")
	}
	a.bot.MCP().Prepare(context.Background())
	st := a.bot.MCP().Status()
	if len(st) != 1 || st[0].State != mcp.StateFailed || !strings.Contains(st[0].Error, "not installed") {
		t.Errorf("%+v", st)
	}
	if names(a) != "read_file" {
		t.Errorf("tools: %s", names(a))
	}
}

func TestMCPToolsInTheProfile(t *testing.T) {
	dir := os.Getenv("HEARTH_MCP_SERVERS")
	if dir == "" {
		t.Skip("set HEARTH_MCP_SERVERS=$(scripts/mcp-servers.sh) to run against the real npm MCP servers")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node")
	}
	js := filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	user := `
[mcp_servers.everything]
command = "node"
args = ["` + js + `", "stdio"]
exclude_tools = ["get-env"]

[profiles.mine]
tools = ["read_file", "everything__*", "!everything__toggle*"]
`
	o, _ := setup(t, user, "", nil)
	o.Profile = "mine"
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	a.bot.MCP().Prepare(context.Background())
	got := names(a)
	if !strings.Contains(got, "everything__echo") || strings.Contains(got, "toggle") || strings.Contains(got, "get-env") || !strings.HasPrefix(got, "read_file,") {
		t.Errorf("tools: %s", got)
	}
	pid := a.bot.MCP().Status()[0].PID
	a.Close()
	if pid == 0 || exec.Command("kill", "-0", strconv.Itoa(pid)).Run() == nil {
		t.Errorf("server process %d outlived the app", pid)
	}
}
