package llm

import (
	"context"
	"errors"
)

// ModelLister is a Provider that can list the models its server has.
type ModelLister interface {
	// Models lists the models the server has.
	Models(ctx context.Context) ([]ModelInfo, error)
}

// ModelDescriber is a Provider that can describe one model: its
// capabilities and context length.
type ModelDescriber interface {
	// ModelInfo describes model; "" means the provider's default model.
	ModelInfo(ctx context.Context, model string) (*ModelInfo, error)
}

// Embedder is a Provider that can compute embeddings.
type Embedder interface {
	// Embed returns one embedding vector per input, in order.
	Embed(ctx context.Context, model string, inputs []string) ([][]float32, error)
}

// HealthChecker is a Provider that can check that its server answers.
type HealthChecker interface {
	// Health checks that the server answers and says what it is.
	Health(ctx context.Context) (*ServerInfo, error)
}

// Models lists the models p's server has. If p is not a ModelLister it
// returns an *Error that
// wraps errors.ErrUnsupported (see Provider).
func Models(ctx context.Context, p Provider) ([]ModelInfo, error) {
	if l, ok := p.(ModelLister); ok {
		return l.Models(ctx)
	}
	return nil, unsupported(p, "list models", "cannot list its models")
}

// Describe describes model (capabilities, context length) as p's server
// knows it. If p is not a ModelDescriber it returns an *Error that wraps
// errors.ErrUnsupported (see Provider).
func Describe(ctx context.Context, p Provider, model string) (*ModelInfo, error) {
	if d, ok := p.(ModelDescriber); ok {
		return d.ModelInfo(ctx, model)
	}
	return nil, unsupported(p, "show model", "cannot describe a model")
}

// Embed returns one embedding vector per input, computed by model on p's
// server. If p is not an Embedder it returns an *Error that wraps
// errors.ErrUnsupported (see Provider).
func Embed(ctx context.Context, p Provider, model string, inputs []string) ([][]float32, error) {
	if e, ok := p.(Embedder); ok {
		return e.Embed(ctx, model, inputs)
	}
	return nil, unsupported(p, "embed", "cannot compute embeddings")
}

// Health checks that p's server answers and says what it is. If p is not a
// HealthChecker it returns an *Error that wraps errors.ErrUnsupported (see
// Provider).
func Health(ctx context.Context, p Provider) (*ServerInfo, error) {
	if h, ok := p.(HealthChecker); ok {
		return h.Health(ctx)
	}
	return nil, unsupported(p, "health check", "cannot check its server's health")
}

// unsupported is the error of a helper whose provider lacks the ability.
func unsupported(p Provider, op, what string) *Error {
	return &Error{
		Code:     CodeInvalidRequest,
		Provider: p.Kind(),
		Op:       op,
		Message:  "the provider " + what,
		Err:      errors.ErrUnsupported,
	}
}
