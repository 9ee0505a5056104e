// Package loader turns what the user configured — flags, the environment,
// the user's and the project's config files, the keychain — into a
// hearth.Config, with every precedence (flags over environment over project
// over user settings; a project may only tighten) resolved here and nowhere
// else. Hearth's command line builds its agent from it with hearth.New, as
// a program embedding Hearth builds one from its own Config: every mode —
// headless, terminal UI, HTTP API — runs the same runtime.
package loader

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
	"strings"
	"time"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// Options say what to assemble. Zero fields take the configured or default
// values.
type Options struct {
	Paths config.Paths
	// Workspace is the project directory (default: the current one).
	Workspace string
	// Mode names the default profile: "headless", "tui", "api" or
	// "desktop".
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
	// DialectKeys gives a provider that is not a configured one the
	// keychain's entry named after its dialect ("openai", "ollama") when
	// neither flags nor the environment give a key (the desktop app, whose
	// settings store it there).
	DialectKeys bool
	// SubAgents are sub-agents to offer as tools besides the built-in
	// codebase_investigator (the config's [subagents.NAME] tables, or an
	// embedding program's own).
	SubAgents []agent.SubAgentSpec
	// Trust is the trust level --trust gave for this run ("": the one the
	// store remembers for the workspace, else untrusted). See trustOf.
	Trust string
	// Hide are more folders that neither the file tools nor commands may
	// read or write, as secret locations are hidden (a server's other
	// workspaces).
	Hide []string
	// NoShell, when set, says why run_shell_command is not offered (a
	// server's workspace whose commands could read the other workspaces):
	// a warning says it.
	NoShell string
	// TrustPin, with Trust, is the hash of the project's file the trust
	// was given for (session.Workspace.ConfigHash; nil: whatever it holds
	// now, as --trust means).
	TrustPin *string
	// TrustSource says where Trust came from, for messages ("": --trust,
	// for this run).
	TrustSource string
	// Store, if set, is the session store to use instead of opening the
	// one the configuration names (a server's agents share one); Close
	// leaves it open.
	Store session.Store
	// AskTrust, if set, is asked for the workspace's trust when the user
	// never chose one (and Trust is ""): the terminal UI's question. Its
	// answer is remembered in the store. Headless runs leave it nil and
	// never ask: the workspace is untrusted.
	AskTrust func(ctx context.Context, root string) (session.Trust, error)
}

// Loaded is what the configuration resolved to: the Config of the agent
// to build, and what the command line shows of how it got there.
type Loaded struct {
	// Config is ready for hearth.New.
	Config hearth.Config
	// File is the merged config files.
	File *config.Config
	// ProfileName and Profile are the profile chosen.
	ProfileName string
	Profile     config.Profile
	// ProviderConfig is the resolved provider setting (kind, URL, model).
	ProviderConfig providers.Config
	// ProviderName is the configured provider used ([providers.NAME]),
	// "" when none is: its API key is the keychain's entry of that name.
	ProviderName string
	// Store is the session store opened (nil with Options.NoStore); it
	// is Config.Store too. Close closes it.
	Store session.Store
	// Warnings are what Options.Warn was given.
	Warnings []string
	// Trust is the workspace's trust level, as Config.Trust enforces it;
	// TrustSource says where it came from, as a phrase ("--trust, for
	// this run"); TrustChosen is false when the user never chose one (the
	// default, untrusted: a UI should ask).
	Trust       session.Trust
	TrustSource string
	TrustChosen bool

	// checkpointsOff says why checkpoints are off ("" when they are on).
	checkpointsOff string
	// ownStore: Close closes Store (Load opened it).
	ownStore bool
	// pin is the project file's hash the trust was given for
	// (config.LoadTrusted).
	pin string
}

// ConfigError is a problem the user fixes in flags, environment or config
// files (the command line maps it to exit code 2).
type ConfigError struct{ Err error }

func (e ConfigError) Error() string { return e.Err.Error() }
func (e ConfigError) Unwrap() error { return e.Err }

// Load resolves the configuration. Close the result when done (it holds
// the session store).
//
// The workspace's trust (trustOf) is decided first, from the user's own
// config and the store it names, before the project's config file is
// read: a trusted project's file applies as the user's own
// (config.LoadTrusted), any other's may only tighten (config.Load).
func Load(ctx context.Context, o Options) (_ *Loaded, err error) {
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
	root, err := WorkspaceRoot(ws)
	if err != nil {
		return nil, ConfigError{err}
	}
	l := &Loaded{}
	defer func() {
		if err != nil {
			l.Close()
		}
	}()
	user, err := config.Load(o.Paths, "")
	if err != nil {
		return nil, ConfigError{err}
	}
	switch {
	case o.Store != nil:
		l.Store = o.Store
	case !o.NoStore:
		takeSecrets(user, o.Log) // the store's password, among them
		if l.Store, err = OpenStore(ctx, user, o.Paths, o.Getenv, o.Log); err != nil {
			return nil, err
		}
		l.ownStore = true
	}
	if err := l.trustOf(ctx, o, root); err != nil {
		return nil, err
	}
	// The project's file is read from the resolved folder (the one whose
	// trust was looked up), not through a path that may have changed.
	var cfg *config.Config
	if l.Trust == session.TrustTrusted {
		cfg, err = config.LoadTrusted(o.Paths, root, l.pin)
	} else {
		cfg, err = config.Load(o.Paths, root)
	}
	if err != nil {
		return nil, ConfigError{err}
	}
	takeSecrets(cfg, o.Log)
	l.File = cfg
	l.warn(o, cfg.Warnings...)

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
			return nil, ConfigError{fmt.Errorf("no profile %q: configure it under [profiles.%s], or use one of headless, tui, api, desktop", name, name)}
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
	mode, err := agent.ParseMode(prof.ApprovalMode)
	if err != nil {
		return nil, ConfigError{err}
	}
	if l.Trust == session.TrustUntrusted && mode != agent.ModeDefault && mode != agent.ModePlan {
		// An untrusted workspace runs in default at most; hearth.New
		// refuses more.
		if o.ApprovalMode != "" {
			return nil, ConfigError{fmt.Errorf("approval mode %s is not available in %s, an untrusted workspace (%s): there every edit and command is asked for. "+
				"If you trust this folder, pass --trust trusted for this run, or remember it with `hearth workspaces trust %s trusted`", mode, root, l.TrustSource, shellQuote(root))}
		}
		l.warn(o, fmt.Sprintf("Approval mode %s (profile %q) is not available in an untrusted workspace: Hearth asks before every edit and command here (default). "+
			"If you trust %s, run `hearth workspaces trust %s trusted`, or pass --trust trusted for one run.", mode, name, root, shellQuote(root)))
		mode = agent.ModeDefault
		prof.ApprovalMode = string(mode)
	}
	l.ProfileName, l.Profile = name, prof

	// Provider: flags over environment over the config entry.
	pc, err := l.resolveProvider(o, prof)
	if err != nil {
		return nil, ConfigError{err}
	}
	l.ProviderConfig = pc
	p, err := providers.New(pc)
	if err != nil {
		return nil, ConfigError{err}
	}

	// The workspace, as the tools will see it: for the project notes and
	// the default system prompt.
	wsp, err := sandbox.New(ws, prof.ReadOnlyDirs...)
	if err != nil {
		return nil, ConfigError{fmt.Errorf("workspace: %w", err)}
	}
	home := o.Paths.Home
	if home == "" {
		home = o.Getenv("HOME")
	}
	system := prof.SystemPrompt
	if system == "" {
		system = agent.DefaultSystemPrompt(wsp.Root(), time.Now())
	}
	notes, warn := ProjectNotes(wsp)
	system += notes
	l.warn(o, warn...)

	// Sub-agents from the config join those the caller gave.
	subs := append([]agent.SubAgentSpec(nil), o.SubAgents...)
	for _, n := range slices.Sorted(maps.Keys(cfg.SubAgents)) {
		sa := cfg.SubAgents[n]
		subs = append(subs, agent.SubAgentSpec{Name: n, Description: sa.Description, Prompt: sa.Prompt,
			Tools: sa.Tools, Model: sa.Model, MaxTurns: sa.MaxTurns, OutputSchema: sa.OutputSchema, Scratchpad: sa.Scratchpad})
	}
	for _, sp := range subs {
		if err := sp.Validate(); err != nil {
			return nil, ConfigError{err}
		}
	}

	hp := hearth.Profile{Name: name, Tools: prof.Tools, Mode: mode, System: system, MaxTurns: prof.MaxTurns, Think: thinkOf(prof.Think),
		StrictPlan: cfg.StrictPlan}
	if prof.StrictPlan != nil {
		hp.StrictPlan = *prof.StrictPlan
	}
	if o.NoShell != "" {
		l.warn(o, "In "+root+": "+o.NoShell+".")
	}
	if prof.ProjectTools != nil {
		// The project's own list, by name or kind; one that begins with a
		// removal starts from every tool ("!run_shell_command" alone
		// removes just that), as config.Profile.ProjectAllows reads it.
		pats := prof.ProjectTools
		if len(pats) > 0 && strings.HasPrefix(pats[0], "!") {
			pats = append([]string{"*"}, pats...)
		}
		hp.Allow = func(t hearth.Tool) bool { return tool.Allows(pats, t) }
	}
	if o.NoShell != "" {
		allow := hp.Allow
		hp.Allow = func(t hearth.Tool) bool {
			return t.Spec().Name != "run_shell_command" && (allow == nil || allow(t))
		}
	}
	l.Config = hearth.Config{
		Provider: p, Model: pc.Model, Profile: hp, Workspace: wsp.Root(),
		ToolMode: hearth.ToolMode(pc.ToolMode), ToolModeMemory: ToolModeMemory(o.Paths, pc, o.Log),
		Sandbox: hearth.Sandbox{
			// Commands are cut off the network unless the profile
			// allows it: a prompt-injected model's first move is to
			// send what it read away.
			Network: prof.Network != nil && *prof.Network,
			// The user's secret locations and Hearth's own config and
			// data are neither read by the file tools nor visible to
			// commands.
			Secrets:  append(cfg.SecretLocations(prof), o.Hide...),
			ReadOnly: prof.ReadOnlyDirs,
			Home:     home,
		},
		SubAgents: subs, Getenv: o.Getenv, Logger: o.Log, Trust: l.Trust,
	}
	if len(cfg.MCPServers) > 0 && !o.NoMCP {
		l.Config.MCPServers = MCPServers(cfg.MCPServers)
		for _, sc := range l.Config.MCPServers {
			if err := sc.Validate(); err != nil {
				return nil, ConfigError{err}
			}
		}
	}
	if cfg.Compression > 0 {
		l.Config.CompressAt = cfg.Compression
	}
	// The user's [pricing] (a project's is ignored): each model call's
	// cost is recorded with its usage.
	if l.Config.Prices, err = cfg.Pricing.Prices(); err != nil {
		return nil, ConfigError{err}
	}
	l.checkpoints(o, cfg, wsp.Root())
	if l.Store != nil {
		l.Config.Store = l.Store
	}
	return l, nil
}

// ToolModeMemory is where Hearth remembers the models whose server refused
// native tools: tool-modes.json in the data directory, by server (nil
// without a data directory: for the agent's life only).
func ToolModeMemory(p config.Paths, pc providers.Config, log *slog.Logger) prompted.Memory {
	if p.DataDir == "" {
		return nil
	}
	m := prompted.NewFileMemory(filepath.Join(p.DataDir, "tool-modes.json"), pc.Kind+" "+pc.BaseURL)
	m.Logger = log
	return m
}

// checkpoints sets where and whether snapshots of the workspace are kept:
// in the data directory (checkpoint stores go below its checkpoints/, one
// per workspace), as the user's [checkpoints] says.
func (l *Loaded) checkpoints(o Options, cfg *config.Config, root string) {
	c := &l.Config
	c.CheckpointMaxFileSize = cfg.Checkpoints.MaxFileSize
	if !cfg.Checkpoints.On() {
		c.NoCheckpoints = true
		l.checkpointsOff = "checkpoints are off in your config ([checkpoints] enabled = false in " + userFile(o.Paths) + ")"
		return
	}
	if o.Paths.DataDir == "" {
		return // a temporary store, for as long as the agent lives
	}
	data, err := filepath.Abs(o.Paths.DataDir)
	if err != nil {
		data = o.Paths.DataDir
	}
	if real, err := filepath.EvalSymlinks(data); err == nil {
		data = real
	}
	if data == root || strings.HasPrefix(data, root+string(filepath.Separator)) {
		// The snapshots would be snapshotted, and the store refuses it.
		c.NoCheckpoints = true
		l.checkpointsOff = fmt.Sprintf("checkpoints are off: Hearth's data directory %s is inside the workspace", o.Paths.DataDir)
		l.warn(o, fmt.Sprintf("Checkpoints are off: Hearth's data directory (%s) is inside the workspace, so nothing the agent changes can be undone; set HEARTH_HOME or XDG_DATA_HOME to a directory outside it.", o.Paths.DataDir))
		return
	}
	c.Checkpoints = o.Paths.DataDir
}

// CheckpointsOff says why the agent keeps no checkpoints ("" when it
// keeps them), as a phrase for an error message.
func (l *Loaded) CheckpointsOff() string { return l.checkpointsOff }

// userFile names the user's config file for messages, with ~ for the home
// directory.
func userFile(p config.Paths) string {
	f := p.UserFile()
	if p.Home != "" {
		if rest, ok := strings.CutPrefix(f, p.Home+string(filepath.Separator)); ok {
			return filepath.Join("~", rest)
		}
	}
	return f
}

// Start loads the configuration and builds the agent from it: what each of
// Hearth's modes runs. Close the agent, then the Loaded.
func Start(ctx context.Context, o Options) (*hearth.Agent, *Loaded, error) {
	l, err := Load(ctx, o)
	if err != nil {
		return nil, nil, err
	}
	bot, err := hearth.New(l.Config)
	if err != nil {
		l.Close()
		var ce ConfigError
		if errors.As(err, &ce) {
			return nil, nil, err
		}
		// The profile's patterns, the sub-agents and the MCP servers are
		// the user's to fix.
		return nil, nil, ConfigError{err}
	}
	if _, shell := bot.ToolKind("run_shell_command"); shell && !bot.Sandbox().Active {
		st := bot.Sandbox()
		if o.Log == nil {
			o.Log = slog.New(slog.DiscardHandler)
		}
		l.warn(o, "Shell commands are not confined on this system ("+strings.TrimPrefix(st.Note, "not confined: ")+"): only Hearth's own checks stand between a command and your files; `hearth doctor` says more.")
	}
	return bot, l, nil
}

// Close closes the session store, if Load opened it.
func (l *Loaded) Close() error {
	if l.Store != nil && l.ownStore {
		return l.Store.Close()
	}
	return nil
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
	l := &Loaded{File: cfg}
	l.warn(o, cfg.Warnings...)
	prof := cfg.Profiles[o.Profile]
	pc, err := l.resolveProvider(o, prof)
	if err != nil {
		return nil, pc, ConfigError{err}
	}
	p, err := providers.New(pc)
	if err != nil {
		return nil, pc, ConfigError{err}
	}
	return p, pc, nil
}

// resolveProvider picks the provider: --provider may name a configured
// provider or a dialect; the profile's provider, then default_provider,
// apply otherwise.
func (l *Loaded) resolveProvider(o Options, prof config.Profile) (providers.Config, error) {
	cfg := l.File
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
			IdleTimeout: time.Duration(e.IdleTimeout), ImplicitThink: e.ImplicitThink, ToolMode: e.ToolMode}
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
				if mc.Capabilities != nil {
					// A list, even empty, says what the model can do.
					oc.Capabilities = []llm.Capability{}
				}
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
	if name == "" && pc.APIKey == "" && o.DialectKeys {
		sec := config.NewSecrets(o.Paths, o.Log)
		if o.Getenv("HEARTH_NO_KEYRING") != "" {
			sec.Keyring = config.NoKeyring{}
		}
		if key, err := sec.Get(pc.Kind); err == nil {
			pc.APIKey = key
		}
	}
	pc.Logger = o.Log
	l.ProviderName = name
	return pc, nil
}

// KeyName is the name of the keychain entry the provider's API key is
// kept under: the configured provider's, else (with DialectKeys) its
// dialect's.
func (l *Loaded) KeyName() string {
	if l.ProviderName != "" {
		return l.ProviderName
	}
	return l.ProviderConfig.Kind
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

// CheckWorkspace says why a folder cannot be a workspace (nil when it
// can): see checkWorkspace.
func CheckWorkspace(ws string, getenv func(string) string) error {
	return checkWorkspace(ws, envscrub.Wrap(getenv))
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

// warn gives the user sentences to read (Options.Warn), and keeps them.
func (l *Loaded) warn(o Options, ws ...string) {
	for _, w := range ws {
		l.Warnings = append(l.Warnings, w)
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
	names = append(names, storeEnv...)
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
