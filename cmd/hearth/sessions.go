package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

func (a *app) sessionsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sessions",
		Short: "List, show, export, undo, rewind, fork, archive and remove saved sessions",
		Long: `Sessions are kept in a SQLite database under the XDG data directory
($XDG_DATA_HOME/hearth/hearth.db, or $HEARTH_HOME/hearth.db), or, when
HEARTH_DATABASE_URL or [store] url in the config file names one, in a
PostgreSQL database that several Hearth servers share.

Before every tool call that may change the workspace, Hearth takes a
checkpoint: a snapshot of its files, kept in the data directory, outside the
workspace. undo, redo and rewind bring the files back from them; fork starts
a new session from any point of one; archive hides a session without
deleting it. ([checkpoints] enabled = false in the config file turns
checkpoints off.)`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.sessionsList(), a.sessionsShow(), a.sessionsExport(), a.sessionsRemove(),
		a.sessionsUndo(hearth.Undo), a.sessionsUndo(hearth.Redo), a.sessionsRewind(), a.sessionsFork(),
		a.sessionsArchive(true), a.sessionsArchive(false), a.sessionsCheckpoints(), a.sessionsPrune())
	return cmd
}

// errNoStore is returned by withStore when no session was ever saved.
var errNoStore = errors.New("no sessions yet: `hearth run --context NAME \"…\"` starts one")

// withStore opens the session store for one command; it does not create one
// on a machine that has none (errNoStore).
func (a *app) withStore(ctx context.Context, f func(st session.Store) error) error {
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return usageError{err}
	}
	// The user's file only: a project cannot choose the store.
	cfg, err := config.Load(paths, "")
	if err != nil {
		return usageError{err}
	}
	getenv := envscrub.Wrap(a.getenv)
	loc, pg, err := loader.StoreLocation(cfg, paths, getenv)
	if err != nil {
		return usageError{err} // the user's setting: exit 2
	}
	if !pg {
		if _, err := os.Stat(loc); errors.Is(err, os.ErrNotExist) {
			return errNoStore
		}
	}
	st, err := loader.OpenStore(ctx, cfg, paths, getenv, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	return f(st)
}

func (a *app) sessionsList() *cobra.Command {
	var asJSON, archived bool
	var limit int
	var query string
	none := "No sessions yet: `hearth run --context NAME \"…\"` starts one."
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sessions, most recent first",
		Long:    "List sessions, most recent first. Archived sessions (hearth sessions archive ID) are not listed; --archived lists them instead.",
		Example: "  hearth sessions list --limit 10\n  hearth sessions list --query parser --json\n  hearth sessions list --archived",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if archived {
				none = "No archived sessions."
			}
			err := a.withStore(cmd.Context(), func(st session.Store) error {
				list, err := st.List(cmd.Context(), session.ListOptions{Limit: limit, Query: query, Archived: archived})
				if err != nil {
					return err
				}
				if asJSON {
					if list == nil {
						list = []session.Session{}
					}
					enc := json.NewEncoder(a.io.out)
					enc.SetIndent("", "  ")
					return enc.Encode(list)
				}
				if len(list) == 0 {
					fmt.Fprintln(a.io.err, none)
					return nil
				}
				w := tabwriter.NewWriter(a.io.out, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tUPDATED\tMESSAGES\tMODEL\tTITLE")
				for _, s := range list {
					fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", termtext.String(s.ID), s.UpdatedAt.Local().Format("2006-01-02 15:04"), s.MessageCount, termtext.String(dash(s.Model)), termtext.String(s.Title))
				}
				return w.Flush()
			})
			if errors.Is(err, errNoStore) {
				if asJSON {
					fmt.Fprintln(a.io.out, "[]")
				} else {
					fmt.Fprintln(a.io.err, none)
				}
				return nil
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	cmd.Flags().IntVar(&limit, "limit", 0, "show at most this many")
	cmd.Flags().StringVarP(&query, "query", "q", "", "only sessions whose title or messages contain this")
	cmd.Flags().BoolVar(&archived, "archived", false, "list the archived sessions instead")
	return cmd
}

// load returns a session and its messages, or a clear not-found error.
func load(ctx context.Context, st session.Store, id string) (*session.Session, []session.Message, error) {
	s, err := st.Get(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil, fmt.Errorf("no session %q: `hearth sessions list` shows them", id)
	}
	if err != nil {
		return nil, nil, err
	}
	msgs, err := st.Messages(ctx, id)
	return s, msgs, err
}

func (a *app) sessionsShow() *cobra.Command {
	return &cobra.Command{
		Use:     "show ID",
		Short:   "Show a session's conversation",
		Example: "  hearth sessions show s1",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st session.Store) error {
				s, msgs, err := load(cmd.Context(), st, args[0])
				if err != nil {
					return err
				}
				return writeMarkdown(a.io.out, s, msgs, false, true, a.currency())
			})
		},
	}
}

func (a *app) sessionsExport() *cobra.Command {
	var format, output string
	cmd := &cobra.Command{
		Use:   "export ID",
		Short: "Export a session as JSON or Markdown",
		Example: `  hearth sessions export s1 > s1.json
  hearth sessions export s1 --format markdown -o s1.md`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" && format != "markdown" && format != "md" {
				return usageError{fmt.Errorf("--format %q: use json or markdown", format)}
			}
			return a.withStore(cmd.Context(), func(st session.Store) error {
				s, msgs, err := load(cmd.Context(), st, args[0])
				if err != nil {
					return err
				}
				runs, err := st.ToolRuns(cmd.Context(), args[0])
				if err != nil {
					return err
				}
				var w io.Writer = a.io.out
				var f *os.File
				if output != "" && output != "-" {
					if f, err = os.Create(output); err != nil {
						return err
					}
					w = f
				}
				if format == "json" {
					enc := json.NewEncoder(w)
					enc.SetIndent("", "  ")
					if msgs == nil {
						msgs = []session.Message{}
					}
					err = enc.Encode(struct {
						Session  *session.Session  `json:"session"`
						Messages []session.Message `json:"messages"`
						ToolRuns []session.ToolRun `json:"tool_runs"`
					}{s, msgs, runs})
				} else {
					err = writeMarkdown(w, s, msgs, true, false, a.currency())
				}
				if f != nil {
					if cerr := f.Close(); err == nil {
						err = cerr
					}
				}
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&format, "format", "f", "json", "json or markdown")
	cmd.Flags().StringVarP(&output, "output", "o", "", "write to this file instead of stdout")
	return cmd
}

func (a *app) sessionsRemove() *cobra.Command {
	return &cobra.Command{
		Use:     "rm ID...",
		Aliases: []string{"remove", "delete"},
		Short:   "Remove sessions and everything in them",
		Example: "  hearth sessions rm s1 s2",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("name at least one session id")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st session.Store) error {
				var errs []error
				for _, id := range args {
					// A running turn holds the session: wait for it, or fail.
					unlock, err := st.Lock(cmd.Context(), id)
					if err != nil {
						errs = append(errs, err)
						continue
					}
					err = st.Delete(cmd.Context(), id)
					unlock()
					if sq, ok := st.(*session.SQLite); ok {
						sq.RemoveLock(id)
					}
					if errors.Is(err, session.ErrNotFound) {
						errs = append(errs, fmt.Errorf("no session %q", id))
					} else if err != nil {
						errs = append(errs, err)
					} else {
						fmt.Fprintf(a.io.err, "removed %s\n", id)
					}
				}
				return errors.Join(errs...)
			})
		},
	}
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))}
		}
		return nil
	}
}

// writeMarkdown renders a session as Markdown. full adds the reasoning and
// every tool result in full; numbered gives each heading its message's
// number (#N, its seq: what rewind --to and fork --at take).
//
// Markdown is for people, like run's text output: what the model and the
// tools wrote is stripped of control sequences (see termtext), on a
// terminal or in a file. The JSON export keeps it exact.
//
// The header gives the session's cost (its own model calls': see
// formatCost), in the [pricing] currency.
func writeMarkdown(out io.Writer, s *session.Session, msgs []session.Message, full, numbered bool, currency string) error {
	w := termtext.NewWriter(out)
	defer w.Flush()
	title := s.Title
	if title == "" {
		title = s.ID
	}
	fmt.Fprintf(w, "# %s\n\n", title)
	fmt.Fprintf(w, "Session `%s` · %s · %s · %d %s", s.ID, dash(s.Model), s.CreatedAt.Local().Format(time.DateTime), len(msgs), either(len(msgs), "message", "messages"))
	if s.ForkOf != "" {
		fmt.Fprintf(w, " · forked from `%s`", s.ForkOf)
		if s.ForkSeq > 0 {
			fmt.Fprintf(w, " (up to message %d)", s.ForkSeq)
		}
	}
	if s.Archived {
		fmt.Fprint(w, " · archived")
	}
	if c := sessionCost(s, currency); c != "" {
		fmt.Fprintf(w, " · cost %s", c)
	}
	fmt.Fprintln(w)
	for _, m := range msgs {
		num := ""
		if numbered {
			num = fmt.Sprintf(" (#%d)", m.Seq)
		}
		switch m.Role {
		case llm.RoleUser:
			if m.Summary {
				fmt.Fprintf(w, "\n## Summary of earlier turns%s\n\n%s\n", num, strings.TrimPrefix(m.Content, "[Summary of the earlier conversation]\n"))
				continue
			}
			if m.Reminder {
				// Hearth's words to the model (a strict plan), not yours.
				fmt.Fprintf(w, "\n## Hearth, to the model%s\n\n%s\n", num, m.Content)
				continue
			}
			fmt.Fprintf(w, "\n## You%s\n\n%s\n", num, m.Content)
		case llm.RoleAssistant:
			if m.Failure {
				// Hearth's record of why the turn failed, not the model's.
				fmt.Fprintf(w, "\n## Failed%s\n\n%s\n", num, m.Content)
				continue
			}
			fmt.Fprintf(w, "\n## Hearth%s\n\n", num)
			if full && m.Thinking != "" {
				fmt.Fprintf(w, "<details><summary>Reasoning</summary>\n\n%s\n\n</details>\n\n", m.Thinking)
			}
			if m.Content != "" {
				fmt.Fprintf(w, "%s\n", m.Content)
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(w, "\n- calls `%s` `%s`\n", tc.Name, tc.Args)
			}
			if m.Partial {
				fmt.Fprintln(w, "\n*(cut short)*")
			}
		case llm.RoleTool:
			out := m.Content
			if !full {
				out = clipLines(out, 12)
			}
			fmt.Fprintf(w, "\n**%s** returned:\n\n```\n%s\n```\n", m.ToolName, strings.TrimRight(out, "\n"))
		}
	}
	return nil
}

func clipLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… (%d more lines; `hearth sessions export --format markdown` has them all)", len(lines)-n)
}
