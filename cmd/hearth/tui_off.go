//go:build !tui

package main

import (
	"context"

	"github.com/spf13/cobra"
)

// The terminal UI is built only with `-tags tui` for now: its Markdown and
// highlighting libraries (glamour, chroma) build registries at every process
// start, which would push a cold headless run past its 30 MB budget
// (docs/benchmarks.md). Without the tag, `hearth` with no prompt shows help.

// tuiFlags are the terminal UI's options (none without the tag).
type tuiFlags struct{}

func (a *app) addTUIFlags(*cobra.Command) {}

func (a *app) wantsTUI() bool { return false }

func (a *app) runTUI(context.Context) error { return nil }
