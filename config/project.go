package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/sandbox"
)

// A project's config file comes with the code: a cloned repository can ship
// one, and a model's edit could write one. Unless the user trusts the
// workspace (LoadTrusted: then it applies as the user's own, profiles field
// by field, [store] aside, and a provider of the user's it points elsewhere
// does not get the user's stored key), it may therefore only tighten the
// user's settings. Every field has a rule here (TestProjectRules fails for a
// field added without one):
//
//	default_provider, profile provider: ignored. The model server decides
//	    where the code, the user's prompts and what the tools read are sent,
//	    which key is spent, and who answers as the model: a server on
//	    127.0.0.1 may be the project's own dev server. The user picks one
//	    with --provider NAME, or in their own file.
//	profile model: ignored: which model runs is the user's (on a paid
//	    service it is what they pay; a weaker model follows injected
//	    instructions more readily). --model chooses one.
//	default_profile: ignored: it would choose which profile, so which
//	    tools and approvals, a mode runs with.
//	providers: a project may define new ones, used only when the user names
//	    them (--provider NAME): on this machine (a loopback base_url, which an
//	    OpenAI-compatible one must give), without keys (api_key and
//	    api_key_env are dropped; no keychain key nor HEARTH_API_KEY is given
//	    to them), never one of the user's names nor a dialect's (ollama,
//	    openai); their tool_mode applies to them only.
//	strict_plan (top level and in profiles): on wins: it holds the model to
//	    its own plan, and a project may not turn off what the user turned
//	    on.
//	mcp_servers, subagents: ignored: the one starts programs or reaches
//	    servers, the other adds a tool with the project's own prompt.
//	compression_threshold: ignored: it depends on the user's model and
//	    machine.
//	store, checkpoints: ignored: where the user's sessions are kept, and
//	    whether what the agent changes can be taken back (and how large a
//	    file may be to be kept), are the user's. A project turning
//	    checkpoints off would take away undo; a tiny max_file_size would
//	    make its files unrestorable, a huge one fill the user's disk.
//	pricing: ignored: prices and their currency label are the user's (a
//	    project could make a paid model look free, or cheap ones dear).
//	secret_paths (top level and in profiles): added to the user's: more
//	    paths kept from tools only tightens.
//	profiles: merged field by field with the user's profile of the same name
//	    (else the built-in one, else the headless defaults), the stricter
//	    value winning: approval_mode by plan > default > auto_edit > yolo;
//	    network false over true; max_turns the smaller; tools narrow (a tool
//	    runs only if both lists enable it); read_only_dirs never added (inside
//	    the workspace they add nothing, outside they widen); system_prompt
//	    ignored (a project's notes go in HEARTH.md or AGENTS.md, which are
//	    added to the prompt as the project's); think only where the user set
//	    none (it changes how long the model reasons, not what it may do);
//	    strict_plan as above.

// maxProjectConfig bounds a project's config file: it is read whole.
const maxProjectConfig = 1 << 20

// readProject reads the workspace's config file through the workspace's
// rules (ReadProjectFile). A file that may not be read that way (a symlink
// out of the workspace, a FIFO, a huge file) is ignored with a warning; one
// that does not parse is an error, as for the user's file.
func readProject(workspace string) (c *Config, hash string, warn []string, err error) {
	rel := filepath.Join(".hearth", "config.toml")
	data, cut, err := ReadProjectFile(workspace, rel, maxProjectConfig)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", nil, nil
	case err != nil:
		return nil, "", []string{termtext.String(fmt.Sprintf("The project's %s was not read: %s. Remove it, or make it a plain file inside the workspace.", rel, reason(err)))}, nil
	case cut:
		return nil, "", []string{fmt.Sprintf("The project's %s was not read: it is larger than %d KB.", rel, maxProjectConfig>>10)}, nil
	}
	c, err = Parse(ProjectFile(workspace), data)
	return c, hashOf(data), nil, err
}

// AnyProjectFile, given as LoadTrusted's pin, trusts the project's file
// whatever it holds now (--trust, for one run).
const AnyProjectFile = "*"

// ProjectHash is what LoadTrusted's pin compares with: the SHA-256 (hex)
// of the workspace's .hearth/config.toml as Hearth reads it, "" when it has
// none Hearth would read. It is recorded when the user trusts a workspace
// (session.Workspace.ConfigHash).
func ProjectHash(workspace string) string {
	data, cut, err := ReadProjectFile(workspace, filepath.Join(".hearth", "config.toml"), maxProjectConfig)
	if err != nil || cut {
		return ""
	}
	return hashOf(data)
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// reason is err's message without the path a PathError repeats.
func reason(err error) string {
	var pe *sandbox.PathError
	if errors.As(err, &pe) {
		return pe.Rule
	}
	return err.Error()
}

// project is the state of adding a project's file to the user's
// configuration.
type project struct {
	root     string // the workspace, symlinks resolved
	userFile string // for messages: "~/.config/hearth/config.toml"
	warn     []string
}

// note records a sentence for the user about a project setting that
// applies (stripped of control sequences: it quotes the project's text).
func (pr *project) note(w string) {
	w = termtext.String(w)
	if !slices.Contains(pr.warn, w) {
		pr.warn = append(pr.warn, w)
	}
}

// ignored records a project setting left out: asks says what the project
// asked for, why why it may not, fix what the user can do instead (YOURS
// standing for the user's file). The sentence quotes the project's text, so
// it is stripped of control sequences (package termtext): it is printed on
// the user's terminal.
func (pr *project) ignored(asks, why, fix string) {
	w := "The project's .hearth/config.toml " + asks + "; " + why + ", so this was ignored."
	if fix != "" {
		w += " " + strings.ReplaceAll(fix, "YOURS", pr.userFile)
	}
	w = termtext.String(w)
	if !slices.Contains(pr.warn, w) {
		pr.warn = append(pr.warn, w)
	}
}

const tightenOnly = "a project may only tighten your settings"

// addProject adds a project's file p to c (the user's settings) by the
// rules above and returns the warnings for what it left out.
func (c *Config) addProject(p *Config, workspace string) []string {
	root := workspace
	if r, err := filepath.Abs(workspace); err == nil {
		root = r
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	pr := &project{root: root, userFile: tilde(c.paths.UserFile(), c.paths.Home)}

	if p.DefaultProvider != "" {
		pr.ignored(fmt.Sprintf("sets default_provider = %q", p.DefaultProvider),
			"which model server your code and prompts go to is yours to choose",
			fmt.Sprintf("Pass --provider %s, or set default_provider in YOURS, if you trust it.", p.DefaultProvider))
	}
	if p.DefaultProfile != "" {
		pr.ignored(fmt.Sprintf("sets default_profile = %q", p.DefaultProfile),
			"which profile runs, and so what tools may do, is yours to choose",
			fmt.Sprintf("Pass --profile %s, or set default_profile in YOURS, if you trust it.", p.DefaultProfile))
	}
	if p.Compression != 0 {
		pr.ignored(fmt.Sprintf("sets compression_threshold = %v", p.Compression),
			"how much of your model's context window is used is yours to set",
			"Set it in YOURS if you want it.")
	}
	// strict_plan: on wins (it holds the model to its own plan).
	if p.StrictPlan {
		c.StrictPlan = true
	}
	if p.Store.URL != "" {
		pr.ignored("sets [store] url",
			"where your sessions are kept is yours to choose",
			"Set it in YOURS, or HEARTH_DATABASE_URL, if you want it.")
	}
	if p.Checkpoints.Enabled != nil {
		pr.ignored(fmt.Sprintf("sets [checkpoints] enabled = %v", *p.Checkpoints.Enabled),
			"whether what the agent changes can be undone is yours to choose",
			"Set it in YOURS if you want it.")
	}
	if p.Checkpoints.MaxFileSize != 0 {
		pr.ignored(fmt.Sprintf("sets [checkpoints] max_file_size = %d", p.Checkpoints.MaxFileSize),
			"which files can be restored, and how much of your disk checkpoints take, is yours to choose",
			"Set it in YOURS if you want it.")
	}
	if p.Pricing.Currency != "" {
		pr.ignored(fmt.Sprintf("sets [pricing] currency = %q", p.Pricing.Currency),
			"the prices of your models are yours to set",
			"Set it in YOURS if you want it.")
	}
	for _, name := range sortedKeys(p.Pricing.Models) {
		pr.ignored(fmt.Sprintf("sets a price for the model %q", name),
			"the prices of your models are yours to set",
			"Set it in YOURS ([pricing.models]) if you want it.")
	}
	for _, name := range sortedKeys(p.MCPServers) {
		m := p.MCPServers[name]
		what := "the program " + strings.Join(append([]string{m.Command}, m.Args...), " ")
		if m.URL != "" {
			what = m.URL
		}
		pr.ignored(fmt.Sprintf("asks to start the MCP server %q (%s)", name, what),
			"a project may not start programs or connect tools to servers",
			"Add it to YOURS (hearth mcp add) if you trust it.")
	}
	for _, name := range sortedKeys(p.SubAgents) {
		pr.ignored(fmt.Sprintf("defines the sub-agent %q", name),
			"a project may not add tools, and a sub-agent is one, with the project's own prompt",
			"Copy it to YOURS if you trust it.")
	}
	for _, name := range sortedKeys(p.Providers) {
		if pv, ok := pr.provider(name, p.Providers[name], c.Providers); ok {
			if c.Providers == nil {
				c.Providers = map[string]Provider{}
			}
			c.Providers[name] = pv
		}
	}
	c.SecretPaths = append(c.SecretPaths, pr.secretPaths(p.SecretPaths)...)
	for _, name := range sortedKeys(p.Profiles) {
		base, ok := c.Profiles[name]
		if !ok {
			if base, ok = BuiltinProfile(name); !ok {
				base, _ = BuiltinProfile("headless")
			}
		}
		if c.Profiles == nil {
			c.Profiles = map[string]Profile{}
		}
		c.Profiles[name] = pr.profile(name, base, p.Profiles[name])
	}
	return pr.warn
}

// addTrustedProject lays a trusted project's file p over c (the user's
// settings) as the user's own file is laid (merge), with the project's
// relative paths taken from the workspace; only [store] is left out (see
// LoadTrusted). It returns the warnings for what it left out.
func (c *Config) addTrustedProject(p *Config, workspace string) []string {
	root := workspace
	if r, err := filepath.Abs(workspace); err == nil {
		root = r
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	pr := &project{root: root, userFile: tilde(c.paths.UserFile(), c.paths.Home)}
	if p.Store.URL != "" {
		pr.ignored("sets [store] url",
			"where your sessions are kept, and so which workspaces you trust, is read before any project's config",
			"Set it in YOURS, or HEARTH_DATABASE_URL, if you want it.")
		p.Store = Store{}
	}
	if p.Pricing.Currency != "" || len(p.Pricing.Models) > 0 {
		pr.ignored("sets [pricing]", "the prices of your models, and their currency, are yours to set", "Set them in YOURS if you want them.")
		p.Pricing = Pricing{}
	}
	p.SecretPaths = pr.secretPaths(p.SecretPaths)
	// Providers: used (this folder is trusted), but none of the user's
	// keys goes to a server the project names — not the keychain's, not
	// the environment's, not a variable it names — unless it is the
	// user's own provider unchanged.
	for _, name := range sortedKeys(p.Providers) {
		pv, mine := p.Providers[name], c.Providers[name]
		_, ours := c.Providers[name]
		switch {
		case name == "ollama" || name == "openai" || name == "responses":
			pr.ignored(fmt.Sprintf("defines a provider named %q", name),
				"that name means the dialect (--provider "+name+"), whose stored key is yours", "Define it in YOURS under another name if you want it.")
			delete(p.Providers, name)
			if p.DefaultProvider == name && !ours {
				p.DefaultProvider = "" // it named the provider left out
			}
			continue
		case ours && pv.BaseURL == mine.BaseURL && pv.Kind == mine.Kind && pv.APIKey == "" && pv.APIKeyEnv == "":
			continue // the user's own, as they defined it
		}
		if pv.APIKey != "" || pv.APIKeyEnv != "" {
			what := "an API key"
			if pv.APIKeyEnv != "" {
				what = "the key in $" + pv.APIKeyEnv
			}
			pr.ignored(fmt.Sprintf("gives the provider %q %s", name, what),
				"a project's provider gets none of your keys, even in a folder you trust",
				fmt.Sprintf("Pass --api-key, or define the provider in YOURS, if %q should have a key.", name))
			pv.APIKey, pv.APIKeyEnv = "", ""
		}
		if ours {
			pr.note(fmt.Sprintf("The project's .hearth/config.toml points your provider %q at %s: it is used (you trust this folder), but none of your keys is sent there.", name, orDefault(pv.BaseURL)))
		}
		pv.FromProject = true
		p.Providers[name] = pv
	}
	// Profiles: what the project sets wins, field by field, over the
	// user's profile of the same name (else the built-in one); what it
	// leaves out stays the user's.
	for _, name := range sortedKeys(p.Profiles) {
		prof := p.Profiles[name]
		prof.SecretPaths = pr.secretPaths(prof.SecretPaths)
		var dirs []string
		for _, d := range prof.ReadOnlyDirs {
			if d != "" && !filepath.IsAbs(d) && !strings.HasPrefix(d, "~") {
				d = filepath.Join(root, d)
			}
			dirs = append(dirs, d)
		}
		prof.ReadOnlyDirs = dirs
		base, ok := c.Profiles[name]
		if !ok {
			base, _ = BuiltinProfile(name)
		}
		if c.Profiles == nil {
			c.Profiles = map[string]Profile{}
		}
		c.Profiles[name] = overlay(base, prof)
	}
	p.Profiles = nil
	c.merge(p)
	return pr.warn
}

// overlay lays a trusted project's profile p over base: each field p sets
// wins; the lists of paths are added to base's.
func overlay(base, p Profile) Profile {
	out := base
	out.ReadOnlyDirs = append(slices.Clone(base.ReadOnlyDirs), p.ReadOnlyDirs...)
	out.SecretPaths = append(slices.Clone(base.SecretPaths), p.SecretPaths...)
	if p.Tools != nil {
		out.Tools = slices.Clone(p.Tools)
	}
	if p.ApprovalMode != "" {
		out.ApprovalMode = p.ApprovalMode
	}
	if p.SystemPrompt != "" {
		out.SystemPrompt = p.SystemPrompt
	}
	if p.Provider != "" {
		out.Provider = p.Provider
	}
	if p.Model != "" {
		out.Model = p.Model
	}
	if p.MaxTurns > 0 {
		out.MaxTurns = p.MaxTurns
	}
	if p.Network != nil {
		out.Network = p.Network
	}
	if p.Think != "" {
		out.Think = p.Think
	}
	if p.StrictPlan != nil {
		out.StrictPlan = p.StrictPlan
	}
	return out
}

// orDefault names a base URL for a message ("its default address" for "").
func orDefault(u string) string {
	if u == "" {
		return "its default address"
	}
	return u
}

// provider returns a project's provider as it may be kept, if it may.
func (pr *project) provider(name string, pv Provider, user map[string]Provider) (Provider, bool) {
	if _, ok := user[name]; ok {
		pr.ignored(fmt.Sprintf("redefines your provider %q", name),
			"a project may not change where your providers send your code, nor where their keys go",
			"Change it in YOURS if you mean to.")
		return pv, false
	}
	if name == "ollama" || name == "openai" || name == "responses" {
		pr.ignored(fmt.Sprintf("defines a provider named %q", name),
			"that name means the dialect (--provider "+name+"), which a project may not redirect",
			"Define it in YOURS under another name if you trust it.")
		return pv, false
	}
	kind := pv.Kind
	if kind == "" {
		kind = "ollama"
	}
	switch {
	case pv.BaseURL == "" && (kind == "openai" || kind == "responses"):
		pr.ignored(fmt.Sprintf("defines the provider %q of kind %s without a base_url", name, kind),
			"that would be api.openai.com or your OPENAI_BASE_URL, and a project may only name model servers on this machine",
			"Define it in YOURS if you trust it.")
		return pv, false
	case !isLoopback(pv.BaseURL):
		pr.ignored(fmt.Sprintf("defines the provider %q at %s", name, pv.BaseURL),
			"a project may only name model servers on this machine",
			"Define it in YOURS if you trust it.")
		return pv, false
	}
	if pv.APIKey != "" || pv.APIKeyEnv != "" {
		what := "an API key"
		if pv.APIKeyEnv != "" {
			what = "the key in $" + pv.APIKeyEnv
		}
		pr.ignored(fmt.Sprintf("gives the provider %q %s", name, what),
			"a project may not read keys from your environment nor bring its own",
			fmt.Sprintf("Store the key with `hearth auth set %s`, or define the provider in YOURS, if you trust it.", name))
		pv.APIKey, pv.APIKeyEnv = "", ""
	}
	pv.FromProject = true
	return pv, true
}

// profile merges the project's profile p into base, the stricter value
// winning field by field.
func (pr *project) profile(name string, base, p Profile) Profile {
	out := base
	out.Tools = slices.Clone(base.Tools)
	out.ReadOnlyDirs = slices.Clone(base.ReadOnlyDirs)
	out.SecretPaths = slices.Clone(base.SecretPaths)
	in := fmt.Sprintf(" in profile %q", name)

	// tools: narrow only.
	if p.Tools != nil {
		out.ProjectTools = slices.Clone(p.Tools)
		if len(p.Tools) == 0 {
			out.ProjectTools = []string{"!*"} // tools = []: none
		}
	}
	// approval_mode: the stricter.
	if p.ApprovalMode != "" {
		mine, theirs := normMode(base.ApprovalMode), normMode(p.ApprovalMode)
		if _, err := agent.ParseMode(theirs); err != nil {
			out.ApprovalMode = p.ApprovalMode // a typo: check says so, as for the user's file
		} else if strictness(theirs) >= strictness(mine) {
			out.ApprovalMode = theirs
		} else {
			pr.ignored(fmt.Sprintf("asks for approval_mode %q%s, looser than your %q", p.ApprovalMode, in, mine), tightenOnly,
				fmt.Sprintf("Pass --approval-mode %s, or set it in YOURS, if you trust it.", theirs))
		}
	}
	// network: false wins.
	if p.Network != nil {
		switch {
		case !*p.Network:
			f := false
			out.Network = &f
		case base.Network != nil && !*base.Network:
			pr.ignored("asks to let commands reach the network"+in+", which you turned off", tightenOnly,
				"Set network = true in YOURS if you trust it.")
		}
	}
	// strict_plan: on wins.
	if p.StrictPlan != nil {
		switch {
		case *p.StrictPlan:
			t := true
			out.StrictPlan = &t
		case base.StrictPlan != nil && *base.StrictPlan:
			pr.ignored("turns strict_plan off"+in+", which you turned on", tightenOnly, "Set strict_plan = false in YOURS if you want it.")
		}
	}
	// max_turns: the smaller.
	if p.MaxTurns > 0 {
		mine := base.MaxTurns
		if mine <= 0 {
			mine = agent.DefaultMaxTurns
		}
		if p.MaxTurns <= mine {
			out.MaxTurns = p.MaxTurns
		} else {
			pr.ignored(fmt.Sprintf("asks for max_turns = %d%s, more than your %d", p.MaxTurns, in, mine), tightenOnly,
				fmt.Sprintf("Pass --max-turns %d, or set it in YOURS, if you want it.", p.MaxTurns))
		}
	}
	// read_only_dirs: never added.
	for _, d := range p.ReadOnlyDirs {
		if pr.inside(d) {
			continue // the workspace is readable already
		}
		pr.ignored(fmt.Sprintf("asks to read %s (read_only_dirs%s)", d, in), tightenOnly,
			"Add it to YOURS if you trust it.")
	}
	// system_prompt: the user's stays.
	if p.SystemPrompt != "" {
		pr.ignored("sets a system prompt"+in,
			"the system prompt is yours (a project's notes belong in HEARTH.md or AGENTS.md, which are added to it)",
			"Copy it to YOURS if you want it.")
	}
	// provider, model: the user's choice.
	if p.Provider != "" {
		pr.ignored(fmt.Sprintf("asks to use the provider %q%s", p.Provider, in),
			"which model server your code and prompts go to is yours to choose",
			fmt.Sprintf("Pass --provider %s, or set it in YOURS, if you trust it.", p.Provider))
	}
	if p.Model != "" {
		pr.ignored(fmt.Sprintf("asks to use the model %q%s", p.Model, in),
			"which model runs is yours to choose",
			fmt.Sprintf("Pass --model %s, or set it in YOURS, if you want it.", p.Model))
	}
	// think: where the user said nothing.
	if p.Think != "" {
		switch base.Think {
		case "":
			out.Think = p.Think
		case p.Think:
		default:
			pr.ignored(fmt.Sprintf("asks for think = %q%s, where yours is %q", p.Think, in, base.Think),
				"how the model reasons is yours to choose", "")
		}
	}
	// secret_paths: added.
	out.SecretPaths = append(out.SecretPaths, pr.secretPaths(p.SecretPaths)...)
	return out
}

// inside reports whether a project's path names something inside the
// workspace (relative paths are taken from it).
func (pr *project) inside(d string) bool {
	if strings.HasPrefix(d, "~") {
		return false
	}
	if !filepath.IsAbs(d) {
		d = filepath.Join(pr.root, d)
	}
	d = filepath.Clean(d)
	if real, err := filepath.EvalSymlinks(d); err == nil {
		d = real
	}
	return sandbox.Within(d, pr.root)
}

// secretPaths makes a project's secret_paths absolute: relative ones are
// taken from the workspace; "~/" ones are left for SecretLocations.
func (pr *project) secretPaths(ps []string) []string {
	var out []string
	for _, p := range ps {
		switch {
		case p == "":
		case p == "~" || strings.HasPrefix(p, "~/"), filepath.IsAbs(p):
			out = append(out, p)
		default:
			out = append(out, filepath.Join(pr.root, p))
		}
	}
	return out
}

// normMode spells an approval mode as agent.ParseMode returns it ("" is
// default).
func normMode(m string) string {
	if mode, err := agent.ParseMode(m); err == nil {
		return string(mode)
	}
	return m
}

// strictness orders the approval modes: plan > default > auto_edit > yolo.
// An unknown mode ranks lowest (check refuses it later).
func strictness(m string) int {
	switch agent.Mode(m) {
	case agent.ModePlan:
		return 3
	case agent.ModeDefault:
		return 2
	case agent.ModeAutoEdit:
		return 1
	}
	return 0
}

// isLoopback reports whether a server address names this machine ("" is
// the dialect's default: Ollama's is local).
func isLoopback(raw string) bool {
	s := raw
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch h := u.Hostname(); h {
	case "localhost", "127.0.0.1", "::1", "":
		return true
	default:
		return strings.HasPrefix(h, "127.")
	}
}

// tilde writes p below home as ~/….
func tilde(p, home string) string {
	if home != "" && sandbox.Within(p, home) && p != home {
		return "~" + string(filepath.Separator) + strings.TrimPrefix(p, home+string(filepath.Separator))
	}
	return p
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
