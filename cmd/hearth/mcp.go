package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/mcp"
)

func (a *app) mcpCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "List, add and remove MCP servers",
		Long: `MCP servers give the agent more tools. Each is configured under
[mcp_servers.NAME] in config.toml (the user's file, or the project's
.hearth/config.toml, which wins); its tools are offered as NAME__TOOL, and
profiles select them like any tool ("NAME__*").

A stdio server is a command Hearth starts; an HTTP server is a URL
(streamable HTTP, or SSE when the path ends in /sse or the server only
speaks that). Tools a server does not mark read-only need approval like
shell commands.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(a.mcpList(), a.mcpAdd(), a.mcpRemove())
	return cmd
}

func (a *app) mcpList() *cobra.Command {
	var asJSON, noConnect, showTools bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the configured servers, connecting to each for its status and tools",
		Long: `List the MCP servers of the user's and the project's config. Each is
started (in parallel, as a session would) to report whether it works and
what it offers, then stopped. Exit code 1 when a server does not start.`,
		Example: "  hearth mcp list\n  hearth mcp list --tools\n  hearth mcp list --json --timeout 10s",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			paths, err := config.DefaultPaths(a.getenv)
			if err != nil {
				return usageError{err}
			}
			ws := a.workspace
			if ws == "" {
				ws, _ = os.Getwd()
			}
			cfg, err := config.Load(paths, ws)
			if err != nil {
				return usageError{err}
			}
			servers := loader.MCPServers(cfg.MCPServers)
			if len(servers) == 0 {
				fmt.Fprintf(a.io.err, "No MCP servers configured: add one with `hearth mcp add NAME -- COMMAND ARGS…` or `hearth mcp add NAME URL`.\n")
				if asJSON {
					fmt.Fprintln(a.io.out, "[]")
				}
				return nil
			}
			if timeout > 0 {
				for i := range servers {
					servers[i].StartTimeout = timeout
				}
			}
			o := mcp.Options{Servers: servers, Dir: ws, Getenv: a.getenv}
			if a.getenv("HEARTH_LOG") != "" {
				// The status below says what failed; the log says more.
				o.Logger = a.logger()
			}
			m, err := mcp.New(o)
			if err != nil {
				return usageError{err}
			}
			defer m.Close()
			if !noConnect {
				m.Start()
				if err := m.Wait(cmd.Context()); err != nil {
					return err
				}
			}
			status := m.Status()
			if asJSON {
				enc := json.NewEncoder(a.io.out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(status); err != nil {
					return err
				}
			} else {
				a.printMCPStatus(status, showTools, noConnect)
			}
			for _, s := range status {
				if s.State == mcp.StateFailed {
					return errSilent{errors.New("an MCP server did not start")}
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&asJSON, "json", false, "print the status as JSON")
	fl.BoolVar(&noConnect, "no-connect", false, "list the configuration only; start nothing")
	fl.BoolVar(&showTools, "tools", false, "list each server's tools")
	fl.DurationVar(&timeout, "timeout", 0, "give each server this long to start (default: its own timeout, or 30s)")
	return cmd
}

// printMCPStatus shows the servers' status. What a server says (its name,
// its tools, its errors) is stripped of control sequences: a server can be
// hostile, or pass on what a model or a web page wrote.
func (a *app) printMCPStatus(status []mcp.ServerStatus, showTools, noConnect bool) {
	out := termtext.NewWriter(a.io.out)
	defer out.Flush()
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if noConnect {
		fmt.Fprintln(w, "NAME\tTRANSPORT\tTARGET")
	} else {
		fmt.Fprintln(w, "NAME\tTRANSPORT\tSTATUS\tTOOLS\tSTART\tTARGET")
	}
	for _, s := range status {
		if noConnect {
			fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name, s.Transport, s.Target)
			continue
		}
		start := "-"
		if s.StartMS > 0 || s.State == mcp.StateReady {
			start = fmt.Sprintf("%dms", s.StartMS)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\t%s\n", s.Name, s.Transport, s.State, len(s.Tools), start, s.Target)
	}
	w.Flush()
	for _, s := range status {
		if s.Error != "" {
			fmt.Fprintf(out, "\n%s: %s\n", s.Name, s.Error)
		}
		for _, warn := range s.Warnings {
			fmt.Fprintf(out, "%s: warning: %s\n", s.Name, warn)
		}
		if showTools && len(s.Tools) > 0 {
			fmt.Fprintf(out, "\n%s (%s): %s\n", s.Name, s.Server, strings.Join(s.Tools, ", "))
			if len(s.Prompts) > 0 {
				fmt.Fprintf(out, "  prompts: %s\n", strings.Join(s.Prompts, ", "))
			}
		}
	}
}

// mcpAddFlags are `hearth mcp add`'s options.
type mcpAddFlags struct {
	env, headers     []string
	cwd              string
	timeout          time.Duration
	include, exclude []string
	force            bool
}

func (a *app) mcpAdd() *cobra.Command {
	var f mcpAddFlags
	cmd := &cobra.Command{
		Use:   "add NAME (-- COMMAND [ARGS…] | URL)",
		Short: "Add an MCP server to your config file",
		Long: `Add a server under [mcp_servers.NAME] in your config file (the rest of
the file is kept as it is). Give a command after -- for a stdio server, or
a URL for an HTTP one. Values of --env and --header may name environment
variables ($GITHUB_TOKEN), read when the server starts, so that secrets
stay out of the file.`,
		Example: `  hearth mcp add fs -- npx -y @modelcontextprotocol/server-filesystem ~/notes
  hearth mcp add github --env GITHUB_TOKEN='$GITHUB_TOKEN' -- npx -y @modelcontextprotocol/server-github
  hearth mcp add docs https://example.com/mcp --header 'Authorization=Bearer $DOCS_TOKEN'
  hearth mcp add everything --exclude 'toggle-*' -- npx -y @modelcontextprotocol/server-everything`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageError{errors.New("give a name and then a command after -- (stdio) or a URL (HTTP): hearth mcp add NAME -- COMMAND ARGS…")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name, rest := args[0], args[1:]
			dash := cmd.ArgsLenAtDash()
			var s serverTOML
			switch {
			case dash == 1:
				s.Command, s.Args = rest[0], rest[1:]
			case dash == -1 && len(rest) == 1 && (strings.HasPrefix(rest[0], "http://") || strings.HasPrefix(rest[0], "https://")):
				s.URL = rest[0]
			case dash == -1 && len(rest) >= 1:
				return usageError{fmt.Errorf("%q is not a URL: for a command, put it after -- (hearth mcp add %s -- %s)", rest[0], name, strings.Join(rest, " "))}
			default:
				return usageError{errors.New("give the command right after the name and --: hearth mcp add NAME -- COMMAND ARGS…")}
			}
			var err error
			if s.Env, err = keyValues("--env", f.env); err != nil {
				return err
			}
			if s.Headers, err = keyValues("--header", f.headers); err != nil {
				return err
			}
			if s.Command == "" && (len(s.Env) > 0 || f.cwd != "") {
				return usageError{errors.New("--env and --cwd are for stdio servers (a command after --)")}
			}
			if s.URL == "" && len(s.Headers) > 0 {
				return usageError{errors.New("--header is for HTTP servers (a URL)")}
			}
			s.Cwd, s.Include, s.Exclude = f.cwd, f.include, f.exclude
			if f.timeout > 0 {
				s.Timeout = f.timeout.String()
			}
			return a.editMCPConfig(name, &s, f.force)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.env, "env", "e", nil, "KEY=VALUE for the server's environment (repeat it)")
	fl.StringArrayVar(&f.headers, "header", nil, "KEY=VALUE HTTP header (repeat it)")
	fl.StringVar(&f.cwd, "cwd", "", "directory to start the server in (relative: to the workspace)")
	fl.DurationVar(&f.timeout, "timeout", 0, "bound for its start and each call (e.g. 1m)")
	fl.StringArrayVar(&f.include, "include", nil, "offer only tools matching this glob (repeat it)")
	fl.StringArrayVar(&f.exclude, "exclude", nil, "do not offer tools matching this glob (repeat it)")
	fl.BoolVar(&f.force, "force", false, "replace a server of that name")
	return cmd
}

func (a *app) mcpRemove() *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove"},
		Short:   "Remove an MCP server from your config file",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.editMCPConfig(args[0], nil, false)
		},
	}
}

func keyValues(flag string, kvs []string) (map[string]string, error) {
	if len(kvs) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, usageError{fmt.Errorf("%s %q: want KEY=VALUE", flag, kv)}
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// serverTOML is how a server is written to the file (what is not set is
// left out).
type serverTOML struct {
	Command string            `toml:"command,omitempty"`
	Args    []string          `toml:"args,omitempty"`
	Cwd     string            `toml:"cwd,omitempty"`
	URL     string            `toml:"url,omitempty"`
	Timeout string            `toml:"timeout,omitempty"`
	Include []string          `toml:"include_tools,omitempty"`
	Exclude []string          `toml:"exclude_tools,omitempty"`
	Env     map[string]string `toml:"env,omitempty"`
	Headers map[string]string `toml:"headers,omitempty"`
}

// editMCPConfig adds (s set) or removes (s nil) a server in the user's
// config file, keeping the rest of the file byte for byte, and writes it
// back atomically after checking that it still reads.
func (a *app) editMCPConfig(name string, s *serverTOML, force bool) error {
	if !mcp.ValidServerName(name) {
		return usageError{fmt.Errorf("server name %q: use up to 32 letters, digits, _ and - (it prefixes the tools' names)", name)}
	}
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return usageError{err}
	}
	file := paths.UserFile()
	old, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(old) > 0 {
		if _, err := config.Parse(file, old); err != nil {
			return usageError{fmt.Errorf("%v: fix the file first", err)}
		}
	}
	text, found, err := removeServer(string(old), name)
	if err != nil {
		return usageError{fmt.Errorf("%s: %v", file, err)}
	}
	switch {
	case s == nil && !found:
		return usageError{fmt.Errorf("no MCP server %q in %s%s", name, file, elsewhere(a, paths, name))}
	case s != nil && found && !force:
		return usageError{fmt.Errorf("an MCP server %q is already in %s: use --force to replace it, or hearth mcp rm %s", name, file, name)}
	}
	var want *config.MCPServer
	if s != nil {
		section, err := renderServer(name, s)
		if err != nil {
			return err
		}
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if strings.TrimSpace(text) != "" {
			text += "\n"
		}
		text += section
		w := config.MCPServer{Command: s.Command, Args: s.Args, Env: s.Env, Cwd: s.Cwd, URL: s.URL, Headers: s.Headers, Include: s.Include, Exclude: s.Exclude}
		if s.Timeout != "" {
			d, _ := time.ParseDuration(s.Timeout)
			w.Timeout = config.Duration(d)
		}
		if err := loader.MCPServers(map[string]config.MCPServer{name: w})[0].Validate(); err != nil {
			return usageError{err}
		}
		want = &w
	}
	// What is written must read back as meant.
	parsed, err := config.Parse(file, []byte(text))
	if err != nil {
		return fmt.Errorf("the edited file would not read (%v); it was left as it was: edit it by hand", err)
	}
	got, has := parsed.MCPServers[name]
	if (want == nil) == has || (want != nil && !sameServer(*want, got)) {
		return fmt.Errorf("the edit did not come out as meant; %s was left as it was: edit it by hand", file)
	}
	if err := writeAtomic(file, []byte(text)); err != nil {
		return err
	}
	if s == nil {
		fmt.Fprintf(a.io.err, "removed MCP server %s from %s%s\n", name, file, elsewhere(a, paths, name))
	} else {
		fmt.Fprintf(a.io.err, "added MCP server %s to %s; its tools are offered as %s__*. Check it with: hearth mcp list\n", name, file, name)
	}
	return nil
}

// elsewhere notes a server of that name in the project's file, which wins.
func elsewhere(a *app, paths config.Paths, name string) string {
	ws := a.workspace
	if ws == "" {
		ws, _ = os.Getwd()
	}
	pf := config.ProjectFile(ws)
	if c, err := config.ReadFile(pf); err == nil {
		if _, ok := c.MCPServers[name]; ok {
			return fmt.Sprintf(" (note: %s also configures %s, and wins)", pf, name)
		}
	}
	return ""
}

func sameServer(a, b config.MCPServer) bool {
	norm := func(s config.MCPServer) config.MCPServer {
		if len(s.Args) == 0 {
			s.Args = nil
		}
		if len(s.Env) == 0 {
			s.Env = nil
		}
		if len(s.Headers) == 0 {
			s.Headers = nil
		}
		if len(s.Include) == 0 {
			s.Include = nil
		}
		if len(s.Exclude) == 0 {
			s.Exclude = nil
		}
		return s
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// renderServer writes one [mcp_servers.NAME] table (and its env and
// headers sub-tables).
func renderServer(name string, s *serverTOML) (string, error) {
	b, err := toml.Marshal(map[string]map[string]*serverTOML{"mcp_servers": {name: s}})
	if err != nil {
		return "", err
	}
	out := string(b)
	// The parent table's own header would clash with one the file may
	// already have.
	out = strings.TrimPrefix(out, "[mcp_servers]\n")
	return out, nil
}

// removeServer deletes the [mcp_servers.NAME] table and its sub-tables
// from a TOML text, keeping every other byte. found says whether there was
// one. A server written another way (an inline table, dotted keys) is an
// error: such a file is left for a person to edit.
func removeServer(text, name string) (out string, found bool, err error) {
	lines := strings.SplitAfter(text, "\n")
	var kept []string
	inServer := false // inside the table being removed
	inMCP := false    // inside a [mcp_servers] table itself
	header := false   // a table header has been seen
	multi := ""       // the delimiter of a multi-line string we are in
	var removed []string
	for _, line := range lines {
		if multi != "" {
			if strings.Count(line, multi)%2 == 1 {
				multi = ""
			}
			if inServer {
				removed = append(removed, line)
			} else {
				kept = append(kept, line)
			}
			continue
		}
		if key, ok := tableHeader(line); ok {
			header = true
			inMCP = len(key) == 1 && key[0] == "mcp_servers"
			was := inServer
			inServer = len(key) >= 2 && key[0] == "mcp_servers" && key[1] == name
			if inServer {
				found = true
				removed = append(removed, line)
				continue
			}
			if was {
				// Comments just above the next table belong to it.
				kept = append(kept, leadingComments(removed)...)
				removed = nil
			}
		} else {
			trimmed := strings.TrimSpace(line)
			k := keyOf(trimmed)
			switch {
			case inMCP && (k == name || strings.HasPrefix(k, name+".")):
				return "", false, fmt.Errorf("server %s is written inside [mcp_servers] as a key: edit it by hand", name)
			case !header && (k == "mcp_servers" || strings.HasPrefix(k, "mcp_servers.")):
				return "", false, errors.New("mcp_servers is written with dotted keys or an inline table: edit it by hand")
			}
			for _, d := range []string{`"""`, `'''`} {
				if strings.Count(line, d)%2 == 1 {
					multi = d
					break
				}
			}
		}
		if inServer {
			removed = append(removed, line)
		} else {
			kept = append(kept, line)
		}
	}
	out = strings.Join(kept, "")
	if found {
		// Leave no pile of blank lines where the table was.
		for strings.Contains(out, "\n\n\n") {
			out = strings.ReplaceAll(out, "\n\n\n", "\n\n")
		}
		out = strings.TrimLeft(out, "\n")
		if strings.HasSuffix(out, "\n\n") {
			out = strings.TrimRight(out, "\n") + "\n"
		}
	}
	return out, found, nil
}

// leadingComments returns the comment lines at the end of a removed table
// (blank lines among them kept), which introduce the table that follows.
func leadingComments(removed []string) []string {
	start := len(removed)
	for i := len(removed) - 1; i >= 0; i-- {
		t := strings.TrimSpace(removed[i])
		if t != "" && !strings.HasPrefix(t, "#") {
			break
		}
		if strings.HasPrefix(t, "#") {
			start = i
		}
	}
	return removed[start:]
}

// tableHeader parses "[a.b]" or "[[a.b]]" (with quoted parts and a
// trailing comment) into its key parts.
func tableHeader(line string) ([]string, bool) {
	s := strings.TrimSpace(line)
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "["), "[")
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case c == ']':
			parts = append(parts, strings.TrimSpace(cur.String()))
			return parts, true
		default:
			cur.WriteByte(c)
		}
	}
	return nil, false
}

// keyOf returns the key of a "key = value" line, quotes removed ("" if it
// is not one).
func keyOf(line string) string {
	if line == "" || line[0] == '#' {
		return ""
	}
	k, _, ok := strings.Cut(line, "=")
	if !ok {
		return ""
	}
	k = strings.TrimSpace(k)
	var parts []string
	for _, p := range strings.Split(k, ".") {
		parts = append(parts, strings.Trim(strings.TrimSpace(p), `"'`))
	}
	return strings.Join(parts, ".")
}

// writeAtomic replaces file with data through a temporary file in the same
// directory, keeping the old file's mode (0600 for a new one: config files
// can hold keys).
func writeAtomic(file string, data []byte) error {
	mode := os.FileMode(0o600)
	if fi, err := os.Stat(file); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".config-*.toml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), file)
}
