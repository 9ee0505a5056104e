package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/hearth-agent/hearth/config"
)

func (a *app) authCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "auth",
		Short: "Keep API keys in the system keychain",
		Long: `Store the API key of a configured provider in the system keychain, where
Hearth finds it by the provider's name. Without a keychain (a headless
server), the key goes to a file only you can read, with a warning.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	set := &cobra.Command{
		Use:     "set NAME",
		Short:   "Store the key for provider NAME (read from the terminal or standard input)",
		Example: "  hearth auth set vllm\n  echo \"$KEY\" | hearth auth set openai",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			key, err := a.readSecret(fmt.Sprintf("API key for %s: ", args[0]))
			if err != nil {
				return err
			}
			if key == "" {
				return usageError{errors.New("empty key: nothing stored")}
			}
			s, err := a.secrets()
			if err != nil {
				return err
			}
			where, err := s.Set(args[0], key)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.io.err, "stored the key for %s in %s\n", args[0], where)
			return nil
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove the key for provider NAME",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := a.secrets()
			if err != nil {
				return err
			}
			if err := s.Delete(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.io.err, "removed the key for %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(set, rm)
	return cmd
}

func (a *app) secrets() (*config.Secrets, error) {
	paths, err := config.DefaultPaths(a.getenv)
	if err != nil {
		return nil, usageError{err}
	}
	s := config.NewSecrets(paths, a.logger())
	if a.getenv("HEARTH_NO_KEYRING") != "" {
		s.Keyring = config.NoKeyring{}
	}
	return s, nil
}

// readSecret reads a line without echo from a terminal, or from piped input.
func (a *app) readSecret(prompt string) (string, error) {
	if f, ok := a.io.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(a.io.err, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(a.io.err)
		return strings.TrimSpace(string(b)), err
	}
	line, err := bufio.NewReader(a.io.in).ReadString('\n')
	if err != nil && line == "" {
		return "", usageError{errors.New("no key on standard input")}
	}
	return strings.TrimSpace(line), nil
}
