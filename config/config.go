// Package config reads Hearth's configuration: TOML files at the XDG config
// path (user) and in the workspace (.hearth/config.toml, project), with named
// providers, profiles per mode, and MCP servers. A project's file comes with
// the code, which may be anyone's: it can only tighten the user's settings
// (see project.go), and what it asks for beyond that is ignored and said in
// Config.Warnings. Environment variables and flags override both (the
// callers apply those). Secrets live in the OS keychain (see Secrets).
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/tool"
)

// Config is the merged configuration.
type Config struct {
	// DefaultProvider names the provider used when none is chosen.
	DefaultProvider string `toml:"default_provider"`
	// DefaultProfile names the profile used when none is chosen.
	DefaultProfile string               `toml:"default_profile"`
	Providers      map[string]Provider  `toml:"providers"`
	Profiles       map[string]Profile   `toml:"profiles"`
	MCPServers     map[string]MCPServer `toml:"mcp_servers"`
	// SubAgents are agents the main agent can hand a task to, as tools.
	SubAgents map[string]SubAgent `toml:"subagents"`
	// Compression is the share of the context window at which older turns
	// are summarised (default 0.7).
	Compression float64 `toml:"compression_threshold"`
	// StrictPlan sends the model back once per turn when it answers while
	// its plan (update_plan) still has open steps; a profile may say
	// otherwise.
	StrictPlan bool `toml:"strict_plan"`
	// SecretPaths are more files and directories that tools and commands
	// may not read, besides the usual credential locations and Hearth's
	// own directories (see SecretLocations). "~/" is the home directory; a
	// relative path is taken from the home directory in the user's file,
	// from the workspace in a project's.
	SecretPaths []string `toml:"secret_paths"`
	// Store says where sessions are kept (the user's file only).
	Store Store `toml:"store"`
	// Checkpoints says whether what the agent changes in the workspace can
	// be taken back (the user's file only).
	Checkpoints Checkpoints `toml:"checkpoints"`
	// Pricing is what models cost, so that each model call's cost is
	// recorded (the user's file only).
	Pricing Pricing `toml:"pricing"`

	// Files lists the files read, lowest precedence first.
	Files []string `toml:"-"`
	// ProjectChanged is set by LoadTrusted when the project's file is not
	// the one the user trusted: it was read as an untrusted folder's.
	ProjectChanged bool `toml:"-"`
	// Warnings are the project's settings that were ignored, each a
	// sentence that says why and what the user can do: for the user's
	// eyes (the command line prints them).
	Warnings []string `toml:"-"`

	// paths are where the files were read from (set by Load).
	paths Paths
}

// Store says where sessions are kept: the SQLite file in the data
// directory (the default), or a PostgreSQL database that several Hearth
// processes share.
type Store struct {
	// URL is a PostgreSQL URL (postgres://USER:PASSWORD@HOST/DB) or a
	// SQLite file's path; HEARTH_DATABASE_URL overrides it.
	URL string `toml:"url"`
}

// Checkpoints says whether Hearth keeps a snapshot of the workspace before
// every tool call that may change it (so that `hearth sessions undo`,
// redo and rewind can take the changes back), and what it keeps. The
// snapshots are kept in the data directory, outside the workspace.
type Checkpoints struct {
	// Enabled turns checkpoints on or off (nil: on).
	Enabled *bool `toml:"enabled"`
	// MaxFileSize is the size in bytes over which a file's content is not
	// kept (0: 32 MiB); such a file cannot be restored, and the
	// checkpoint says so.
	MaxFileSize int64 `toml:"max_file_size"`
}

// Pricing is the [pricing] table: the models' prices, per million tokens.
// Nothing is hard-coded: a model without a price here has no cost (shown
// as unknown, never 0).
//
//	[pricing]
//	currency = "USD"
//	[pricing.models."gpt-4o-mini"]
//	input = 0.15
//	output = 0.60
//	cached_input = 0.075
type Pricing struct {
	// Currency is a label shown with costs ("USD", "EUR"); nothing is
	// converted. Default: none.
	Currency string `toml:"currency"`
	// Models are the prices by model name (the name the provider is asked
	// for).
	Models map[string]ModelPrice `toml:"models"`
}

// ModelPrice is one model's price per million tokens, in the currency:
// each a number (0.15) or a string ("0.15"), at most 6 decimal places.
// Input and output are required; cached_input (the input tokens the server
// serves from its prompt cache) defaults to input.
type ModelPrice struct {
	Input       any `toml:"input"`
	Output      any `toml:"output"`
	CachedInput any `toml:"cached_input"`
}

// Price reads p as decimal strings, exactly: a TOML number is written back
// with the shortest digits that read as it (strconv.FormatFloat 'f', -1),
// which are the digits the user wrote, and never goes through float
// arithmetic. It does not check the amounts (pricing.Price.Rates does).
func (p ModelPrice) Price() (pricing.Price, error) {
	var out pricing.Price
	for _, f := range []struct {
		key string
		v   any
		s   *string
	}{{"input", p.Input, &out.Input}, {"output", p.Output, &out.Output}, {"cached_input", p.CachedInput, &out.CachedInput}} {
		switch v := f.v.(type) {
		case nil:
		case string:
			*f.s = v
		case int64:
			*f.s = strconv.FormatInt(v, 10)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return pricing.Price{}, fmt.Errorf("%s: %v is not a price", f.key, v)
			}
			*f.s = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			return pricing.Price{}, fmt.Errorf("%s: want a number such as 0.15 (or a string \"0.15\"), not %T", f.key, f.v)
		}
	}
	return out, nil
}

// Prices are the models' prices, read and checked; an error names the
// model and the setting.
func (p Pricing) Prices() (map[string]pricing.Price, error) {
	if len(p.Models) == 0 {
		return nil, nil
	}
	out := make(map[string]pricing.Price, len(p.Models))
	for _, m := range slices.Sorted(maps.Keys(p.Models)) {
		mp := p.Models[m]
		pr, err := mp.Price()
		if err == nil {
			_, err = pr.Rates()
			// "price: input: …" → "input: …": the table names the price.
			if err != nil {
				err = errors.New(strings.TrimPrefix(err.Error(), "price: "))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("[pricing.models.%q] %w", m, err)
		}
		out[m] = pr
	}
	return out, nil
}

// On reports whether checkpoints are on (the default).
func (c Checkpoints) On() bool { return c.Enabled == nil || *c.Enabled }

// StoreURL is where sessions are kept: HEARTH_DATABASE_URL, else the
// user's [store] url, else "" (the SQLite file, Paths.Database).
func (c *Config) StoreURL(getenv func(string) string) string {
	if v := strings.TrimSpace(getenv("HEARTH_DATABASE_URL")); v != "" {
		return v
	}
	return strings.TrimSpace(c.Store.URL)
}

// Provider is a named model server.
type Provider struct {
	// Kind is "ollama", "openai" (any OpenAI-compatible server) or
	// "responses" (a server with OpenAI's Responses API).
	Kind    string `toml:"kind"`
	BaseURL string `toml:"base_url"`
	Model   string `toml:"model"`
	// APIKey is better kept out of files: `hearth auth set NAME` stores it
	// in the keychain. APIKeyEnv names an environment variable to read.
	APIKey    string `toml:"api_key"`
	APIKeyEnv string `toml:"api_key_env"`
	// NumCtx is the context window to ask Ollama for.
	NumCtx int `toml:"num_ctx"`
	// IdleTimeout ends a stream silent this long ("5m").
	IdleTimeout Duration `toml:"idle_timeout"`
	// ImplicitThink: the models' templates open <think> themselves.
	ImplicitThink bool `toml:"implicit_think"`
	// ToolMode is how its models are offered tools: "native", "prompted"
	// (described in the prompt, calls read from the text: for models that
	// cannot take tools) or "auto" (the default: per model, from what the
	// server says or refuses).
	ToolMode string `toml:"tool_mode"`
	// Models holds what OpenAI-compatible servers do not say themselves.
	Models map[string]Model `toml:"models"`
	// FromProject is set when the provider comes from a workspace's config
	// file: it never gets keys from the keychain.
	FromProject bool `toml:"-"`
}

// Model describes one model of an OpenAI-compatible server.
type Model struct {
	// Capabilities: "tools", "thinking", "vision".
	Capabilities  []string `toml:"capabilities"`
	ContextLength int      `toml:"context_length"`
	ImplicitThink bool     `toml:"implicit_think"`
}

// Profile is what one mode runs with.
type Profile struct {
	// Tools are the enabled tools, in order: globs over names, kind
	// selectors ("@read-only", "@edit", "@execute"), "!" removing
	// (tool.Profile).
	Tools []string `toml:"tools"`
	// ApprovalMode is default, auto_edit, yolo or plan.
	ApprovalMode string `toml:"approval_mode"`
	// SystemPrompt replaces the default system prompt when set.
	SystemPrompt string `toml:"system_prompt"`
	// Provider and Model override the defaults for this profile.
	Provider string `toml:"provider"`
	Model    string `toml:"model"`
	MaxTurns int    `toml:"max_turns"`
	// ReadOnlyDirs may be read by tools, outside the workspace.
	ReadOnlyDirs []string `toml:"read_only_dirs"`
	// Network lets shell commands reach the network (default false: a
	// prompt-injected model's first move is to send what it read away).
	Network *bool `toml:"network"`
	// Think asks the model to reason: "on", "off", "low", "medium", "high".
	Think string `toml:"think"`
	// SecretPaths are more paths tools and commands may not read when this
	// profile runs (added to the config's own list).
	SecretPaths []string `toml:"secret_paths"`
	// StrictPlan, when set, overrides the config's strict_plan for this
	// profile.
	StrictPlan *bool `toml:"strict_plan"`

	// ProjectTools is the tool list of the project's profile of the same
	// name, which can only narrow Tools: a tool is offered when both lists
	// enable it (ProjectAllows). It is never read from a file as such.
	ProjectTools []string `toml:"-"`
}

// ProjectAllows reports whether the project's tool list lets the tool
// called name be offered (true when the project gave none). Patterns are
// path.Match globs, "!name" removes; a list that begins with a removal
// starts from every tool ("!run_shell_command" alone removes just that).
func (p Profile) ProjectAllows(name string) bool {
	if p.ProjectTools == nil {
		return true
	}
	on := false
	for i, pat := range p.ProjectTools {
		neg := strings.HasPrefix(pat, "!")
		if i == 0 && neg {
			on = true
		}
		if ok, _ := path.Match(strings.TrimPrefix(pat, "!"), name); ok {
			on = !neg
		}
	}
	return on
}

// builtinProfiles are what each mode runs with when the config says
// nothing.
var builtinProfiles = map[string]Profile{
	// Scripts cannot answer questions: reading is free, edits and
	// commands are refused with a note on how to allow them.
	"headless": {Tools: []string{"*"}, ApprovalMode: "default"},
	"tui":      {Tools: []string{"*"}, ApprovalMode: "default"},
	// The desktop app, like the terminal UI, has a person to ask.
	"desktop": {Tools: []string{"*"}, ApprovalMode: "default"},
	// The API offers no shell or edits unless configured.
	"api": {Tools: []string{"@read-only"}, ApprovalMode: "default"},
}

// BuiltinProfile returns the profile a mode ("headless", "tui", "api",
// "desktop")
// runs with when no config names it.
func BuiltinProfile(name string) (Profile, bool) {
	p, ok := builtinProfiles[name]
	p.Tools = slices.Clone(p.Tools)
	return p, ok
}

// SubAgent is a specialised agent the main agent can call as a tool: its
// own prompt, tools, model and turn limit, and optionally a structured
// report checked against a JSON Schema.
type SubAgent struct {
	// Description tells the main model what it is for. Required.
	Description string `toml:"description"`
	// Prompt is its system prompt. Required.
	Prompt string `toml:"prompt"`
	// Tools are patterns over the main agent's tools; empty: the
	// read-only file tools.
	Tools        []string `toml:"tools"`
	Model        string   `toml:"model"`
	MaxTurns     int      `toml:"max_turns"`
	OutputSchema string   `toml:"output_schema"`
	// Scratchpad, above 0, makes it keep notes every that many calls.
	Scratchpad int `toml:"scratchpad"`
}

// MCPServer is an MCP server whose tools Hearth offers.
type MCPServer struct {
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	Cwd     string            `toml:"cwd"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	Timeout Duration          `toml:"timeout"`
	Include []string          `toml:"include_tools"`
	Exclude []string          `toml:"exclude_tools"`
}

// Duration is a time.Duration written as "30s" or "5m" in TOML.
type Duration time.Duration

// UnmarshalText reads "5m".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as 30s or 5m: %w", err)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes "5m0s".
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Paths are where Hearth keeps things.
type Paths struct {
	// ConfigDir holds config.toml, the secrets fallback file and the API
	// token.
	ConfigDir string
	// DataDir holds the session database.
	DataDir string
	// Home is the user's home directory ("" when unknown): "~/" in
	// secret_paths, and messages, use it.
	Home string
}

// DefaultPaths follows the XDG base directory spec: $XDG_CONFIG_HOME/hearth
// and $XDG_DATA_HOME/hearth, with ~/.config and ~/.local/share as defaults.
// HEARTH_HOME puts both under one directory.
func DefaultPaths(getenv func(string) string) (Paths, error) {
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if h := getenv("HEARTH_HOME"); h != "" {
		return Paths{ConfigDir: h, DataDir: h, Home: home}, nil
	}
	cfg, data := getenv("XDG_CONFIG_HOME"), getenv("XDG_DATA_HOME")
	// The XDG spec: a relative path in these variables is invalid and is
	// ignored.
	if !filepath.IsAbs(cfg) {
		cfg = ""
	}
	if !filepath.IsAbs(data) {
		data = ""
	}
	if (cfg == "" || data == "") && home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Paths{}, fmt.Errorf("cannot find the home directory: set HEARTH_HOME: %w", err)
		}
		home = h
	}
	if cfg == "" {
		cfg = filepath.Join(home, ".config")
	}
	if data == "" {
		data = filepath.Join(home, ".local", "share")
	}
	return Paths{ConfigDir: filepath.Join(cfg, "hearth"), DataDir: filepath.Join(data, "hearth"), Home: home}, nil
}

// UserFile is the user's config file.
func (p Paths) UserFile() string { return filepath.Join(p.ConfigDir, "config.toml") }

// Database is the session database.
func (p Paths) Database() string { return filepath.Join(p.DataDir, "hearth.db") }

// ProjectFile is a workspace's config file.
func ProjectFile(workspace string) string {
	return filepath.Join(workspace, ".hearth", "config.toml")
}

// Load reads the user's file then the workspace's (either may be missing).
// The workspace's can only tighten the user's (see project.go): what it asks
// for beyond that is left out and said in Warnings. It is how a workspace
// the user has not trusted is read (untrusted, or read-only).
func Load(paths Paths, workspace string) (*Config, error) {
	return load(paths, workspace, false)
}

// LoadTrusted reads the user's file then the workspace's, for a workspace
// the user trusts: the project's settings apply as the user's own would
// (laid over them: its profiles field by field, MCP servers and sub-agents
// included), except [store], which decides where sessions — and the trust
// itself — are kept, and so is read before any project's file, and
// [pricing], the user's (both ignored, said in Warnings); a provider it
// defines gets none of the user's keys. A project's relative secret_paths
// and read_only_dirs are taken from the workspace.
//
// pin is the ProjectHash the file had when the user trusted the workspace
// (AnyProjectFile: whatever it holds). A file that differs — planted by a
// command, brought by git pull, a re-clone at the same path — is read as
// an untrusted workspace's (it may only tighten), ProjectChanged says so,
// and a warning says how to trust it again.
func LoadTrusted(paths Paths, workspace, pin string) (*Config, error) {
	return load(paths, workspace, true, pin)
}

func load(paths Paths, workspace string, trusted bool, pin ...string) (*Config, error) {
	c := &Config{paths: paths}
	user, err := ReadFile(paths.UserFile())
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		c.merge(user)
		c.Files = append(c.Files, paths.UserFile())
	}
	if workspace != "" {
		pf := ProjectFile(workspace)
		p, hash, warn, err := readProject(workspace)
		c.Warnings = append(c.Warnings, warn...)
		if err != nil {
			return nil, err
		}
		if trusted && len(pin) > 0 && pin[0] != AnyProjectFile && hash != pin[0] {
			trusted, c.ProjectChanged = false, true
			what := "changed since you trusted this folder"
			if pin[0] == "" {
				what = "appeared since you trusted this folder"
			}
			if p != nil {
				c.Warnings = append(c.Warnings, termtext.String(fmt.Sprintf("The project's .hearth/config.toml %s: it is read as an untrusted folder's (it may only tighten your settings) until you trust the folder again: hearth workspaces trust %s trusted", what, workspace)))
			}
		}
		if p != nil {
			if trusted {
				c.Warnings = append(c.Warnings, c.addTrustedProject(p, workspace)...)
			} else {
				c.Warnings = append(c.Warnings, c.addProject(p, workspace)...)
			}
			c.Files = append(c.Files, pf)
		}
	}
	return c, c.check()
}

// ReadFile reads one config file strictly: an unknown key is an error (a
// typo must not be silently ignored), with its line.
func ReadFile(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse reads config text; name is used in errors.
func Parse(name string, data []byte) (*Config, error) {
	var c Config
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) && len(sm.Errors) > 0 {
			var parts []string
			for _, e := range sm.Errors {
				row, col := e.Position()
				parts = append(parts, fmt.Sprintf("%s:%d:%d: unknown setting %q", name, row, col, strings.Join(e.Key(), ".")))
			}
			return nil, errors.New(strings.Join(parts, "; "))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("%s:%d:%d: %s", name, row, col, de.Error())
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &c, nil
}

// merge lays o over c: o's set values win, maps merge by name. Only the
// user's own file is merged so; a project's goes through addProject.
func (c *Config) merge(o *Config) {
	if o.DefaultProvider != "" {
		c.DefaultProvider = o.DefaultProvider
	}
	if o.DefaultProfile != "" {
		c.DefaultProfile = o.DefaultProfile
	}
	if o.Compression != 0 {
		c.Compression = o.Compression
	}
	if o.Store.URL != "" {
		c.Store = o.Store
	}
	if o.Checkpoints.Enabled != nil {
		c.Checkpoints.Enabled = o.Checkpoints.Enabled
	}
	if o.Checkpoints.MaxFileSize != 0 {
		c.Checkpoints.MaxFileSize = o.Checkpoints.MaxFileSize
	}
	if o.StrictPlan {
		c.StrictPlan = true
	}
	if o.Pricing.Currency != "" {
		c.Pricing.Currency = o.Pricing.Currency
	}
	c.Pricing.Models = mergeMap(c.Pricing.Models, o.Pricing.Models)
	c.Providers = mergeMap(c.Providers, o.Providers)
	c.Profiles = mergeMap(c.Profiles, o.Profiles)
	c.MCPServers = mergeMap(c.MCPServers, o.MCPServers)
	c.SubAgents = mergeMap(c.SubAgents, o.SubAgents)
	c.SecretPaths = append(c.SecretPaths, o.SecretPaths...)
}

func mergeMap[V any](a, b map[string]V) map[string]V {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = map[string]V{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// check validates what cannot be checked field by field.
func (c *Config) check() error {
	for name, p := range c.Providers {
		switch p.Kind {
		case "ollama", "openai", "responses", "":
		default:
			return fmt.Errorf("provider %q: kind %q: use ollama, openai for any OpenAI-compatible server, or responses for one with the Responses API", name, p.Kind)
		}
		for m, mc := range p.Models {
			for _, cap := range mc.Capabilities {
				switch cap {
				case "tools", "thinking", "vision", "embedding":
				default:
					return fmt.Errorf("provider %q, model %q: unknown capability %q (tools, thinking, vision, embedding)", name, m, cap)
				}
			}
		}
	}
	if c.DefaultProvider != "" {
		if _, ok := c.Providers[c.DefaultProvider]; !ok {
			return fmt.Errorf("default_provider %q is not among the providers (%s)", c.DefaultProvider, strings.Join(keys(c.Providers), ", "))
		}
	}
	for name, p := range c.Profiles {
		switch p.ApprovalMode {
		case "", "default", "auto_edit", "auto-edit", "yolo", "plan":
		default:
			return fmt.Errorf("profile %q: approval_mode %q: use default, auto_edit, yolo or plan", name, p.ApprovalMode)
		}
		switch p.Think {
		case "", "on", "off", "low", "medium", "high":
		default:
			return fmt.Errorf("profile %q: think %q: use on, off, low, medium or high", name, p.Think)
		}
		if p.Provider != "" {
			if _, ok := c.Providers[p.Provider]; !ok {
				return fmt.Errorf("profile %q: provider %q is not among the providers (%s)", name, p.Provider, strings.Join(keys(c.Providers), ", "))
			}
		}
	}
	for name, m := range c.MCPServers {
		if (m.Command == "") == (m.URL == "") {
			return fmt.Errorf("mcp server %q: give either command (stdio) or url (HTTP)", name)
		}
	}
	for name, sa := range c.SubAgents {
		switch {
		case !tool.ValidName(name): // it becomes a tool name
			return fmt.Errorf("subagent %q: use letters, digits, _ or - in the name", name)
		case name == "codebase_investigator":
			return fmt.Errorf("subagent %q: that name is built in; choose another", name)
		case strings.TrimSpace(sa.Description) == "" || strings.TrimSpace(sa.Prompt) == "":
			return fmt.Errorf("subagent %q: give it a description (for the main model) and a prompt", name)
		}
	}
	if c.Checkpoints.MaxFileSize < 0 {
		return fmt.Errorf("[checkpoints] max_file_size %d: want a size in bytes, e.g. 33554432 for 32 MiB (0: the default, 32 MiB)", c.Checkpoints.MaxFileSize)
	}
	if _, err := c.Pricing.Prices(); err != nil {
		return err
	}
	if c.Compression < 0 || c.Compression >= 1 {
		return fmt.Errorf("compression_threshold %v: want a share of the window between 0 and 1, e.g. 0.7", c.Compression)
	}
	return nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none configured"}
	}
	return out
}
