package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/session"
)

// storeKinds is what --from and --to take, for messages.
const storeKinds = "use sqlite, postgres, a postgres:// URL, or a SQLite file's path"

// progressEvery is the least time between two progress lines.
const progressEvery = 250 * time.Millisecond

func (a *app) migrateCommand() *cobra.Command {
	var from, to string
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "migrate --from SRC --to DST",
		Short: "Copy every session and workspace from one session store to another (SQLite, PostgreSQL)",
		Long: `Migrate copies the sessions of one session store into another, whole: their
messages as stored (reasoning, tool calls, images, cut-short replies,
compactions, the records of failed turns), token usage, tool runs and the
sessions of their sub-agents, with their ids and times.

It copies the workspaces first (the folders 'hearth workspaces' lists, those
added by hand without a session too): their names, trust levels and first
and last use. A workspace DST knows already keeps DST's name and trust: a
migration never raises or lowers a trust DST has (it says which differ; set
them with 'hearth workspaces trust' if SRC's should win). Its first and last
use widen to include SRC's, and a workspace's last use moves on to the last
update of the sessions copied into it.

It never deletes anything from SRC. Once DST holds what you expect (point
HEARTH_DATABASE_URL at it and run 'hearth sessions list'), remove the old
store yourself, or keep it as a backup.

SRC and DST are each one of:
  sqlite          the SQLite file Hearth uses: $HEARTH_HOME/hearth.db, or
                  $XDG_DATA_HOME/hearth/hearth.db, or [store] url in the
                  config file when that is a path
  postgres        the PostgreSQL database that HEARTH_DATABASE_URL, or else
                  [store] url in the config file, names
  postgres://…    a PostgreSQL database's URL (a password missing from it
                  is taken from PGPASSWORD)
  PATH            a SQLite file (hearth.db)

A session DST already has (the same id) is skipped, and each session (and
workspace) is copied in a transaction of its own: a migration that was
interrupted is finished by running it again. Stop Hearth first (hearth serve, the desktop
app, running turns): a session that changes after it was copied is not
copied again. --dry-run counts what would be copied and writes no session or workspace (a
PostgreSQL DST is still given Hearth's tables, as any Hearth that opens it
does).

PostgreSQL's text cannot hold NUL bytes or invalid UTF-8, which SQLite keeps
(a binary file a tool read): they arrive as U+FFFD, as Hearth stores them on
PostgreSQL.`,
		Example: `  hearth migrate --from sqlite --to postgres --dry-run
  HEARTH_DATABASE_URL=postgres://hearth@localhost/hearth hearth migrate --from sqlite --to postgres
  hearth migrate --from ~/backup/hearth.db --to postgres://hearth@db.lan/hearth
  hearth migrate --from postgres --to sqlite --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.migrate(cmd.Context(), from, to, dryRun, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "copy from `SRC`: sqlite, postgres, a postgres:// URL or a SQLite file's path")
	f.StringVar(&to, "to", "", "copy into `DST`: sqlite, postgres, a postgres:// URL or a SQLite file's path")
	f.BoolVar(&dryRun, "dry-run", false, "count what would be copied, and copy nothing")
	f.BoolVar(&asJSON, "json", false, "print a summary as JSON on stdout")
	return cmd
}

// storeEnd is one side of a migration: a SQLite file or a PostgreSQL URL.
type storeEnd struct {
	loc string
	pg  bool
}

// String names the store for messages (a URL without its password).
func (e storeEnd) String() string {
	if e.pg {
		return session.RedactURL(e.loc)
	}
	return e.loc
}

// archiveStore is a store that moves whole sessions.
type archiveStore interface {
	session.Store
	session.Archiver
}

// migrateSummary is what a migration did (or, with --dry-run, would do).
type migrateSummary struct {
	From   string `json:"from"`
	To     string `json:"to"`
	DryRun bool   `json:"dry_run"`
	// Sessions counts SRC's top-level sessions.
	Sessions int `json:"sessions"`
	// Moved counts the top-level sessions copied; SubSessions the
	// sessions of their sub-agents copied with them; Messages the
	// messages of both.
	Moved       int `json:"moved"`
	SubSessions int `json:"sub_agent_sessions"`
	Messages    int `json:"messages"`
	// Skipped counts the sessions DST had already.
	Skipped int `json:"skipped"`
	// Workspaces counts SRC's workspaces; WorkspacesAdded those copied
	// (new in DST), WorkspacesKept those DST had already (which keep
	// DST's name and trust), TrustKept those of them whose trust in DST
	// differs from SRC's.
	Workspaces      int `json:"workspaces"`
	WorkspacesAdded int `json:"workspaces_added"`
	WorkspacesKept  int `json:"workspaces_kept"`
	TrustKept       int `json:"trust_kept"`
}

func (a *app) migrate(ctx context.Context, from, to string, dryRun, asJSON bool) error {
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
	src, err := resolveStoreEnd("--from", from, cfg, paths, getenv)
	if err != nil {
		return err
	}
	dst, err := resolveStoreEnd("--to", to, cfg, paths, getenv)
	if err != nil {
		return err
	}
	if sameStore(src, dst) {
		return usageError{fmt.Errorf("--from and --to are the same store (%s): name two different ones", src)}
	}

	if !src.pg && !fileExists(src.loc) {
		if strings.EqualFold(strings.TrimSpace(from), "sqlite") {
			return fmt.Errorf("no SQLite store at %s: nothing to migrate (HEARTH_HOME or XDG_DATA_HOME say where Hearth keeps it; or give the file's path: --from PATH)", src.loc)
		}
		return fmt.Errorf("no SQLite store at %s: nothing to migrate", src.loc)
	}
	srcSt, err := openStoreEnd(ctx, src, paths, getenv)
	if err != nil {
		return err
	}
	defer srcSt.Close()
	// A --dry-run into a SQLite file that is not there yet leaves it so:
	// dstSt nil stands for an empty store.
	var dstSt archiveStore
	if !dryRun || dst.pg || fileExists(dst.loc) {
		if dstSt, err = openStoreEnd(ctx, dst, paths, getenv); err != nil {
			return err
		}
		defer dstSt.Close()
	}

	ids, err := srcSt.SessionIDs(ctx)
	if err != nil {
		return err
	}
	sum := migrateSummary{From: src.String(), To: dst.String(), DryRun: dryRun, Sessions: len(ids)}
	// The workspaces first: the sessions' Import then finds them known,
	// with their names and trust (it would make a new one untrusted).
	kept, err := migrateWorkspaces(ctx, srcSt, dstSt, dryRun, &sum)
	if err != nil {
		return err
	}
	progress := &migrateProgress{a: a, total: len(ids), on: a.isTTY(a.io.err)}
	copied := func(ar *session.Archive) {
		n, m := ar.Count()
		sum.Moved++
		sum.SubSessions += n - 1
		sum.Messages += m
	}
	for i, id := range ids {
		progress.show(i)
		err := migrateOne(ctx, srcSt, dstSt, id, dryRun, copied)
		switch {
		case errors.Is(err, session.ErrExists):
			sum.Skipped++
		case errors.Is(err, session.ErrNotFound):
			// removed from SRC since it was listed
		case err != nil:
			progress.clear()
			if sum.Moved > 0 && !dryRun {
				a.stderr().Line(fmt.Sprintf("hearth: moved %s (%s) before this error; run the same command again to copy the rest", plural(sum.Moved, "session"), plural(sum.Messages, "message")))
			}
			return err
		}
	}
	progress.clear()
	if dryRun {
		a.stderr().Line(fmt.Sprintf("would move %s (%s), skip %d already in %s; nothing was written (--dry-run)",
			plural(sum.Moved, "session"), plural(sum.Messages, "message"), sum.Skipped, dst))
		a.stderr().Line(fmt.Sprintf("would add %s (names, trust levels), keep %d that %s has already (with its name and trust)",
			plural(sum.WorkspacesAdded, "workspace"), sum.WorkspacesKept, dst))
	} else {
		a.stderr().Line(fmt.Sprintf("moved %s (%s), skipped %d already in %s",
			plural(sum.Moved, "session"), plural(sum.Messages, "message"), sum.Skipped, dst))
		a.stderr().Line(fmt.Sprintf("added %s (names, trust levels), kept %d that %s had already (with its name and trust)",
			plural(sum.WorkspacesAdded, "workspace"), sum.WorkspacesKept, dst))
	}
	for _, k := range kept {
		a.stderr().Line(fmt.Sprintf("  %s keeps its trust in %s: %s (in %s: %s)", termtext.String(workspaceLabel(k.dst.Path)), dst, k.dst.Trust, src, k.src.Trust))
	}
	if len(kept) > 0 && !dryRun {
		a.stderr().Line("  (hearth workspaces trust PATH LEVEL sets it)")
	}
	if asJSON {
		enc := json.NewEncoder(a.io.out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	return nil
}

// keptTrust is a workspace DST had with another trust than SRC's: DST's
// is kept.
type keptTrust struct{ src, dst session.Workspace }

// migrateWorkspaces copies SRC's workspaces into dst (nil: an empty
// store), or with dryRun counts what it would do, into sum. It returns
// those DST had with another trust (kept).
func migrateWorkspaces(ctx context.Context, src, dst archiveStore, dryRun bool, sum *migrateSummary) ([]keptTrust, error) {
	list, err := src.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	sum.Workspaces = len(list)
	var kept []keptTrust
	for _, w := range list {
		var got session.Workspace
		added := true
		switch {
		case dst == nil:
		case dryRun:
			have, err := dst.Workspace(ctx, w.Path)
			switch {
			case err == nil:
				got, added = *have, false
			case !errors.Is(err, session.ErrNotFound):
				return nil, err
			}
		default:
			if got, added, err = dst.ImportWorkspace(ctx, w); err != nil {
				return nil, err
			}
		}
		if added {
			sum.WorkspacesAdded++
			continue
		}
		sum.WorkspacesKept++
		if got.Trust != w.Trust {
			sum.TrustKept++
			kept = append(kept, keptTrust{src: w, dst: got})
		}
	}
	return kept, nil
}

// workspaceLabel is a workspace's path as messages show it.
func workspaceLabel(path string) string {
	if path == "" {
		return "the unknown workspace (sessions recorded without a folder)"
	}
	return path
}

// migrateOne copies one top-level session (with its sub-agents') from src
// into dst, and reports it to copied; a session dst has already is an
// error wrapping session.ErrExists. With dryRun it writes nothing (dst
// nil: dst is empty).
func migrateOne(ctx context.Context, src, dst archiveStore, id string, dryRun bool, copied func(*session.Archive)) error {
	if dst != nil {
		_, err := dst.Get(ctx, id)
		if err == nil {
			return fmt.Errorf("session %s: %w", id, session.ErrExists)
		}
		if !errors.Is(err, session.ErrNotFound) {
			return err
		}
	}
	ar, err := src.Export(ctx, id)
	if err != nil {
		return err
	}
	if !dryRun {
		if err := dst.Import(ctx, ar); err != nil {
			return err
		}
	}
	copied(ar)
	return nil
}

// resolveStoreEnd reads one of --from and --to (flag names it).
func resolveStoreEnd(flag, v string, cfg *config.Config, paths config.Paths, getenv func(string) string) (storeEnd, error) {
	v = strings.TrimSpace(v)
	// The stores the user has configured, first come first.
	var configured []string
	for _, u := range []string{getenv("HEARTH_DATABASE_URL"), cfg.Store.URL} {
		if u = strings.TrimSpace(u); u != "" {
			configured = append(configured, u)
		}
	}
	switch lower := strings.ToLower(v); {
	case v == "":
		return storeEnd{}, usageError{fmt.Errorf("%s is needed: %s", flag, storeKinds)}
	case lower == "sqlite":
		for _, u := range configured {
			if !session.IsPostgresURL(u) {
				return sqliteEnd(flag, u, paths)
			}
		}
		return storeEnd{loc: paths.Database()}, nil
	case lower == "postgres" || lower == "postgresql":
		for _, u := range configured {
			if session.IsPostgresURL(u) {
				return storeEnd{loc: u, pg: true}, nil
			}
		}
		return storeEnd{}, usageError{fmt.Errorf("%s %s: no PostgreSQL database is configured: set HEARTH_DATABASE_URL (or [store] url in %s) to its postgres:// URL, or give the URL itself: %s postgres://USER@HOST/DATABASE",
			flag, v, paths.UserFile(), flag)}
	case session.IsPostgresURL(v):
		return storeEnd{loc: v, pg: true}, nil
	case strings.Contains(v, "://") || !looksLikePath(v):
		shown := session.RedactURL(v)
		if u, err := url.Parse(v); err == nil && u.User != nil {
			shown = u.Redacted() // another database's URL, password and all
		}
		return storeEnd{}, usageError{fmt.Errorf("%s %s: not a store Hearth knows: %s", flag, shown, storeKinds)}
	}
	if rest, ok := strings.CutPrefix(v, "~/"); ok && paths.Home != "" {
		v = filepath.Join(paths.Home, rest)
	}
	abs, err := filepath.Abs(v)
	if err != nil {
		return storeEnd{}, usageError{fmt.Errorf("%s %s: %w", flag, v, err)}
	}
	return storeEnd{loc: abs}, nil
}

// sqliteEnd is the SQLite file a configured store that is not a URL names.
func sqliteEnd(flag, u string, paths config.Paths) (storeEnd, error) {
	loc, _, err := loader.StoreLocation(&config.Config{Store: config.Store{URL: u}}, paths, func(string) string { return "" })
	if err != nil {
		return storeEnd{}, usageError{fmt.Errorf("%s sqlite: %w", flag, err)}
	}
	return storeEnd{loc: loc}, nil
}

// looksLikePath tells a file's path from a mistyped store kind ("sqlit",
// "mysql"): it has a directory, a database's extension, or is there.
func looksLikePath(v string) bool {
	if strings.ContainsRune(v, '/') || strings.ContainsRune(v, filepath.Separator) || strings.HasPrefix(v, "~") {
		return true
	}
	switch strings.ToLower(filepath.Ext(v)) {
	case ".db", ".sqlite", ".sqlite3":
		return true
	}
	_, err := os.Stat(v)
	return err == nil
}

// fileExists reports whether there is a file (or anything) at path.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// sameStore reports whether two ends are one store: the same file, or the
// same database on the same server.
func sameStore(a, b storeEnd) bool {
	if a.pg != b.pg {
		return false
	}
	if !a.pg {
		if filepath.Clean(a.loc) == filepath.Clean(b.loc) {
			return true
		}
		fa, errA := os.Stat(a.loc)
		fb, errB := os.Stat(b.loc)
		return errA == nil && errB == nil && os.SameFile(fa, fb)
	}
	ca, errA := pgconn.ParseConfig(a.loc)
	cb, errB := pgconn.ParseConfig(b.loc)
	if errA != nil || errB != nil {
		return a.loc == b.loc
	}
	return ca.Host == cb.Host && ca.Port == cb.Port && ca.Database == cb.Database
}

// openStoreEnd opens one side of a migration as the loader opens the
// store it is configured with (PGPASSWORD included), creating a SQLite
// file that is not there.
func openStoreEnd(ctx context.Context, e storeEnd, paths config.Paths, getenv func(string) string) (archiveStore, error) {
	// The configuration is this end, whatever HEARTH_DATABASE_URL says.
	only := func(k string) string {
		if k == "HEARTH_DATABASE_URL" {
			return ""
		}
		return getenv(k)
	}
	st, err := loader.OpenStore(ctx, &config.Config{Store: config.Store{URL: e.loc}}, paths, only, nil)
	if err != nil {
		var ce loader.ConfigError
		if errors.As(err, &ce) {
			return nil, usageError{err}
		}
		return nil, err
	}
	as, ok := st.(archiveStore)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("the session store %s cannot export or import sessions", e)
	}
	return as, nil
}

// migrateProgress shows, on a terminal, how far a migration is, on one
// line rewritten at most a few times a second.
type migrateProgress struct {
	a     *app
	total int
	on    bool
	last  time.Time
	shown bool
}

func (p *migrateProgress) show(done int) {
	if !p.on || p.total == 0 {
		return
	}
	if now := time.Now(); now.Sub(p.last) >= progressEvery {
		p.last = now
		p.shown = true
		fmt.Fprintf(p.a.io.err, "\r\033[Kmigrating %d/%d sessions…", done, p.total)
	}
}

// clear removes the progress line, if one is shown.
func (p *migrateProgress) clear() {
	if p.shown {
		fmt.Fprint(p.a.io.err, "\r\033[K")
		p.shown = false
	}
}
