// Package session keeps conversations: sessions, their messages (with
// reasoning, tool calls and results), token usage, and a durable record of
// every tool run. Store is the interface every mode uses; SQLite (Open) is
// the embedded default.
package session

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/llm"
)

// ErrNotFound is returned for a session id the store does not have (and,
// wrapped in an error that says so, for a workspace it does not know).
var ErrNotFound = errors.New("no such session")

// Session is one conversation.
type Session struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Workspace names the session's workspace by its path (see
	// Workspace); "" is the unknown one.
	Workspace string    `json:"workspace,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// ParentID and ParentCall link a sub-agent's session to the session
	// and tool call that started it.
	ParentID   string `json:"parent_id,omitempty"`
	ParentCall string `json:"parent_call,omitempty"`
	// ForkOf names the session this one was forked from (Fork), and
	// ForkSeq the seq of the last message it took from it.
	ForkOf  string `json:"fork_of,omitempty"`
	ForkSeq int    `json:"fork_seq,omitempty"`
	// Archived hides the session from List (unless asked for archived
	// ones); nothing in it is deleted.
	Archived bool `json:"archived,omitempty"`
	// Counts filled by Get and List.
	MessageCount int `json:"message_count"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Cost sums the cost of the session's priced model calls, in
	// micro-units of the user's currency (see Usage.Cost): nil when none
	// was priced (no call, or none with a price). Unpriced counts its
	// calls without a price: when it is above 0 the cost is incomplete
	// (or, with Cost nil, unknown), and must be shown as such. Like the
	// token counts, they are the session's own calls, not its
	// sub-agents'. Filled by Get and List.
	Cost     *int64 `json:"cost"`
	Unpriced int    `json:"unpriced"`
}

// Message is one stored message.
type Message struct {
	llm.Message
	// Seq orders a session's messages, from 1.
	Seq int `json:"seq"`
	// Tokens is the message's size in tokens: the provider's count where it
	// gave one, else an estimate.
	Tokens int `json:"tokens,omitempty"`
	// Partial marks a reply cut short by an error or a cancel.
	Partial bool `json:"partial,omitempty"`
	// Compacted marks a message replaced, in what the model is sent, by a
	// later summary; Summary marks that summary.
	Compacted bool `json:"compacted,omitempty"`
	Summary   bool `json:"summary,omitempty"`
	// Failure marks a record of why a turn failed ("Provider request
	// failed: …"), kept so that the session shows it; it is an assistant
	// message for readers that show it as one, but it is never sent to a
	// model (History leaves it out).
	Failure bool `json:"failure,omitempty"`
	// Reminder marks a user message that Hearth, not the user, wrote to
	// the model during a turn (the plan's open steps, when the plan is
	// strict): sent to the model as the user's, shown as Hearth's.
	Reminder bool `json:"reminder,omitempty"`
	// Before is, for a summary, the seq of the message it stands before in
	// the conversation: where the turns it replaces were.
	Before    int       `json:"before,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ToolRun is the durable record of one tool call.
type ToolRun struct {
	SessionID string          `json:"session_id"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Args      json.RawMessage `json:"args"`
	OK        bool            `json:"ok"`
	Output    string          `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
	Duration  time.Duration   `json:"duration"`
	At        time.Time       `json:"at"`
}

// Usage is the token count of one model call, and its cost.
type Usage struct {
	SessionID   string `json:"session_id"`
	Model       string `json:"model"`
	InputTokens int    `json:"input_tokens"`
	// CachedInputTokens are the input tokens the provider served from
	// its prompt cache: a part of InputTokens, not more of them.
	CachedInputTokens int `json:"cached_input_tokens,omitempty"`
	OutputTokens      int `json:"output_tokens"`
	// Cost is what the call cost, in micro-units (millionths) of the
	// user's currency (see internal/pricing): an integer, summed exactly.
	// nil means that no price was known: never shown, nor summed, as 0.
	Cost *int64    `json:"cost"`
	At   time.Time `json:"at"`
}

// UsageFilter selects usage rows; zero fields select all.
type UsageFilter struct {
	// Since and Until bound the rows' time: Since <= At < Until.
	Since, Until time.Time
	// SessionID keeps the rows of that session (not its sub-agents').
	SessionID string
	// Model keeps the rows of that model.
	Model string
	// Workspace keeps the rows whose session is in that workspace (""
	// the unknown one); nil: all.
	Workspace *string
}

// UsageTotal sums usage rows that share Key.
type UsageTotal struct {
	// Key is the session id, model, workspace path or day (2006-01-02,
	// UTC), by what was asked; "" for a grand total.
	Key               string `json:"key"`
	Calls             int    `json:"calls"`
	InputTokens       int64  `json:"input_tokens"`
	OutputTokens      int64  `json:"output_tokens"`
	CachedInputTokens int64  `json:"cached_input_tokens"`
	// Cost sums the priced calls' costs, in micro-units.
	Cost int64 `json:"cost"`
	// Unpriced counts the calls with no price: when > 0 the cost is
	// incomplete (unknown when Unpriced == Calls), and shown as such.
	Unpriced int `json:"unpriced"`
}

// The groupings of UsageTotals.
const (
	ByTotal     = ""
	BySession   = "session"
	ByModel     = "model"
	ByWorkspace = "workspace"
	ByDay       = "day"
)

// Trust is what a workspace's own files may do: untrusted (the default
// for a folder never seen: its project config may only tighten), read-only
// (reading only, whatever the approval mode), trusted (its project config
// applies as the user's own would). The store keeps it; the runtime
// enforces the level the loader gives it (hearth.Config.Trust).
type Trust string

// The trust levels.
const (
	TrustUntrusted Trust = "untrusted"
	TrustReadOnly  Trust = "read-only"
	TrustTrusted   Trust = "trusted"
)

// ParseTrust reads a trust level: untrusted, read-only (or readonly,
// read_only) or trusted, in any case.
func ParseTrust(s string) (Trust, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "untrusted":
		return TrustUntrusted, nil
	case "read-only", "readonly", "read_only":
		return TrustReadOnly, nil
	case "trusted":
		return TrustTrusted, nil
	}
	return "", fmt.Errorf("unknown trust level %q: use trusted, read-only or untrusted", s)
}

// Workspace is a folder Hearth has worked in.
type Workspace struct {
	// Path is the folder, absolute with its symlinks resolved (by the
	// caller: the store keeps it as given); the key. "" is the "unknown"
	// workspace of the sessions recorded without one.
	Path string `json:"path"`
	// Name is what the user calls it; by default the folder's base name
	// ("unknown" for "").
	Name  string `json:"name"`
	Trust Trust  `json:"trust"`
	// TrustChosen says the user chose the trust level (hearth workspaces
	// add/trust, a UI's question, the HTTP API with a trust); false: the
	// folder is untrusted by default and a UI should ask.
	TrustChosen bool `json:"trust_chosen"`
	// ConfigHash is the SHA-256 (hex) of the workspace's
	// .hearth/config.toml when the user last chose its trust ("" when it
	// had none): a trusted workspace's project config applies as the
	// user's own only while the file is unchanged (a file that appears or
	// changes later — planted by a command, brought by git pull, a
	// re-clone at the same path — is read as an untrusted folder's until
	// the user trusts it again). Computed by the caller
	// (config.ProjectHash); the store keeps it.
	ConfigHash string `json:"config_hash,omitempty"`
	// CreatedAt is its first use, LastUsed its last.
	CreatedAt time.Time `json:"created_at"`
	LastUsed  time.Time `json:"last_used"`
	// Sessions counts the top-level sessions in it, archived included
	// (filled by Workspace and Workspaces).
	Sessions int `json:"sessions"`
}

// DayUsage sums the usage of one day (UTC).
type DayUsage struct {
	Day          string `json:"day"` // 2006-01-02
	InputTokens  int    `json:"input_tokens"`
	OutputTokens int    `json:"output_tokens"`
}

// ListOptions filter List.
type ListOptions struct {
	// Limit caps the number of sessions (0: all); newest first.
	Limit int
	// Query keeps sessions whose title or messages contain it.
	Query string
	// ParentID lists the children of a session; "" lists top-level ones.
	ParentID string
	// Archived lists the archived sessions instead of the others.
	Archived bool
	// Workspace keeps the sessions of that workspace path ("" the
	// unknown one); nil: all.
	Workspace *string
}

// Checkpoint is a recorded state of a session's workspace: a snapshot of
// its files (Tree, kept outside the workspace by Hearth's checkpoint
// store) taken at a point of the conversation, so that any point maps to
// a state of the files.
type Checkpoint struct {
	// ID orders checkpoints: a store gives each a larger ID than any
	// before it.
	ID        int64  `json:"id"`
	SessionID string `json:"session_id"`
	// Kind says when it was taken: "before" a tool call that may change
	// the workspace, "after" a turn that made such calls, or the state the
	// user had just before a restore ("undo", "redo", "rewind"; Detail
	// says what was restored).
	Kind string `json:"kind"`
	// Turn is the seq of the user message whose turn took it (0 for a
	// restore's).
	Turn int `json:"turn,omitempty"`
	// Seq is the seq of the session's last message when it was taken:
	// the checkpoint is the state of the files after that message.
	Seq int `json:"seq"`
	// CallID and Tool name the call a "before" checkpoint precedes.
	CallID string `json:"call_id,omitempty"`
	Tool   string `json:"tool,omitempty"`
	// Tree names the snapshot in the checkpoint store.
	Tree string `json:"tree"`
	// Workspace is the root of the workspace snapshotted.
	Workspace string `json:"workspace,omitempty"`
	// Detail is the checkpoint store's own record (JSON), kept as given.
	Detail    json.RawMessage `json:"detail,omitempty"`
	CreatedAt time.Time       `json:"created_at"`
}

// The kinds of checkpoint.
const (
	CheckpointBefore = "before"
	CheckpointAfter  = "after"
	CheckpointUndo   = "undo"
	CheckpointRedo   = "redo"
	CheckpointRewind = "rewind"
)

// Store keeps sessions. Implementations are safe for concurrent use.
type Store interface {
	// Create stores a new session; an empty ID gets a fresh one. Its
	// workspace (s.Workspace, "" the unknown one) is touched, in the same
	// transaction: created, untrusted, when it is new.
	Create(ctx context.Context, s *Session) error
	// Get returns a session, or ErrNotFound.
	Get(ctx context.Context, id string) (*Session, error)
	List(ctx context.Context, opts ListOptions) ([]Session, error)
	// Rename sets a session's title.
	Rename(ctx context.Context, id, title string) error
	// Delete removes a session and everything in it.
	Delete(ctx context.Context, id string) error
	// Append adds messages at the end of a session, in one transaction,
	// and returns them with their Seq set.
	Append(ctx context.Context, id string, msgs ...Message) ([]Message, error)
	// Messages returns a session's messages in order.
	Messages(ctx context.Context, id string) ([]Message, error)
	// LiveMessages returns the messages that still make up the history
	// (not compacted): what resuming a session needs.
	LiveMessages(ctx context.Context, id string) ([]Message, error)
	// Compact marks exactly the messages with the given seqs as compacted
	// and adds summary (marked Summary), placed before the message with seq
	// before, in one transaction. It returns the stored summary.
	Compact(ctx context.Context, id string, seqs []int, before int, summary Message) (Message, error)
	RecordUsage(ctx context.Context, u Usage) error
	RecordToolRun(ctx context.Context, r ToolRun) error
	ToolRuns(ctx context.Context, id string) ([]ToolRun, error)
	// UsageByDay sums usage per day since since.
	UsageByDay(ctx context.Context, since time.Time) ([]DayUsage, error)
	// UsageTotals sums the usage f selects, grouped by by: "" (one grand
	// total, Key "", also when nothing is selected), "session", "model",
	// "workspace" (the workspace of the row's session) or "day" (UTC);
	// in the order of Key. The sums are exact (integers; an overflow of
	// int64 is an error, not a wrong figure).
	UsageTotals(ctx context.Context, f UsageFilter, by string) ([]UsageTotal, error)
	// Workspace returns the workspace of path, or an error wrapping
	// ErrNotFound.
	Workspace(ctx context.Context, path string) (*Workspace, error)
	// Workspaces lists the known workspaces, most recently used first.
	Workspaces(ctx context.Context) ([]Workspace, error)
	// AddWorkspace creates the workspace w.Path (trust untrusted when
	// w.Trust is "", name the default when w.Name is "", first and last
	// use now) or, when it exists, changes only what w sets (Name,
	// Trust). A trust given marks it chosen (TrustChosen) and stores
	// w.ConfigHash with it (even ""); without one, TrustChosen and
	// ConfigHash stay as they were (false and "" for a new workspace).
	// w's own TrustChosen is not read. It returns the stored workspace.
	AddWorkspace(ctx context.Context, w Workspace) (Workspace, error)
	// UpdateWorkspace changes what w sets (Name, Trust) of the known
	// workspace w.Path, and returns it as stored; an error wrapping
	// ErrNotFound when the store does not know it (it is never created:
	// a workspace removed meanwhile stays removed). A trust given marks
	// it chosen (TrustChosen) and stores w.ConfigHash with it (even "",
	// which clears it); without one, TrustChosen and ConfigHash stay as
	// they were. w's own TrustChosen is not read. One statement, or one
	// transaction.
	UpdateWorkspace(ctx context.Context, w Workspace) (Workspace, error)
	// TouchWorkspace records a use of the workspace path now, creating it
	// (untrusted, its trust not chosen) if it is new, atomically (one
	// statement, or one transaction): processes that touch a new path at
	// once make one workspace, without error. It never changes a trust,
	// TrustChosen nor ConfigHash ("" for a new one). It returns the
	// stored workspace (its Trust enforced by the runtime from the
	// loader, hearth.Config.Trust).
	TouchWorkspace(ctx context.Context, path string) (Workspace, error)
	// RemoveWorkspace forgets a workspace (an error wrapping ErrNotFound
	// if it is not known). Its sessions stay, and keep their path; a new
	// session there makes it known again, untrusted, its trust not
	// chosen.
	RemoveWorkspace(ctx context.Context, path string) error
	// AddCheckpoint records a checkpoint of a stored session and returns
	// it with its ID and CreatedAt set (ErrNotFound: no such session).
	AddCheckpoint(ctx context.Context, c Checkpoint) (Checkpoint, error)
	// Checkpoints returns a session's checkpoints in the order they were
	// added (by ID).
	Checkpoints(ctx context.Context, id string) ([]Checkpoint, error)
	// SetArchived archives a session (hidden from List unless asked for)
	// or brings it back; nothing in it is deleted.
	SetArchived(ctx context.Context, id string, archived bool) error
	// Fork stores a new session, into (its ID made when empty; its title,
	// provider, model and workspace taken from the session forked when
	// empty), holding a copy of session id's messages up to and including
	// seq through (all when through <= 0), with the same seqs and marks,
	// the records of their tool runs, and the checkpoints taken up to
	// there; into.ForkOf and ForkSeq are set. Its workspace is touched, as
	// by Create. One transaction: the fork is whole or not made.
	Fork(ctx context.Context, id string, through int, into *Session) error
	// Truncate removes a session's messages after seq through, and the
	// checkpoints taken after it, in one transaction (the conversation is
	// rewound there). A message compacted by a summary that is removed is
	// live again.
	Truncate(ctx context.Context, id string, through int) error
	// Lock takes the session for this process until unlock is called.
	// Another holder makes it wait up to the store's lock timeout, then
	// fail with ErrBusy.
	Lock(ctx context.Context, id string) (unlock func(), err error)
	Close() error
}

// ErrBusy is returned by Lock when another process holds the session.
var ErrBusy = errors.New("session is in use")

// NewID returns a fresh session id: short, readable, and unique enough for a
// person's sessions ("s-" and 10 base-32 characters).
func NewID() string {
	const alphabet = "abcdefghjkmnpqrstuvwxyz23456789"
	var b [10]byte
	rand.Read(b[:])
	out := []byte("s-")
	for _, c := range b {
		out = append(out, alphabet[int(c)%len(alphabet)])
	}
	return string(out)
}

// History turns stored messages into the conversation to send a model:
// compacted messages are left out (their summary stands in for them), and
// so are the records of failed turns (Failure), which are Hearth's words,
// not the model's; a tool call without a result (the process died while it
// ran) gets one saying so, because providers refuse an unanswered call.
func History(msgs []Message) []llm.Message {
	msgs = InOrder(msgs)
	var out []llm.Message
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Compacted || m.Failure {
			continue
		}
		out = append(out, m.Message)
		if m.Role != llm.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		// The results of this message's calls follow it directly; ids are
		// only unique within one reply (servers reuse "call_0").
		first := i + 1
		for i+1 < len(msgs) && msgs[i+1].Role == llm.RoleTool {
			i++
			if !msgs[i].Compacted {
				out = append(out, msgs[i].Message)
			}
		}
		results := msgs[first : i+1]
		for _, tc := range m.ToolCalls {
			if !answeredIn(results, tc.ID) {
				out = append(out, llm.Message{Role: llm.RoleTool, ToolCallID: tc.ID, ToolName: tc.Name,
					Content: "Error: not run: the process was interrupted before this call finished"})
			}
		}
	}
	return out
}

func answeredIn(results []Message, id string) bool {
	for _, r := range results {
		if r.ToolCallID == id {
			return true
		}
	}
	return false
}

// InOrder returns msgs in conversation order: a summary goes where the
// messages it replaces were, not at the end where it was stored.
func InOrder(msgs []Message) []Message {
	placed := false
	for _, m := range msgs {
		if m.Summary && m.Before > 0 {
			placed = true
			break
		}
	}
	if !placed {
		return msgs // already in order: no copy, no sort
	}
	out := append([]Message(nil), msgs...)
	key := func(m Message) float64 {
		if m.Summary && m.Before > 0 {
			return float64(m.Before) - 0.5
		}
		return float64(m.Seq)
	}
	sort.SliceStable(out, func(i, j int) bool { return key(out[i]) < key(out[j]) })
	return out
}

// FailureMessage is the record of a turn that failed with err, to append to
// its session: "Provider request failed: …" for a model server's error,
// "The turn failed: …" for another.
func FailureMessage(err error) Message {
	text := "The turn failed: " + err.Error()
	if llm.CodeOf(err) != "" {
		text = "Provider request failed: " + err.Error()
	}
	return Message{Message: llm.Message{Role: llm.RoleAssistant, Content: text}, Failure: true}
}

// Unanswered reports whether a session's last message, records of failures
// aside, is the user's: a turn that failed or was stopped before the model
// answered, which can be run again as it is.
func Unanswered(msgs []Message) bool {
	msgs = InOrder(msgs)
	for i := len(msgs) - 1; i >= 0; i-- {
		switch m := msgs[i]; {
		case m.Failure || m.Compacted:
			continue
		case m.Summary:
			return false
		default:
			return m.Role == llm.RoleUser
		}
	}
	return false
}

// EstimateTokens guesses a text's size in tokens (see llm.EstimateTokens).
func EstimateTokens(s string) int { return llm.EstimateTokens(s) }

// MessageTokens estimates a whole message (see llm.MessageTokens).
func MessageTokens(m llm.Message) int { return llm.MessageTokens(m) }

func errSession(op, id string, err error) error {
	if errors.Is(err, ErrNotFound) {
		return fmt.Errorf("%s: session %s: %w", op, id, err)
	}
	return fmt.Errorf("%s session %s: %w", op, id, err)
}
