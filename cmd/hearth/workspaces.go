package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/session"
)

func (a *app) workspacesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "workspaces",
		Aliases: []string{"workspace", "ws"},
		Short:   "List the folders Hearth has worked in, and set how far each is trusted",
		Long: `Every folder Hearth works in is remembered, with a name and a trust level:

  untrusted   the default for a folder never seen: the project's own config
              (.hearth/config.toml) may only tighten yours, and approval
              modes above default (auto_edit, yolo) are refused
  read-only   the agent may only read there, whatever the approval mode:
              no edits, and commands run in a read-only sandbox
  trusted     the project's config applies as your own would: its MCP
              servers run as you, outside the sandbox (the agent's own
              commands stay confined); if the file changes, it is read as
              untrusted until you trust the folder again

Hearth enforces the level where effects happen. The terminal UI, the web UI
and the desktop app ask once for a folder never trusted ("untrusted (default)"
in the list until then); headless runs never ask, and --trust sets a level
for one run. Sessions belong to the folder they ran in: the list counts them,
and the HTTP API lists them (GET /v1/sessions?workspace=PATH).`,
		Example: `  hearth workspaces
  hearth workspaces add ~/src/app --name app
  hearth workspaces trust ~/src/app trusted
  hearth workspaces rm ~/src/old-project`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.workspacesListRun(cmd.Context(), false) },
	}
	var asJSON bool
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the known folders, most recently used first",
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return a.workspacesListRun(cmd.Context(), asJSON) },
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")

	var name, trust string
	add := &cobra.Command{
		Use:   "add PATH",
		Short: "Remember a folder (or rename it, or set its trust)",
		Args:  argsSaying(1, "the folder to add"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := workspacePath(args[0], true)
			if err != nil {
				return err
			}
			if err := checkName(name); err != nil {
				return usageError{err}
			}
			w := session.Workspace{Path: path, Name: name}
			if trust != "" {
				if w.Trust, err = session.ParseTrust(trust); err != nil {
					return usageError{err}
				}
			}
			return a.saveWorkspace(cmd.Context(), w)
		},
	}
	add.Flags().StringVar(&name, "name", "", "a name for the folder (default: its base name)")
	add.Flags().StringVar(&trust, "trust", "", "untrusted, read-only or trusted (default: untrusted for a new folder)")

	trustCmd := &cobra.Command{
		Use:   "trust PATH untrusted|read-only|trusted",
		Short: "Set how far a folder is trusted (adding it if it is new)",
		Args:  argsSaying(2, "the folder and a trust level: untrusted, read-only or trusted"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := workspacePath(args[0], true)
			if err != nil {
				return err
			}
			level, err := session.ParseTrust(args[1])
			if err != nil {
				return usageError{err}
			}
			return a.saveWorkspace(cmd.Context(), session.Workspace{Path: path, Trust: level})
		},
	}

	rm := &cobra.Command{
		Use:     "rm PATH",
		Aliases: []string{"remove", "forget"},
		Short:   "Forget a folder (its sessions are kept)",
		Long: `Forget a folder: it leaves the list, with its name and trust; its sessions
are kept, and a new session there makes it known again, untrusted.

PATH is looked up as Hearth records it: absolute, symlinks resolved. A folder
that is gone is looked up with its longest existing parent resolved, then as
given. 'hearth workspaces' lists the exact paths, which rm takes as shown.`,
		Args: argsSaying(1, "the folder to forget"),
		RunE: func(cmd *cobra.Command, args []string) error {
			tries, err := forgetPaths(args[0])
			if err != nil {
				return err
			}
			return a.withStore(cmd.Context(), func(st session.Store) error {
				for _, path := range tries {
					err := st.RemoveWorkspace(cmd.Context(), path)
					if errors.Is(err, session.ErrNotFound) {
						continue
					}
					if err != nil {
						return err
					}
					fmt.Fprintf(a.io.err, "Forgot %s; its sessions are kept.\n", termtext.String(path))
					return nil
				}
				quoted := make([]string, len(tries))
				for i, p := range tries {
					quoted[i] = strconv.Quote(termtext.String(p))
				}
				return usageError{fmt.Errorf("%s is not a known workspace (tried %s): 'hearth workspaces' lists the exact paths, which rm takes as they are shown",
					termtext.String(args[0]), strings.Join(quoted, " and "))}
			})
		},
	}
	cmd.AddCommand(list, add, trustCmd, rm)
	return cmd
}

// argsSaying wants n arguments, and says which when they are not there.
func argsSaying(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s wants %s", cmd.CommandPath(), what)}
		}
		return nil
	}
}

// checkName refuses a name that is not one short line of text: it is
// shown in tables, where a line break or a tab would forge rows.
func checkName(name string) error {
	if utf8.RuneCountInString(name) > 200 {
		return errors.New("--name: at most 200 characters")
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("--name %q: one line of text, without tabs or control characters", name)
		}
	}
	return nil
}

// cell is a value for a table cell: stripped of control sequences, and
// with line breaks and tabs shown escaped, so that no value makes a row or
// a column of its own.
func cell(s string) string {
	s = termtext.String(s)
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	}
	return s
}

// workspacePath is the folder as Hearth records it: absolute, symlinks
// resolved (the path its sessions carry). A folder that must exist is
// checked to be one.
func workspacePath(arg string, mustExist bool) (string, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", usageError{fmt.Errorf("%s: %w", arg, err)}
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case err == nil:
		abs = real
	case mustExist || !errors.Is(err, os.ErrNotExist):
		return "", usageError{fmt.Errorf("%s: %w", arg, err)}
	}
	if mustExist {
		fi, err := os.Stat(abs)
		if err != nil {
			return "", usageError{err}
		}
		if !fi.IsDir() {
			return "", usageError{fmt.Errorf("%s is not a folder", arg)}
		}
	}
	return abs, nil
}

// forgetPaths are the paths rm looks up for arg, in turn: the folder as
// Hearth records it (absolute, symlinks resolved); for a folder that is no
// longer there, its longest existing parent resolved and the rest
// appended, then the absolute path as given.
func forgetPaths(arg string) ([]string, error) {
	abs, err := filepath.Abs(arg)
	if err != nil {
		return nil, usageError{fmt.Errorf("%s: %w", arg, err)}
	}
	real, err := filepath.EvalSymlinks(abs)
	switch {
	case err == nil:
		return []string{real}, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, usageError{fmt.Errorf("%s: %w", arg, err)}
	}
	tries := []string{abs}
	if r, ok := resolveExisting(abs); ok && r != abs {
		tries = []string{r, abs}
	}
	return tries, nil
}

// resolveExisting resolves the symlinks of the longest part of the
// absolute, clean path abs that exists, and appends the rest; false when
// no part of it can be resolved.
func resolveExisting(abs string) (string, bool) {
	var rest []string
	dir := abs
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		rest = append(rest, filepath.Base(dir))
		dir = parent
		real, err := filepath.EvalSymlinks(dir)
		if err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				real = filepath.Join(real, rest[i])
			}
			return real, true
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", false
		}
	}
}

// saveWorkspace adds or changes a workspace, creating the store if this
// machine has none yet, and says what it is now.
func (a *app) saveWorkspace(ctx context.Context, w session.Workspace) error {
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return usageError{err}
	}
	cfg, err := config.Load(paths, "")
	if err != nil {
		return usageError{err}
	}
	st, err := loader.OpenStore(ctx, cfg, paths, envscrub.Wrap(a.getenv), nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if w.Trust != "" {
		// Trusted for the project's file as it is now: one that changes
		// later is read as an untrusted folder's until trusted again.
		w.ConfigHash = config.ProjectHash(w.Path)
	}
	saved, err := st.AddWorkspace(ctx, w)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.io.err, "%s (%s): %s\n", termtext.String(saved.Name), termtext.String(saved.Path), saved.Trust)
	if saved.Trust == session.TrustTrusted {
		if s := projectSummary(saved.Path); s != "" {
			fmt.Fprintf(a.io.err, "Its .hearth/config.toml now applies as yours: %s. If it changes, it is read as an untrusted folder's until you trust the folder again.\n", termtext.String(s))
		}
	}
	return nil
}

// projectSummary says what a workspace's .hearth/config.toml would do once
// trusted: the programs it starts, the servers it talks to ("" when it has
// none, or none Hearth reads).
func projectSummary(root string) string {
	data, cut, err := config.ReadProjectFile(root, filepath.Join(".hearth", "config.toml"), 1<<20)
	if err != nil || cut {
		return ""
	}
	c, err := config.Parse(".hearth/config.toml", data)
	if err != nil {
		return "it does not parse: " + err.Error()
	}
	var parts []string
	for _, n := range slices.Sorted(maps.Keys(c.MCPServers)) {
		m := c.MCPServers[n]
		what := strings.Join(append([]string{m.Command}, m.Args...), " ")
		if m.URL != "" {
			what = m.URL
		}
		parts = append(parts, fmt.Sprintf("MCP server %s (%s, run as you, outside the sandbox)", n, what))
	}
	for _, n := range slices.Sorted(maps.Keys(c.Providers)) {
		parts = append(parts, fmt.Sprintf("provider %s at %s", n, c.Providers[n].BaseURL))
	}
	if c.DefaultProvider != "" {
		parts = append(parts, "default provider "+c.DefaultProvider)
	}
	if len(c.Profiles) > 0 {
		parts = append(parts, "profiles "+strings.Join(slices.Sorted(maps.Keys(c.Profiles)), ", "))
	}
	if len(c.SubAgents) > 0 {
		parts = append(parts, "sub-agents "+strings.Join(slices.Sorted(maps.Keys(c.SubAgents)), ", "))
	}
	if len(parts) == 0 {
		return "it sets nothing that starts programs or chooses servers"
	}
	return strings.Join(parts, "; ")
}

func (a *app) workspacesListRun(ctx context.Context, asJSON bool) error {
	err := a.withStore(ctx, func(st session.Store) error {
		list, err := st.Workspaces(ctx)
		if err != nil {
			return err
		}
		if asJSON {
			if list == nil {
				list = []session.Workspace{}
			}
			enc := json.NewEncoder(a.io.out)
			enc.SetIndent("", "  ")
			return enc.Encode(list)
		}
		if len(list) == 0 {
			fmt.Fprintln(a.io.err, "No workspaces yet: Hearth remembers each folder it works in.")
			return nil
		}
		w := tabwriter.NewWriter(a.io.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tTRUST\tSESSIONS\tLAST USED\tPATH")
		for _, ws := range list {
			path := ws.Path
			if path == "" {
				path = "(sessions recorded without a folder)"
			}
			trust := string(ws.Trust)
			if !ws.TrustChosen {
				trust += " (default)"
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", cell(ws.Name), trust, ws.Sessions, ws.LastUsed.Local().Format("2006-01-02 15:04"), cell(path))
		}
		return w.Flush()
	})
	if errors.Is(err, errNoStore) {
		if asJSON {
			fmt.Fprintln(a.io.out, "[]")
		} else {
			fmt.Fprintln(a.io.err, "No workspaces yet: Hearth remembers each folder it works in.")
		}
		return nil
	}
	return err
}

// trustLine says, for --verbose and the terminal UI, how far the workspace
// is trusted and why: headless runs never ask.
func trustLine(root string, l *loader.Loaded) string {
	what := map[session.Trust]string{
		session.TrustTrusted:   "its .hearth/config.toml applies as yours",
		session.TrustReadOnly:  "reading only, commands in a read-only sandbox",
		session.TrustUntrusted: "its .hearth/config.toml may only tighten yours, no approval mode above default",
	}[l.Trust]
	line := fmt.Sprintf("hearth: workspace %s is %s (%s): %s.", termtext.String(root), l.Trust, l.TrustSource, what)
	if !l.TrustChosen {
		line += " Change it with `hearth workspaces trust " + termtext.String(loader.ShellQuote(root)) + " LEVEL`, or --trust for a run."
	}
	return line
}
