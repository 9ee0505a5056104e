package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/pricing"
	"github.com/hearth-agent/hearth/session"
)

func (a *app) usageCommand() *cobra.Command {
	var by, since, sessionID, model string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "usage",
		Short: "Show the tokens and the cost of model calls, by day, model, session or workspace",
		Long: `Every model call's tokens are recorded with its session, and with its cost
when the model has a price in the [pricing] table of your config file
(per million input, output and cached input tokens):

  [pricing]
  currency = "USD"                 # a label shown with costs; nothing is converted
  [pricing.models."gpt-4o-mini"]
  input = 0.15
  output = 0.60
  cached_input = 0.075             # optional (default: the input price)

A call whose model had no price when it was made has no cost: it is shown
as unknown, never as 0, and a sum that misses some is shown as at least its
priced part ("≥ 0.01 USD (3 calls unpriced)"). Prices apply to the calls
made after they are set. Costs are summed exactly, in micro-units
(millionths of the currency): --json gives them so, and null for a cost
that is unknown.

Days are UTC. --workspace PATH counts only the calls of that folder's
sessions.`,
		Example: `  hearth usage                       # by day
  hearth usage --by model --since 7d
  hearth usage --workspace ~/src/app --by model
  hearth usage --by session --since 2026-11-01
  hearth usage --session s1 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			key, err := usageBy(by)
			if err != nil {
				return usageError{err}
			}
			f := session.UsageFilter{SessionID: sessionID, Model: model}
			if cmd.Flags().Changed("workspace") {
				// The global --workspace, given here, names the folder
				// whose sessions' calls to count (as the store keeps it:
				// symlinks resolved, when it still exists).
				ws, err := filepath.Abs(a.workspace)
				if err != nil {
					return usageError{fmt.Errorf("--workspace: %w", err)}
				}
				if real, err := filepath.EvalSymlinks(ws); err == nil {
					ws = real
				}
				f.Workspace = &ws
			}
			if since != "" {
				if f.Since, err = parseSince(since, time.Now()); err != nil {
					return usageError{err}
				}
			}
			currency := a.currency()
			var rows, total []session.UsageTotal
			err = a.withStore(cmd.Context(), func(st session.Store) error {
				var err error
				if rows, err = st.UsageTotals(cmd.Context(), f, key); err != nil {
					return err
				}
				total, err = st.UsageTotals(cmd.Context(), f, session.ByTotal)
				return err
			})
			if err != nil && !errors.Is(err, errNoStore) {
				return err
			}
			var t session.UsageTotal
			if len(total) > 0 {
				t = total[0]
			}
			if asJSON {
				return writeUsageJSON(a.io.out, key, currency, rows, t)
			}
			if len(rows) == 0 {
				if since != "" || sessionID != "" || model != "" || f.Workspace != nil {
					fmt.Fprintln(a.io.err, "No model calls recorded for this selection.")
				} else {
					fmt.Fprintln(a.io.err, "No model calls recorded yet.")
				}
				return nil
			}
			return writeUsageTable(a.io.out, key, currency, rows, t)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&by, "by", "day", "group by day (UTC), model, session or workspace")
	fl.StringVar(&since, "since", "", "only calls since a time ago (7d, 12h) or a date (2026-11-01, UTC)")
	fl.StringVar(&sessionID, "session", "", "only the calls of this session (not its sub-agents')")
	// Its own --model (-m), a filter, in place of the model to run.
	fl.StringVarP(&model, "model", "m", "", "only the calls of this model")
	fl.BoolVar(&asJSON, "json", false, "print the totals as JSON (cost in micro-units: millionths of the currency; null when unknown)")
	return cmd
}

// usageBy reads --by.
func usageBy(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "day", "days", "":
		return session.ByDay, nil
	case "model", "models":
		return session.ByModel, nil
	case "session", "sessions":
		return session.BySession, nil
	case "workspace", "workspaces":
		return session.ByWorkspace, nil
	}
	return "", fmt.Errorf("--by %q: use day, model, session or workspace", s)
}

// parseSince reads --since: a number of days (7d), a Go duration (12h,
// 90m), a date (2026-11-01, its start in UTC) or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a time ago (7d, 12h) or a date (2026-11-01)", s)
}

// currency is the user's [pricing] currency label ("" when none, or when
// the config cannot be read: the command that needs the store says why).
func (a *app) currency() string {
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return ""
	}
	cfg, err := config.Load(paths, "") // the user's file only
	if err != nil {
		return ""
	}
	return strings.TrimSpace(cfg.Pricing.Currency)
}

// formatAmount writes micro-units as a decimal with at least two places
// ("0.012345", "3.00", "0.10"), then the currency label if there is one.
func formatAmount(micro int64, currency string) string {
	s := pricing.Format(micro)
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	s = whole + "." + frac
	if currency != "" {
		s += " " + currency
	}
	return s
}

// formatCost writes the cost of calls model calls of which unpriced had no
// price: the amount, "unknown" when none was priced, "≥ amount (N calls
// unpriced)" when some were not, "" when there were no calls.
func formatCost(cost int64, calls, unpriced int, currency string) string {
	switch {
	case calls == 0:
		return ""
	case unpriced >= calls:
		return "unknown"
	case unpriced > 0:
		return fmt.Sprintf("≥ %s (%d %s unpriced)", formatAmount(cost, currency), unpriced, either(unpriced, "call", "calls"))
	}
	return formatAmount(cost, currency)
}

// sessionCost writes a session's cost as formatCost does ("" when it made
// no model call).
func sessionCost(s *session.Session, currency string) string {
	if s.Cost == nil {
		if s.Unpriced > 0 {
			return "unknown"
		}
		return ""
	}
	// The priced calls are at least one: formatCost needs only calls >
	// unpriced.
	return formatCost(*s.Cost, s.Unpriced+1, s.Unpriced, currency)
}

// usageKeyTitle is the first column's heading.
func usageKeyTitle(by string) string {
	switch by {
	case session.ByModel:
		return "MODEL"
	case session.BySession:
		return "SESSION"
	case session.ByWorkspace:
		return "WORKSPACE"
	}
	return "DAY (UTC)"
}

func writeUsageTable(out io.Writer, by, currency string, rows []session.UsageTotal, total session.UsageTotal) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	// AlignRight aligns every column right: the key, first, is padded on
	// its right by hand below, so it reads left-aligned.
	width := len(usageKeyTitle(by))
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = cell(r.Key)
		if by == session.ByWorkspace && r.Key == "" {
			keys[i] = "unknown"
		}
		width = max(width, len([]rune(keys[i])))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len([]rune(s))) }
	fmt.Fprintf(w, "%s\tCALLS\tINPUT\tCACHED\tOUTPUT\tCOST\t\n", pad(usageKeyTitle(by)))
	line := func(key string, r session.UsageTotal) {
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%s\t\n", pad(key), r.Calls, r.InputTokens, r.CachedInputTokens, r.OutputTokens, dash(formatCost(r.Cost, r.Calls, r.Unpriced, currency)))
	}
	for i, r := range rows {
		line(keys[i], r)
	}
	if len(rows) > 1 {
		line("total", total)
	}
	return w.Flush()
}

// usageRow is a session.UsageTotal in --json: its cost null when unknown
// (no call of it was priced).
type usageRow struct {
	Key               string `json:"key"`
	Calls             int    `json:"calls"`
	InputTokens       int64  `json:"input_tokens"`
	CachedInputTokens int64  `json:"cached_input_tokens"`
	OutputTokens      int64  `json:"output_tokens"`
	// Cost is in micro-units (millionths) of the currency; null when
	// no call was priced.
	Cost     *int64 `json:"cost"`
	Unpriced int    `json:"unpriced"`
}

func toUsageRow(t session.UsageTotal) usageRow {
	r := usageRow{Key: t.Key, Calls: t.Calls, InputTokens: t.InputTokens, CachedInputTokens: t.CachedInputTokens, OutputTokens: t.OutputTokens, Unpriced: t.Unpriced}
	if t.Unpriced < t.Calls {
		c := t.Cost
		r.Cost = &c
	}
	return r
}

func writeUsageJSON(out io.Writer, by, currency string, rows []session.UsageTotal, total session.UsageTotal) error {
	if by == "" {
		by = "total"
	}
	j := struct {
		By       string     `json:"by"`
		Currency string     `json:"currency"`
		Rows     []usageRow `json:"rows"`
		Total    usageRow   `json:"total"`
	}{By: by, Currency: currency, Rows: []usageRow{}, Total: toUsageRow(total)}
	j.Total.Key = ""
	for _, r := range rows {
		j.Rows = append(j.Rows, toUsageRow(r))
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
