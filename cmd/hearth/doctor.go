package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hearth-agent/hearth/internal/doctor"
	"github.com/hearth-agent/hearth/internal/termtext"
	"github.com/hearth-agent/hearth/sandbox"
	"github.com/hearth-agent/hearth/tool/shell"
)

// errNotReady makes doctor exit 1 after printing its report.
var errNotReady = errors.New("not ready")

func (a *app) doctorCommand() *cobra.Command {
	var asJSON, noChat bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check that the model server and model are ready, and say how to fix what is not",
		Long: `Check the configured model server: does it answer, which version is it,
is the model there, can it call tools and think, how large is its context
window, and does it answer a chat. Every problem comes with its fix.

Exits 0 when everything needed works, 1 when something must be fixed.`,
		Example: `  hearth doctor --model qwen3:4b
  OLLAMA_HOST=gpu-box:11434 hearth doctor -m llama3.1:8b
  hearth doctor --provider openai --base-url http://localhost:8000/v1 --model Qwen/Qwen3-8B --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, cfg, err := a.provider()
			if err != nil {
				return err
			}
			opts := doctor.Options{Model: cfg.Model, SkipChat: noChat, Extra: []doctor.Check{sandboxCheck()}}
			showProgress := !asJSON && a.isTTY(a.io.err)
			if showProgress {
				opts.Progress = func(step string) { fmt.Fprintf(a.io.err, "\r\033[K… %s", step) }
			}
			r := doctor.Run(cmd.Context(), p, cfg.BaseURL, opts)
			if showProgress {
				fmt.Fprint(a.io.err, "\r\033[K")
			}
			if err := cmd.Context().Err(); err != nil {
				return err
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
	return cmd
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
