package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hearth-agent/hearth/config"
)

const userConfig = `# my settings
default_provider = "local"   # the GPU box

[providers.local]
kind = "ollama"
base_url = "http://127.0.0.1:11434"

[mcp_servers.keep]
command = "keep-server"
args = ["--flag", "[not a header]"]

[mcp_servers.gone]
command = "old"

[mcp_servers.gone.env]
TOKEN = "$TOKEN"

# profiles below
[profiles.tui]
tools = ["*"]
system_prompt = """
[mcp_servers.gone]
this is a string, not a table
"""
`

func TestRemoveServerKeepsTheRest(t *testing.T) {
	out, found, err := removeServer(userConfig, "gone")
	if err != nil || !found {
		t.Fatal(found, err)
	}
	want := strings.Replace(userConfig, "[mcp_servers.gone]\ncommand = \"old\"\n\n[mcp_servers.gone.env]\nTOKEN = \"$TOKEN\"\n\n", "", 1)
	if out != want {
		t.Errorf("got:\n%s\nwant:\n%s", out, want)
	}
	if _, found, _ := removeServer(userConfig, "nope"); found {
		t.Error("found a server that is not there")
	}
	for _, bad := range []string{
		"mcp_servers.x.command = \"a\"\n",
		"mcp_servers = { x = { command = \"a\" } }\n",
		"[mcp_servers]\nx = { command = \"a\" }\n",
	} {
		if _, _, err := removeServer(bad, "x"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, _, err := removeServer("[mcp_servers]\ny = { command = \"a\" }\n", "x"); err != nil {
		t.Errorf("another server written inline: %v", err)
	}
}

func TestTableHeader(t *testing.T) {
	for line, want := range map[string]string{
		"[mcp_servers.fs]":                "mcp_servers|fs",
		"  [ mcp_servers . \"a.b\" ] # c": "mcp_servers|a.b",
		"[[x.y]]":                         "x|y",
		"[mcp_servers.'q'.env]":           "mcp_servers|q|env",
	} {
		k, ok := tableHeader(line)
		if !ok || strings.Join(k, "|") != want {
			t.Errorf("%q: %v %v", line, k, ok)
		}
	}
	if _, ok := tableHeader(`key = "[x]"`); ok {
		t.Error("a value read as a header")
	}
}

func TestMCPAddListRemove(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home, "HEARTH_NO_KEYRING": "1"}
	file := filepath.Join(home, "config.toml")
	os.WriteFile(file, []byte(userConfig), 0o640)

	code, _, errOut := runHearth(t, env, "mcp", "add", "fs", "--env", "ROOT=$HOME/notes", "--exclude", "write_*", "--timeout", "45s", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp")
	if code != 0 || !strings.Contains(errOut, "added MCP server fs") {
		t.Fatalf("add: %d %s", code, errOut)
	}
	code, _, errOut = runHearth(t, env, "mcp", "add", "docs", "https://example.com/mcp", "--header", "Authorization=Bearer $DOCS_TOKEN")
	if code != 0 {
		t.Fatalf("add url: %d %s", code, errOut)
	}
	data, _ := os.ReadFile(file)
	if !strings.HasPrefix(string(data), userConfig) {
		t.Errorf("the rest of the file changed:\n%s", data)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode())
	}
	cfg, err := config.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fs := cfg.MCPServers["fs"]
	if fs.Command != "npx" || strings.Join(fs.Args, " ") != "-y @modelcontextprotocol/server-filesystem /tmp" || fs.Env["ROOT"] != "$HOME/notes" || fs.Exclude[0] != "write_*" || time.Duration(fs.Timeout) != 45*time.Second {
		t.Errorf("fs: %+v", fs)
	}
	if d := cfg.MCPServers["docs"]; d.URL != "https://example.com/mcp" || d.Headers["Authorization"] != "Bearer $DOCS_TOKEN" {
		t.Errorf("docs: %+v", d)
	}

	// Twice is refused; --force replaces.
	if code, _, errOut := runHearth(t, env, "mcp", "add", "fs", "--", "other"); code != exitUsage || !strings.Contains(errOut, "--force") {
		t.Errorf("add twice: %d %s", code, errOut)
	}
	if code, _, errOut := runHearth(t, env, "mcp", "add", "fs", "--force", "--", "other"); code != 0 {
		t.Errorf("--force: %d %s", code, errOut)
	}
	cfg, _ = config.ReadFile(file)
	if cfg.MCPServers["fs"].Command != "other" || len(cfg.MCPServers["fs"].Env) != 0 {
		t.Errorf("replaced: %+v", cfg.MCPServers["fs"])
	}

	code, out, _ := runHearth(t, env, "mcp", "list", "--no-connect")
	for _, want := range []string{"docs", "http", "https://example.com/mcp", "fs", "stdio", "other", "keep", "gone"} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("list --no-connect: %d", code)
	}

	for _, name := range []string{"fs", "docs", "gone"} {
		if code, _, errOut := runHearth(t, env, "mcp", "rm", name); code != 0 {
			t.Errorf("rm %s: %d %s", name, code, errOut)
		}
	}
	data, _ = os.ReadFile(file)
	want, _, _ := removeServer(userConfig, "gone")
	if string(data) != want {
		t.Errorf("after add and rm:\n%s\nwant:\n%s", data, want)
	}
	if code, _, errOut := runHearth(t, env, "mcp", "rm", "fs"); code != exitUsage || !strings.Contains(errOut, `no MCP server "fs"`) {
		t.Errorf("rm twice: %d %s", code, errOut)
	}
}

func TestMCPAddUsage(t *testing.T) {
	env := map[string]string{"HEARTH_HOME": t.TempDir()}
	for _, args := range [][]string{
		{"mcp", "add", "x"},
		{"mcp", "add", "x", "npx", "server"},
		{"mcp", "add", "bad name", "--", "npx"},
		{"mcp", "add", "x", "--env", "NOEQUALS", "--", "npx"},
		{"mcp", "add", "x", "--header", "A=b", "--", "npx"},
		{"mcp", "add", "x", "http://h/mcp", "--env", "A=b"},
	} {
		if code, _, errOut := runHearth(t, env, args...); code != exitUsage {
			t.Errorf("%v: %d %s", args, code, errOut)
		}
	}
	if _, err := os.Stat(filepath.Join(env["HEARTH_HOME"], "config.toml")); err == nil {
		t.Error("a refused add wrote the file")
	}
	// A new file is made, readable by its owner only.
	if code, _, errOut := runHearth(t, env, "mcp", "add", "x", "--", "npx", "y"); code != 0 {
		t.Fatal(errOut)
	}
	fi, err := os.Stat(filepath.Join(env["HEARTH_HOME"], "config.toml"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%v %v", fi, err)
	}
}

func TestMCPListConnects(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HEARTH_HOME": home, "PATH": os.Getenv("PATH")}
	cfg := "[mcp_servers.ghost]\ncommand = \"hearth-no-such-mcp-server\"\n"
	if dir := os.Getenv("HEARTH_MCP_SERVERS"); dir != "" {
		cfg += "\n[mcp_servers.everything]\ncommand = \"node\"\nargs = [\"" + filepath.Join(dir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js") + "\", \"stdio\"]\n"
	}
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600)
	code, out, _ := runHearth(t, env, "mcp", "list", "--tools", "-w", home)
	if code != exitFailed || !strings.Contains(out, "ghost") || !strings.Contains(out, "failed") || !strings.Contains(out, "not installed or not on PATH") {
		t.Errorf("%d\n%s", code, out)
	}
	if os.Getenv("HEARTH_MCP_SERVERS") != "" && (!strings.Contains(out, "everything__echo") || !strings.Contains(out, "ready")) {
		t.Errorf("everything:\n%s", out)
	}
	code, out, _ = runHearth(t, env, "mcp", "list", "--json", "-w", home)
	var st []map[string]any
	if err := json.Unmarshal([]byte(out), &st); err != nil || len(st) == 0 || st[len(st)-1]["name"] != "ghost" || st[len(st)-1]["state"] != "failed" {
		t.Errorf("%d %v %s", code, err, out)
	}
}
