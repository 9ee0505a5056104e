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
// database removed by Close). NewServer serves the same agent, host tools
// included, over the HTTP API of package server.
package hearth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/ollama"
	"github.com/hearth-agent/hearth/llm/openai"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/server"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
	"github.com/hearth-agent/hearth/tool/builtin"
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
	EventError            = agent.EventError
	EventDone             = agent.EventDone
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

// readOnlyBuiltins are the built-in tools the API profile offers when the
// agent has a workspace.
var readOnlyBuiltins = []string{"read_file", "read_many_files", "list_directory", "glob", "grep_search"}

// Config says how to build an Agent.
type Config struct {
	// Provider is the model server. Required.
	Provider llm.Provider
	// Model names the model. Required.
	Model string
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
	// Store keeps the sessions. Nil: a temporary database that Close
	// removes.
	Store session.Store
	// Titles asks the model for a title for each new session (an extra,
	// short model call); otherwise the title is the start of the first
	// message.
	Titles bool
	// Logger receives the agent's logs (nil: none).
	Logger *slog.Logger
}

// Profile is what the model may do.
type Profile struct {
	// Name appears in errors.
	Name string
	// Tools enables tools by name or glob ("query_*"); "!name" removes
	// one. A pattern that matches no tool is an error. Nil: every host
	// tool, and the read-only built-in tools when there is a Workspace.
	Tools []string
	// Mode says which calls need approval (empty: ModeDefault).
	Mode Mode
	// System is the system prompt (empty: none).
	System string
	// MaxTurns bounds the model calls of one turn (0: 40).
	MaxTurns int
	// Think asks the model to reason first (nil: the server's default).
	Think *llm.Think
}

// Agent is an agent with its tools and sessions. It is safe for concurrent
// use: many sessions may run turns at once, one turn at a time each.
type Agent struct {
	core      *agent.Agent // what every turn copies
	store     session.Store
	ownStore  *session.SQLite // the temporary store, closed by Close
	tmpDir    string
	builtins  *builtin.Set
	workspace string
	titles    bool
	log       *slog.Logger

	mu        sync.Mutex
	closed    bool
	busy      map[string]bool             // sessions running a turn
	approvals map[string]*agent.Approvals // "allow always" answers, by session
}

// New builds an agent.
func New(c Config) (*Agent, error) {
	if c.Provider == nil {
		return nil, errors.New("hearth: no provider: set Config.Provider (hearth.Ollama(\"\") for a local Ollama)")
	}
	if c.Model == "" {
		return nil, errors.New("hearth: no model: set Config.Model (Provider.Models lists what the server has)")
	}
	mode, err := agent.ParseMode(string(c.Profile.Mode))
	if err != nil {
		return nil, fmt.Errorf("hearth: profile %s: %w", c.Profile.Name, err)
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Agent{titles: c.Titles, log: log, busy: map[string]bool{}, approvals: map[string]*agent.Approvals{}}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()

	all, err := tool.NewRegistry()
	if err != nil {
		return nil, err
	}
	var defaults []string
	if c.Workspace != "" {
		ws, err := sandbox.New(c.Workspace)
		if err != nil {
			return nil, fmt.Errorf("hearth: workspace: %w", err)
		}
		a.workspace = ws.Root()
		if a.builtins, err = builtin.New(builtin.Options{Workspace: ws, Log: log}); err != nil {
			return nil, fmt.Errorf("hearth: %w", err)
		}
		for _, t := range a.builtins.Tools {
			if err := all.Add(t); err != nil {
				return nil, fmt.Errorf("hearth: %w", err)
			}
		}
		defaults = append(defaults, readOnlyBuiltins...)
	}
	for _, t := range c.Tools {
		if b, isBad := t.(badTool); isBad {
			return nil, fmt.Errorf("hearth: %w", b.err)
		}
		if err := all.Add(t); err != nil {
			return nil, fmt.Errorf("hearth: host tool %s: %w", t.Spec().Name, err)
		}
		defaults = append(defaults, t.Spec().Name)
	}
	patterns := c.Profile.Tools
	if patterns == nil {
		patterns = defaults
	}
	name := c.Profile.Name
	if name == "" {
		name = "api"
	}
	reg, err := all.Select(tool.Profile{Name: name, Tools: patterns})
	if err != nil {
		return nil, fmt.Errorf("hearth: %w", err)
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
	a.core = &agent.Agent{Provider: c.Provider, Model: c.Model, System: c.Profile.System, Tools: reg, Mode: mode,
		MaxTurns: c.Profile.MaxTurns, Think: c.Profile.Think, Logger: log}
	ok = true
	return a, nil
}

// Tools returns the names of the tools the model gets, in order.
func (a *Agent) Tools() []string { return a.core.Tools.Names() }

// Store returns where the sessions are kept (to list, rename or delete
// them).
func (a *Agent) Store() session.Store { return a.store }

// NewServer returns the HTTP API (package server) for this agent: its
// model, profile, host tools and sessions. o says how it is guarded (a
// Token is required: server.NewToken makes one); its Agent and Store are
// set here. Close the server before the agent.
func (a *Agent) NewServer(o server.Options) (*server.Server, error) {
	core := *a.core
	o.Agent, o.Store = &core, a.store
	if o.Workspace == "" {
		o.Workspace = a.workspace
	}
	if o.Log == nil {
		o.Log = a.log
	}
	return server.New(o)
}

// Close releases the tools and, if the agent made it, removes the temporary
// session store. Turns still running fail.
func (a *Agent) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	a.mu.Unlock()
	var errs []error
	if a.builtins != nil {
		errs = append(errs, a.builtins.Close())
	}
	if a.ownStore != nil {
		errs = append(errs, a.ownStore.Close())
	}
	if a.tmpDir != "" {
		errs = append(errs, os.RemoveAll(a.tmpDir))
	}
	return errors.Join(errs...)
}

// acquire marks a session busy; false if it already runs a turn here.
func (a *Agent) acquire(id string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return errors.New("hearth: the agent is closed")
	case a.busy[id]:
		return fmt.Errorf("hearth: session %s is running another turn: wait for it to end: %w", id, session.ErrBusy)
	}
	a.busy[id] = true
	return nil
}

func (a *Agent) release(id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.busy, id)
}

func (a *Agent) approvalsOf(id string) *agent.Approvals {
	a.mu.Lock()
	defer a.mu.Unlock()
	ap := a.approvals[id]
	if ap == nil {
		ap = &agent.Approvals{}
		a.approvals[id] = ap
	}
	return ap
}
