package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// Taking back what the agent did, headless: hearth sessions undo, redo,
// rewind and fork work on the checkpoints a session's turns took (see
// hearth.Session.Restore), in the workspace the session worked in.

// restoreFlags are the flags every restore shares.
type restoreFlags struct {
	dryRun, overwrite, asJSON bool
	keep                      []string
}

func (f *restoreFlags) add(cmd *cobra.Command, preview bool) {
	if preview {
		cmd.Flags().BoolVarP(&f.dryRun, "dry-run", "n", false, "say what would change, and change nothing")
	}
	cmd.Flags().BoolVar(&f.overwrite, "overwrite", false, "restore files changed after the agent changed them too (your version is kept in the restore's own checkpoint)")
	cmd.Flags().StringArrayVar(&f.keep, "keep", nil, "leave the file at `PATH` (relative to the workspace, as the list of conflicts names it) as it is now (repeatable)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print what was restored as JSON")
}

// restoreHelp is the end of every restore's --help.
const restoreHelp = `
A file changed after the agent changed it (by you, an editor, a formatter)
is never overwritten silently: the command refuses, changes nothing and
names the files (exit code 1). Run it again with --overwrite to restore
them anyway (your version is kept in the restore's own checkpoint, which
'hearth sessions checkpoints ID' lists and 'hearth sessions rewind ID
--checkpoint N' brings back), or with --keep PATH to leave a file as it is.

The files are restored in the workspace the session worked in (not the
current directory). A checkpoint is of the folder it was taken in: a
restore refuses any other, so --workspace DIR is only for reaching that
folder by another path. Exit codes: 0 done, 1 nothing to do, a conflict, or
files that could not be restored, 2 bad usage.`

// restorer is a session and the agent that restores it.
type restorer struct {
	a   *app
	st  session.Store
	s   *session.Session
	bot *hearth.Agent
	l   *loader.Loaded // nil for an agent without a workspace
	ws  string         // the workspace restored ("" without one)
}

// withRestorer opens the store and the session id, and builds an agent
// for its workspace when files (a restore of files) says it needs one. It
// asks no model: the agent only restores and forks.
func (a *app) withRestorer(cmd *cobra.Command, id string, files bool, f func(r *restorer) error) error {
	ctx := cmd.Context()
	return a.withStore(ctx, func(st session.Store) error {
		s, err := st.Get(ctx, id)
		if errors.Is(err, session.ErrNotFound) {
			return fmt.Errorf("no session %q: `hearth sessions list` shows them (`--archived` the archived ones)", id)
		}
		if err != nil {
			return err
		}
		r := &restorer{a: a, st: st, s: s}
		if !files {
			// A fork of the conversation, a rewind of it: no file is
			// touched, so no workspace is needed.
			bot, err := hearth.New(hearth.Config{Provider: noModel{}, Store: st, NoCheckpoints: true, Logger: a.logger()})
			if err != nil {
				return err
			}
			defer bot.Close()
			r.bot = bot
			return f(r)
		}
		ws := s.Workspace
		if cmd.Flags().Changed("workspace") {
			if ws, err = filepath.Abs(a.workspace); err != nil {
				return usageError{err}
			}
			if s.Workspace != "" && !samePath(ws, s.Workspace) {
				a.stderr().Line(termtext.String(fmt.Sprintf("hearth: session %s worked in %s; restoring in %s, as --workspace says", id, s.Workspace, ws)))
			}
		}
		if ws == "" {
			return fmt.Errorf("session %s worked in no workspace: it has no files to restore", id)
		}
		if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
			return fmt.Errorf("session %s worked in %s, which is not a folder here (any more): its files can be restored only there", id, termtext.String(ws))
		}
		bot, l, err := a.restoreAgent(ctx, st, ws)
		if err != nil {
			return err
		}
		defer l.Close()
		defer bot.Close()
		r.bot, r.l, r.ws = bot, l, bot.Workspace()
		return f(r)
	})
}

// restoreAgent builds an agent for the workspace ws, with the sessions of
// st, that restores and prunes: the configuration is resolved as for a
// run there (where the checkpoints are, which paths are secret), but no
// tool, sub-agent or MCP server is made and no model is asked. Close the
// agent, then the Loaded.
func (a *app) restoreAgent(ctx context.Context, st session.Store, ws string) (*hearth.Agent, *loader.Loaded, error) {
	o, err := a.appOptions("headless")
	if err != nil {
		return nil, nil, err
	}
	o.Workspace, o.NoStore, o.NoMCP = ws, true, true
	// What a run would warn of is not this command's business.
	o.Warn = func(string) {}
	l, err := loader.Load(ctx, o)
	if err != nil {
		var ce loader.ConfigError
		if errors.As(err, &ce) {
			return nil, nil, usageError{err}
		}
		return nil, nil, err
	}
	c := l.Config
	c.Store = st
	c.Profile.Tools, c.Profile.Allow, c.SubAgents, c.MCPServers = []string{}, nil, nil, nil
	bot, err := hearth.New(c)
	if err != nil {
		l.Close()
		return nil, nil, unprefixed{err}
	}
	return bot, l, nil
}

// samePath reports whether a and b name the same folder.
func samePath(a, b string) bool {
	if ra, err := filepath.EvalSymlinks(a); err == nil {
		a = ra
	}
	if rb, err := filepath.EvalSymlinks(b); err == nil {
		b = rb
	}
	return filepath.Clean(a) == filepath.Clean(b)
}

// noModel is the provider of an agent that restores and forks: it never
// runs a turn.
type noModel struct{}

func (noModel) Kind() string { return "none" }

func (noModel) Chat(context.Context, *llm.Request) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		yield(llm.Event{}, errors.New("this agent only restores sessions: it has no model"))
	}
}

// keepPaths turns --keep arguments into the workspace-relative, slashed
// paths a restore names conflicts by.
func (r *restorer) keepPaths(keep []string) []string {
	out := make([]string, 0, len(keep))
	for _, k := range keep {
		p := filepath.Clean(k)
		if filepath.IsAbs(p) && r.ws != "" {
			if rel, err := filepath.Rel(r.ws, p); err == nil && !strings.HasPrefix(rel, "..") {
				p = rel
			}
		}
		out = append(out, filepath.ToSlash(p))
	}
	return out
}

// restore runs req, prints what it did (or would do), and turns the
// library's errors into messages that say what to do. again is the
// command that ran, for the messages ("hearth sessions undo s1").
func (r *restorer) restore(ctx context.Context, req hearth.RestoreRequest, f restoreFlags, again string) error {
	req.Overwrite, req.Keep, req.DryRun = f.overwrite, r.keepPaths(f.keep), f.dryRun
	s := r.bot.Session(r.s.ID)
	var overwritten []string
	if req.Overwrite && !req.DryRun {
		// What will be overwritten, to say so.
		if p, err := s.Restore(ctx, withDryRun(req)); err == nil {
			overwritten = unkept(p.Conflicts, req.Keep)
		}
	}
	res, err := s.Restore(ctx, req)
	var ce *hearth.ConflictError
	if errors.As(err, &ce) {
		if f.asJSON {
			// The preview, conflicts and all, for a script to read.
			if p, perr := s.Restore(ctx, withDryRun(req)); perr == nil {
				writeJSON(r.a.io.out, p)
			}
		}
		r.a.stderr().Line(r.conflictMessage(string(req.Op), ce.Paths, again))
		return errSilent{err}
	}
	if err != nil {
		return r.explain(ctx, req.Op, err)
	}
	if f.asJSON {
		writeJSON(r.a.io.out, res)
	} else {
		r.summary(ctx, req, res, overwritten)
	}
	if n := len(res.Failed); n > 0 && !res.DryRun {
		r.a.stderr().Line(fmt.Sprintf("hearth: %d %s could not be restored: see above", n, either(n, "file", "files")))
		return errSilent{fmt.Errorf("%d files not restored", n)}
	}
	return nil
}

func withDryRun(req hearth.RestoreRequest) hearth.RestoreRequest {
	req.DryRun = true
	return req
}

// unkept returns the conflicts not in keep.
func unkept(conflicts, keep []string) []string {
	var out []string
	for _, c := range conflicts {
		found := false
		for _, k := range keep {
			found = found || k == c
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// conflictMessage says which files a restore would overwrite, that nothing
// changed, and the two ways on.
func (r *restorer) conflictMessage(op string, paths []string, again string) string {
	var b strings.Builder
	n := len(paths)
	fmt.Fprintf(&b, "hearth: %s would overwrite changes made to %d %s after the agent changed %s:\n", op, n, either(n, "file", "files"), either(n, "it", "them"))
	for _, p := range paths {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	b.WriteString("Nothing was changed. Either:\n")
	fmt.Fprintf(&b, "  %s --overwrite\n", again)
	if op == "fork" {
		fmt.Fprintf(&b, "      restores %s too. Your version is not lost: it is kept in a checkpoint (N) of the new session (NEW),\n", either(n, "it", "them"))
		b.WriteString("      which `hearth sessions checkpoints NEW` lists and `hearth sessions rewind NEW --checkpoint N` brings back;\n")
	} else {
		fmt.Fprintf(&b, "      restores %s too. Your version is not lost: it is kept in the %s's own checkpoint (N),\n", either(n, "it", "them"), op)
		fmt.Fprintf(&b, "      which `hearth sessions checkpoints %s` lists and `hearth sessions rewind %s --checkpoint N` brings back;\n", r.s.ID, r.s.ID)
	}
	keep := again
	for _, p := range paths {
		keep += " --keep " + shellQuote(p)
	}
	fmt.Fprintf(&b, "  %s\n", keep)
	fmt.Fprintf(&b, "      leaves %s as %s now, and restores the rest.", either(n, "it", "them"), either(n, "it is", "they are"))
	return termtext.String(b.String())
}

// explain turns a restore's error into one that says what to do.
func (r *restorer) explain(ctx context.Context, op hearth.RestoreOp, err error) error {
	id := r.s.ID
	switch {
	case errors.Is(err, hearth.ErrNoCheckpoints):
		why := "checkpoints are off"
		if r.l != nil {
			why = dashOr(r.l.CheckpointsOff(), why)
		}
		return fmt.Errorf("%s: nothing the agent changed can be restored (turn them on and new turns will be checkpointed)", why)
	case errors.Is(err, hearth.ErrNothingToUndo), errors.Is(err, hearth.ErrNothingToRedo):
		if cps, cerr := r.st.Checkpoints(ctx, id); cerr == nil && len(cps) == 0 {
			return fmt.Errorf("nothing to %s: session %s has no checkpoints (its turns changed no files, or ran with checkpoints off)", op, id)
		}
		if errors.Is(err, hearth.ErrNothingToUndo) {
			return fmt.Errorf("nothing to undo in session %s: every turn that changed files is undone already (`hearth sessions redo %s` takes the last undo back)", id, id)
		}
		return fmt.Errorf("nothing to redo in session %s: no undo to take back since the last turn that changed files", id)
	case errors.Is(err, hearth.ErrBusy):
		return fmt.Errorf("session %s is running a turn: wait for it to end, then try again", id)
	}
	return unprefixed{err}
}

// unprefixed is an error of the hearth package without its "hearth: "
// prefix, which the command line adds itself.
type unprefixed struct{ err error }

func (e unprefixed) Error() string { return strings.TrimPrefix(e.err.Error(), "hearth: ") }
func (e unprefixed) Unwrap() error { return e.err }

// summary prints, for a person, what a restore did or would do.
func (r *restorer) summary(ctx context.Context, req hearth.RestoreRequest, res *hearth.RestoreResult, overwritten []string) {
	w := termtext.NewWriter(r.a.io.out)
	defer w.Flush()
	id := r.s.ID
	n := len(res.Files)
	files := fmt.Sprintf("%d %s", n, either(n, "file", "files"))
	what := ""
	switch req.Op {
	case hearth.Undo, hearth.Redo:
		what = fmt.Sprintf("turn %d%s", res.Turn, r.prompt(ctx, res.Turn))
	case hearth.Rewind:
		if req.Checkpoint > 0 {
			what = fmt.Sprintf("checkpoint %d", req.Checkpoint)
		} else if req.Start {
			what = "its start"
		} else {
			what = fmt.Sprintf("message %d", req.Through)
		}
	}
	filesToo := req.Op != hearth.Rewind || !req.ConversationOnly
	switch {
	case res.DryRun && req.Op == hearth.Rewind:
		fmt.Fprintf(w, "Rewinding session %s to %s would change:\n", id, what)
	case res.DryRun:
		verb := "Undoing"
		if req.Op == hearth.Redo {
			verb = "Redoing"
		}
		fmt.Fprintf(w, "%s %s of session %s would restore %s in %s:\n", verb, what, id, files, r.ws)
	case req.Op == hearth.Undo:
		fmt.Fprintf(w, "Undid %s of session %s: %s restored in %s\n", what, id, files, r.ws)
	case req.Op == hearth.Redo:
		fmt.Fprintf(w, "Redid %s of session %s: %s restored in %s\n", what, id, files, r.ws)
	default:
		fmt.Fprintf(w, "Rewound session %s to %s\n", id, what)
	}
	if filesToo {
		if req.Op == hearth.Rewind {
			verb := "restored"
			if res.DryRun {
				verb = "to restore"
			}
			fmt.Fprintf(w, "Files: %s %s in %s\n", files, verb, r.ws)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, c := range res.Files {
			fmt.Fprintf(tw, "  %s\t%s\n", c.Action, c.Path)
		}
		tw.Flush()
		if n == 0 && len(res.Kept) == 0 && len(res.Failed) == 0 {
			fmt.Fprintln(w, "  (the files are as they were there already)")
		}
	}
	if len(res.Conflicts) > 0 {
		fmt.Fprintf(w, "Changed after the agent changed them (a restore refuses unless --overwrite, or --keep PATH):\n")
		for _, p := range res.Conflicts {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(w, "Left as you changed them: %s\n", strings.Join(res.Kept, ", "))
	}
	if len(res.Failed) > 0 {
		fmt.Fprintf(w, "Not restored:\n")
		for _, p := range res.Failed {
			fmt.Fprintf(w, "  %s: %s\n", p.Path, p.Reason)
		}
	}
	if cr := res.Conversation; cr != nil {
		switch {
		case cr.Removed == 0 && cr.Through == 0:
			fmt.Fprintf(w, "Conversation: empty already; nothing removed\n")
		case cr.Removed == 0:
			fmt.Fprintf(w, "Conversation: ends with message %d already; nothing removed\n", cr.Through)
		case cr.Through == 0 && res.DryRun:
			fmt.Fprintf(w, "Conversation: all %d %s would be removed (and kept in an archived copy of the session)\n", cr.Removed, either(cr.Removed, "message", "messages"))
		case cr.Through == 0:
			fmt.Fprintf(w, "Conversation: all %d %s were removed; they are kept in the archived session %s (`hearth sessions show %s`)\n",
				cr.Removed, either(cr.Removed, "message", "messages"), cr.Archived, cr.Archived)
		case res.DryRun:
			fmt.Fprintf(w, "Conversation: the %d %s after message %d would be removed (and kept in an archived copy of the session)\n", cr.Removed, either(cr.Removed, "message", "messages"), cr.Through)
		default:
			fmt.Fprintf(w, "Conversation: the %d %s after message %d were removed; the whole conversation is kept in the archived session %s (`hearth sessions show %s`)\n",
				cr.Removed, either(cr.Removed, "message", "messages"), cr.Through, cr.Archived, cr.Archived)
		}
	}
	if res.DryRun {
		fmt.Fprintln(w, "Nothing was changed (--dry-run).")
		return
	}
	if res.Checkpoint > 0 {
		if len(overwritten) > 0 {
			fmt.Fprintf(w, "Your changes to %s were overwritten; your version is kept in checkpoint %d.\n", strings.Join(overwritten, ", "), res.Checkpoint)
		}
		fmt.Fprintf(w, "The files as they were before are checkpoint %d: `hearth sessions rewind %s --checkpoint %d` brings them back.\n", res.Checkpoint, id, res.Checkpoint)
	}
}

// prompt quotes the user message a turn began with (its first line, cut
// short), for a summary: ` ("fix the build")`.
func (r *restorer) prompt(ctx context.Context, turn int) string {
	msgs, err := r.st.Messages(ctx, r.s.ID)
	if err != nil {
		return ""
	}
	for _, m := range msgs {
		if m.Seq == turn && m.Role == llm.RoleUser {
			line, _, _ := strings.Cut(strings.TrimSpace(m.Content), "\n")
			if len([]rune(line)) > 60 {
				line = string([]rune(line)[:59]) + "…"
			}
			return fmt.Sprintf(" (%q)", line)
		}
	}
	return ""
}

// either returns one for 1 and many otherwise.
func either(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (a *app) sessionsUndo(op hearth.RestoreOp) *cobra.Command {
	var f restoreFlags
	name, verb, other := "undo", "Take back the file changes of the session's last turn that changed files", "redo"
	if op == hearth.Redo {
		name, verb, other = "redo", "Bring back what the last undo took back", "undo"
	}
	cmd := &cobra.Command{
		Use:   name + " ID",
		Short: verb,
		Long: verb + `: every file the turn's tools and commands
created, changed, deleted, renamed or chmod'ed, byte for byte and mode for
mode, from the checkpoints Hearth took before each of them. The
conversation is left as it is ('hearth sessions rewind' cuts it).
'hearth sessions ` + other + `' takes it back.
` + restoreHelp,
		Example: fmt.Sprintf(`  hearth sessions %[1]s s1 --dry-run       (what would change)
  hearth sessions %[1]s s1
  hearth sessions %[1]s s1 --keep notes.md  (leave your own changes to notes.md)
  hearth sessions %[1]s s1 --json`, name),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withRestorer(cmd, args[0], true, func(r *restorer) error {
				return r.restore(cmd.Context(), hearth.RestoreRequest{Op: op}, f, "hearth sessions "+name+" "+args[0])
			})
		},
	}
	f.add(cmd, true)
	return cmd
}

func (a *app) sessionsRewind() *cobra.Command {
	var f restoreFlags
	var to int
	var checkpoint int64
	var filesOnly, convOnly bool
	cmd := &cobra.Command{
		Use:   "rewind ID (--to MSG | --checkpoint N)",
		Short: "Bring a session's files and conversation back to a message",
		Long: `Bring a session back to its state right after message MSG (the numbers
'hearth sessions show ID' gives, #N): the files as they were then, and the
conversation ending with that message (a message with tool calls keeps
their results). --to 0 goes back to the start: the files as they were
before the session changed any, and no message left. --files-only or
--conversation-only rewinds just one.

The messages the conversation loses are not lost: the whole conversation is
first copied into an archived session, which the command names ('hearth
sessions list --archived' lists them).

--checkpoint N brings the files (only) back to checkpoint N, from 'hearth
sessions checkpoints ID': a restore's own checkpoint holds the files as they
were just before it, your changes included.
` + restoreHelp,
		Example: `  hearth sessions show s1                     (find the message: #N)
  hearth sessions rewind s1 --to 5 --dry-run
  hearth sessions rewind s1 --to 5
  hearth sessions rewind s1 --to 5 --files-only
  hearth sessions rewind s1 --to 0            (back to the start)
  hearth sessions rewind s1 --checkpoint 14   (the files before an undo or rewind)`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			toSet, cpSet := cmd.Flags().Changed("to"), cmd.Flags().Changed("checkpoint")
			switch {
			case toSet && cpSet:
				return usageError{errors.New("rewind: --to MSG or --checkpoint N, not both")}
			case !toSet && !cpSet:
				return usageError{errors.New("rewind: say where to: --to MSG (a message's number, as `hearth sessions show ID` gives it; 0 for the start) or --checkpoint N")}
			case toSet && to < 0:
				return usageError{fmt.Errorf("rewind: --to %d: messages are numbered from 1 (--to 0 is the start of the session)", to)}
			case cpSet && checkpoint <= 0:
				return usageError{fmt.Errorf("rewind: --checkpoint %d: `hearth sessions checkpoints %s` lists them", checkpoint, args[0])}
			case filesOnly && convOnly:
				return usageError{errors.New("rewind: --files-only or --conversation-only, not both (neither rewinds both)")}
			case cpSet && convOnly:
				return usageError{errors.New("rewind: a checkpoint is a state of the files: --checkpoint rewinds files only")}
			}
			req := hearth.RestoreRequest{Op: hearth.Rewind, Through: to, Start: toSet && to == 0, Checkpoint: checkpoint, FilesOnly: filesOnly || cpSet, ConversationOnly: convOnly}
			return a.withRestorer(cmd, args[0], !convOnly, func(r *restorer) error {
				if to > 0 {
					if err := r.hasMessage(cmd.Context(), to); err != nil {
						return err
					}
				}
				return r.restore(cmd.Context(), req, f, "hearth sessions "+strings.Join(rewindArgs(args[0], to, checkpoint, filesOnly, convOnly), " "))
			})
		},
	}
	cmd.Flags().IntVar(&to, "to", 0, "the `MSG` to rewind to: its number, as `hearth sessions show ID` gives it (0: the start)")
	cmd.Flags().Int64Var(&checkpoint, "checkpoint", 0, "bring the files (only) back to checkpoint `N` instead (hearth sessions checkpoints ID lists them)")
	cmd.Flags().BoolVar(&filesOnly, "files-only", false, "rewind the files, not the conversation")
	cmd.Flags().BoolVar(&convOnly, "conversation-only", false, "rewind the conversation, not the files")
	f.add(cmd, true)
	return cmd
}

// rewindArgs is a rewind's command line, for messages.
func rewindArgs(id string, to int, checkpoint int64, filesOnly, convOnly bool) []string {
	out := []string{"rewind", id}
	if checkpoint > 0 {
		return append(out, "--checkpoint", strconv.FormatInt(checkpoint, 10))
	}
	out = append(out, "--to", strconv.Itoa(to))
	if filesOnly {
		out = append(out, "--files-only")
	}
	if convOnly {
		out = append(out, "--conversation-only")
	}
	return out
}

// hasMessage fails unless the session has message seq.
func (r *restorer) hasMessage(ctx context.Context, seq int) error {
	msgs, err := r.st.Messages(ctx, r.s.ID)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Seq == seq {
			return nil
		}
	}
	if len(msgs) == 0 {
		return fmt.Errorf("session %s has no messages", r.s.ID)
	}
	return fmt.Errorf("session %s has no message %d (its messages are %d to %d: `hearth sessions show %s` numbers them)", r.s.ID, seq, msgs[0].Seq, msgs[len(msgs)-1].Seq, r.s.ID)
}

func (a *app) sessionsFork() *cobra.Command {
	var f restoreFlags
	var at int
	var files bool
	var title string
	cmd := &cobra.Command{
		Use:   "fork ID",
		Short: "Start a new session from any point of one",
		Long: `Start a new session from session ID: its conversation up to message MSG
(--at, the numbers 'hearth sessions show ID' gives; all of it without),
under a new id, which is printed. The session itself is not changed.

--files also brings the workspace's files back to their state after that
message, as 'hearth sessions rewind ID --to MSG --files-only' would; files
changed after the agent changed them are refused as there (--overwrite,
--keep PATH). Continue the fork with 'hearth run --context NEW "…"'.`,
		Example: `  hearth sessions fork s1
  hearth sessions fork s1 --at 5 --title "try another way"
  hearth sessions fork s1 --at 5 --files
  hearth run --context "$(hearth sessions fork s1 --at 5)" "now do it without the cache"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			atSet := cmd.Flags().Changed("at")
			switch {
			case atSet && at <= 0:
				return usageError{fmt.Errorf("fork: --at %d: messages are numbered from 1", at)}
			case files && !atSet:
				return usageError{errors.New("fork: --files needs --at MSG: without it the fork ends where the session does, and so do its files")}
			}
			return a.withRestorer(cmd, args[0], files, func(r *restorer) error {
				ctx := cmd.Context()
				if atSet {
					if err := r.hasMessage(ctx, at); err != nil {
						return err
					}
				}
				req := hearth.ForkRequest{Through: at, Files: files, Overwrite: f.overwrite, Keep: r.keepPaths(f.keep), Title: title}
				res, err := r.bot.Session(args[0]).Fork(ctx, req)
				var ce *hearth.ConflictError
				if errors.As(err, &ce) {
					again := fmt.Sprintf("hearth sessions fork %s --at %d --files", args[0], at)
					r.a.stderr().Line(r.conflictMessage("fork", ce.Paths, again))
					return errSilent{err}
				}
				if err != nil && res == nil {
					return r.explain(ctx, hearth.Rewind, err)
				}
				if f.asJSON {
					writeJSON(a.io.out, res)
				} else {
					fmt.Fprintln(a.io.out, res.Session.ID)
					where := "all of it"
					if atSet {
						where = fmt.Sprintf("up to message %d", at)
					}
					a.stderr().Line(termtext.String(fmt.Sprintf("hearth: forked session %s (%s) into %s, %q; continue it with: hearth run --context %s \"…\"", args[0], where, res.Session.ID, res.Session.Title, res.Session.ID)))
					if res.Files != nil {
						var b strings.Builder
						fmt.Fprintf(&b, "hearth: the files are as they were after message %d: %d restored in %s", at, len(res.Files.Files), r.ws)
						for _, c := range res.Files.Files {
							fmt.Fprintf(&b, "\n  %s  %s", c.Action, c.Path)
						}
						if len(res.Files.Kept) > 0 {
							fmt.Fprintf(&b, "\nleft as you changed them: %s", strings.Join(res.Files.Kept, ", "))
						}
						for _, p := range res.Files.Failed {
							fmt.Fprintf(&b, "\nnot restored: %s: %s", p.Path, p.Reason)
						}
						if res.Files.Checkpoint > 0 {
							fmt.Fprintf(&b, "\nthe files as they were before are checkpoint %d of %s: `hearth sessions rewind %s --checkpoint %d` brings them back", res.Files.Checkpoint, res.Session.ID, res.Session.ID, res.Files.Checkpoint)
						}
						a.stderr().Line(termtext.String(b.String()))
					}
				}
				if err != nil {
					// The fork was made, its files not (all) brought back.
					return fmt.Errorf("session %s was forked into %s, but its files were not brought back: %w", args[0], res.Session.ID, unprefixed{err})
				}
				if res.Files != nil && len(res.Files.Failed) > 0 {
					n := len(res.Files.Failed)
					a.stderr().Line(fmt.Sprintf("hearth: %d %s could not be restored: see above", n, either(n, "file", "files")))
					return errSilent{fmt.Errorf("%d files not restored", n)}
				}
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&at, "at", 0, "the last `MSG` the fork takes (its number, as `hearth sessions show ID` gives it; default: all)")
	cmd.Flags().BoolVar(&files, "files", false, "also bring the workspace's files back to their state after that message")
	cmd.Flags().StringVar(&title, "title", "", "the fork's `TITLE` (default: the session's, marked as a fork)")
	f.add(cmd, false)
	cmd.Flags().Lookup("json").Usage = "print the new session (and what was restored) as JSON"
	return cmd
}

func (a *app) sessionsArchive(archived bool) *cobra.Command {
	name, short := "archive", "Hide sessions from the list, without deleting anything"
	example := "  hearth sessions archive s1 s2\n  hearth sessions list --archived"
	if !archived {
		name, short = "unarchive", "Bring archived sessions back to the list"
		example = "  hearth sessions list --archived\n  hearth sessions unarchive s1"
	}
	return &cobra.Command{
		Use:     name + " ID...",
		Short:   short,
		Long:    short + ". An archived session keeps everything: show, export, undo, rewind and fork work on it, and 'hearth run --context ID' continues it. 'hearth sessions list --archived' lists them.",
		Example: example,
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
					err := st.SetArchived(cmd.Context(), id, archived)
					switch {
					case errors.Is(err, session.ErrNotFound):
						errs = append(errs, fmt.Errorf("no session %q", id))
					case err != nil:
						errs = append(errs, err)
					case archived:
						fmt.Fprintf(a.io.err, "archived %s (`hearth sessions unarchive %s` brings it back to the list)\n", id, id)
					default:
						fmt.Fprintf(a.io.err, "unarchived %s\n", id)
					}
				}
				return errors.Join(errs...)
			})
		},
	}
}

func (a *app) sessionsCheckpoints() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "checkpoints ID",
		Short: "List a session's checkpoints: the states of its files",
		Long: `List the checkpoints of session ID, oldest first: the snapshots of its
workspace Hearth took before each tool call that could change it (before),
at the end of each turn that made such calls (after), and just before
each undo, redo or rewind (the files as they were then, your changes
included). TURN is the number of the message the turn began with, SEQ the
last message when it was taken, FILES the files it holds (for a restore's:
how many it restored).

'hearth sessions rewind ID --checkpoint N' brings the files back to one.`,
		Example: "  hearth sessions checkpoints s1\n  hearth sessions rewind s1 --checkpoint 14\n  hearth sessions checkpoints s1 --json",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.withStore(cmd.Context(), func(st session.Store) error {
				ctx := cmd.Context()
				id := args[0]
				if _, err := st.Get(ctx, id); errors.Is(err, session.ErrNotFound) {
					return fmt.Errorf("no session %q: `hearth sessions list` shows them", id)
				} else if err != nil {
					return err
				}
				cps, err := st.Checkpoints(ctx, id)
				if err != nil {
					return err
				}
				if asJSON {
					if cps == nil {
						cps = []session.Checkpoint{}
					}
					return writeJSON(a.io.out, cps)
				}
				if len(cps) == 0 {
					fmt.Fprintf(a.io.err, "Session %s has no checkpoints: its turns changed no files, or ran with checkpoints off.\n", id)
					return nil
				}
				tw := termtext.NewWriter(a.io.out) // the tool's name is the model's
				defer tw.Flush()
				w := tabwriter.NewWriter(tw, 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "ID\tKIND\tTURN\tSEQ\tTOOL/CALL\tFILES\tWHEN")
				for _, c := range cps {
					fmt.Fprintf(w, "%d\t%s\t%s\t%d\t%s\t%s\t%s\n", c.ID, c.Kind, dashInt(c.Turn), c.Seq, dash(strings.TrimSpace(c.Tool+" "+c.CallID)), checkpointFiles(c), c.CreatedAt.Local().Format("2006-01-02 15:04:05"))
				}
				return w.Flush()
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the checkpoints as JSON")
	return cmd
}

func dashInt(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// checkpointFiles says how many files a checkpoint holds, or, for a
// restore's, how many it restored (from its record's detail).
func checkpointFiles(c session.Checkpoint) string {
	var d struct {
		Files    *int     `json:"files"`
		Paths    []string `json:"paths"`
		TooLarge []string `json:"too_large"`
	}
	if len(c.Detail) == 0 || json.Unmarshal(c.Detail, &d) != nil {
		return "-"
	}
	switch c.Kind {
	case session.CheckpointUndo, session.CheckpointRedo, session.CheckpointRewind:
		return fmt.Sprintf("%d restored", len(d.Paths))
	}
	if d.Files == nil {
		return "-"
	}
	s := strconv.Itoa(*d.Files)
	if n := len(d.TooLarge); n > 0 {
		s += fmt.Sprintf(" (%d too large)", n)
	}
	return s
}

func (a *app) sessionsPrune() *cobra.Command {
	var grace time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prune",
		Short: "Free the disk space of checkpoints no session needs any more",
		Long: `Remove from the workspace's checkpoint store (the current directory's, or
--workspace's) the snapshots that no checkpoint of any stored session
reaches any more: those of removed sessions ('hearth sessions rm'), and
previews. Archived sessions keep theirs. The store only grows otherwise.

What is younger than --grace is kept whatever reaches it: another Hearth
may be taking a checkpoint in this workspace right now.`,
		Example: "  hearth sessions prune\n  hearth -w ~/src/app sessions prune --grace 0",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if grace < 0 {
				return usageError{fmt.Errorf("--grace %s: want a duration of 0 or more", grace)}
			}
			ctx := cmd.Context()
			err := a.withStore(ctx, func(st session.Store) error {
				bot, l, err := a.restoreAgent(ctx, st, a.workspace)
				if err != nil {
					return err
				}
				defer l.Close()
				defer bot.Close()
				p, err := bot.PruneCheckpoints(ctx, grace)
				if errors.Is(err, hearth.ErrNoCheckpoints) {
					return fmt.Errorf("%s: there is nothing to prune", dashOr(l.CheckpointsOff(), "checkpoints are off"))
				}
				if err != nil {
					return unprefixed{err}
				}
				if asJSON {
					return writeJSON(a.io.out, p)
				}
				fmt.Fprintf(a.io.out, "Removed %d %s (%s) from the checkpoints of %s; %d kept.\n", p.Objects, either(p.Objects, "object", "objects"), sizeOf(p.Bytes), bot.Workspace(), p.Kept)
				return nil
			})
			if errors.Is(err, errNoStore) {
				return errors.New("no sessions yet, so no checkpoints to prune")
			}
			return err
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", time.Hour, "keep what is younger than this")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was removed as JSON")
	return cmd
}

// dashOr returns s, or or when s is empty.
func dashOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// sizeOf writes a size in bytes for a person.
func sizeOf(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
