package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/doctor"
	"github.com/hearth-agent/hearth/internal/envscrub"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/prompted"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool/shell"
)

// errNotReady makes doctor exit 1 after printing its report.
var errNotReady = errors.New("not ready")

func (a *app) doctorCommand() *cobra.Command {
	var asJSON, noChat, pull bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that the model server and model are ready, and say how to fix what is not",
		Long: `Check the configured model server: does it answer, which version is it,
is the model there, can it call tools and think, how large is its context
window, does that window hold what Hearth sends before your first message
(the system prompt with the project notes, AGENTS.md and HEARTH.md, and the
tool definitions; an estimate, for the profile hearth run uses or --profile),
and does it answer a chat. Every problem comes with its fix.

When Ollama does not have the model, doctor offers to pull it from Ollama's
registry: on a terminal it asks ("Pull qwen3:4b from Ollama now? [Y/n]"),
with --pull it pulls without asking, and elsewhere it says the command to
run. The download shows a progress bar on stderr (plain lines, every few
seconds, when stderr is not a terminal); Ctrl-C stops it, and pulling again
resumes. Once pulled, the model is checked again.

Exits 0 when everything needed works, 1 when something must be fixed.`,
		Example: `  hearth doctor --model qwen3:4b
  hearth doctor -m qwen3:4b --pull        (pull the model if Ollama does not have it, without asking)
  OLLAMA_HOST=gpu-box:11434 hearth doctor -m llama3.1:8b
  HEARTH_NUM_CTX=32768 hearth doctor -m qwen3:4b   (check a larger window)
  hearth doctor --provider openai --base-url http://localhost:8000/v1 --model Qwen/Qwen3-8B --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			p, cfg, err := a.provider()
			if err != nil {
				return err
			}
			opts := doctor.Options{Model: cfg.Model, SkipChat: noChat, Extra: []doctor.Check{sandboxCheck(), a.storeCheck(ctx)}, Prompt: a.doctorPrompt,
				ToolMode: prompted.Mode(cfg.ToolMode), RefusedAt: a.refusedAt(cfg)}
			r := a.diagnose(ctx, p, cfg.BaseURL, opts, asJSON)
			if err := ctx.Err(); err != nil {
				return err
			}
			if r.MissingModel != "" {
				if r, err = a.offerPull(ctx, p, cfg.BaseURL, opts, r, pull, asJSON); err != nil {
					return err
				}
			}
			if asJSON {
				enc := json.NewEncoder(a.io.out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(r); err != nil {
					return err
				}
			} else {
				a.printReport(a.io.out, r)
			}
			if !r.Ready {
				return errNotReady
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&noChat, "no-chat", false, "skip the live chat (which loads the model)")
	cmd.Flags().BoolVar(&pull, "pull", false, "pull the model from Ollama's registry, without asking, if the server does not have it")
	return cmd
}

// refusedAt says when the server refused tools for a model, as Hearth
// remembers it (zero: never).
func (a *app) refusedAt(cfg providers.Config) func(model string) time.Time {
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return nil
	}
	mem := loader.ToolModeMemory(paths, cfg, a.logger())
	if mem == nil {
		return nil
	}
	return func(model string) time.Time {
		at, _ := mem.Refused(model)
		return at
	}
}

// diagnose runs the checks, with a spinner on a terminal.
func (a *app) diagnose(ctx context.Context, p llm.Provider, baseURL string, opts doctor.Options, asJSON bool) *doctor.Report {
	showProgress := !asJSON && a.isTTY(a.io.err)
	if showProgress {
		opts.Progress = func(step string) { fmt.Fprintf(a.io.err, "\r\033[K… %s", step) }
	}
	r := doctor.Run(ctx, p, baseURL, opts)
	if showProgress {
		fmt.Fprint(a.io.err, "\r\033[K")
	}
	return r
}

// doctorPrompt is what the run would send before the user's first message:
// the agent built as hearth run builds it, without its store or MCP servers.
func (a *app) doctorPrompt(ctx context.Context) (*doctor.Prompt, error) {
	o, err := a.appOptions("headless")
	if err != nil {
		return nil, err
	}
	// The configuration's warnings were said when the provider was
	// resolved; the run says the others.
	o.Warn = func(string) {}
	fp, err := loader.FirstPrompt(ctx, o)
	if err != nil {
		return nil, err
	}
	pr := &doctor.Prompt{System: fp.System, Tools: fp.Tools, MCPServers: fp.MCPServers}
	for _, n := range fp.Notes {
		pr.Notes = append(pr.Notes, doctor.Note{Name: n.Name, Text: n.Text})
	}
	return pr, nil
}

// offerPull pulls the model r found missing, when the server can: with
// --pull at once, on a terminal once the user agrees. After a pull it checks
// again. Otherwise r stands, its fix naming --pull.
func (a *app) offerPull(ctx context.Context, p llm.Provider, baseURL string, opts doctor.Options, r *doctor.Report, pull, asJSON bool) (*doctor.Report, error) {
	model := r.MissingModel
	pl, ok := doctor.CanPull(p)
	if !ok {
		if pull {
			a.stderr().Line("hearth: --pull: only Ollama can pull a model; load " + termtext.String(model) + " into the server yourself")
		}
		return r, nil
	}
	if !pull {
		if asJSON || !a.canAsk() {
			return r, nil
		}
		q := fmt.Sprintf("%s is not on the Ollama server at %s.\nPull %s from Ollama now? [Y/n] ",
			termtext.String(model), termtext.String(baseURL), termtext.String(model))
		yes, err := a.ask(ctx, q)
		if err != nil || !yes {
			return r, err
		}
	}
	m := &doctor.Meter{W: a.io.err, Model: model, TTY: a.isTTY(a.io.err), Color: a.colors(a.io.err)}
	c := doctor.Pull(ctx, pl, model, m.Show)
	m.Close()
	if err := ctx.Err(); err != nil {
		a.stderr().Line("hearth: the pull stopped; Ollama keeps what it downloaded, and the same command resumes it")
		return r, err
	}
	if c.Status != doctor.OK {
		// The model's fix said to pull it: that was just tried, and the
		// pull's own line says why it failed.
		for i := range r.Checks {
			if r.Checks[i].Name == "model" {
				r.Checks[i].Fix = strings.Replace(r.Checks[i].Fix, "pull it: add --pull to this command, or run", "pull it once the pull below can work, or run", 1)
			}
		}
		r.Insert("model", c)
		return r, nil
	}
	again := a.diagnose(ctx, p, baseURL, opts, asJSON)
	again.Insert("models", c)
	return again, ctx.Err()
}

// canAsk says whether the user can answer a question: standard input and
// standard error (where it is asked) are terminals.
func (a *app) canAsk() bool {
	in := a.isTTYIn
	if in == nil {
		in = isTerminalReader
	}
	return in(a.io.in) && a.isTTY(a.io.err)
}

// ask asks a yes-or-no question on stderr and reads the answer from stdin:
// an empty answer (Enter), y or yes is yes; anything else, or the end of the
// input, is no. It gives up when ctx ends (Ctrl-C).
func (a *app) ask(ctx context.Context, question string) (bool, error) {
	fmt.Fprint(a.io.err, question)
	answer := make(chan string, 1)
	go func() {
		line, err := bufio.NewReader(a.io.in).ReadString('\n')
		if err != nil && line == "" {
			close(answer)
			return
		}
		answer <- line
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(a.io.err)
		return false, ctx.Err()
	case line, ok := <-answer:
		if !ok {
			fmt.Fprintln(a.io.err)
			return false, nil
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "", "y", "yes":
			return true, nil
		}
		return false, nil
	}
}

func (a *app) printReport(w io.Writer, r *doctor.Report) {
	color := a.colors(w)
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\033[" + code + "m" + s + "\033[0m"
	}
	mark := map[doctor.Status]string{
		doctor.OK:   paint("32", "✓"),
		doctor.Warn: paint("33", "!"),
		doctor.Fail: paint("31", "✗"),
		doctor.Skip: paint("2", "-"),
	}
	model := termtext.String(r.Model)
	if model == "" {
		model = "(none chosen)"
	}
	// Details and fixes quote the server (its version, its models, its
	// errors): they are stripped of control sequences; the colours are
	// Hearth's own.
	fmt.Fprintf(w, "Hearth doctor: %s at %s, model %s\n\n", termtext.String(r.Provider), termtext.String(r.BaseURL), model)
	width := 0
	for _, c := range r.Checks {
		width = max(width, len(c.Name))
	}
	problems, warnings := 0, 0
	for _, c := range r.Checks {
		fmt.Fprintf(w, "  %s %-*s  %s\n", mark[c.Status], width, c.Name, termtext.String(c.Detail))
		if c.Fix != "" && (c.Status == doctor.Fail || c.Status == doctor.Warn) {
			fmt.Fprintf(w, "    %*s  %s %s\n", width, "", paint("1", "fix:"), termtext.String(c.Fix))
		}
		switch c.Status {
		case doctor.Fail:
			problems++
		case doctor.Warn:
			warnings++
		}
	}
	fmt.Fprintln(w)
	switch {
	case problems > 0:
		fmt.Fprintf(w, "%s %s to fix.\n", paint("31;1", "Not ready:"), plural(problems, "problem"))
	case warnings > 0:
		fmt.Fprintf(w, "%s (%s worth a look).\n", paint("32;1", "Ready"), plural(warnings, "warning"))
	default:
		fmt.Fprintln(w, paint("32;1", "Ready."))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, strings.TrimSuffix(word, "s"))
}

// sandboxCheck runs one confined command and says which protections hold
// on this machine.
// storeCheck says where sessions are kept, and for a PostgreSQL store
// whether it can be reached and used (opening it brings its schema up to
// date, as the first server would).
func (a *app) storeCheck(ctx context.Context) doctor.Check {
	c := doctor.Check{Name: "sessions"}
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		c.Status, c.Detail = doctor.Fail, err.Error()
		return c
	}
	cfg, err := config.Load(paths, "")
	if err != nil {
		c.Status, c.Detail, c.Fix = doctor.Fail, err.Error(), "fix the config file"
		return c
	}
	getenv := envscrub.Wrap(a.getenv)
	loc, pg, err := loader.StoreLocation(cfg, paths, getenv)
	if err != nil {
		c.Status, c.Detail, c.Fix = doctor.Fail, err.Error(), "set HEARTH_DATABASE_URL or [store] url to a postgres:// URL, or unset it for the SQLite file"
		return c
	}
	if !pg {
		c.Status, c.Detail = doctor.OK, "kept in SQLite "+loc
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	st, err := loader.OpenStore(ctx, cfg, paths, getenv, nil)
	if err != nil {
		c.Status, c.Detail = doctor.Fail, err.Error()
		c.Fix = "check HEARTH_DATABASE_URL (or [store] url): the server's address, the database's name, the user and password (PGPASSWORD or ~/.pgpass)"
		return c
	}
	defer st.Close()
	c.Status, c.Detail = doctor.OK, "kept in "+session.Describe(st)+": reachable, schema up to date"
	return c
}

func sandboxCheck() doctor.Check {
	st := (&sandbox.Confinement{Writable: []string{os.TempDir()}}).Status()
	if !st.Active {
		return doctor.Check{Name: "sandbox", Status: doctor.Warn,
			Detail: "shell commands are not confined by the kernel here (" + st.Note + "): only Hearth's own checks stand between a command and your files",
			Fix:    "use Linux 5.13 or newer with Landlock enabled, or keep the approval mode at default so you see each command"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := shell.Probe(ctx)
	if err != nil {
		return doctor.Check{Name: "sandbox", Status: doctor.Fail,
			Detail: "a confined test command failed: " + err.Error(),
			Fix:    "run `hearth doctor` again; if it fails again, report it with this message"}
	}
	detail := fmt.Sprintf("Landlock ABI %d: commands write only inside the workspace and a private temp directory", rep.Landlock)
	if rep.Namespaced {
		detail += "; .git and .hearth are read-only, your secret locations hidden"
		if rep.NetworkIsolated {
			detail += ", and the network cut off unless allowed"
			if rep.UnixSocketsDenied {
				detail += " (local Unix sockets too)"
			}
		}
		if len(rep.Problems) == 0 {
			return doctor.Check{Name: "sandbox", Status: doctor.OK, Detail: detail}
		}
	}
	fix := "keep the approval mode at default so you see each command, and report this line"
	if !rep.Namespaced {
		fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu an AppArmor profile for hearth), or keep the approval mode at default so you see each command"
	}
	return doctor.Check{Name: "sandbox", Status: doctor.Warn,
		Detail: detail + "; but " + strings.Join(rep.Problems, "; "),
		Fix:    fix}
}
