package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth"
	"github.com/hearth-agent/hearth/agent"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/session"
)

// maxStdin bounds the piped context read from standard input.
const maxStdin = 8 << 20

// runFlags are the options of one headless turn.
type runFlags struct {
	session, alias string
	format         string
	approvalMode   string
	maxTurnsRaw    string
	timeoutRaw     string
	maxTurns       int
	timeout        time.Duration
	// timeoutFromEnv and maxTurnsFromEnv say the value came from
	// HEARTH_TIMEOUT or HEARTH_MAX_TURNS, not the flag: a message about it
	// names the one to change.
	timeoutFromEnv, maxTurnsFromEnv bool
	// rerun is the command line that runs a session's message again with
	// the flags this run was given (nil: not said).
	rerun func(sessionID string) string
}

// fromEnv gives the flags not on the command line their value from the
// environment (HEARTH_TIMEOUT, HEARTH_MAX_TURNS), and notes it; and keeps
// the command line to run a session again.
func (f *runFlags) fromEnv(cmd *cobra.Command, getenv func(string) string) {
	f.rerun = rerunCommand(cmd)
	if f.timeoutFromEnv = !cmd.Flags().Changed("timeout"); f.timeoutFromEnv {
		f.timeoutRaw = getenv("HEARTH_TIMEOUT")
	}
	if f.maxTurnsFromEnv = !cmd.Flags().Changed("max-turns"); f.maxTurnsFromEnv {
		f.maxTurnsRaw = getenv("HEARTH_MAX_TURNS")
	}
}

// rerunFlags are the flags a command that runs a session again repeats:
// what chose the server, model, workspace and limits. Not the prompt, the
// session, nor --api-key (a key is not to be shown).
var rerunFlags = []string{"provider", "base-url", "model", "tool-mode", "workspace", "profile", "trust", "approval-mode", "max-turns", "timeout", "output-format"}

// rerunCommand returns a function writing the command that runs a
// session's unanswered message again: hearth run --context ID and the
// flags of rerunFlags this command line set, quoted for a shell.
func rerunCommand(cmd *cobra.Command) func(id string) string {
	var extra []string
	for _, name := range rerunFlags {
		if fl := cmd.Flags().Lookup(name); fl != nil && cmd.Flags().Changed(name) {
			extra = append(extra, "--"+name, shellQuote(fl.Value.String()))
		}
	}
	return func(id string) string {
		return strings.Join(append([]string{"hearth", "run", "--context", shellQuote(id)}, extra...), " ")
	}
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// checkedLater is a flag whose text is kept as given and checked when the
// command runs (its default may come from the environment, and a bad value
// gets Hearth's message, naming where it came from); help shows its type.
// It implements pflag.Value.
type checkedLater struct {
	text *string
	typ  string
}

func (v checkedLater) String() string     { return *v.text }
func (v checkedLater) Set(s string) error { *v.text = s; return nil }
func (v checkedLater) Type() string       { return v.typ }

func (a *app) runCommand() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT",
		Short: "Run one turn headless: the prompt in, the answer on stdout",
		Long: `Run one turn without the terminal UI: the prompt goes to the model, the
agent uses its tools, and the answer is printed. Piped standard input is
added to the prompt as context.

--context ID (or --session ID) continues a session and saves the new state
after the turn, creating the session if it is new: two calls with the same
id make a two-step script. A run that fails keeps your message and why it
failed in its session; --context ID with no prompt runs that message again.

Scripts cannot answer questions, so in the default approval mode reading is
free and edits or commands are refused with a note; allow them with
--approval-mode auto_edit (edits) or yolo (everything). Destructive commands
and paths outside the workspace are refused in every mode.

Output formats: text (the answer only; reasoning and tool activity go to
stderr with --verbose), json (one object at the end), stream-json (every
event, one JSON object per line, as it happens).

Text output is for people: control sequences in the answer, the reasoning
and tool output (a model can be steered into writing them: clipboard writes,
window titles, screen clears) are removed, on a terminal or not. json and
stream-json keep the text exact.

Exit codes: 0 answered, 1 the run failed (provider or tool error, turn
limit, --timeout), 2 bad usage or configuration, 130 interrupted.`,
		Example: `  hearth run "what does main.go do?"
  cat error.log | hearth run "explain this"
  hearth run --context=s1 "analyze error.log" && hearth run --context=s1 "fix the error"
  hearth run --context=s1                 (run s1's last message again, after a failure)
  hearth run --output-format stream-json --approval-mode auto_edit "add a test for Add"`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f.fromEnv(cmd, a.getenv)
			return a.runTurn(cmd.Context(), strings.Join(args, " "), f)
		},
	}
	a.addRunFlags(cmd, &f)
	return cmd
}

func (a *app) addRunFlags(cmd *cobra.Command, f *runFlags) {
	fl := cmd.Flags()
	fl.StringVar(&f.session, "context", "", "session `ID` to continue (created if new)")
	fl.StringVar(&f.alias, "session", "", "same as --context `ID`")
	fl.StringVarP(&f.format, "output-format", "o", "text", "text, json or stream-json")
	fl.StringVar(&f.approvalMode, "approval-mode", a.getenv("HEARTH_APPROVAL_MODE"), "default, auto_edit, yolo or plan (env HEARTH_APPROVAL_MODE; default: the profile's)")
	fl.Var(checkedLater{&f.maxTurnsRaw, "int"}, "max-turns", fmt.Sprintf("most model calls in the turn (env HEARTH_MAX_TURNS; default %d)", agent.DefaultMaxTurns))
	fl.Var(checkedLater{&f.timeoutRaw, "duration"}, "timeout", "give up after this long, e.g. 10m (env HEARTH_TIMEOUT)")
}

// parse checks the flags that arrive as text (they may come from the
// environment) and the --context/--session pair.
func (f *runFlags) parse() error {
	if f.alias != "" {
		if f.session != "" && f.session != f.alias {
			return usageError{fmt.Errorf("--context %q and --session %q disagree: give one", f.session, f.alias)}
		}
		f.session = f.alias
	}
	if f.maxTurnsRaw != "" {
		n, err := strconv.Atoi(strings.TrimSpace(f.maxTurnsRaw))
		if err != nil || n < 0 {
			if f.maxTurnsFromEnv {
				return usageError{fmt.Errorf("HEARTH_MAX_TURNS=%q: want a positive number", f.maxTurnsRaw)}
			}
			return usageError{fmt.Errorf("--max-turns %q: want a positive number", f.maxTurnsRaw)}
		}
		f.maxTurns = n
	}
	if f.timeoutRaw != "" {
		d, err := time.ParseDuration(strings.TrimSpace(f.timeoutRaw))
		if err != nil || d < 0 {
			if f.timeoutFromEnv {
				return usageError{fmt.Errorf("HEARTH_TIMEOUT=%q: want a duration such as 10m", f.timeoutRaw)}
			}
			return usageError{fmt.Errorf("--timeout %q: want a duration such as 10m", f.timeoutRaw)}
		}
		f.timeout = d
	}
	return nil
}

// runTurn runs one headless turn and maps its outcome to an exit code.
func (a *app) runTurn(ctx context.Context, prompt string, f runFlags) error {
	switch f.format {
	case "text", "json", "stream-json":
	default:
		return usageError{fmt.Errorf("--output-format %q: use text, json or stream-json", f.format)}
	}
	err := a.turn(ctx, prompt, f)
	var silent errSilent
	if err != nil && f.format != "text" && !errors.Is(err, errPrinted) && !errors.As(err, &silent) {
		// (errSilent: the turn failed, and its own events or result said
		// so already.)
		// Scripts reading JSON get the failure in JSON too.
		printJSONError(a.io.out, f.format, err)
	}
	if errors.Is(err, errPrinted) {
		return errSilent{err}
	}
	return err
}

// errPrinted marks an error the output already reported.
var errPrinted = errors.New("reported")

// printJSONError writes a failure that happened outside the agent's turn
// (bad configuration, a busy session) in the chosen JSON format.
func printJSONError(w io.Writer, format string, err error) {
	code := agent.CodeAgentError
	reason := agent.DoneError
	var ue usageError
	var te *timeoutError
	switch {
	case errors.As(err, &te):
		// A time limit stops a run as Ctrl-C does (done.reason cancelled);
		// the error event's code tells the two apart.
		code, reason = agent.CodeTimeout, agent.DoneCancelled
	case errors.As(err, &ue):
		code = agent.CodeUsage
	case errors.Is(err, session.ErrBusy):
		code = agent.CodeSessionBusy
	case llm.CodeOf(err) != "":
		code = agent.ProviderCode(llm.CodeOf(err))
	}
	if format == "stream-json" {
		for _, ev := range []agent.Event{{Type: agent.EventError, Code: code, Error: err.Error()}, {Type: agent.EventDone, DoneReason: reason}} {
			b, _ := json.Marshal(ev)
			fmt.Fprintf(w, "%s\n", b)
		}
		return
	}
	b, _ := json.MarshalIndent(jsonResult{Reason: string(reason), ToolCalls: []jsonCall{}, Error: &jsonErrorInfo{Code: string(code), Message: err.Error()}}, "", "  ")
	fmt.Fprintf(w, "%s\n", b)
}

func (a *app) turn(ctx context.Context, prompt string, f runFlags) error {
	if err := f.parse(); err != nil {
		return err
	}
	if f.approvalMode != "" {
		if _, err := agent.ParseMode(f.approvalMode); err != nil {
			return usageError{err}
		}
	}
	if f.maxTurns < 0 || f.timeout < 0 {
		return usageError{errors.New("--max-turns and --timeout must not be negative")}
	}
	piped, err := a.readPiped(prompt != "")
	if err != nil {
		return err
	}
	if piped != "" {
		if prompt == "" {
			prompt = piped
		} else {
			prompt += "\n\nContext from standard input:\n```\n" + strings.TrimRight(piped, "\n") + "\n```"
		}
	}
	// With no prompt, --context runs again a session's last message that
	// no reply answered (a run that could not reach the server).
	retry := false
	if strings.TrimSpace(prompt) == "" {
		if f.session == "" {
			return usageError{errors.New("no prompt: give one as an argument (hearth run \"…\") or pipe it on standard input")}
		}
		retry = true
	}

	o, err := a.appOptions("headless")
	if err != nil {
		return err
	}
	o.ApprovalMode, o.MaxTurns = f.approvalMode, f.maxTurns
	bot, l, err := start(ctx, o)
	if err != nil {
		return err
	}
	defer l.Close()
	defer bot.Close()
	if l.ProviderConfig.Model == "" {
		return usageError{errors.New("no model chosen: use --model (or HEARTH_MODEL, or model in the config); `hearth models` lists them")}
	}

	if a.verbose {
		// Headless runs never ask: say what the workspace may do.
		a.stderr().Line(trustLine(bot.Workspace(), l))
	}

	runCtx := ctx
	if f.timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}

	// timedOut says whether the run reached its time limit (and was not
	// interrupted by the user as well).
	timedOut := func() bool { return ctx.Err() == nil && errors.Is(runCtx.Err(), context.DeadlineExceeded) }
	out := newPrinter(a, f.format)
	// Nothing can answer an approval here: a call that needs one is
	// refused, and the view says so, with the flag that would allow it.
	out.view.refuses = true
	out.view.untrusted = l.Trust == session.TrustUntrusted
	out.view.mode = bot.Mode()
	out.view.kindOf = bot.ToolKind
	out.timeout = func(sessionID string) error {
		if !timedOut() {
			return nil
		}
		return &timeoutError{limit: f.timeout, fromEnv: f.timeoutFromEnv, session: sessionID}
	}
	turn := bot.NewTurn(runCtx, hearth.Request{SessionID: f.session, Message: prompt, Retry: retry, Unattended: true})
	for ev := range turn.Events() {
		out.event(ev)
	}
	res, err := turn.Result()
	if res != nil && res.Err != nil && err == res.Err {
		err = nil // the turn's failure, reported as such below: not the store's
	}
	if errors.Is(err, hearth.ErrNothingToRetry) {
		if errors.Is(err, session.ErrNotFound) {
			return usageError{fmt.Errorf("no prompt, and no session %s to run again: give a prompt (hearth run --context %s \"…\")", f.session, f.session)}
		}
		return usageError{fmt.Errorf("no prompt, and session %s has no unanswered message to run again: give a prompt (hearth run --context %s \"…\")", f.session, f.session)}
	}
	if err != nil && res == nil {
		if te := out.timeout(""); te != nil {
			// The limit came before the turn could begin (the model
			// server was slow to answer what Hearth asks first).
			return te
		}
		if errors.Is(err, session.ErrBusy) {
			return err
		}
		return fmt.Errorf("running the turn: %w", err)
	}
	var fail error
	switch {
	case ctx.Err() != nil:
	case res.Reason == agent.DoneCancelled && timedOut():
		fail = out.timeout(res.SessionID)
	case res.Reason == agent.DoneMaxTurns:
		fail = &turnLimit{fmt.Errorf("stopped at the turn limit (%d model calls) before an answer; continue with --context %s, or raise --max-turns", maxTurnsOf(l), res.SessionID)}
	}
	if res.Reason == agent.DoneError && f.rerun != nil {
		out.kept = a.keptNote(bot, res, f.rerun)
	}
	out.finish(res, err, fail)
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // interrupted: exit 130
	case fail != nil && f.format == "text":
		return fail // exit 1: the work failed
	case fail != nil:
		return fmt.Errorf("%w: %v", errPrinted, fail)
	case res.Reason == agent.DoneError:
		return errSilent{res.Err}
	case err != nil && f.format != "text":
		// The turn's own done has gone out (the JSON result says
		// "store"): the store's failure goes to stderr, not as a second
		// end of the stream.
		a.stderr().Line("hearth: " + termtext.String(err.Error()))
		return errSilent{err}
	case err != nil:
		return err
	}
	return nil
}

// keptNote says, after a turn that failed, what the session kept and the
// command that goes on with it: the same message again when the model
// answered nothing (a server that could not be reached), else a new one.
func (a *app) keptNote(bot *hearth.Agent, res *hearth.Result, rerun func(string) string) string {
	id := res.SessionID
	if len(res.Messages) > 0 {
		return fmt.Sprintf("hearth: session %s keeps what happened; continue it with: %s \"…\"", id, rerun(id))
	}
	title := ""
	if s, err := bot.Store().Get(context.Background(), id); err == nil && s.Title != "" {
		title = fmt.Sprintf(" (%q)", s.Title)
	}
	return fmt.Sprintf("hearth: your message is kept in session %s%s; to run it again: %s", id, termtext.String(title), rerun(id))
}

func maxTurnsOf(l *loader.Loaded) int {
	if l.Profile.MaxTurns > 0 {
		return l.Profile.MaxTurns
	}
	return agent.DefaultMaxTurns
}

// turnLimit is the failure of a turn that hit its limit.
type turnLimit struct{ err error }

func (e *turnLimit) Error() string { return e.err.Error() }

// timeoutError is the failure of a run stopped by --timeout (or
// HEARTH_TIMEOUT). It is a failure of the work (exit code 1), not an
// interrupt (130): nobody pressed Ctrl-C, and a script must be able to tell
// the two apart. In JSON it is an error with code "timeout".
type timeoutError struct {
	limit   time.Duration
	fromEnv bool
	session string // empty when the turn did not begin
}

func (e *timeoutError) Error() string {
	var b strings.Builder
	if e.fromEnv {
		fmt.Fprintf(&b, "stopped: the run reached its time limit (HEARTH_TIMEOUT=%s); raise HEARTH_TIMEOUT, or pass a longer --timeout, to give it longer", e.limit)
	} else {
		fmt.Fprintf(&b, "stopped: the run reached its time limit (--timeout %s); raise --timeout to give it longer", e.limit)
	}
	if e.session != "" {
		fmt.Fprintf(&b, " (session %s keeps what happened: continue it with --context %s)", e.session, e.session)
	}
	return b.String()
}

// errSilent fails the command without printing again what the output
// already said.
type errSilent struct{ err error }

func (e errSilent) Error() string { return e.err.Error() }
func (e errSilent) Unwrap() error { return e.err }

// readPiped reads standard input when it is a pipe or a file, not a
// terminal. With a prompt already given, a pipe that stays silent for a
// second is left alone.
func (a *app) readPiped(havePrompt bool) (string, error) {
	if a.io.in == nil {
		return "", nil
	}
	if f, ok := a.io.in.(*os.File); ok {
		fi, err := f.Stat()
		if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return "", nil
		}
		if havePrompt && fi.Mode()&os.ModeNamedPipe != 0 && !pipeReady(f, time.Second) {
			return "", nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(a.io.in, maxStdin+1))
	if err != nil {
		return "", fmt.Errorf("reading standard input: %w", err)
	}
	if len(data) > maxStdin {
		return "", usageError{fmt.Errorf("standard input is over %d MB: pass a file path in the prompt instead, and let the agent read it", maxStdin>>20)}
	}
	return string(data), nil
}

// printer writes a turn in one output format.
//
// The text format is for people, so what the model and the tools wrote is
// stripped of control sequences (package termtext) before it is printed:
// the answer on stdout, and on stderr the activity view (see activity) and
// error messages. This holds whether or not the output is a terminal. A
// pipe into `less -R`, or a file cat'ed later, reaches a terminal all the
// same, and a CI log is read in one; text is the format of the answer, not
// of its bytes: a program that wants them exactly reads json or
// stream-json, which keep the text as the model wrote it.
type printer struct {
	a      *app
	format string
	w      *bufio.Writer
	// timeout returns the error of a run that reached its time limit (nil
	// if it did not), for the session given.
	timeout   func(sessionID string) error
	sessionID string
	// view is what the run says on stderr: refusals, and with --verbose
	// the activity view.
	view *activity
	// kept, after a failed turn, says what the session kept and how to go
	// on (text output only).
	kept string
}

func newPrinter(a *app, format string) *printer {
	return &printer{a: a, format: format, w: bufio.NewWriter(a.io.out),
		view: newActivity(a.stderr(), a.verbose && format != "stream-json", a.colors(a.io.err))}
}

// event receives each event of the turn as it happens.
func (p *printer) event(ev agent.Event) {
	if ev.Type == agent.EventSession {
		p.sessionID = ev.SessionID
	}
	p.view.event(ev)
	if p.format == "stream-json" {
		if ev.Type == agent.EventDone && ev.DoneReason == agent.DoneCancelled && p.timeout != nil {
			// done.reason stays "cancelled"; an error event before it
			// says that the time limit, not the user, stopped the run.
			if err := p.timeout(p.sessionID); err != nil {
				p.writeJSON(agent.Event{Type: agent.EventError, Code: agent.CodeTimeout, Error: err.Error()})
			}
		}
		p.writeJSON(ev)
	}
}

func (p *printer) writeJSON(ev agent.Event) {
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	p.w.Write(b)
	p.w.WriteByte('\n')
	p.w.Flush() // each event as it happens
}

// jsonResult is the --output-format json object.
type jsonResult struct {
	SessionID string     `json:"session_id"`
	Response  string     `json:"response"`
	Reason    string     `json:"reason"`
	ToolCalls []jsonCall `json:"tool_calls"`
	Usage     llm.Usage  `json:"usage"`
	// Cost is what the turn's model calls cost, in micro-units
	// (millionths) of the [pricing] currency: null when none had a price.
	// Unpriced counts the calls without one (above 0: the cost is
	// incomplete, or unknown).
	Cost     *int64         `json:"cost"`
	Unpriced int            `json:"unpriced"`
	Error    *jsonErrorInfo `json:"error"`
	// Plan is the model's plan at the end of the turn, if it kept one.
	Plan *hearth.Plan `json:"plan,omitempty"`
}

type jsonCall struct {
	ID   string          `json:"id"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type jsonErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// finish writes what comes at the end of the turn: the answer (ending in a
// line break), then on stderr the token usage (with --verbose) and what
// went wrong.
func (p *printer) finish(res *hearth.Result, storeErr, fail error) {
	defer p.w.Flush()
	p.view.end()
	switch p.format {
	case "text":
		if text := strings.TrimRight(termtext.String(res.Text), "\n"); text != "" {
			p.w.WriteString(text)
			p.w.WriteByte('\n')
		}
		p.w.Flush()
		if p.view.verbose {
			p.view.out.Line(p.view.usageLine())
		}
		if res.Err != nil {
			// The error may quote the server, or the model.
			p.view.out.Line("hearth: " + termtext.String(res.Err.Error()))
		}
		if p.kept != "" {
			p.view.out.Line(p.kept)
		}
	case "json":
		j := jsonResult{SessionID: res.SessionID, Response: res.Text, Reason: string(res.Reason), Usage: res.Usage, ToolCalls: []jsonCall{}, Plan: res.Plan,
			Cost: res.Cost, Unpriced: res.Unpriced}
		for _, tc := range res.ToolCalls {
			j.ToolCalls = append(j.ToolCalls, jsonCall{tc.ID, tc.Name, tc.Args})
		}
		var tl *turnLimit
		var te *timeoutError
		switch {
		case res.Err != nil:
			j.Error = &jsonErrorInfo{Code: string(agent.CodeOf(res.Err)), Message: res.Err.Error()}
		case errors.As(fail, &tl):
			j.Error = &jsonErrorInfo{Code: "max_turns", Message: fail.Error()}
		case errors.As(fail, &te):
			j.Error = &jsonErrorInfo{Code: "timeout", Message: fail.Error()}
		case fail != nil:
			j.Error = &jsonErrorInfo{Code: "agent_error", Message: fail.Error()}
		case storeErr != nil:
			j.Error = &jsonErrorInfo{Code: "store", Message: storeErr.Error()}
		}
		enc := json.NewEncoder(p.w)
		enc.SetIndent("", "  ")
		enc.Encode(j)
		p.w.Flush()
		if p.view.verbose {
			p.view.out.Line(p.view.usageLine())
		}
	}
}

// start loads the configuration and builds the agent for a command. A
// mistake in the configuration (a flag, a variable, a config file) is a
// usage error: exit code 2. Close the agent, then the Loaded.
func start(ctx context.Context, o loader.Options) (*hearth.Agent, *loader.Loaded, error) {
	bot, l, err := loader.Start(ctx, o)
	if err != nil {
		var ce loader.ConfigError
		if errors.As(err, &ce) {
			return nil, nil, usageError{err}
		}
		return nil, nil, err
	}
	return bot, l, nil
}
