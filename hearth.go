// Package hearth embeds a local-first AI agent in a Go program.
//
// Create an Agent with a model provider, a profile (which tools the model
// gets, which calls need approval) and host tools — plain Go functions whose
// argument schema is inferred — then run turns and range over their events:
//
//	bot, err := hearth.New(hearth.Config{
//		Provider: hearth.Ollama(""), // OLLAMA_HOST, or 127.0.0.1:11434
//		Model:    "qwen3:4b",
//		Tools: []hearth.Tool{
//			hearth.Func("get_app_config", "Return the app's configuration", hearth.ReadOnly, getAppConfig),
//			hearth.Func("set_feature_flag", "Turn a feature flag on or off", hearth.Edit, setFlag),
//		},
//	})
//	if err != nil {
//		return err
//	}
//	defer bot.Close()
//
//	turn := bot.NewTurn(ctx, hearth.Request{
//		Message: "Why is checkout slow?",
//		Context: "The user is on /admin/orders, order 1042 selected.", // seen by the model, not kept
//	})
//	for ev := range turn.Events() {
//		switch ev.Type {
//		case hearth.EventTextDelta:
//			fmt.Print(ev.Text)
//		case hearth.EventApprovalRequired:
//			turn.Approve(ev.ID, hearth.Allow) // or turn.Deny(ev.ID, "not in production")
//		}
//	}
//	res, err := turn.Result() // res.SessionID continues the conversation
//
// A turn runs in the goroutine that ranges over its events: nothing is left
// running when the loop ends, and breaking out of it cancels the turn.
// Events are Hearth's event contract (docs/events.md), the same stream the
// command line, the terminal UI and the HTTP API show.
//
// Sessions are kept in a session.Store (Config.Store; by default a temporary
// database removed by Close). What belongs to one session — its approvals
// and live approval mode, its record of what the model has read, its
// built-in tools and their temp directory, its MCP attachment, the lock that
// lets one turn run at a time — is held by a Session that the Agent owns
// (Agent.Session). Package server serves the same agent, host tools
// included, over HTTP (server.New(agent, options)); Hearth's own command
// line, terminal UI and HTTP API are built on this package the same way.
package hearth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/checkpoint"
	"github.com/hearth-agent/hearth/internal/conversation"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/mcp"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/edit"
	"github.com/hearth-agent/hearth/tool/shell"
)

// Event is one item of a turn's stream; its JSON form is Hearth's event
// contract (docs/events.md).
type Event = agent.Event

// EventType names an event.
type EventType = agent.EventType

// The event types, in the order a turn can produce them.
const (
	EventSession          = agent.EventSession
	EventThinkingStart    = agent.EventThinkingStart
	EventThinkingDelta    = agent.EventThinkingDelta
	EventThinkingEnd      = agent.EventThinkingEnd
	EventTextDelta        = agent.EventTextDelta
	EventToolCall         = agent.EventToolCall
	EventApprovalRequired = agent.EventApprovalRequired
	EventToolOutput       = agent.EventToolOutput
	EventToolResult       = agent.EventToolResult
	EventUsage            = agent.EventUsage
	EventCompressed       = agent.EventCompressed
	EventCheckpoint       = agent.EventCheckpoint
	EventRestore          = agent.EventRestore
	EventPlan             = agent.EventPlan
	EventError            = agent.EventError
	EventDone             = agent.EventDone
)

// ToolMode says how a model is offered tools (Config.ToolMode).
type ToolMode = prompted.Mode

// The tool modes.
const (
	ToolModeAuto     = prompted.Auto
	ToolModeNative   = prompted.Native
	ToolModePrompted = prompted.Prompted
)

// Plan is the checklist the model keeps of a task with several steps (the
// update_plan tool); an EventPlan carries it whole each time it changes.
type Plan = agent.Plan

// PlanStep is one step of a Plan.
type PlanStep = agent.PlanStep

// PlanStatus is the state of a PlanStep.
type PlanStatus = agent.PlanStatus

// The states of a step.
const (
	PlanPending    = agent.PlanPending
	PlanInProgress = agent.PlanInProgress
	PlanDone       = agent.PlanDone
	PlanSkipped    = agent.PlanSkipped // given up, with a reason
)

// DoneReason says why a turn ended.
type DoneReason = agent.DoneReason

// Why a turn ends.
const (
	DoneStop      = agent.DoneStop
	DoneMaxTurns  = agent.DoneMaxTurns
	DoneCancelled = agent.DoneCancelled
	DoneError     = agent.DoneError
)

// ErrorCode classifies the failure an error event reports (Event.Code);
// docs/events.md lists the codes.
type ErrorCode = agent.ErrorCode

// The error codes: a provider's failure ("provider_" and its llm.Code), the
// agent's own, and a run's time limit.
const (
	CodeProviderUnreachable    = agent.CodeProviderUnreachable    // nothing answered at the server's address
	CodeProviderAuth           = agent.CodeProviderAuth           // the server refused the credentials
	CodeProviderModelNotFound  = agent.CodeProviderModelNotFound  // the server does not have the model
	CodeProviderContextLength  = agent.CodeProviderContextLength  // the prompt does not fit the model's window
	CodeProviderRateLimited    = agent.CodeProviderRateLimited    // the server asked to slow down
	CodeProviderServer         = agent.CodeProviderServer         // the server failed
	CodeProviderBadResponse    = agent.CodeProviderBadResponse    // the server's answer could not be understood
	CodeProviderInvalidRequest = agent.CodeProviderInvalidRequest // the server rejected the request itself
	CodeProviderCancelled      = agent.CodeProviderCancelled      // the provider's call was cancelled
	CodeToolLoop               = agent.CodeToolLoop               // the model repeated the same call
	CodeUnreadableCalls        = agent.CodeUnreadableCalls        // the model kept writing calls that could not be read
	CodeTimeout                = agent.CodeTimeout                // the run's time limit stopped it
	CodeUsage                  = agent.CodeUsage                  // a run could not start: flags, environment, config
	CodeSessionBusy            = agent.CodeSessionBusy            // the session runs another turn
	CodeAgentError             = agent.CodeAgentError             // any other failure
)

// Decision answers an approval.
type Decision = agent.Decision

// The answers to an approval.
const (
	Deny        = agent.Deny
	Allow       = agent.Allow
	AllowAlways = agent.AllowAlways // this tool, for the rest of the session
)

// Mode is the approval mode: which calls need approval.
type Mode = agent.Mode

// The approval modes.
const (
	ModeDefault  = agent.ModeDefault  // ask before edits and commands
	ModeAutoEdit = agent.ModeAutoEdit // ask before commands
	ModeYolo     = agent.ModeYolo     // ask for nothing
	ModePlan     = agent.ModePlan     // read-only tools only
)

// Tool is something the model can call.
type Tool = tool.Tool

// Kind says what a tool may do, which decides whether its calls need
// approval.
type Kind = tool.Kind

// The kinds of tool.
const (
	ReadOnly = tool.ReadOnly // only looks: never needs approval
	Edit     = tool.Edit     // changes things: needs approval in ModeDefault
	Execute  = tool.Execute  // runs programs: needs approval unless ModeYolo
)

// Func makes a host tool from a Go function. Its argument schema is
// inferred from A, a struct: fields become properties named by their json
// tags, fields without omitempty are required, and a `jsonschema:"…"` tag
// describes the property to the model:
//
//	type queryArgs struct {
//		SQL   string `json:"sql" jsonschema:"one read-only SELECT statement"`
//		Limit int    `json:"limit,omitempty" jsonschema:"at most this many rows"`
//	}
//	hearth.Func("query_database", "Run a read-only SQL query", hearth.ReadOnly,
//		func(ctx context.Context, a queryArgs) (string, error) { … })
//
// The string returned is what the model sees; an error goes back to the
// model as the call's result, so it should say what to do instead. A type
// the schema cannot describe makes New fail.
func Func[A any](name, description string, kind Kind, fn func(ctx context.Context, args A) (string, error)) Tool {
	t, err := tool.Func(name, description, kind, fn)
	if err != nil {
		return badTool{err}
	}
	return t
}

// badTool carries Func's error to New.
type badTool struct{ err error }

func (b badTool) Spec() llm.ToolSpec { return llm.ToolSpec{} }
func (b badTool) Kind() Kind         { return ReadOnly }
func (b badTool) Run(context.Context, tool.Call) (tool.Result, error) {
	return tool.Result{}, b.err
}

// Ollama returns a provider for an Ollama server at baseURL ("" for
// OLLAMA_HOST, or 127.0.0.1:11434).
func Ollama(baseURL string) llm.Provider {
	if baseURL == "" {
		baseURL = ollama.HostFromEnv(os.Getenv)
	}
	return ollama.New(ollama.Options{BaseURL: baseURL})
}

// OpenAI returns a provider for an OpenAI-compatible server (vLLM, LM
// Studio, llama.cpp's server, OpenAI) at baseURL, such as
// http://localhost:8000/v1; apiKey may be empty.
func OpenAI(baseURL, apiKey string) llm.Provider {
	return openai.New(openai.Options{BaseURL: baseURL, APIKey: apiKey})
}

// SubAgentSpec describes a sub-agent the model can call as a tool: its own
// prompt, tools chosen from the agent's, an optional output schema.
type SubAgentSpec = agent.SubAgentSpec

// MCPServer is an MCP server whose tools the agent offers.
type MCPServer = mcp.ServerConfig

// MCPStatus is the state of one MCP server.
type MCPStatus = mcp.ServerStatus

// MCPState names where an MCP server is in its life.
type MCPState = mcp.State

// The states of an MCP server.
const (
	MCPIdle     = mcp.StateIdle
	MCPStarting = mcp.StateStarting
	MCPReady    = mcp.StateReady
	MCPFailed   = mcp.StateFailed  // it could not start (Error says why)
	MCPCrashed  = mcp.StateCrashed // it stopped after it was ready
	MCPClosed   = mcp.StateClosed
)

// ErrBusy is wrapped by the error of a turn whose session runs another.
var ErrBusy = session.ErrBusy

// Config says how to build an Agent. Hearth's own command line builds one
// from flags, the environment and config files; a program embedding Hearth
// fills it in itself. The same Config behaves the same either way.
type Config struct {
	// Provider is the model server. Required. Chat is all it must do; one
	// that is also an llm.ModelDescriber tells the agent its model's window
	// (see ContextLength).
	Provider llm.Provider
	// Model names the model. Required unless every turn names one
	// (Request.Model).
	Model string
	// ToolMode says how the model is offered tools: natively
	// (ToolModeNative), described in the system prompt with its calls read
	// from its text (ToolModePrompted: for models that cannot take tools),
	// or chosen per model (ToolModeAuto, the default): prompted when the
	// server says the model cannot call tools (Ollama's capabilities) or
	// refused them once, else native (docs/tool-protocol.md).
	ToolMode ToolMode
	// ToolModeMemory remembers across runs the models whose server
	// refused native tools (prompted.NewFileMemory; nil: for the Agent's
	// life).
	ToolModeMemory prompted.Memory
	// Tools are the host tools, made with Func (or any Tool).
	Tools []Tool
	// Profile decides which tools the model gets and what needs approval.
	// The zero Profile is the API profile: every host tool, and the
	// read-only built-in tools when there is a Workspace.
	Profile Profile
	// Workspace, when set, is a directory the built-in tools (read_file,
	// grep_search, and — if the profile enables them — edit, write_file,
	// run_shell_command) work in; they cannot reach outside it. Empty: no
	// built-in tools.
	Workspace string
	// Sandbox says what commands and file tools may reach besides the
	// workspace.
	Sandbox Sandbox
	// SubAgents are sub-agents offered as tools (besides
	// codebase_investigator, which comes with a Workspace); the profile
	// selects them by name like any tool.
	SubAgents []SubAgentSpec
	// MCPServers are started in the background by New; their tools are
	// offered as they become ready (the profile selects them as
	// "server__tool"), and a session's first turn waits briefly for those
	// still starting.
	MCPServers []MCPServer
	// MCPDir is where MCP servers run and keep images (default: the
	// Workspace).
	MCPDir string
	// Getenv reads the environment for MCP servers' configured variables
	// (nil: the process's).
	Getenv func(string) string
	// Store keeps the sessions. Nil: a temporary database that Close
	// removes.
	Store session.Store
	// Checkpoints is the directory where snapshots of the workspace's
	// files are kept, so that what the agent changes can be undone, redone
	// and rewound (Session.Restore): outside the workspace; each workspace
	// gets its own store below it. Empty: a temporary directory that Close
	// removes (undo works while the Agent lives). Hearth's command line
	// uses its data directory's checkpoints/.
	Checkpoints string
	// NoCheckpoints turns checkpoints off: nothing the agent changes can
	// be undone.
	NoCheckpoints bool
	// CheckpointMaxFileSize is the size over which a file's content is
	// not kept by a checkpoint (0: 32 MiB); such a file cannot be
	// restored, and the checkpoint says so.
	CheckpointMaxFileSize int64
	// ContextLength is the model's window in tokens, for compression. 0:
	// asked of the server before the first turn (llm.Describe; a provider
	// that cannot say leaves it unknown, and nothing is compressed
	// automatically).
	ContextLength int
	// CompressAt is the share of the window at which older turns are
	// summarised (0: agent.DefaultCompressAt; negative: never).
	CompressAt float64
	// Logger receives the agent's logs (nil: none).
	Logger *slog.Logger
	// Trust is how far the user trusts the Workspace's own files, which
	// the runtime enforces where effects happen, whatever the prompt says:
	// TrustUntrusted refuses approval modes above ModeDefault (New, and
	// Session.SetMode); TrustReadOnly offers only tools that read, with
	// run_shell_command confined to a read-only workspace, and makes every
	// file tool refuse to write (whatever the approval mode, ModeYolo
	// included); TrustTrusted and "" (the embedding program decides) limit
	// nothing. What a project's config file may do at each level is the
	// loader's (internal/loader); Hearth's command line always sets it.
	Trust Trust
	// Prices are what models cost, by model name (the name a turn runs,
	// Config.Model or Request.Model): each model call's usage is stored
	// with its cost — a turn's, its sub-agents' and its tools' (the edit
	// fixer), a title's and a summary's, each in the session it serves —
	// in micro-units (millionths) of the user's currency,
	// computed in integers (see Price). A model without a price has no
	// cost: it is unknown, counted in Result.Unpriced and in the store's
	// totals, never 0. New checks every price.
	Prices map[string]Price
}

// Trust is how far the user trusts a workspace's own files (see
// Config.Trust): untrusted, read-only or trusted.
type Trust = session.Trust

// The trust levels.
const (
	TrustUntrusted = session.TrustUntrusted
	TrustReadOnly  = session.TrustReadOnly
	TrustTrusted   = session.TrustTrusted
)

// ErrNotTrusted is wrapped by the error of New and Session.SetMode when the
// approval mode asked for is above what the workspace's trust allows.
var ErrNotTrusted = errors.New("not allowed by the workspace's trust level")

// Price is what a model costs per million tokens, as decimal strings in
// the user's currency (at most 6 places: "0.15", "3"). Input and Output
// are required; CachedInput prices the input tokens that the server serves
// from its prompt cache ("": as Input).
type Price = pricing.Price

// Sandbox says what the built-in tools may reach outside the workspace.
type Sandbox struct {
	// Network lets commands reach the network. Off by default: a
	// prompt-injected model's first move is to send what it read away.
	Network bool
	// Secrets are files and directories neither the file tools nor
	// commands may read, besides the usual ones (SSH and cloud keys, the
	// keyrings, Hearth's own config and data: sandbox.SecretLocations).
	Secrets []string
	// ReadOnly are directories outside the workspace the file tools may
	// read.
	ReadOnly []string
	// Home is the user's home directory, where the usual secret locations
	// are (empty: $HOME).
	Home string
	// TempRoot is where each session's private temp directory is made
	// (empty: the system's).
	TempRoot string
}

// Profile is what the model may do.
type Profile struct {
	// Name appears in errors.
	Name string
	// Tools enables tools by name or glob ("query_*"); "!name" removes
	// one. A pattern that matches no tool is an error. Nil: every host
	// tool, and the read-only built-in tools when there is a Workspace.
	Tools []string
	// Allow, if set, narrows what Tools selects: a tool it refuses is not
	// offered (a project's own tool list, which may only remove tools).
	Allow func(t Tool) bool
	// Mode says which calls need approval (empty: ModeDefault).
	Mode Mode
	// System is the system prompt (empty: none; DefaultSystemPrompt is
	// the one Hearth's command line uses).
	System string
	// MaxTurns bounds the model calls of one turn (0: 40).
	MaxTurns int
	// Think asks the model to reason first (nil: the server's default).
	Think *llm.Think
	// StrictPlan sends the model back once per turn when it answers while
	// the plan it wrote or changed in the turn still has open steps (an
	// EventPlan with a Reminder says so, and the session keeps the
	// reminder as Hearth's message).
	StrictPlan bool
}

// DefaultSystemPrompt is the system prompt of Hearth's coding agent for a
// workspace: what the tools are for and how to use them well.
func DefaultSystemPrompt(workspace string) string {
	return agent.DefaultSystemPrompt(workspace, time.Now())
}

// Agent is an agent with its tools and sessions. It is safe for concurrent
// use: many sessions may run turns at once, one turn at a time each.
type Agent struct {
	c         Config
	core      agent.Agent // the configuration each session's agent starts from
	mode      Mode
	patterns  []string
	ws        *sandbox.Workspace
	shell     shell.Config
	mcp       *mcp.Manager
	names     []string        // the tools the model gets (MCP servers' aside)
	kinds     map[string]Kind // by name
	specs     map[string]llm.ToolSpec
	sandbox   sandbox.Status
	store     session.Store
	ownStore  *session.SQLite // the temporary store, closed by Close
	tmpDir    string
	cpRoot    string             // where the checkpoint stores are ("": none)
	cpDir     string             // the temporary checkpoints, removed by Close
	keeper    *checkpoint.Keeper // nil: no checkpoints
	log       *slog.Logger
	idleTools time.Duration
	rates     map[string]pricing.Rates // Config.Prices, read
	// withheldNames are the tools a read-only workspace keeps from the
	// model (Config.Trust); roShell says why its commands are withheld
	// too ("" when the kernel holds them to reading).
	withheldNames []string
	roShell       string

	spare *sessionTools // built by New, for the first session

	ctxMu     sync.Mutex
	ctxLength int  // learned from the server
	ctxAsked  bool // asked once

	mu       sync.Mutex
	closed   bool
	sessions map[string]*Session
}

// New builds an agent. It checks the whole configuration — the profile's
// tool patterns against the tools there are, the sub-agents, the MCP
// servers — and starts the MCP servers.
func New(c Config) (*Agent, error) {
	if c.Provider == nil {
		return nil, errors.New("hearth: no provider: set Config.Provider (hearth.Ollama(\"\") for a local Ollama)")
	}
	mode, err := agent.ParseMode(string(c.Profile.Mode))
	if err != nil {
		return nil, fmt.Errorf("hearth: profile %s: %w", c.Profile.Name, err)
	}
	toolMode, err := prompted.ParseMode(string(c.ToolMode))
	if err != nil {
		return nil, fmt.Errorf("hearth: %w", err)
	}
	if c.Trust != "" {
		if c.Trust, err = session.ParseTrust(string(c.Trust)); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
	}
	if err := allowedMode(c.Trust, mode); err != nil {
		return nil, fmt.Errorf("hearth: profile %s: %w", c.Profile.Name, err)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if toolMode != prompted.Native {
		// Requests without tools (titles, summaries) pass straight
		// through; those with tools reach the model as its mode says.
		c.Provider = prompted.New(c.Provider, prompted.Options{Mode: toolMode, Memory: c.ToolModeMemory, Logger: log})
	}
	if c.Profile.Name == "" {
		c.Profile.Name = "api"
	}
	a := &Agent{c: c, mode: mode, log: log, sessions: map[string]*Session{}, idleTools: 10 * time.Minute}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	for _, t := range c.Tools {
		if b, isBad := t.(badTool); isBad {
			return nil, fmt.Errorf("hearth: %w", b.err)
		}
		if err := tool.CheckSchema(t.Spec().Parameters); err != nil {
			return nil, fmt.Errorf("hearth: tool %s: %w", t.Spec().Name, err)
		}
	}
	for _, sp := range c.SubAgents {
		if err := sp.Validate(); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(c.Prices)) {
		r, err := c.Prices[m].Rates()
		if err != nil {
			return nil, fmt.Errorf("hearth: the price of model %q: %w", m, err)
		}
		if a.rates == nil {
			a.rates = map[string]pricing.Rates{}
		}
		a.rates[m] = r
	}
	var defaults []string
	if c.Workspace != "" {
		ws, err := sandbox.New(c.Workspace, c.Sandbox.ReadOnly...)
		if err != nil {
			return nil, fmt.Errorf("hearth: workspace: %w", err)
		}
		home := c.Sandbox.Home
		if home == "" {
			home = os.Getenv("HOME")
		}
		extra := slices.Clone(c.Sandbox.Secrets)
		if !c.NoCheckpoints {
			// The snapshots are out of reach of commands and file tools:
			// nothing a confined command does can plant what a restore
			// writes back.
			if a.cpRoot = c.Checkpoints; a.cpRoot == "" {
				if a.cpRoot, err = os.MkdirTemp("", "hearth-checkpoints-"); err != nil {
					return nil, fmt.Errorf("hearth: a temporary checkpoint store: %w", err)
				}
				a.cpDir = a.cpRoot
			}
			if a.cpRoot, err = filepath.Abs(a.cpRoot); err != nil {
				return nil, fmt.Errorf("hearth: checkpoints: %w", err)
			}
			extra = append(extra, filepath.Join(a.cpRoot, "checkpoints"))
		}
		secrets := sandbox.SecretLocations(home, extra...)
		a.ws = ws.WithSecrets(secrets)
		if c.Trust == TrustReadOnly {
			// The file tools and the shell's policy and sandbox take the
			// workspace as read-only from it.
			a.ws = a.ws.WithReadOnlyRoot(readOnlyReason(a.ws.Root()))
			a.roShell = readOnlyShell()
		}
		a.shell = shell.Config{Secrets: secrets, DenyNetwork: !c.Sandbox.Network, TempRoot: c.Sandbox.TempRoot, Home: c.Sandbox.Home, Logger: log}
		defaults = append(defaults, "@read-only") // the read-only built-in tools
	}
	for _, t := range c.Tools {
		defaults = append(defaults, t.Spec().Name)
	}
	a.patterns = c.Profile.Tools
	if a.patterns == nil {
		a.patterns = defaults
	}
	a.core = agent.Agent{Provider: c.Provider, Model: c.Model, System: c.Profile.System, Mode: mode,
		MaxTurns: c.Profile.MaxTurns, Think: c.Profile.Think, ContextLength: c.ContextLength, CompressAt: c.CompressAt, Logger: log,
		StrictPlan: c.Profile.StrictPlan, Withheld: a.withheld}

	if len(c.MCPServers) > 0 {
		dir := c.MCPDir
		if dir == "" && a.ws != nil {
			dir = a.ws.Root()
		}
		if a.mcp, err = mcp.New(mcp.Options{Servers: c.MCPServers, Dir: dir, Getenv: c.Getenv, Logger: log}); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
		a.core.Prepare = a.mcp.Prepare
	}

	a.store = c.Store
	if a.store == nil {
		if a.tmpDir, err = os.MkdirTemp("", "hearth-sessions-"); err != nil {
			return nil, fmt.Errorf("hearth: a temporary session store: %w", err)
		}
		if a.ownStore, err = session.Open(context.Background(), filepath.Join(a.tmpDir, "hearth.db")); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
		a.store = a.ownStore
	}

	if err := a.openCheckpoints(); err != nil {
		return nil, err
	}

	// The profile is checked now, against a set of tools built as a
	// session's would be, so that a mistake fails New, not the first turn.
	probe, err := a.buildTools(tool.NewSeen())
	if err != nil {
		return nil, err
	}
	a.names = probe.agent.Tools.Names()
	a.withheldNames = probe.withheld
	a.kinds, a.specs = map[string]Kind{}, map[string]llm.ToolSpec{}
	for _, n := range a.names {
		t, _ := probe.agent.Tools.Get(n)
		a.kinds[n], a.specs[n] = t.Kind(), t.Spec()
	}
	if probe.set != nil {
		a.sandbox = probe.set.Sandbox()
	}
	// The first session to run a turn takes these tools: building them
	// twice would double a headless run's start-up.
	a.spare = probe
	if a.mcp != nil {
		a.mcp.Start()
	}
	ok = true
	return a, nil
}

// Tools returns the names of the tools the model gets, in order; an MCP
// server's come last, once it is ready.
func (a *Agent) Tools() []string {
	names := slices.Clone(a.names)
	if a.mcp != nil {
		for _, t := range a.mcp.Tools() {
			n := t.Spec().Name
			if !slices.Contains(names, n) && a.offers(t) {
				names = append(names, n)
			}
		}
	}
	return names
}

// Store returns where the sessions are kept (to list, rename or delete
// them).
func (a *Agent) Store() session.Store { return a.store }

// Provider returns the model server.
func (a *Agent) Provider() llm.Provider { return a.c.Provider }

// Model returns the model that answers unless a turn names another.
func (a *Agent) Model() string { return a.c.Model }

// Busy reports whether a turn runs in any of the agent's sessions.
func (a *Agent) Busy() bool {
	a.mu.Lock()
	sessions := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		sessions = append(sessions, s)
	}
	a.mu.Unlock()
	for _, s := range sessions {
		if s.Busy() {
			return true
		}
	}
	return false
}

// Trust returns how far the workspace is trusted (Config.Trust).
func (a *Agent) Trust() Trust { return a.c.Trust }

// Mode returns the profile's approval mode, the one each session starts
// in.
func (a *Agent) Mode() Mode { return a.mode }

// Workspace returns the workspace's resolved path ("" without one).
func (a *Agent) Workspace() string {
	if a.ws == nil {
		return ""
	}
	return a.ws.Root()
}

// Sandbox says how commands are confined on this system (the zero Status
// without a workspace).
func (a *Agent) Sandbox() sandbox.Status { return a.sandbox }

// MCP returns the MCP servers' manager (nil when none is configured), for
// their status, resources and prompts.
func (a *Agent) MCP() *mcp.Manager { return a.mcp }

// MCPStatus returns the state of each MCP server (nil when none is
// configured).
func (a *Agent) MCPStatus() []MCPStatus {
	if a.mcp == nil {
		return nil
	}
	return a.mcp.Status()
}

// ModelInfo asks the server about the agent's model (llm.Describe: an
// *llm.Error wrapping errors.ErrUnsupported when the provider cannot
// describe models).
func (a *Agent) ModelInfo(ctx context.Context) (*llm.ModelInfo, error) {
	return llm.Describe(ctx, a.c.Provider, a.c.Model)
}

// Close ends the sessions (their tools and temp directories), stops the MCP
// servers and, if the agent made it, removes the temporary session store.
// Turns still running fail.
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	sessions := a.sessions
	a.sessions = nil
	spare := a.spare
	a.spare = nil
	a.mu.Unlock()
	var errs []error
	if spare != nil {
		errs = append(errs, spare.close())
	}
	for _, s := range sessions {
		errs = append(errs, s.closeTools())
	}
	if a.mcp != nil {
		errs = append(errs, a.mcp.Close())
	}
	if a.ownStore != nil {
		errs = append(errs, a.ownStore.Close())
	}
	if a.tmpDir != "" {
		errs = append(errs, os.RemoveAll(a.tmpDir))
	}
	if a.keeper != nil {
		errs = append(errs, a.keeper.Store().Close())
	}
	if a.cpDir != "" {
		errs = append(errs, os.RemoveAll(a.cpDir))
	}
	return errors.Join(errs...)
}

// contextLength is the model's window: configured, else asked of the
// server once (best effort: a server that cannot say leaves it unknown,
// and nothing is compressed automatically).
func (a *Agent) contextLength(ctx context.Context, model string) int {
	if a.c.ContextLength > 0 || a.c.CompressAt < 0 {
		return a.c.ContextLength
	}
	a.ctxMu.Lock()
	defer a.ctxMu.Unlock()
	if !a.ctxAsked && model == a.c.Model && model != "" {
		a.ctxAsked = true
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		if mi, err := llm.Describe(ctx, a.c.Provider, model); err == nil {
			a.ctxLength = mi.ContextLength
		} else {
			a.log.Debug("the model's context window is unknown", "model", model, "error", err)
		}
	}
	if model != a.c.Model {
		return 0
	}
	return a.ctxLength
}

// fixer is the edit tool's helper for a search string that missed.
func (a *Agent) fixer() edit.Fixer {
	if a.c.Model == "" {
		return nil
	}
	// Its calls are recorded in the session whose turn made the edit call.
	return &edit.ModelFixer{Provider: a.c.Provider, Model: a.c.Model, OnUsage: conversation.RecordUsage}
}

// ToolSpec returns what the model sees of the tool of this name, and its
// kind (false: no such tool).
func (a *Agent) ToolSpec(name string) (llm.ToolSpec, Kind, bool) {
	if sp, ok := a.specs[name]; ok {
		return sp, a.kinds[name], true
	}
	if a.mcp != nil {
		for _, t := range a.mcp.Tools() {
			if t.Spec().Name == name {
				return t.Spec(), t.Kind(), true
			}
		}
	}
	return llm.ToolSpec{}, 0, false
}

// Files returns the workspace as the file tools see it (the user's secret
// locations hidden), for a front end that reads files on the user's behalf
// (a message's @file attachments); nil without a workspace.
func (a *Agent) Files() *sandbox.Workspace { return a.ws }
