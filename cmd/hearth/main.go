// Command hearth runs an AI agent against models on your own machine
// (Ollama, vLLM, LM Studio, llama.cpp's server, any OpenAI-compatible
// endpoint).
//
// This file turns flags into library calls and errors into exit codes:
//
//	0   success
//	1   the work failed (the server is unreachable, the model is missing, …)
//	2   bad usage or configuration
//	130 interrupted (Ctrl-C); 143 terminated (SIGTERM)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hearth-agent/hearth/config"
	"github.com/hearth-agent/hearth/internal/buildinfo"
	"github.com/hearth-agent/hearth/internal/loader"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/llm/providers"
	"github.com/hearth-agent/hearth/sandbox"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
	exitTerminated  = 143
)

func main() {
	// When started as the confinement launcher of a shell command, this
	// applies the sandbox and becomes the command; it never returns.
	sandbox.MaybeRunLauncher()
	startGC(os.Getenv)
	ctx, sig := interrupts()
	code := run(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Getenv)
	if code == exitInterrupted && sig() == syscall.SIGTERM {
		code = exitTerminated
	}
	os.Exit(code)
}

// interrupts returns a context cancelled by the first SIGINT or SIGTERM
// (the turn stops cleanly and keeps what happened) and a function naming
// the signal. A second Ctrl-C exits at once, whatever is still running.
func interrupts() (context.Context, func() os.Signal) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	go func() {
		first := <-ch
		got.Store(first)
		cancel()
		<-ch
		fmt.Fprintln(os.Stderr, "hearth: interrupted twice, exiting now")
		os.Exit(exitInterrupted)
	}()
	return ctx, func() os.Signal {
		s, _ := got.Load().(os.Signal)
		return s
	}
}

// stdio is the command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// usageError marks an error as the user's to fix in the command line or
// configuration (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// app holds what every command shares.
type app struct {
	io     stdio
	getenv func(string) string
	// isTTY reports whether a stream is a terminal (replaced in tests).
	isTTY func(io.Writer) bool
	// isTTYIn reports whether standard input is a terminal (nil: ask the
	// system).
	isTTYIn func(io.Reader) bool
	flags   providers.Config
	verbose bool
	// errw is standard error, line by line (see errLines).
	errw      *errLines
	workspace string
	profile   string
	trust     string // --trust, for this run
	// -p on the root command, with the run flags
	prompt  string
	rootRun runFlags
	// the terminal UI's flags
	tui tuiFlags
}

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, io stdio, getenv func(string) string) int {
	a := &app{io: io, getenv: getenv, isTTY: isTerminal}
	root := a.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return exitOK
	case ctx.Err() != nil || llm.CodeOf(err) == llm.CodeCancelled:
		a.stderr().Line("hearth: interrupted")
		return exitInterrupted
	case errors.Is(err, errNotReady):
		return exitFailed // the report said why
	}
	var silent errSilent
	if errors.As(err, &silent) {
		return exitFailed // the output already said why
	}
	// An error may quote a model server, an MCP server or the model itself.
	a.stderr().Line("hearth: " + termtext.String(err.Error()))
	var ue usageError
	if errors.As(err, &ue) {
		a.stderr().Line("Run 'hearth --help' for usage.")
		return exitUsage
	}
	return exitFailed
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "hearth",
		Short: "A local-first AI agent for the models on your own machine",
		Long: `Hearth runs an AI agent against models on your own machine: Ollama by
default, or any OpenAI-compatible server (vLLM, LM Studio, llama.cpp's
server, Ollama's /v1).

Which server and model to use comes from flags, then the environment:
  HEARTH_PROVIDER, HEARTH_BASE_URL, HEARTH_MODEL, HEARTH_API_KEY
  HEARTH_PROFILE, HEARTH_WORKSPACE, HEARTH_APPROVAL_MODE, HEARTH_MAX_TURNS,
  HEARTH_TIMEOUT        the flags of the same names
  HEARTH_HOME           one directory for config, sessions and keys
  HEARTH_NO_KEYRING     keep API keys in a 0600 file, not the keychain
  HEARTH_NUM_CTX        context window to ask Ollama for (tokens)
  HEARTH_TOOL_MODE      the flag --tool-mode: native, prompted or auto
  HEARTH_IDLE_TIMEOUT   end a stream silent this long (default 2m; 10m with tools)
  HEARTH_IMPLICIT_THINK the model's template opens <think> itself (Qwen3
                        "thinking", DeepSeek-R1): replies hold only </think>
  OLLAMA_HOST           where Ollama listens (default 127.0.0.1:11434)
  OPENAI_BASE_URL, OPENAI_API_KEY    for --provider openai and responses
  HEARTH_LOG            write the structured log on stderr: debug, info, warn
                        or error (unset: warnings only, as sentences)
  HEARTH_LOG_FORMAT     text (default) or json, with HEARTH_LOG
  NO_COLOR              no colours

With no prompt on a terminal, hearth opens the terminal UI: an interactive
chat (--session ID continues a stored one). With -p or a subcommand it runs
headless.

Start with 'hearth doctor' to check that your server and model are ready.`,
		Example: `  hearth -m qwen3:4b                      (the terminal UI)
  hearth --session s-7kq2m9xwa3           (continue a session in the terminal UI)
  hearth doctor --model qwen3:4b
  hearth run -m qwen3:4b "what does main.go do?"
  hearth -p "summarise README.md" --output-format json
  hearth sessions list
  hearth sessions undo s-7kq2m9xwa3       (take back the file changes of its last turn)
  hearth --provider openai --base-url http://localhost:8000/v1 models`,
		Version:       buildinfo.String(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if a.prompt != "" {
				a.rootRun.fromEnv(cmd, a.getenv)
				return a.runTurn(cmd.Context(), a.prompt, a.rootRun)
			}
			if a.wantsTUI() {
				a.rootRun.fromEnv(cmd, a.getenv)
				return a.runTUI(cmd.Context())
			}
			return cmd.Help()
		},
	}
	root.PersistentPreRunE = func(*cobra.Command, []string) error {
		if _, err := parseLogSettings(a.getenv); err != nil {
			return err
		}
		a.warnAPIKeyFlag()
		return nil
	}
	root.SetOut(a.io.out)
	root.SetErr(a.io.err)
	root.SetIn(a.io.in)
	root.SetVersionTemplate("hearth {{.Version}}\n")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&a.flags.Kind, "provider", "", "model server dialect: ollama, openai for any OpenAI-compatible server, or responses for one with the Responses API (env HEARTH_PROVIDER; default ollama)")
	pf.StringVar(&a.flags.BaseURL, "base-url", "", "server address, as `URL` (env HEARTH_BASE_URL, OLLAMA_HOST or OPENAI_BASE_URL)")
	pf.StringVarP(&a.flags.Model, "model", "m", "", "model to use (env HEARTH_MODEL)")
	pf.StringVar(&a.flags.APIKey, "api-key", "", "API key, for servers that want one (env HEARTH_API_KEY or OPENAI_API_KEY)")
	pf.StringVar(&a.flags.ToolMode, "tool-mode", "", "how the model gets tools: native, prompted (described in the prompt, for models that cannot call tools) or auto (env HEARTH_TOOL_MODE; default auto: per model)")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "follow the run on stderr: reasoning, each tool call and its result, token usage (the structured log is HEARTH_LOG)")
	pf.StringVarP(&a.workspace, "workspace", "w", a.getenv("HEARTH_WORKSPACE"), "project directory the tools may touch (env HEARTH_WORKSPACE; default: the current directory)")
	pf.StringVar(&a.profile, "profile", a.getenv("HEARTH_PROFILE"), "configured profile to run with: tools, approval mode, prompt, model (env HEARTH_PROFILE)")
	pf.StringVar(&a.trust, "trust", "", "trust the workspace this much for this run: trusted (its .hearth/config.toml applies as yours), read-only (reading only) or untrusted (default for a folder never trusted: its config may only tighten, approval modes above default refused); `hearth workspaces trust` remembers it")
	root.Flags().StringVarP(&a.prompt, "prompt", "p", "", "run `PROMPT` headless and exit, as hearth run does")
	a.addRunFlags(root, &a.rootRun)
	a.addTUIFlags(root)
	root.AddCommand(a.runCommand(), a.sessionsCommand(), a.modelsCommand(), a.doctorCommand(), a.authCommand(), a.serveCommand(), a.acpCommand(), a.mcpCommand(), a.migrateCommand(), a.workspacesCommand(), a.usageCommand())
	return root
}

// warnAPIKeyFlag warns, once per command, that a key given with --api-key
// can be read by others. Go cannot safely overwrite its own arguments, so
// the warning is all Hearth can do about it.
func (a *app) warnAPIKeyFlag() {
	if a.flags.APIKey == "" {
		return
	}
	a.stderr().Line("hearth: warning: a key given with --api-key can be read by every process on this machine, the commands the agent runs included (ps, /proc/PID/cmdline), and stays in your shell history; " +
		"set HEARTH_API_KEY or OPENAI_API_KEY instead, or name a variable with api_key_env in the config's provider (or keep its key in the keychain with `hearth auth set NAME`)")
}

// providerFlags is what the flags say about the model server (the
// environment and the config files are resolved after, by the loader).
func (a *app) providerFlags() (providers.Config, error) {
	return a.flags, nil
}

// logger logs to stderr as HEARTH_LOG and HEARTH_LOG_FORMAT say: by
// default warnings and errors only, as sentences (the root command has
// checked the variables).
func (a *app) logger() *slog.Logger {
	s, _ := parseLogSettings(a.getenv)
	return slog.New(s.handler(a.stderr()))
}

// stderr returns standard error, written line by line.
func (a *app) stderr() *errLines {
	if a.errw == nil {
		a.errw = &errLines{w: a.io.err}
	}
	return a.errw
}

// appOptions gathers what every mode needs to assemble an agent.
func (a *app) appOptions(mode string) (loader.Options, error) {
	pf, err := a.providerFlags()
	if err != nil {
		return loader.Options{}, err
	}
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return loader.Options{}, usageError{err}
	}
	return loader.Options{Paths: paths, Workspace: a.workspace, Mode: mode, Profile: a.profile, Trust: a.trust,
		Provider: pf, Getenv: a.getenv, Log: a.logger(),
		// Settings a project's config could not make, as sentences.
		Warn: func(s string) { a.stderr().Line("hearth: " + s) }}, nil
}

// provider builds the provider the flags, environment and config describe.
func (a *app) provider() (llm.Provider, providers.Config, error) {
	o, err := a.appOptions("headless")
	if err != nil {
		return nil, providers.Config{}, err
	}
	p, pc, err := loader.ProviderOnly(o)
	if err != nil {
		return nil, pc, usageError{err}
	}
	return p, pc, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// colors says whether to color output for w: a terminal, and NO_COLOR unset.
func (a *app) colors(w io.Writer) bool {
	return a.isTTY(w) && a.getenv("NO_COLOR") == "" && a.getenv("TERM") != "dumb"
}

// noArgs refuses positional arguments as a usage error. An unknown
// command gets cobra's suggestions ("did you mean run?"); words that look
// like a prompt get the commands that take one.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if cmd.SuggestionsMinimumDistance <= 0 {
				cmd.SuggestionsMinimumDistance = 2 // as cobra's own lookup sets it
			}
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
			} else if !cmd.HasParent() && (len(args) > 1 || strings.ContainsAny(args[0], " \t\n?")) {
				msg += "\n\nTo run a prompt: hearth run \"…\" (or hearth -p \"…\").\n"
			}
			return usageError{errors.New(msg)}
		}
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}
