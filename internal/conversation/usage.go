package conversation

import (
	"context"
	"log/slog"
	"math"
	"sync"

	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// maxTokens bounds a token count a server reports (2^40, about a million
// million): a count past it is no model call's, and a hostile or broken
// server's figure must not overflow the sums the store makes.
const maxTokens = 1 << 40

// meter records the model calls made for one session — a turn's, a title's,
// a summary's — each with its cost, and sums them for the turn: the cost of
// its priced calls and the number of the others. Its methods may be called
// from the tool calls a turn runs at once.
type meter struct {
	st     session.Store
	id     string // the session
	prices map[string]pricing.Rates
	log    *slog.Logger
	// keep is told of a store error (nil: the error is only returned).
	keep func(error)
	// parent, when set, is the meter of the turn whose sub-agent this
	// session's turn runs: each call counts in its sums too.
	parent *meter

	mu       sync.Mutex
	cost     *int64 // nil: no call priced yet
	unpriced int
	calls    int
	overflow bool // the sum of the costs did not fit: unknown
}

// record stores the usage of one model call of model in the session, with
// its cost (nil when the model has no price), and counts it.
func (m *meter) record(ctx context.Context, model string, u llm.Usage) (*int64, error) {
	u.InputTokens = clampTokens(u.InputTokens)
	u.OutputTokens = clampTokens(u.OutputTokens)
	u.CachedInputTokens = min(clampTokens(u.CachedInputTokens), u.InputTokens)
	cost := m.price(model, u)
	m.count(cost)
	err := m.st.RecordUsage(context.WithoutCancel(ctx), session.Usage{SessionID: m.id, Model: model, InputTokens: u.InputTokens,
		CachedInputTokens: u.CachedInputTokens, OutputTokens: u.OutputTokens, Cost: cost})
	if err != nil && m.keep != nil {
		m.keep(err)
	}
	return cost, err
}

// price is the cost of a call of model at its price, in micro-units: nil
// when the model has none (or the counts cannot be priced: unknown, never
// a wrong figure).
func (m *meter) price(model string, u llm.Usage) *int64 {
	r, ok := m.prices[model]
	if !ok {
		return nil
	}
	c, err := r.Cost(pricing.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens), CachedInput: int64(u.CachedInputTokens)})
	if err != nil {
		if m.log != nil {
			m.log.Warn("pricing a model call", "model", model, "error", err)
		}
		return nil
	}
	return &c
}

// count adds a call of this cost (nil: unpriced) to the sums, and to its
// parent's.
func (m *meter) count(cost *int64) {
	for ; m != nil; m = m.parent {
		m.mu.Lock()
		m.calls++
		if cost == nil {
			m.unpriced++
		} else {
			var ok bool
			if m.cost, ok = addCost(m.cost, *cost); !ok {
				m.overflow = true
			}
		}
		m.mu.Unlock()
	}
}

// totals are the sums: the cost of the priced calls (nil: none was priced,
// or the sum overflowed) and the number of calls it leaves out (every call
// when the sum overflowed: the cost is unknown).
func (m *meter) totals() (*int64, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.overflow {
		return nil, m.calls
	}
	if m.cost == nil {
		return nil, m.unpriced
	}
	c := *m.cost
	return &c, m.unpriced
}

// addCost adds c to a sum that may be unknown yet; false when the sum does
// not fit in an int64 (then the sum returned is meaningless).
func addCost(sum *int64, c int64) (*int64, bool) {
	if sum == nil {
		return &c, true
	}
	s := *sum
	if (c > 0 && s > math.MaxInt64-c) || (c < 0 && s < math.MinInt64-c) {
		return &s, false
	}
	v := s + c
	return &v, true
}

func clampTokens(n int) int { return max(0, min(n, maxTokens)) }

type meterKey struct{}

// withMeter is ctx carrying the meter of the turn that runs in it, for the
// tools' own model calls (RecordUsage) and its sub-agents' turns.
func withMeter(ctx context.Context, m *meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

func meterOf(ctx context.Context) *meter {
	m, _ := ctx.Value(meterKey{}).(*meter)
	return m
}

// RecordUsage records a model call that a tool made for the turn running in
// ctx (the edit tool's fixer: edit.ModelFixer.OnUsage) in that turn's
// session, with its cost at the turn's prices, and counts it in the turn's
// Outcome. Outside a stored turn it records nothing. A store error is
// logged, and the turn reports it.
func RecordUsage(ctx context.Context, model string, u llm.Usage) {
	if m := meterOf(ctx); m != nil {
		_, _ = m.record(ctx, model, u) // a store error: the turn keeps it (m.keep)
	}
}
