// Package app assembles a ready agent from what the user configured: the
// config files, a profile, the model server (flags over environment over
// project over user settings), the workspace, the built-in tools and the
// session store. Every mode — headless, terminal UI, HTTP API — starts here,
// so they behave alike.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/mcp"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/builtin"
	"github.com/hearth-agent/hearth/tool/edit"
)

// Options say what to assemble. Zero fields take the configured or default
// values.
type Options struct {
	Paths config.Paths
	// Workspace is the project directory (default: the current one).
	Workspace string
	// Mode names the default profile: "headless", "tui" or "api".
	Mode string
	// Profile names a configured profile (default: the config's
	// default_profile, else the mode's name).
	Profile string
	// Provider holds what flags said: Kind may name a configured provider
	// as well as a dialect.
	Provider providers.Config
	// ApprovalMode and MaxTurns override the profile's.
	ApprovalMode string
	MaxTurns     int
	Getenv       func(string) string
	Log          *slog.Logger
	// NoStore skips opening the session store.
	NoStore bool
	// NoMCP leaves the configured MCP servers unstarted.
	NoMCP bool
	// SubAgents are sub-agents to offer as tools besides the built-in
	// codebase_investigator (the config's [subagents.NAME] tables, or an
	// embedding program's own).
	SubAgents []agent.SubAgentSpec
}

// App is an assembled agent with its store and tools.
type App struct {
	Config   *config.Config
	Profile  config.Profile
	Provider llm.Provider
	// ProviderConfig is the resolved provider setting (kind, URL, model).
	ProviderConfig providers.Config
	Workspace      *sandbox.Workspace
	Tools          *builtin.Set
	Agent          *agent.Agent
	Store          *session.SQLite
	// ModelInfo is what the server said about the model (nil if it could
	// not be asked).
	ModelInfo *llm.ModelInfo
	// MCP runs the configured MCP servers (nil when none is configured):
	// its Status is for `/mcp` and the API's health.
	MCP *mcp.Manager
}

// ConfigError is a problem the user fixes in flags, environment or config
// files (the command line maps it to exit code 2).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// builtinProfiles are what each mode runs with when the config says nothing.
var builtinProfiles = map[string]config.Profile{
	// Scripts cannot answer questions: reading is free, edits and
	// commands are refused with a note on how to allow them.
	"headless": {Tools: []string{"*"}, ApprovalMode: "default"},
	"tui":      {Tools: []string{"*"}, ApprovalMode: "default"},
	// The API offers no shell or edits unless configured.
	"api": {Tools: []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search"}, ApprovalMode: "default"},
}

// New assembles the app. Close it when done.
func New(ctx context.Context, o Options) (*App, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	ws := o.Workspace
	if ws == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		ws = wd
	}
	if err := checkWorkspace(ws, o.Getenv); err != nil {
		return nil, ConfigError{err}
	}
	cfg, err := config.Load(o.Paths, ws)
	if err != nil {
		return nil, ConfigError{err}
	}
	for _, w := range cfg.Warnings {
		o.Log.Warn(w)
	}
	a := &App{Config: cfg}

	// Profile: configured, else the mode's built-in one.
	name := o.Profile
	if name == "" {
		name = cfg.DefaultProfile
	}
	if name == "" {
		name = o.Mode
	}
	prof, ok := cfg.Profiles[name]
	if !ok {
		b, isBuiltin := builtinProfiles[name]
		if !isBuiltin {
			return nil, ConfigError{fmt.Errorf("no profile %q: configure it under [profiles.%s], or use one of headless, tui, api", name, name)}
		}
		prof = b
	}
	if len(prof.Tools) == 0 {
		prof.Tools = builtinProfiles["headless"].Tools
	}
	if o.ApprovalMode != "" {
		prof.ApprovalMode = o.ApprovalMode
	}
	if o.MaxTurns > 0 {
		prof.MaxTurns = o.MaxTurns
	}
	a.Profile = prof
	mode, err := agent.ParseMode(prof.ApprovalMode)
	if err != nil {
		return nil, ConfigError{err}
	}

	// Provider: flags over environment over the config entry.
	pc, err := a.resolveProvider(o, prof)
	if err != nil {
		return nil, ConfigError{err}
	}
	a.ProviderConfig = pc
	if a.Provider, err = providers.New(pc); err != nil {
		return nil, ConfigError{err}
	}

	// Workspace and tools.
	if a.Workspace, err = sandbox.New(ws, prof.ReadOnlyDirs...); err != nil {
		return nil, ConfigError{fmt.Errorf("workspace: %w", err)}
	}
	bo := builtin.Options{Workspace: a.Workspace, Seen: tool.NewSeen(), Log: o.Log}
	if prof.Network != nil && !*prof.Network {
		bo.Shell.DenyNetwork = true
	}
	if pc.Model != "" {
		bo.Fixer = &edit.ModelFixer{Provider: a.Provider, Model: pc.Model}
	}
	if a.Tools, err = builtin.New(bo); err != nil {
		return nil, err
	}
	if st := a.Tools.Sandbox(); !st.Active && mayRunShell(prof.Tools) {
		o.Log.Warn("shell commands are not confined on this system: only Hearth's own checks stand between a command and your files", "note", st.Note)
	}
	all, err := a.Tools.Registry()
	if err != nil {
		a.Close()
		return nil, err
	}
	// Sub-agents from the config join those the caller gave.
	names := make([]string, 0, len(cfg.SubAgents))
	for n := range cfg.SubAgents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sa := cfg.SubAgents[n]
		o.SubAgents = append(o.SubAgents, agent.SubAgentSpec{Name: n, Description: sa.Description, Prompt: sa.Prompt,
			Tools: sa.Tools, Model: sa.Model, MaxTurns: sa.MaxTurns, OutputSchema: sa.OutputSchema, Scratchpad: sa.Scratchpad})
	}
	subs, err := a.addSubAgents(o, all)
	if err != nil {
		a.Close()
		return nil, err
	}
	reg, err := all.Select(tool.Profile{Name: name, Tools: builtinPatterns(prof.Tools, cfg.MCPServers)})
	if err != nil {
		a.Close()
		return nil, ConfigError{err}
	}
	bindSubAgents(subs, o.SubAgents, reg)
	if err := a.startMCP(o, prof, reg); err != nil {
		a.Close()
		return nil, err
	}

	system := prof.SystemPrompt
	if system == "" {
		system = agent.DefaultSystemPrompt(a.Workspace.Root(), time.Now())
	}
	system += ProjectContext(a.Workspace)
	a.Agent = &agent.Agent{
		Provider: a.Provider, Model: pc.Model, System: system, Tools: reg, Mode: mode,
		MaxTurns: prof.MaxTurns, Think: thinkOf(prof.Think), Logger: o.Log, Approvals: &agent.Approvals{},
	}
	if a.MCP != nil {
		a.Agent.Prepare = a.MCP.Prepare
	}
	if cfg.Compression > 0 {
		a.Agent.CompressAt = cfg.Compression
	}
	if !o.NoStore {
		if a.Store, err = session.Open(ctx, o.Paths.Database()); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// ProviderOnly resolves and builds just the model provider (for commands
// that talk to the server without running an agent: models, doctor).
func ProviderOnly(o Options) (llm.Provider, providers.Config, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	ws := o.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	cfg, err := config.Load(o.Paths, ws)
	if err != nil {
		return nil, providers.Config{}, ConfigError{err}
	}
	a := &App{Config: cfg}
	prof := cfg.Profiles[o.Profile]
	pc, err := a.resolveProvider(o, prof)
	if err != nil {
		return nil, pc, ConfigError{err}
	}
	p, err := providers.New(pc)
	if err != nil {
		return nil, pc, ConfigError{err}
	}
	return p, pc, nil
}

// LearnModel asks the server about the model, for its context window. It
// is best effort: a server that cannot say leaves the window unknown (no
// automatic compression).
func (a *App) LearnModel(ctx context.Context) {
	if a.ProviderConfig.Model == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if mi, err := a.Provider.ModelInfo(ctx, a.ProviderConfig.Model); err == nil {
		a.ModelInfo = mi
		a.Agent.ContextLength = mi.ContextLength
	}
}

// Close releases the store and the tools.
func (a *App) Close() error {
	var errs []error
	if a.MCP != nil {
		errs = append(errs, a.MCP.Close())
	}
	if a.Tools != nil {
		errs = append(errs, a.Tools.Close())
	}
	if a.Store != nil {
		errs = append(errs, a.Store.Close())
	}
	return errors.Join(errs...)
}

// resolveProvider picks the provider: --provider may name a configured
// provider or a dialect; the profile's provider, then default_provider,
// apply otherwise.
func (a *App) resolveProvider(o Options, prof config.Profile) (providers.Config, error) {
	cfg := a.Config
	flags := o.Provider
	getenv := o.Getenv
	name := ""
	switch env := o.Getenv("HEARTH_PROVIDER"); {
	case isConfigured(cfg, flags.Kind): // --provider NAME
		name, flags.Kind = flags.Kind, ""
	case flags.Kind != "": // --provider ollama|openai
	case isConfigured(cfg, env):
		name = env
		getenv = func(k string) string { // not a dialect: hide it from Resolve
			if k == "HEARTH_PROVIDER" {
				return ""
			}
			return o.Getenv(k)
		}
	case env != "":
	default:
		name = prof.Provider
		if name == "" {
			name = cfg.DefaultProvider
		}
	}
	var base providers.Config
	if name != "" {
		e := cfg.Providers[name]
		base = providers.Config{Kind: e.Kind, BaseURL: e.BaseURL, Model: e.Model, NumCtx: e.NumCtx,
			IdleTimeout: time.Duration(e.IdleTimeout), ImplicitThink: e.ImplicitThink}
		if base.Kind == "" {
			base.Kind = providers.KindOllama
		}
		switch {
		case e.APIKey != "":
			base.APIKey = e.APIKey
		case e.APIKeyEnv != "":
			base.APIKey = o.Getenv(e.APIKeyEnv)
		case e.FromProject:
			// A provider a repository defined gets no stored key.
		default:
			sec := config.NewSecrets(o.Paths, o.Log)
			if o.Getenv("HEARTH_NO_KEYRING") != "" {
				sec.Keyring = config.NoKeyring{}
			}
			if key, err := sec.Get(name); err == nil {
				base.APIKey = key
			}
		}
		if len(e.Models) > 0 {
			base.Models = map[string]openai.ModelConfig{}
			for m, mc := range e.Models {
				oc := openai.ModelConfig{ContextLength: mc.ContextLength, ImplicitThink: mc.ImplicitThink}
				for _, c := range mc.Capabilities {
					oc.Capabilities = append(oc.Capabilities, llm.Capability(c))
				}
				base.Models[m] = oc
			}
		}
	}
	if prof.Model != "" && flags.Model == "" {
		base.Model = prof.Model
	}
	pc, err := providers.Resolve(flags, base, getenv)
	if err != nil {
		return pc, err
	}
	pc.Logger = o.Log
	return pc, nil
}

func isConfigured(cfg *config.Config, name string) bool {
	_, ok := cfg.Providers[name]
	return ok
}

func thinkOf(s string) *llm.Think {
	switch s {
	case "on":
		return &llm.Think{Enabled: true}
	case "off":
		return &llm.Think{Enabled: false}
	case "low", "medium", "high":
		return &llm.Think{Enabled: true, Level: s}
	}
	return nil
}

// checkWorkspace refuses a workspace that is the filesystem root, the home
// directory, or a parent of it: tools may delete and overwrite anything in
// the workspace, which there would mean the user's whole account.
func checkWorkspace(ws string, getenv func(string) string) error {
	abs, err := filepath.Abs(ws)
	if err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	switch {
	case abs == string(filepath.Separator):
		return fmt.Errorf("the workspace would be the filesystem root: run Hearth in a project directory, or choose one with --workspace")
	case home != "" && (abs == home || strings.HasPrefix(home, abs+string(filepath.Separator))):
		return fmt.Errorf("the workspace would be your home directory (%s), where tools could change everything you own: run Hearth in a project directory, or choose one with --workspace", abs)
	}
	return nil
}

// contextFiles are the project notes added to the system prompt.
var contextFiles = []string{"HEARTH.md", "AGENTS.md"}

// maxContextFile bounds each project note.
const maxContextFile = 16 << 10

// ProjectContext returns the workspace's HEARTH.md and AGENTS.md, formatted
// for the end of the system prompt ("" when there are none). They are read
// through the workspace's rules: a symlink out of it is not followed.
func ProjectContext(ws *sandbox.Workspace) string {
	var b strings.Builder
	for _, name := range contextFiles {
		p, err := ws.Resolve(name, sandbox.Read)
		if err != nil {
			continue
		}
		fi, err := os.Stat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4*maxContextFile {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		text := string(data)
		if len(text) > maxContextFile {
			text = text[:maxContextFile] + "\n[… cut: the file is longer than 16 KB]"
		}
		fmt.Fprintf(&b, "\n\nProject notes from %s:\n%s", name, strings.TrimSpace(text))
	}
	return b.String()
}

// mayRunShell reports whether a profile's tools may include the shell.
func mayRunShell(patterns []string) bool {
	for _, p := range patterns {
		if p == "*" || strings.HasPrefix(p, "run_shell") {
			return true
		}
	}
	return false
}
