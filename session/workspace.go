package session

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// What both stores decide the same way about workspaces and usage totals.

// UnknownWorkspace is the name of the workspace "" (the sessions recorded
// without one).
const UnknownWorkspace = "unknown"

// defaultName is the name of a workspace that was not given one: the
// folder's base name, "unknown" for "". The stores keep "" for it, and
// give it when read, so that a workspace that was never named follows
// this rule (and one named later keeps its name).
func defaultName(path string) string {
	if path == "" {
		return UnknownWorkspace
	}
	return filepath.Base(path)
}

// named fills the default name of a workspace read from a store.
func named(w *Workspace) {
	if w.Name == "" {
		w.Name = defaultName(w.Path)
	}
}

// notFound is an error for something that is not in the store (not a
// session): its message says what, and it matches ErrNotFound.
type notFound string

func (e notFound) Error() string { return string(e) }
func (e notFound) Unwrap() error { return ErrNotFound }

func errNoWorkspace(path string) error {
	if path == "" {
		return notFound("the unknown workspace (of the sessions recorded without one) is not known")
	}
	return notFound(fmt.Sprintf("workspace %s is not known", path))
}

// addTrust is the trust AddWorkspace writes: "" (keep it, or untrusted
// for a new workspace) or a valid level.
func addTrust(t Trust) (Trust, error) {
	if t == "" {
		return "", nil
	}
	return ParseTrust(string(t))
}

// updateFields are what UpdateWorkspace writes: the name and trust w
// sets, and with a trust its config hash (nil: keep it).
func updateFields(w Workspace) (name, level, hash *string, err error) {
	trust, err := addTrust(w.Trust)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("update workspace %s: %w", w.Path, err)
	}
	if w.Name != "" {
		name = &w.Name
	}
	if trust != "" {
		l, h := string(trust), w.ConfigHash
		level, hash = &l, &h
	}
	return name, level, hash, nil
}

// importFields are what ImportWorkspace writes for a new workspace: its
// name ("" when it is the default, so that it stays the default), its
// trust (untrusted when w has none), its first and last use (now when w
// has none; the first when it has no last). Whether its trust was chosen
// is w.TrustChosen, and its config hash w.ConfigHash, as they are.
func importFields(w Workspace) (name string, trust Trust, created, used time.Time, err error) {
	if trust, err = addTrust(w.Trust); err != nil {
		return "", "", time.Time{}, time.Time{}, fmt.Errorf("import workspace %s: %w", w.Path, err)
	}
	if trust == "" {
		trust = TrustUntrusted
	}
	if w.Name != defaultName(w.Path) {
		name = w.Name
	}
	created, used = w.CreatedAt, w.LastUsed
	if created.IsZero() {
		created = time.Now()
	}
	if used.IsZero() {
		used = created
	}
	return name, trust, created, used, nil
}

// checkGroup says whether by is a grouping of UsageTotals.
func checkGroup(by string) error {
	switch by {
	case ByTotal, BySession, ByModel, ByWorkspace, ByDay:
		return nil
	}
	return fmt.Errorf("usage totals: cannot group by %q (by session, model, workspace, day, or \"\" for a grand total)", by)
}

// usageByDay is UsageByDay through UsageTotals.
func usageByDay(ctx context.Context, s Store, since time.Time) ([]DayUsage, error) {
	if since.IsZero() {
		// As before UsageTotals: rows since the epoch (a zero filter
		// would mean all of them).
		since = time.Unix(0, 0)
	}
	totals, err := s.UsageTotals(ctx, UsageFilter{Since: since}, ByDay)
	if err != nil {
		return nil, fmt.Errorf("usage by day: %w", err)
	}
	var out []DayUsage
	for _, t := range totals {
		out = append(out, DayUsage{Day: t.Key, InputTokens: int(t.InputTokens), OutputTokens: int(t.OutputTokens)})
	}
	return out, nil
}
