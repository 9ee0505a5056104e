package loader

import (
	"context"
	"errors"

	"github.com/hearth-agent/hearth"
)

// built is an agent built from the configuration, as the command line
// builds it (Start), with what Load resolved.
type built struct {
	*Loaded
	bot *hearth.Agent
}

func (b *built) Close() error { return errors.Join(b.bot.Close(), b.Loaded.Close()) }

// mcp is the agent's MCP manager (nil without servers).
func (b *built) mcp() interface {
	Prepare(context.Context)
} {
	if m := b.bot.MCP(); m != nil {
		return m
	}
	return nil
}

func start(ctx context.Context, o Options) (*built, error) {
	bot, l, err := Start(ctx, o)
	if err != nil {
		return nil, err
	}
	return &built{Loaded: l, bot: bot}, nil
}
