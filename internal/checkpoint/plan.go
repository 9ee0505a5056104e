package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/hearth-agent/hearth/session"
)

// Op names what a restore does.
type Op string

// The restores.
const (
	// Undo takes back the files the last turn (not undone yet) changed.
	Undo Op = session.CheckpointUndo
	// Redo brings back what the last undo took back.
	Redo Op = session.CheckpointRedo
	// Rewind brings every file to its state at a point of the conversation
	// (after a message), or at a recorded checkpoint.
	Rewind Op = session.CheckpointRewind
)

// Errors of planning.
var (
	// ErrNothingToUndo: no turn of the session changed files, or all are
	// undone.
	ErrNothingToUndo = errors.New("nothing to undo: no turn of this session changed files that is not undone already")
	// ErrNothingToRedo: no undo to take back (or a turn changed files
	// since).
	ErrNothingToRedo = errors.New("nothing to redo: no undo to take back since the last turn that changed files")
)

// detail is what a restore's checkpoint record keeps (session.Checkpoint's
// Detail): what was restored, to which snapshot, and why.
type detail struct {
	// Target is the snapshot the paths were brought to.
	Target string `json:"target"`
	// Paths lists the paths restored.
	Paths []string `json:"paths"`
	// Kept lists conflicting paths left as the user had them.
	Kept []string `json:"kept,omitempty"`
	// Failed lists the paths that could not be restored.
	Failed []Problem `json:"failed,omitempty"`
	// Turn is the turn undone or redone (the seq of its user message).
	Turn int `json:"turn,omitempty"`
	// Through is, for a rewind, the seq of the message rewound to (0 for
	// a rewind to a checkpoint).
	Through int `json:"through,omitempty"`
	// To is, for a rewind, the checkpoint whose files were restored.
	To int64 `json:"to,omitempty"`
	// Journal names the restore's journal entry.
	Journal string `json:"journal,omitempty"`
	// Undone is, for a rewind, the turns it left undone.
	Undone []int `json:"undone,omitempty"`
}

// state is one known state of the files on a session's timeline.
type state struct {
	rec  int    // index of the record in the timeline (-1: now)
	tree string // snapshot, or "" when its files are computed
	// post marks the state a restore left (its record's pre-restore tree
	// with the paths it restored brought to its target).
	post bool
	// user says the change from the state before to this one is not the
	// agent's nor a restore's: the user (or anything else) made it.
	user bool
	// undone is which turns were undone once the timeline reached it.
	undone map[int]bool
}

// timeline reads a session's checkpoint records as the sequence of states
// its files went through. A state's files are read when asked for.
type timeline struct {
	recs   []session.Checkpoint
	states []state
	turns  []int        // turns that took checkpoints, in order
	undone map[int]bool // turns whose changes are undone now
	redo   []int        // turns an undo took back, last on top
	// forced are the paths the session's edit tools named: a snapshot
	// after the call that first named one knew whether it existed.
	forced map[string]bool
	// backfill gives, for a forced path, its state when first named: the
	// states before (which left it out, being ignored) had it so.
	backfill map[string]backfilled

	now   Files
	load  loader
	files map[int]Files
}

type backfilled struct {
	state int // the first state that kept it
	entry Entry
}

// loader reads a snapshot's files.
type loader func(tree string) (Files, error)

func readDetail(c session.Checkpoint) detail {
	var d detail
	if len(c.Detail) > 0 {
		_ = json.Unmarshal(c.Detail, &d)
	}
	return d
}

func readForce(c session.Checkpoint) []string {
	var d takeDetail
	if len(c.Detail) > 0 {
		_ = json.Unmarshal(c.Detail, &d)
	}
	return d.Force
}

func cloneSet(m map[int]bool) map[int]bool {
	out := make(map[int]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// buildTimeline reads records (in order); now is the files as they are.
func buildTimeline(recs []session.Checkpoint, now Files, load loader, lookup func(tree, p string) (Entry, bool, error), ignoredAt func(tree, p string) bool) (*timeline, error) {
	tl := &timeline{recs: recs, undone: map[int]bool{}, forced: map[string]bool{}, backfill: map[string]backfilled{},
		now: now, load: load, files: map[int]Files{}}
	seenTurn := map[int]bool{}
	lastTurn := -1
	for i, c := range recs {
		switch c.Kind {
		case session.CheckpointBefore, session.CheckpointAfter:
			// Within a turn the agent made the change; from anything
			// else (the turn before, a restore) to a turn's first
			// checkpoint, someone else did.
			user := c.Turn != lastTurn || c.Turn == 0
			if !seenTurn[c.Turn] {
				seenTurn[c.Turn] = true
				tl.turns = append(tl.turns, c.Turn)
				tl.redo = nil // a new turn: what was undone stays undone
				delete(tl.undone, c.Turn)
			}
			tl.states = append(tl.states, state{rec: i, tree: c.Tree, user: user, undone: cloneSet(tl.undone)})
			lastTurn = c.Turn
			for _, f := range readForce(c) {
				if f = cleanRel(f); f == "" || tl.forced[f] {
					continue
				}
				tl.forced[f] = true
				// Only a path the snapshots' ignore files leave out was
				// left out of the states before because it was not
				// tracked; a tracked one absent before did not exist.
				if ignoredAt == nil || !ignoredAt(c.Tree, f) {
					continue
				}
				// With the folders on the way, which an ignored one left
				// out too. Only the trees on the way are read.
				for _, q := range append(parentDirs(f), f) {
					if _, done := tl.backfill[q]; done {
						continue
					}
					e, ok, err := lookup(c.Tree, q)
					if err != nil {
						return nil, err
					}
					if ok {
						tl.backfill[q] = backfilled{state: len(tl.states) - 1, entry: e}
					}
				}
			}
		case session.CheckpointUndo, session.CheckpointRedo, session.CheckpointRewind:
			d := readDetail(c)
			tl.states = append(tl.states, state{rec: i, tree: c.Tree, user: true, undone: cloneSet(tl.undone)})
			switch Op(c.Kind) {
			case Undo:
				tl.undone[d.Turn] = true
				tl.redo = append(tl.redo, d.Turn)
			case Redo:
				delete(tl.undone, d.Turn)
				if n := len(tl.redo); n > 0 && tl.redo[n-1] == d.Turn {
					tl.redo = tl.redo[:n-1]
				}
			case Rewind:
				tl.redo = nil
				// What the rewind left undone is what it said.
				tl.undone = map[int]bool{}
				for _, t := range d.Undone {
					tl.undone[t] = true
				}
			}
			tl.states = append(tl.states, state{rec: i, post: true, undone: cloneSet(tl.undone)})
			lastTurn = -1
		}
	}
	tl.states = append(tl.states, state{rec: -1, user: true, undone: cloneSet(tl.undone)})
	return tl, nil
}

// filesOf returns state i's files: read from its snapshot, computed for a
// restore's, with the forced paths it left out (ignored then) as they
// were when first named.
func (tl *timeline) filesOf(i int) (Files, error) {
	if f, ok := tl.files[i]; ok {
		return f, nil
	}
	st := tl.states[i]
	var files Files
	switch {
	case st.rec < 0:
		files = tl.now
	case st.post:
		pre, err := tl.filesOf(i - 1)
		if err != nil {
			return nil, err
		}
		files = make(Files, len(pre))
		for p, e := range pre {
			files[p] = e
		}
		if d := readDetail(tl.recs[st.rec]); d.Target != "" {
			target, err := tl.load(d.Target)
			if err != nil {
				return nil, err
			}
			for _, p := range d.Paths {
				if e, ok := target[p]; ok {
					files[p] = e
				} else {
					delete(files, p)
				}
			}
		}
	default:
		f, err := tl.load(st.tree)
		if err != nil {
			return nil, err
		}
		files = f
	}
	if st.rec >= 0 && !st.post {
		var add map[string]Entry
		for p, b := range tl.backfill {
			if b.state > i {
				if _, ok := files[p]; !ok {
					if add == nil {
						add = map[string]Entry{}
					}
					add[p] = b.entry
				}
			}
		}
		if add != nil {
			own := make(Files, len(files)+len(add))
			for p, e := range files {
				own[p] = e
			}
			for p, e := range add {
				own[p] = e
			}
			files = own
		}
	}
	tl.files[i] = files
	return files, nil
}

// changedAt reports whether path p differs between states k-1 and k.
func (tl *timeline) changedAt(k int, p string) (bool, error) {
	a, err := tl.filesOf(k - 1)
	if err != nil {
		return false, err
	}
	b, err := tl.filesOf(k)
	if err != nil {
		return false, err
	}
	ea, okA := a[p]
	eb, okB := b[p]
	return okA != okB || (okA && !sameState(ea, eb)), nil
}

// lastChangeIsUsers reports whether the last change to path p on the
// timeline after state from, up to now, was made by someone other than the
// agent or a restore.
func (tl *timeline) lastChangeIsUsers(p string, from int) (bool, error) {
	for k := len(tl.states) - 1; k > from && k > 0; k-- {
		changed, err := tl.changedAt(k, p)
		if err != nil {
			return false, err
		}
		if changed {
			return tl.states[k].user, nil
		}
	}
	return false, nil
}

// turnStates returns the indexes of a turn's first state and its last (the
// "after" checkpoint, or its last "before" when the turn never ended:
// then the state that followed it, if any, stands for its end).
func (tl *timeline) turnStates(turn int) (first, last int) {
	first, last = -1, -1
	for i, st := range tl.states {
		if st.rec < 0 || st.post {
			continue
		}
		c := tl.recs[st.rec]
		if (c.Kind == session.CheckpointBefore || c.Kind == session.CheckpointAfter) && c.Turn == turn {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if last >= 0 && tl.recs[tl.states[last].rec].Kind != session.CheckpointAfter && last+1 < len(tl.states) {
		last++
	}
	return first, last
}

// changedFiles reports whether a turn changed any file.
func (tl *timeline) changedFiles(turn int) (bool, error) {
	first, last := tl.turnStates(turn)
	if first < 0 {
		return false, nil
	}
	if a, b := tl.states[first].tree, tl.states[last].tree; a != "" && a == b {
		return false, nil
	}
	fa, err := tl.filesOf(first)
	if err != nil {
		return false, err
	}
	fb, err := tl.filesOf(last)
	if err != nil {
		return false, err
	}
	return len(Diff(fa, fb)) > 0, nil
}

// Plan is a restore worked out and not yet made: what would change, and
// which of those changes would overwrite someone else's work.
type Plan struct {
	// Op is the restore.
	Op Op `json:"op"`
	// SessionID is the session whose checkpoints it reads.
	SessionID string `json:"session_id"`
	// Turn is the turn undone or redone (the seq of its user message).
	Turn int `json:"turn,omitempty"`
	// Through is, for a rewind to a message, its seq.
	Through int `json:"through,omitempty"`
	// To is the checkpoint whose files are restored (rewind).
	To int64 `json:"to,omitempty"`
	// Target is the snapshot the paths are brought to.
	Target string `json:"target"`
	// Now is the snapshot of the files as they are (it becomes the
	// restore's own checkpoint: the user's version is kept).
	Now string `json:"now"`
	// Changes lists each path the restore changes, From its state now To
	// its state in Target.
	Changes []Change `json:"changes"`
	// Conflicts lists the paths among Changes that someone other than the
	// agent changed since the agent last did: restoring them overwrites
	// that work (it stays in the restore's checkpoint).
	Conflicts []string `json:"conflicts,omitempty"`
	// Unrestorable lists the paths among Changes that cannot be restored
	// (over the size cap when they were snapshotted), or that a restore
	// leaves alone (their content was never kept; they were not tracked
	// then).
	Unrestorable []Problem `json:"unrestorable,omitempty"`
	// Undone is, for a rewind, the turns whose changes it takes back.
	Undone []int `json:"undone,omitempty"`
	// Seq is the session's last message seq when planned.
	Seq int `json:"seq"`

	generation string // the store's prune generation when planned
}

// plan works out a restore from the session's records and the files now
// (snapshot tree now). ignored reports whether a path was left out of a
// snapshot by its ignore files.
func plan(recs []session.Checkpoint, nowTree string, now Files, load loader, lookup func(tree, p string) (Entry, bool, error),
	ignoredAt func(tree, p string) bool, treeOf func(Files) (string, error), ignored func(Files, string) bool,
	op Op, through int, to int64, maxSize int64) (*Plan, error) {
	tl, err := buildTimeline(recs, now, load, lookup, ignoredAt)
	if err != nil {
		return nil, err
	}
	p := &Plan{Op: op, Now: nowTree}
	var target Files
	var scope map[string]bool // nil: every path
	var expect Files          // undo, redo: what the turn left, or found
	from := 0                 // rewind: the state rewound to
	switch op {
	case Undo:
		turn := -1
		for i := len(tl.turns) - 1; i >= 0 && turn < 0; i-- {
			t := tl.turns[i]
			if tl.undone[t] {
				continue
			}
			// A turn that changed no file (it ran tests) is not one to
			// undo: the one before it is.
			changed, err := tl.changedFiles(t)
			if err != nil {
				return nil, err
			}
			if changed {
				turn = t
			}
		}
		if turn < 0 {
			return nil, ErrNothingToUndo
		}
		first, last := tl.turnStates(turn)
		if target, err = tl.filesOf(first); err != nil {
			return nil, err
		}
		if expect, err = tl.filesOf(last); err != nil {
			return nil, err
		}
		p.Target, p.Turn = tl.states[first].tree, turn
		if len(tl.files) > 0 && p.Target != "" && hasBackfill(tl, first) {
			if p.Target, err = treeOf(target); err != nil {
				return nil, err
			}
		}
		scope = pathsOf(Diff(target, expect))
	case Redo:
		if len(tl.redo) == 0 {
			return nil, ErrNothingToRedo
		}
		turn := tl.redo[len(tl.redo)-1]
		first, last := tl.turnStates(turn)
		if first < 0 {
			return nil, ErrNothingToRedo
		}
		if target, err = tl.filesOf(last); err != nil {
			return nil, err
		}
		if expect, err = tl.filesOf(first); err != nil {
			return nil, err
		}
		p.Turn = turn
		if p.Target, err = treeOf(target); err != nil {
			return nil, err
		}
		scope = pathsOf(Diff(expect, target))
	case Rewind:
		idx := -1
		for i, st := range tl.states {
			if st.rec < 0 {
				continue
			}
			c := tl.recs[st.rec]
			if to > 0 {
				if c.ID == to && !st.post {
					idx = i
					break
				}
				continue
			}
			// The files at a message: the first state recorded once the
			// conversation had reached it — before a call, after a turn,
			// or after a restore (a rewind of the conversation keeps its
			// record there, where the checkpoints after it went).
			agentState := c.Kind == session.CheckpointBefore || c.Kind == session.CheckpointAfter
			if (agentState || st.post) && c.Seq >= through {
				idx = i
				break
			}
		}
		p.Through, p.To = through, to
		if idx < 0 && to > 0 {
			return nil, fmt.Errorf("rewind: the session has no checkpoint %d", to)
		}
		if idx < 0 {
			// Nothing changed files after that message: they are as they
			// were then.
			p.Target = nowTree
			p.Undone = sortedTurns(tl.undone)
			return p, nil
		}
		if target, err = tl.filesOf(idx); err != nil {
			return nil, err
		}
		if p.Target, err = treeOf(target); err != nil {
			return nil, err
		}
		if to > 0 {
			p.To = tl.recs[tl.states[idx].rec].ID
		}
		from = idx
		// The turns the rewind takes back: those undone then, and those
		// that began after.
		undone := cloneSet(tl.states[idx].undone)
		for _, t := range tl.turns {
			if f, _ := tl.turnStates(t); f >= idx {
				undone[t] = true
			}
		}
		p.Undone = sortedTurns(undone)
	}
	for _, c := range Diff(now, target) {
		if scope != nil && !scope[c.Path] {
			continue
		}
		switch {
		case c.From != nil && c.From.Kind == Large:
			// Its content was never kept: replacing or removing it could
			// not be taken back.
			p.Unrestorable = append(p.Unrestorable, Problem{Path: c.Path, Reason: fmt.Sprintf("it is %s, over the checkpoint size cap of %s: no checkpoint holds it, so it is left as it is", size(c.From.Size), size(maxSize))})
			continue
		case c.To == nil && !tl.forced[c.Path] && ignored(target, c.Path):
			// Left out of the snapshot restored to by its ignore files:
			// not known to be absent then.
			p.Unrestorable = append(p.Unrestorable, Problem{Path: c.Path, Reason: "it was not tracked then (ignored): left as it is"})
			continue
		}
		p.Changes = append(p.Changes, c)
		var conflict bool
		if expect != nil {
			// Undo, redo: someone else's work is a path that is not as
			// the turn left it (undo) or found it (redo).
			e, ok := expect[c.Path]
			conflict = (c.From == nil) == ok || (c.From != nil && ok && !sameState(*c.From, e))
		} else {
			// Rewind: where the last change to a path since the state
			// rewound to was not the agent's nor a restore's.
			if conflict, err = tl.lastChangeIsUsers(c.Path, from); err != nil {
				return nil, err
			}
		}
		if conflict {
			p.Conflicts = append(p.Conflicts, c.Path)
		}
		if c.To != nil && c.To.Kind == Large {
			p.Unrestorable = append(p.Unrestorable, Problem{Path: c.Path, Reason: fmt.Sprintf("not kept: it was %s, over the checkpoint size cap of %s", size(c.To.Size), size(maxSize))})
		}
	}
	sort.Strings(p.Conflicts)
	return p, nil
}

// hasBackfill reports whether state i's files were completed with forced
// paths it left out.
func hasBackfill(tl *timeline, i int) bool {
	for _, b := range tl.backfill {
		if b.state > i {
			return true
		}
	}
	return false
}

func sortedTurns(m map[int]bool) []int {
	var out []int
	for t, ok := range m {
		if ok {
			out = append(out, t)
		}
	}
	sort.Ints(out)
	return out
}

// sameState compares two states of a path; folders by mode only (their
// content is their own paths').
func sameState(a, b Entry) bool {
	if a.Kind == Dir && b.Kind == Dir {
		return a.Perm == b.Perm
	}
	return a.Same(b)
}

func pathsOf(cs []Change) map[string]bool {
	out := make(map[string]bool, len(cs))
	for _, c := range cs {
		out[c.Path] = true
	}
	return out
}

// RestoredPaths returns the paths a restore's checkpoint record says it
// restored.
func RestoredPaths(c session.Checkpoint) []string { return readDetail(c).Paths }
