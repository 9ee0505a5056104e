package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/hearth-agent/hearth/session"
)

// Keeper joins a workspace's snapshots (Store) to the session store that
// records where in each conversation they were taken: it takes checkpoints
// for a session, and plans and makes its undos, redos and rewinds.
type Keeper struct {
	store    *Store
	sessions session.Store
	log      *slog.Logger

	mu     sync.Mutex
	forced map[string][]string // per session: the paths its edit tools named
}

// NewKeeper returns a Keeper of the snapshots in cp for the sessions of st.
func NewKeeper(cp *Store, st session.Store, log *slog.Logger) *Keeper {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keeper{store: cp, sessions: st, log: log, forced: map[string][]string{}}
}

// Store returns the snapshots' store.
func (k *Keeper) Store() *Store { return k.store }

// takeDetail is what a checkpoint taken before a call or after a turn
// records besides its tree.
type takeDetail struct {
	Files       int      `json:"files"`
	Bytes       int64    `json:"bytes"`
	Stored      int64    `json:"stored"`
	TooLarge    []string `json:"too_large,omitempty"`
	Unsupported []string `json:"unsupported,omitempty"`
	// Force lists the paths this checkpoint kept even if ignored.
	Force []string `json:"force,omitempty"`
}

// TakeOptions say what a checkpoint may rely on.
type TakeOptions struct {
	// Force names paths kept even when ignored: the files the call about
	// to run names (Store.Snapshot).
	Force []string
	// Base, with Changed, says that since the snapshot Base only the
	// paths Changed may have changed (the last call was an edit tool's):
	// only they are looked at (Store.SnapshotPaths).
	Base    string
	Changed []string
}

// Take snapshots the workspace and records it as checkpoint c of its
// session (c.Tree and c.Workspace are set here).
func (k *Keeper) Take(ctx context.Context, c session.Checkpoint, o TakeOptions) (session.Checkpoint, Snapshot, error) {
	// No prune or restore between the snapshot and its record.
	unlock, err := k.store.lock(true)
	if err != nil {
		return c, Snapshot{}, err
	}
	defer unlock()
	force := o.Force
	all, err := k.forcedFor(ctx, c.SessionID, force)
	if err != nil {
		return c, Snapshot{}, err
	}
	var snap Snapshot
	if o.Base != "" && len(o.Changed) > 0 {
		snap, err = k.store.SnapshotPaths(ctx, o.Base, append(slices.Clone(o.Changed), force...), all)
	} else {
		snap, err = k.store.Snapshot(ctx, all)
	}
	if err != nil {
		return c, snap, err
	}
	c.Tree, c.Workspace = snap.Tree, k.store.root
	c.Detail, _ = json.Marshal(takeDetail{Files: snap.Files, Bytes: snap.Bytes, Stored: snap.Stored, TooLarge: snap.TooLarge, Unsupported: snap.Unsupported, Force: force})
	rec, err := k.sessions.AddCheckpoint(context.WithoutCancel(ctx), c)
	if err != nil {
		return c, snap, fmt.Errorf("recording the checkpoint: %w", err)
	}
	return rec, snap, nil
}

// forcedFor adds force to the paths kept for the session, and returns them
// all (read from its records the first time).
func (k *Keeper) forcedFor(ctx context.Context, id string, force []string) ([]string, error) {
	k.mu.Lock()
	known, ok := k.forced[id]
	k.mu.Unlock()
	if !ok {
		recs, err := k.sessions.Checkpoints(ctx, id)
		if err != nil && !isNotFound(err) {
			return nil, err
		}
		known = forcedPaths(recs)
	}
	all := append(append([]string(nil), known...), force...)
	slices.Sort(all)
	all = slices.Compact(all)
	k.mu.Lock()
	if len(k.forced) > 256 {
		clear(k.forced)
	}
	k.forced[id] = all
	k.mu.Unlock()
	return all, nil
}

func isNotFound(err error) bool { return errors.Is(err, session.ErrNotFound) }

// records returns the session's checkpoints of this workspace.
func (k *Keeper) records(ctx context.Context, id string) ([]session.Checkpoint, error) {
	all, err := k.sessions.Checkpoints(ctx, id)
	if err != nil {
		return nil, err
	}
	var out []session.Checkpoint
	other := ""
	for _, c := range all {
		if c.Workspace == "" || c.Workspace == k.store.root {
			out = append(out, c)
		} else {
			other = c.Workspace
		}
	}
	if len(out) == 0 && other != "" {
		return nil, fmt.Errorf("session %s changed files in %s, not in %s: run this in that workspace", id, other, k.store.root)
	}
	return out, nil
}

// Plan works out op for session id (through: the message to rewind to;
// to: the checkpoint to rewind to, instead). It snapshots the files as
// they are now, and changes nothing.
func (k *Keeper) Plan(ctx context.Context, id string, op Op, through int, to int64) (*Plan, error) {
	recs, err := k.records(ctx, id)
	if err != nil {
		return nil, err
	}
	// The files as they are, walked whole: what a restore compares with
	// and keeps must not rely on what inotify reported.
	gen := k.store.Generation()
	snap, err := k.store.SnapshotAll(ctx, forcedPaths(recs))
	if err != nil {
		return nil, err
	}
	now, err := k.store.Files(snap.Tree)
	if err != nil {
		return nil, err
	}
	p, err := plan(recs, snap.Tree, now, k.store.Files, k.store.lookup, k.store.ignoredInTree, k.store.treeOf, k.store.ignoredIn, op, through, to, k.store.opts.MaxFileSize)
	if err != nil {
		return nil, err
	}
	p.SessionID, p.generation = id, gen
	msgs, err := k.sessions.Messages(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		p.Seq = max(p.Seq, m.Seq)
	}
	return p, nil
}

// forcedPaths returns the paths the session's edit tools named: kept in
// every snapshot, ignored or not (the agent changed them).
func forcedPaths(recs []session.Checkpoint) []string {
	var out []string
	for _, c := range recs {
		var d struct {
			Force []string `json:"force"`
		}
		if len(c.Detail) > 0 && json.Unmarshal(c.Detail, &d) == nil {
			out = append(out, d.Force...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Resolve says what to do with a plan's conflicts: paths someone changed
// after the agent did.
type Resolve struct {
	// Overwrite restores the conflicting paths too (what was there is kept
	// in the restore's checkpoint).
	Overwrite bool
	// Keep lists conflicting paths to leave as they are.
	Keep []string
}

// ConflictError is the error of a restore that would overwrite work done
// after the agent's, when the caller did not say what to do with it.
type ConflictError struct {
	Op    Op
	Paths []string
}

func (e *ConflictError) Error() string {
	shown := e.Paths
	more := ""
	if len(shown) > 5 {
		shown, more = shown[:5], fmt.Sprintf(" and %d more", len(e.Paths)-5)
	}
	return fmt.Sprintf("%s would overwrite changes made after the agent's to %s%s", e.Op, strings.Join(shown, ", "), more)
}

// Outcome is a restore made.
type Outcome struct {
	// Plan is what was planned.
	*Plan
	// Checkpoint is the restore's own record: its tree is the files as
	// they were just before (nothing is lost by a restore).
	Checkpoint session.Checkpoint `json:"checkpoint"`
	// Restored says which paths were restored, and which could not be.
	Restored Restored `json:"restored"`
	// Kept lists the conflicting paths left as they were.
	Kept []string `json:"kept,omitempty"`
}

// Apply makes a plan. A plan with conflicts that r does not resolve
// changes nothing and returns a *ConflictError.
func (k *Keeper) Apply(ctx context.Context, p *Plan, r Resolve) (*Outcome, error) {
	keep := map[string]bool{}
	for _, c := range r.Keep {
		keep[c] = true
	}
	var open []string
	for _, c := range p.Conflicts {
		if !keep[c] && !r.Overwrite {
			open = append(open, c)
		}
	}
	if len(open) > 0 {
		return nil, &ConflictError{Op: p.Op, Paths: open}
	}
	out := &Outcome{Plan: p}
	unrestorable := map[string]bool{}
	for _, u := range p.Unrestorable {
		unrestorable[u.Path] = true
	}
	var paths []string
	for _, c := range p.Changes {
		switch {
		case keep[c.Path] && slices.Contains(p.Conflicts, c.Path):
			out.Kept = append(out.Kept, c.Path)
		case unrestorable[c.Path]:
		default:
			paths = append(paths, c.Path)
		}
	}
	d := detail{Target: p.Target, Paths: paths, Kept: out.Kept, Turn: p.Turn, Through: p.Through, To: p.To, Undone: p.Undone}
	rec := session.Checkpoint{SessionID: p.SessionID, Kind: string(p.Op), Seq: p.Seq, Tree: p.Now, Workspace: k.store.root}
	note, _ := json.Marshal(struct {
		Record session.Checkpoint `json:"record"`
		Detail detail             `json:"detail"`
	}{rec, d})
	unlock, err := k.store.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if k.store.Generation() != p.generation {
		return nil, fmt.Errorf("the checkpoint store was pruned since this %s was worked out: work it out again", p.Op)
	}
	res, err := k.store.Restore(ctx, p.Target, paths, note)
	if err != nil {
		return nil, err
	}
	res.Failed = append(res.Failed, p.Unrestorable...)
	out.Restored = res
	d.Paths, d.Failed, d.Journal = res.Done, res.Failed, res.Journal
	rec.Detail, _ = json.Marshal(d)
	saved, err := k.sessions.AddCheckpoint(context.WithoutCancel(ctx), rec)
	if err != nil {
		// The files are restored; the journal stays, so that the next
		// start records it.
		return out, fmt.Errorf("recording the %s: %w", p.Op, err)
	}
	out.Checkpoint = saved
	if err := k.store.Done(res.Journal); err != nil {
		k.log.Warn("forgetting a finished restore", "error", err)
	}
	return out, nil
}

// Recover finishes the restores a process began and did not finish, and
// records those it had not recorded; it returns how many it finished.
func (k *Keeper) Recover(ctx context.Context) (int, error) {
	type noteOf struct {
		Record session.Checkpoint `json:"record"`
		Detail detail             `json:"detail"`
	}
	recorded := func(raw json.RawMessage, journal string) bool {
		var note noteOf
		if json.Unmarshal(raw, &note) != nil || note.Record.SessionID == "" {
			return false
		}
		recs, err := k.sessions.Checkpoints(ctx, note.Record.SessionID)
		if err != nil {
			return isNotFound(err) // a session deleted since: nothing to record
		}
		for _, c := range recs {
			if readDetail(c).Journal == journal {
				return true
			}
		}
		return false
	}
	pending, err := k.store.Recover(ctx, recorded)
	if err != nil {
		return 0, err
	}
	for _, pd := range pending {
		var note noteOf
		if err := json.Unmarshal(pd.Note, &note); err != nil || note.Record.SessionID == "" {
			k.log.Warn("an interrupted restore was finished; its record could not be read", "journal", pd.Journal)
			k.store.Done(pd.Journal)
			continue
		}
		d := note.Detail
		d.Paths, d.Failed, d.Journal = pd.Done, pd.Failed, pd.Journal
		rec := note.Record
		rec.Detail, _ = json.Marshal(d)
		if _, err := k.sessions.AddCheckpoint(context.WithoutCancel(ctx), rec); err != nil {
			if isNotFound(err) {
				k.store.Done(pd.Journal)
				continue
			}
			return 0, fmt.Errorf("recording an interrupted %s: %w", rec.Kind, err)
		}
		k.log.Info("finished an interrupted restore", "session", rec.SessionID, "kind", rec.Kind, "paths", len(pd.Done), "reapplied", pd.Reapplied)
		if err := k.store.Done(pd.Journal); err != nil {
			return 0, err
		}
	}
	return len(pending), nil
}
