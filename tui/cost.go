package tui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hearth-agent/hearth/session"
)

// statsTimeout bounds the store reads of /stats.
const statsTimeout = 2 * time.Second

// formatMicro writes micro-units (millionths of the user's currency) as a
// decimal with at least 2 decimals: 1500000 is "1.50", 1750001
// "1.750001".
func formatMicro(micro int64) string {
	sign := ""
	u := uint64(micro)
	if micro < 0 {
		sign, u = "-", uint64(-(micro+1))+1
	}
	frac := fmt.Sprintf("%06d", u%1_000_000)
	for len(frac) > 2 && strings.HasSuffix(frac, "0") {
		frac = frac[:len(frac)-1]
	}
	return sign + strconv.FormatUint(u/1_000_000, 10) + "." + frac
}

// formatCost writes a cost for people, as the web UI does: the amount
// when every call was priced; "≥ amount (N calls unpriced)" when some were
// not; "unknown" when calls were made and none was priced (never 0); "none"
// when no call was made.
func formatCost(cost *int64, unpriced, calls int) string {
	switch {
	case cost == nil && (unpriced > 0 || calls > 0):
		return "unknown"
	case cost == nil:
		return "none"
	case unpriced == 1:
		return "≥ " + formatMicro(*cost) + " (1 call unpriced)"
	case unpriced > 0:
		return fmt.Sprintf("≥ %s (%d calls unpriced)", formatMicro(*cost), unpriced)
	}
	return formatMicro(*cost)
}

// costs reads what /stats shows of cost: the session's (its own calls)
// and today's (UTC, every session's), each "unavailable" when the store
// fails.
func (m *Model) costs() (sess, today string) {
	st := m.agent.Store()
	if st == nil {
		return "unavailable", "unavailable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), statsTimeout)
	defer cancel()
	sess = "none"
	if m.sessionID != "" {
		if se, err := st.Get(ctx, m.sessionID); err == nil {
			sess = formatCost(se.Cost, se.Unpriced, 0)
		} else if !errors.Is(err, session.ErrNotFound) {
			sess = "unavailable"
		}
	}
	day := m.now().UTC().Truncate(24 * time.Hour)
	today = "unavailable"
	if t, err := st.UsageTotals(ctx, session.UsageFilter{Since: day}, session.ByTotal); err == nil {
		today = "none"
		if len(t) > 0 {
			c := t[0].Cost
			var cost *int64
			if t[0].Calls > t[0].Unpriced {
				cost = &c
			}
			today = formatCost(cost, t[0].Unpriced, t[0].Calls)
		}
	}
	return sess, today
}
