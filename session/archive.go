package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"
)

// ErrExists is returned (wrapped) by Import for a session whose id the
// store already has: a migration run again skips what it copied before.
var ErrExists = errors.New("a session with this id exists")

// Archive is a whole session as stored: the session (archived or not, the
// fork it is, if one), every message (with its seq, flags, tokens and
// time, the compacted ones and the summaries included), the token usage of
// its model calls (with their cost), the record of its tool runs and its
// checkpoints, oldest first; and, in Children, the same for the sessions
// of the sub-agents it started (whose own sub-agents are in theirs).
//
// The counts of Session (MessageCount, InputTokens, OutputTokens, Cost,
// Unpriced) are what the store said when it was exported; Import does not
// read them. Neither does it read the IDs of Checkpoints: they are the
// store's own (see Archiver). The usage keeps each call's cost (nil: no
// price known) and cached input tokens.
//
// An archive written before sessions had checkpoints, forks and an
// archived mark (without those fields) is imported as a session with none;
// one written before usage had a cost, as calls without a price.
type Archive struct {
	Session     Session
	Messages    []Message
	Usage       []Usage
	ToolRuns    []ToolRun
	Checkpoints []Checkpoint
	// Children are the sessions of the sub-agents this session started,
	// oldest first; each one's Session.ParentID is this Session.ID.
	Children []Archive
}

// Archiver moves whole sessions between stores, exactly: what Import
// writes reads back as what Export read, ids, seqs and times included, but
// for the IDs of checkpoints. A checkpoint's ID is unique in its store, so
// Import gives each a new one (larger than any the store gave before), in
// the order of the archive: the checkpoints of a session keep their order.
type Archiver interface {
	// Export reads a session and its sub-agents' sessions, all of it as
	// of one moment, or returns ErrNotFound.
	Export(ctx context.Context, id string) (*Archive, error)
	// Import writes a session and everything in it, its children after
	// it, in one transaction: it is all there, or none of it is. It keeps
	// the ids, seqs, flags, tokens, tool calls' JSON, images, times,
	// usage, tool runs and checkpoints (but their IDs) as they are. A
	// session (or child) whose id the store has fails with an error
	// wrapping ErrExists. Each session's workspace path is kept, and the
	// workspace made known: created, untrusted (its trust not chosen, no
	// ConfigHash), with the session's times as its first and last use
	// when it is new; else its first use moved back to the session's
	// creation, its last use on to the session's update, when they are
	// earlier or later. An import never changes a known workspace's name,
	// trust, TrustChosen or ConfigHash.
	Import(ctx context.Context, a *Archive) error
	// SessionIDs lists the top-level sessions (those without a parent),
	// oldest first.
	SessionIDs(ctx context.Context) ([]string, error)
	// ImportWorkspace writes the record of a workspace, as another
	// store's Workspaces lists it (its Sessions is not read), in one
	// statement or transaction. A path the store does not know is
	// created as the record says: name (a default one stays the
	// default), trust (untrusted when it has none), whether the user
	// chose it (TrustChosen), the hash of its project config then
	// (ConfigHash), first and last use. A path the store knows keeps its
	// own record: its name, trust, TrustChosen and ConfigHash are never
	// changed, whatever the record says (an import neither raises nor
	// lowers a trust); only its first use moves back, and its
	// last use on, to the record's when they are earlier or later. It
	// returns the workspace as stored, and whether it was new.
	//
	// Workspaces come with no session: a whole store's are copied by
	// listing them (Workspaces) and importing each, before its sessions,
	// whose Import then finds them known (a workspace made by a session's
	// Import is untrusted, its trust not chosen, and would keep that).
	ImportWorkspace(ctx context.Context, w Workspace) (Workspace, bool, error)
}

// Count returns how many sessions (a's and its children's, at any depth)
// and how many messages in all the archive holds.
func (a *Archive) Count() (sessions, messages int) {
	sessions, messages = 1, len(a.Messages)
	for i := range a.Children {
		s, m := a.Children[i].Count()
		sessions += s
		messages += m
	}
	return sessions, messages
}

// maxDepth bounds how deep sub-agents' sessions nest in an archive, so that
// a damaged store (a loop of parents) cannot make Export recurse forever.
const maxDepth = 64

// checkImport says what in an archive's session cannot be written under
// parent ("" for the archive itself) before anything is.
func checkImport(a *Archive, parent string) error {
	se := &a.Session
	if se.ID == "" {
		return errors.New("import: a session without an id")
	}
	if parent != "" && se.ParentID != parent {
		return fmt.Errorf("import session %s: its parent is %q, not the session %s it is archived in", se.ID, se.ParentID, parent)
	}
	for _, u := range a.Usage {
		if u.SessionID != "" && u.SessionID != se.ID {
			return fmt.Errorf("import session %s: a usage record of session %s", se.ID, u.SessionID)
		}
	}
	for _, r := range a.ToolRuns {
		if r.SessionID != "" && r.SessionID != se.ID {
			return fmt.Errorf("import session %s: a tool run of session %s", se.ID, r.SessionID)
		}
	}
	for i := range a.Checkpoints {
		c := &a.Checkpoints[i]
		if c.SessionID != "" && c.SessionID != se.ID {
			return fmt.Errorf("import session %s: a checkpoint of session %s", se.ID, c.SessionID)
		}
		if err := checkDetail(c); err != nil {
			return fmt.Errorf("import session %s: checkpoint %d: %w", se.ID, c.ID, err)
		}
	}
	return nil
}

// storedCalls and storedImages encode a message's tool calls and images
// as both stores keep them ("" for none).
func storedCalls(m *Message) string {
	if len(m.ToolCalls) == 0 {
		return ""
	}
	return marshalCalls(m.ToolCalls)
}

func storedImages(m *Message) string {
	if len(m.Images) == 0 {
		return ""
	}
	b, _ := json.Marshal(m.Images)
	return string(b)
}

// workspaceUse is what an import does to a workspace: its first use no
// later than created, its last no earlier than used.
type workspaceUse struct {
	path          string
	created, used time.Time
}

// archiveWorkspaces returns the workspaces of an archive's sessions (its
// children's included), each with the earliest creation and the latest
// update of its sessions, in the order of their paths (so that imports
// that run at once take the workspaces' rows in one order).
func archiveWorkspaces(a *Archive) []workspaceUse {
	uses := map[string]*workspaceUse{}
	var walk func(a *Archive)
	walk = func(a *Archive) {
		se := &a.Session
		u := uses[se.Workspace]
		if u == nil {
			uses[se.Workspace] = &workspaceUse{path: se.Workspace, created: se.CreatedAt, used: se.UpdatedAt}
		} else {
			if se.CreatedAt.Before(u.created) {
				u.created = se.CreatedAt
			}
			if se.UpdatedAt.After(u.used) {
				u.used = se.UpdatedAt
			}
		}
		for i := range a.Children {
			walk(&a.Children[i])
		}
	}
	walk(a)
	out := make([]workspaceUse, 0, len(uses))
	for _, u := range uses {
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}
