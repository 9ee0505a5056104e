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
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/termtext"
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
	// Getenv reads the environment (nil: the process's). Secrets Hearth
	// reads from the process environment are taken out of it once read
	// (see takeSecrets); reads through nil, os.Getenv or envscrub.Getenv
	// still find them.
	Getenv func(string) string
	Log    *slog.Logger
	// Warn receives each sentence the user should read before the run:
	// the project's settings that were ignored, project notes refused or
	// cut (nil: logged as warnings on Log).
	Warn func(string)
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
	// Warnings are what Options.Warn was given.
	Warnings []string
}

// ConfigError is a problem the user fixes in flags, environment or config
// files (the command line maps it to exit code 2).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// New assembles the app. Close it when done.
func New(ctx context.Context, o Options) (*App, error) {
	o.Getenv = envscrub.Wrap(o.Getenv)
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
	takeSecrets(cfg, o.Log)
	a := &App{Config: cfg}
	a.warn(o, cfg.Warnings...)

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
		b, isBuiltin := config.BuiltinProfile(name)
		if !isBuiltin {
			return nil, ConfigError{fmt.Errorf("no profile %q: configure it under [profiles.%s], or use one of headless, tui, api", name, name)}
		}
		prof = b
	}
	if len(prof.Tools) == 0 {
		h, _ := config.BuiltinProfile("headless")
		prof.Tools = h.Tools
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
	// The user's secret locations and Hearth's own config and data are
	// neither read by the file tools nor visible to commands.
	home := o.Paths.Home
	if home == "" {
		home = o.Getenv("HOME")
	}
	secrets := sandbox.SecretLocations(home, cfg.SecretLocations(prof)...)
	a.Workspace = a.Workspace.WithSecrets(secrets)
	bo := builtin.Options{Workspace: a.Workspace, Seen: tool.NewSeen(), Log: o.Log}
	bo.Shell.Secrets = secrets
	// Commands are cut off the network unless the profile allows it: a
	// prompt-injected model's first move is to send what it read away.
	bo.Shell.DenyNetwork = prof.Network == nil || !*prof.Network
	if pc.Model != "" {
		bo.Fixer = &edit.ModelFixer{Provider: a.Provider, Model: pc.Model}
	}
	if a.Tools, err = builtin.New(bo); err != nil {
		return nil, err
	}
	if st := a.Tools.Sandbox(); !st.Active && mayRunShell(prof) {
		a.warn(o, "Shell commands are not confined on this system ("+strings.TrimPrefix(st.Note, "not confined: ")+"): only Hearth's own checks stand between a command and your files; `hearth doctor` says more.")
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
	if reg, err = narrow(reg, name, prof); err != nil {
		a.Close()
		return nil, err
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
	notes, warn := ProjectNotes(a.Workspace)
	system += notes
	a.warn(o, warn...)
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
	o.Getenv = envscrub.Wrap(o.Getenv)
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	ws := o.Workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	cfg, err := config.Load(o.Paths, ws)
	if err != nil {
		return nil, providers.Config{}, ConfigError{err}
	}
	takeSecrets(cfg, o.Log)
	a := &App{Config: cfg}
	a.warn(o, cfg.Warnings...)
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
			// A provider a repository defined gets no key: not the
			// keychain's, nor the one the environment holds for the
			// user's own servers (only --api-key, given for this run).
			getenv = hideVars(getenv, providers.SecretEnv...)
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
	if err := checkBaseURL(pc.Kind, flags, getenv, name, cfg.Providers[name]); err != nil {
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
// for the end of the system prompt ("" when there are none); see
// ProjectNotes.
func ProjectContext(ws *sandbox.Workspace) string {
	text, _ := ProjectNotes(ws)
	return text
}

// ProjectNotes returns the workspace's HEARTH.md and AGENTS.md, formatted
// for the end of the system prompt ("" when there are none), and a
// sentence for the user about each that was refused or cut. They come with
// the code, so they are read as config.ReadProjectFile reads such files:
// not through a symlink that leaves the workspace (an AGENTS.md linked to a
// key would put the key in the prompt), never a FIFO or a device, and at
// most 16 KB of each, the cut said in the prompt.
func ProjectNotes(ws *sandbox.Workspace) (string, []string) {
	var b strings.Builder
	var warn []string
	for _, name := range contextFiles {
		data, cut, err := config.ReadProjectFile(ws.Root(), name, maxContextFile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			// The reason may quote a symlink's target, which the project
			// wrote: strip it for the terminal.
			warn = append(warn, termtext.String(fmt.Sprintf("The project's %s was not added to the system prompt: %s.", name, noteReason(err))))
			continue
		}
		// ToValidUTF8 also drops a character the cut split.
		text := strings.TrimSpace(strings.ToValidUTF8(string(data), ""))
		if text == "" {
			continue
		}
		if cut {
			text += fmt.Sprintf("\n[… cut: the file is longer than %d KB]", maxContextFile>>10)
			warn = append(warn, fmt.Sprintf("The project's %s is longer than %d KB: only its first %d KB are in the system prompt.", name, maxContextFile>>10, maxContextFile>>10))
		}
		fmt.Fprintf(&b, "\n\nProject notes from %s:\n%s", name, text)
	}
	return b.String(), warn
}

// noteReason says why a note was refused, without repeating its path.
func noteReason(err error) string {
	var pe *sandbox.PathError
	if errors.As(err, &pe) {
		return pe.Rule
	}
	return err.Error()
}

// mayRunShell reports whether a profile's tools may include the shell.
func mayRunShell(prof config.Profile) bool {
	if !prof.ProjectAllows("run_shell_command") {
		return false
	}
	for _, p := range prof.Tools {
		if p == "*" || strings.HasPrefix(p, "run_shell") {
			return true
		}
	}
	return false
}

// narrow keeps of reg the tools the project's tool list allows (a
// project's profile can only remove tools).
func narrow(reg *tool.Registry, name string, prof config.Profile) (*tool.Registry, error) {
	if prof.ProjectTools == nil {
		return reg, nil
	}
	keep := []string{}
	for _, n := range reg.Names() {
		if prof.ProjectAllows(n) {
			keep = append(keep, n)
		}
	}
	return reg.Select(tool.Profile{Name: name, Tools: keep})
}

// warn gives the user sentences to read (Options.Warn), and keeps them.
func (a *App) warn(o Options, ws ...string) {
	for _, w := range ws {
		a.Warnings = append(a.Warnings, w)
		if o.Warn != nil {
			o.Warn(w)
		} else {
			o.Log.Warn(w)
		}
	}
}

// serveTokenEnv is where `hearth serve` may find its API token.
const serveTokenEnv = "HEARTH_API_TOKEN"

// takeSecrets moves the secrets Hearth may read from its environment out of
// it (envscrub.Take): the providers' keys (HEARTH_API_KEY, OPENAI_API_KEY,
// and the variables the user's providers name in api_key_env) and the API
// token. Programs Hearth starts from now on (MCP servers, the shell tool's
// commands, the clipboard helper) do not inherit them, and on Linux other
// processes no longer find them in /proc/<pid>/environ. Hearth's own reads
// still do, through envscrub.Wrap. An MCP server that needs one gets it only
// when the user's config passes it (env = { KEY = "$KEY" }).
func takeSecrets(cfg *config.Config, log *slog.Logger) {
	names := append(slices.Clone(providers.SecretEnv), serveTokenEnv)
	for _, n := range slices.Sorted(maps.Keys(cfg.Providers)) {
		if p := cfg.Providers[n]; p.APIKeyEnv != "" && !p.FromProject {
			names = append(names, p.APIKeyEnv)
		}
	}
	if err := envscrub.Take(names...); err != nil {
		log.Debug("secrets are unset, but their values stay in /proc/<pid>/environ", "error", err)
	}
}

// hideVars returns getenv without the named variables.
func hideVars(getenv func(string) string, names ...string) func(string) string {
	return func(k string) string {
		if slices.Contains(names, k) {
			return ""
		}
		return getenv(k)
	}
}
