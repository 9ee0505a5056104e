package loader

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/llm/providers"
)

func setup(t *testing.T, user, project string, files map[string]string) (Options, string) {
	dir := t.TempDir()
	paths := config.Paths{ConfigDir: filepath.Join(dir, "cfg"), DataDir: filepath.Join(dir, "data")}
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(filepath.Join(ws, ".hearth"), 0o755)
	os.MkdirAll(paths.ConfigDir, 0o755)
	if user != "" {
		os.WriteFile(paths.UserFile(), []byte(user), 0o644)
	}
	if project != "" {
		os.WriteFile(config.ProjectFile(ws), []byte(project), 0o644)
	}
	for p, c := range files {
		os.WriteFile(filepath.Join(ws, p), []byte(c), 0o644)
	}
	env := map[string]string{"HEARTH_NO_KEYRING": "1"}
	return Options{Paths: paths, Workspace: ws, Mode: "headless", Getenv: func(k string) string { return env[k] },
		Provider: providers.Config{}}, ws
}

func names(a *built) string { return strings.Join(a.bot.Tools(), ",") }

func TestBuiltinProfiles(t *testing.T) {
	o, _ := setup(t, "", "", nil)
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Config.Profile.Mode != agent.ModeDefault || !strings.Contains(names(a), "run_shell_command") || a.ProviderConfig.Kind != "ollama" {
		t.Errorf("headless: %s %s %+v", a.Config.Profile.Mode, names(a), a.ProviderConfig)
	}
	o.Mode = "api"
	b, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if strings.Contains(names(b), "run_shell_command") || strings.Contains(names(b), "edit") {
		t.Errorf("the api profile offers %s", names(b))
	}
}

func TestConfiguredProfileAndProvider(t *testing.T) {
	user := `
default_provider = "gpu"
[providers.gpu]
kind = "openai"
base_url = "http://gpu:8000"
model = "Qwen/Qwen3-8B"
api_key = "sk-file"
[providers.gpu.models."Qwen/Qwen3-8B"]
capabilities = ["tools"]
context_length = 32768
[profiles.headless]
tools = ["*", "!run_shell_command"]
approval_mode = "auto_edit"
think = "off"
`
	project := `
[profiles.review]
tools = ["read_file", "grep_search"]
approval_mode = "plan"
provider = "gpu"
model = "small"
`
	o, _ := setup(t, user, project, map[string]string{"HEARTH.md": "Run tests with `make test`.", "AGENTS.md": "Use tabs."})
	// Read-only: the project's file may only tighten (as untrusted), and
	// the approval modes above default stay the user's to choose.
	o.Trust = "read-only"
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	pc := a.ProviderConfig
	if pc.Kind != "openai" || pc.BaseURL != "http://gpu:8000/v1" || pc.Model != "Qwen/Qwen3-8B" || pc.APIKey != "sk-file" || pc.Models["Qwen/Qwen3-8B"].ContextLength != 32768 {
		t.Errorf("provider: %+v", pc)
	}
	if a.Config.Profile.Mode != agent.ModeAutoEdit || strings.Contains(names(a), "run_shell_command") || a.Config.Profile.Think == nil || a.Config.Profile.Think.Enabled {
		t.Errorf("profile: %s %s %+v", a.Config.Profile.Mode, names(a), a.Config.Profile.Think)
	}
	if !strings.Contains(a.Config.Profile.System, "Project notes from HEARTH.md:\nRun tests with `make test`.") || !strings.Contains(a.Config.Profile.System, "Use tabs.") {
		t.Errorf("project notes missing from the system prompt")
	}

	o.Profile = "review"
	o.ApprovalMode = "yolo" // a flag beats the profile
	r, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The project's profile narrows the tools; which model runs is the
	// user's (its provider and model are ignored, with a warning each).
	if names(r) != "read_file,grep_search" || r.Config.Profile.Mode != agent.ModeYolo || r.ProviderConfig.Model != "Qwen/Qwen3-8B" || len(r.Warnings) != 2 {
		t.Errorf("review: %s %s %s %q", names(r), r.Config.Profile.Mode, r.ProviderConfig.Model, r.Warnings)
	}

	// --provider ollama (a dialect) bypasses the configured default.
	o.Profile, o.ApprovalMode = "", ""
	o.Provider = providers.Config{Kind: "ollama", Model: "qwen3:4b"}
	c, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.ProviderConfig.Kind != "ollama" || c.ProviderConfig.Model != "qwen3:4b" {
		t.Errorf("dialect flag: %+v", c.ProviderConfig)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ user, profile, want string }{
		{"[profiles.x]\ntools = [\"nope\"]", "x", "matches no tool"},
		{"", "missing", `no profile "missing"`},
		{"bad = ", "", "config.toml"},
	} {
		o, _ := setup(t, tc.user, "", nil)
		o.Profile = tc.profile
		_, err := start(context.Background(), o)
		var ce ConfigError
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errorsAs(err, &ce) {
			t.Errorf("%q/%q: %v", tc.user, tc.profile, err)
		}
	}
}

func errorsAs(err error, target *ConfigError) bool {
	ce, ok := err.(ConfigError)
	if ok {
		*target = ce
	}
	return ok
}

func TestWorkspaceMayNotBeHomeOrRoot(t *testing.T) {
	home := t.TempDir()
	env := map[string]string{"HOME": home}
	get := func(k string) string { return env[k] }
	for _, ws := range []string{"/", home, filepath.Dir(home)} {
		if err := checkWorkspace(ws, get); err == nil {
			t.Errorf("workspace %s accepted", ws)
		}
	}
	os.MkdirAll(filepath.Join(home, "src", "proj"), 0o755)
	if err := checkWorkspace(filepath.Join(home, "src", "proj"), get); err != nil {
		t.Errorf("a project under home refused: %v", err)
	}
}

func TestProjectNotesStayInTheWorkspace(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(outside, []byte("PRIVATE KEY"), 0o600)
	o, ws := setup(t, "", "", map[string]string{"AGENTS.md": "Use tabs."})
	os.Symlink(outside, filepath.Join(ws, "HEARTH.md"))
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if strings.Contains(a.Config.Profile.System, "PRIVATE KEY") || !strings.Contains(a.Config.Profile.System, "Use tabs.") {
		t.Errorf("system prompt: %q", a.Config.Profile.System[len(a.Config.Profile.System)-100:])
	}
}

func TestSubAgentsFromConfigFile(t *testing.T) {
	user := `
[subagents.reviewer]
description = "Reviews a diff and lists problems."
prompt = "You review code. Report problems only."
tools = ["read_file", "grep_search"]
max_turns = 5
`
	o, _ := setup(t, user, "", nil)
	a, err := start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !strings.Contains(names(a), "reviewer") || !strings.Contains(names(a), "codebase_investigator") {
		t.Errorf("tools: %s", names(a))
	}
	o2, _ := setup(t, "[subagents.bad]\nprompt = \"x\"", "", nil)
	if _, err := start(context.Background(), o2); err == nil || !strings.Contains(err.Error(), "description") {
		t.Errorf("a sub-agent without a description: %v", err)
	}
}

// TestDialectKeys: with DialectKeys, an unconfigured provider gets the key
// stored under its dialect's name, unless the environment gives one; a
// configured provider keeps its own entry; without it nothing changes.
func TestDialectKeys(t *testing.T) {
	o, _ := setup(t, "", "", nil)
	sec := config.NewSecrets(o.Paths, nil)
	sec.Keyring = config.NoKeyring{}
	if _, err := sec.Set("openai", "sk-dialect"); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HEARTH_NO_KEYRING": "1", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	o.Getenv = func(k string) string { return env[k] }
	o.Provider = providers.Config{Kind: "openai"}
	o.NoStore = true
	for _, c := range []struct {
		name    string
		dialect bool
		envKey  string
		want    string
	}{
		{"off", false, "", ""},
		{"on", true, "", "sk-dialect"},
		{"the environment wins", true, "sk-env", "sk-env"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env["OPENAI_API_KEY"] = c.envKey
			o.DialectKeys = c.dialect
			l, err := Load(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.ProviderConfig.APIKey != c.want || l.KeyName() != "openai" {
				t.Errorf("key %q under %q, want %q under openai", l.ProviderConfig.APIKey, l.KeyName(), c.want)
			}
		})
	}
}

// The user's [pricing] reaches the agent's config; a project's does not.
func TestPricesFromConfig(t *testing.T) {
	o, _ := setup(t, "[pricing]\ncurrency = \"USD\"\n[pricing.models.m]\ninput = 0.15\noutput = 0.6\ncached_input = 0.075",
		"[pricing.models.other]\ninput = 0\noutput = 0", nil)
	o.NoStore = true
	l, err := Load(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p := l.Config.Prices; len(p) != 1 || p["m"].Input != "0.15" || p["m"].Output != "0.6" || p["m"].CachedInput != "0.075" {
		t.Errorf("prices %+v", p)
	}
	if l.File.Pricing.Currency != "USD" {
		t.Errorf("currency %q", l.File.Pricing.Currency)
	}
}
