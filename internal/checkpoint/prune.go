package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/session"
)

// Pruned is what a prune removed.
type Pruned struct {
	// Objects and Bytes count the objects removed and their size.
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
	// Kept counts the objects the live snapshots still reach.
	Kept int `json:"kept"`
}

// Prune removes the objects that none of the live snapshots (trees)
// reaches. Objects younger than grace are kept whatever reaches them: a
// snapshot another process is taking, or a preview, may be about to use
// them.
func (s *Store) Prune(ctx context.Context, live []string, grace time.Duration) (Pruned, error) {
	var out Pruned
	unlock, err := s.lock()
	if err != nil {
		return out, err
	}
	defer unlock()
	reach := map[string]bool{}
	var mark func(tree string, depth int) error
	mark = func(tree string, depth int) error {
		if reach[tree] {
			return nil
		}
		if depth > maxDepth {
			return fmt.Errorf("%w: nested too deep", errCorrupt)
		}
		reach[tree] = true
		data, err := s.readObject(tree)
		if err != nil {
			return err
		}
		entries, err := decodeTree(data)
		if err != nil {
			return fmt.Errorf("checkpoints: tree %s: %w", tree[:12], err)
		}
		for _, e := range entries {
			switch e.Kind {
			case Dir:
				if err := mark(e.Hash, depth+1); err != nil {
					return err
				}
			case File, Link:
				reach[e.Hash] = true
			}
		}
		return nil
	}
	for _, t := range live {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		if !validHash(t, false) {
			continue
		}
		if err := mark(t, 0); err != nil {
			// A snapshot already damaged cannot be restored whole
			// whatever the prune keeps: what it still reaches is kept.
			s.log.Warn("checkpoints: prune: a recorded snapshot cannot be read", "tree", t, "error", err)
		}
	}
	cutoff := time.Now().Add(-grace)
	removed := map[string]bool{}
	objects := filepath.Join(s.dir, "objects")
	err = filepath.WalkDir(objects, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(objects, p)
		h := strings.ReplaceAll(filepath.ToSlash(rel), "/", "")
		if reach[h] {
			out.Kept++
			return nil
		}
		fi, err := d.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			return nil
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoints: prune: %w", err)
		}
		out.Objects++
		out.Bytes += fi.Size()
		removed[h] = true
		return nil
	})
	if err != nil {
		return out, err
	}
	if len(removed) > 0 {
		var g [8]byte
		rand.Read(g[:])
		if err := os.WriteFile(s.genPath(), []byte(hex.EncodeToString(g[:])), 0o600); err != nil {
			return out, fmt.Errorf("checkpoints: prune: %w", err)
		}
		s.mu.Lock()
		s.objMu.Lock()
		for h := range removed {
			delete(s.have, h)
		}
		s.objMu.Unlock()
		// The index must not name what is gone: its files are read again.
		ix := s.loadIndex()
		changed := false
		for p, st := range ix.Files {
			if removed[st.Hash] {
				delete(ix.Files, p)
				changed = true
			}
		}
		if changed {
			s.saveIndex(ix)
		}
		clear(s.trees)
		s.last = nil
		s.mu.Unlock()
	}
	return out, nil
}

// Prune removes the snapshots' objects that no checkpoint of any session
// of st in this workspace reaches (deleted sessions', mostly), keeping
// those younger than grace.
func (k *Keeper) Prune(ctx context.Context, grace time.Duration) (Pruned, error) {
	var live []string
	for _, archived := range []bool{false, true} {
		list, err := k.sessions.List(ctx, session.ListOptions{Archived: archived})
		if err != nil {
			return Pruned{}, fmt.Errorf("checkpoints: prune: listing sessions: %w", err)
		}
		for _, sess := range list {
			recs, err := k.sessions.Checkpoints(ctx, sess.ID)
			if err != nil && !isNotFound(err) {
				return Pruned{}, fmt.Errorf("checkpoints: prune: %w", err)
			}
			for _, c := range recs {
				if c.Workspace != "" && c.Workspace != k.store.root {
					continue
				}
				live = append(live, c.Tree)
				if d := readDetail(c); d.Target != "" {
					live = append(live, d.Target)
				}
			}
		}
	}
	return k.store.Prune(ctx, live, grace)
}
