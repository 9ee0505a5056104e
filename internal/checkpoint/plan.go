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
}

// state is one known state of the files on a session's timeline.
type state struct {
	rec   int    // index of the record in the timeline (-1: now)
	tree  string // snapshot, or "" when files is computed
	files Files
	// user says the change from the state before to this one is not the
	// agent's nor a restore's: the user (or anything else) made it.
	user bool
}

// timeline reads a session's checkpoint records as the sequence of states
// its files went through.
type timeline struct {
	recs   []session.Checkpoint
	states []state
	turns  []int        // turns that changed files, in order
	undone map[int]bool // turns whose changes are undone now
	redo   []int        // turns an undo took back, last on top
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

// buildTimeline reads records (in order) and the files now.
func buildTimeline(recs []session.Checkpoint, now Files, load loader) (*timeline, error) {
	tl := &timeline{recs: recs, undone: map[int]bool{}}
	seenTurn := map[int]bool{}
	lastTurn := -1
	for i, c := range recs {
		switch c.Kind {
		case session.CheckpointBefore, session.CheckpointAfter:
			f, err := load(c.Tree)
			if err != nil {
				return nil, err
			}
			// Within a turn the agent made the change; from anything
			// else (the turn before, a restore) to a turn's first
			// checkpoint, someone else did.
			user := c.Turn != lastTurn || c.Turn == 0
			tl.states = append(tl.states, state{rec: i, tree: c.Tree, files: f, user: user})
			lastTurn = c.Turn
			if !seenTurn[c.Turn] {
				seenTurn[c.Turn] = true
				tl.turns = append(tl.turns, c.Turn)
				tl.redo = nil // a new turn: what was undone stays undone
			}
		case session.CheckpointUndo, session.CheckpointRedo, session.CheckpointRewind:
			pre, err := load(c.Tree)
			if err != nil {
				return nil, err
			}
			d := readDetail(c)
			tl.states = append(tl.states, state{rec: i, tree: c.Tree, files: pre, user: true})
			post := Files{}
			for p, e := range pre {
				post[p] = e
			}
			if d.Target != "" {
				target, err := load(d.Target)
				if err != nil {
					return nil, err
				}
				for _, p := range d.Paths {
					if e, ok := target[p]; ok {
						post[p] = e
					} else {
						delete(post, p)
					}
				}
			}
			tl.states = append(tl.states, state{rec: i, files: post})
			lastTurn = -1
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
				// The turns after the point rewound to are taken back.
				for _, t := range tl.turns {
					if d.Through > 0 && t > d.Through {
						tl.undone[t] = true
					}
				}
			}
		}
	}
	tl.states = append(tl.states, state{rec: -1, files: now, user: true})
	return tl, nil
}

// lastChangeIsUsers reports whether the last change to path p on the
// timeline, up to now, was made by someone other than the agent or a
// restore.
func (tl *timeline) lastChangeIsUsers(p string) bool {
	for k := len(tl.states) - 1; k > 0; k-- {
		a, okA := tl.states[k-1].files[p]
		b, okB := tl.states[k].files[p]
		if okA != okB || (okA && !sameState(a, b)) {
			return tl.states[k].user
		}
	}
	return false
}

// turnStates returns the indexes of a turn's first state and its last (the
// "after" checkpoint, or its last "before" when the turn never ended:
// then the state that followed it, if any, stands for its end).
func (tl *timeline) turnStates(turn int) (first, last int) {
	first, last = -1, -1
	for i, st := range tl.states {
		if st.rec < 0 {
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
	// (over the size cap when they were snapshotted).
	Unrestorable []Problem `json:"unrestorable,omitempty"`
	// Seq is the session's last message seq when planned.
	Seq int `json:"seq"`
}

// plan works out a restore from the session's records and the files now
// (snapshot tree now).
func plan(recs []session.Checkpoint, nowTree string, now Files, load loader, treeOf func(Files) (string, error), op Op, through int, to int64, maxSize int64) (*Plan, error) {
	tl, err := buildTimeline(recs, now, load)
	if err != nil {
		return nil, err
	}
	p := &Plan{Op: op, Now: nowTree}
	var target Files
	var scope map[string]bool // nil: every path
	switch op {
	case Undo:
		turn := -1
		for i := len(tl.turns) - 1; i >= 0; i-- {
			if !tl.undone[tl.turns[i]] {
				turn = tl.turns[i]
				break
			}
		}
		if turn < 0 {
			return nil, ErrNothingToUndo
		}
		first, last := tl.turnStates(turn)
		target, p.Target, p.Turn = tl.states[first].files, tl.states[first].tree, turn
		scope = pathsOf(Diff(target, tl.states[last].files))
	case Redo:
		if len(tl.redo) == 0 {
			return nil, ErrNothingToRedo
		}
		turn := tl.redo[len(tl.redo)-1]
		first, last := tl.turnStates(turn)
		if first < 0 {
			return nil, ErrNothingToRedo
		}
		target, p.Turn = tl.states[last].files, turn
		p.Target = tl.states[last].tree
		if p.Target == "" {
			return nil, fmt.Errorf("redo: the end of turn %d was not recorded (the process stopped during it)", turn)
		}
		scope = pathsOf(Diff(tl.states[first].files, target))
	case Rewind:
		idx := -1
		for i, st := range tl.states {
			if st.rec < 0 {
				continue
			}
			c := tl.recs[st.rec]
			if to > 0 {
				if c.ID == to && st.tree != "" {
					idx = i
					break
				}
				continue
			}
			// The files at a message: the first state recorded once the
			// conversation had reached it — before a call, after a turn,
			// or after a restore (a rewind of the conversation keeps its
			// record there, where the checkpoints after it went).
			agentState := (c.Kind == session.CheckpointBefore || c.Kind == session.CheckpointAfter) && st.tree != ""
			restored := c.Kind != session.CheckpointBefore && c.Kind != session.CheckpointAfter && st.tree == ""
			if (agentState || restored) && c.Seq >= through {
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
			return p, nil
		}
		target, p.Target = tl.states[idx].files, tl.states[idx].tree
		if p.Target == "" {
			// A state a restore made: its tree is stored now.
			if p.Target, err = treeOf(target); err != nil {
				return nil, err
			}
		}
		if to > 0 {
			p.To = tl.recs[tl.states[idx].rec].ID
		}
	}
	// A restore would overwrite someone else's work where the last change
	// to a path was not the agent's nor a restore's: made between turns,
	// after a restore, or since the last checkpoint.
	for _, c := range Diff(now, target) {
		if scope != nil && !scope[c.Path] {
			continue
		}
		p.Changes = append(p.Changes, c)
		if tl.lastChangeIsUsers(c.Path) {
			p.Conflicts = append(p.Conflicts, c.Path)
		}
		if c.To != nil && c.To.Kind == Large {
			p.Unrestorable = append(p.Unrestorable, Problem{Path: c.Path, Reason: fmt.Sprintf("not kept: it was %s, over the checkpoint size cap of %s", size(c.To.Size), size(maxSize))})
		}
	}
	sort.Strings(p.Conflicts)
	return p, nil
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
