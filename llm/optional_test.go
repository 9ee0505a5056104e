package llm_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hearth-agent/hearth/llm"
)

// chatOnly is a provider that can do nothing but chat.
type chatOnly struct{}

func (chatOnly) Kind() string { return "remote" }

func (chatOnly) Chat(context.Context, *llm.Request) llm.Stream {
	return func(yield func(llm.Event, error) bool) {
		yield(llm.Event{Kind: llm.EventText, Text: "hi"}, nil)
		yield(llm.Event{Kind: llm.EventDone, Done: &llm.Done{Reason: llm.FinishStop}}, nil)
	}
}

// capable is a provider with every optional ability, answering from memory.
type capable struct{ chatOnly }

func (capable) Models(context.Context) ([]llm.ModelInfo, error) {
	return []llm.ModelInfo{{Name: "m1"}, {Name: "m2"}}, nil
}

func (capable) ModelInfo(_ context.Context, model string) (*llm.ModelInfo, error) {
	return &llm.ModelInfo{Name: model, ContextLength: 8192}, nil
}

func (capable) Embed(_ context.Context, _ string, inputs []string) ([][]float32, error) {
	out := make([][]float32, len(inputs))
	for i, in := range inputs {
		out[i] = []float32{float32(len(in))}
	}
	return out, nil
}

func (capable) Health(context.Context) (*llm.ServerInfo, error) {
	return &llm.ServerInfo{Kind: "remote", BaseURL: "https://example.test", Version: "1.0"}, nil
}

var (
	_ llm.ModelLister    = capable{}
	_ llm.ModelDescriber = capable{}
	_ llm.Embedder       = capable{}
	_ llm.HealthChecker  = capable{}
)

func TestOptionalAbilities(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		call func(llm.Provider) (any, error)
		// op and says describe the error of a provider without the ability.
		op   string
		says string
		// want is the capable provider's answer.
		want any
	}{
		{
			name: "Models",
			call: func(p llm.Provider) (any, error) { return llm.Models(ctx, p) },
			op:   "list models", says: "cannot list its models",
			want: []llm.ModelInfo{{Name: "m1"}, {Name: "m2"}},
		},
		{
			name: "Describe",
			call: func(p llm.Provider) (any, error) { return llm.Describe(ctx, p, "m1") },
			op:   "show model", says: "cannot describe a model",
			want: &llm.ModelInfo{Name: "m1", ContextLength: 8192},
		},
		{
			name: "Embed",
			call: func(p llm.Provider) (any, error) { return llm.Embed(ctx, p, "e", []string{"a", "bcd"}) },
			op:   "embed", says: "cannot compute embeddings",
			want: [][]float32{{1}, {3}},
		},
		{
			name: "Health",
			call: func(p llm.Provider) (any, error) { return llm.Health(ctx, p) },
			op:   "health check", says: "cannot check its server's health",
			want: &llm.ServerInfo{Kind: "remote", BaseURL: "https://example.test", Version: "1.0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name+"/unsupported", func(t *testing.T) {
			got, err := tc.call(chatOnly{})
			if err == nil {
				t.Fatalf("got %v and no error, want the unsupported error", got)
			}
			if v := reflect.ValueOf(got); !v.IsNil() {
				t.Errorf("got %v with the error, want nil", got)
			}
			var le *llm.Error
			if !errors.As(err, &le) {
				t.Fatalf("error %T (%v), want *llm.Error", err, err)
			}
			if le.Code != llm.CodeInvalidRequest || le.Retryable || le.Provider != "remote" || le.Op != tc.op {
				t.Errorf("error %+v, want code %s, not retryable, provider remote, op %q", le, llm.CodeInvalidRequest, tc.op)
			}
			if !errors.Is(err, errors.ErrUnsupported) {
				t.Errorf("errors.Is(%v, errors.ErrUnsupported) = false", err)
			}
			if msg := err.Error(); !strings.Contains(msg, tc.says) || !strings.HasPrefix(msg, "remote "+tc.op+": ") {
				t.Errorf("message %q, want it to start %q and say %q", msg, "remote "+tc.op+": ", tc.says)
			}
		})
		t.Run(tc.name+"/supported", func(t *testing.T) {
			got, err := tc.call(capable{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v, want %#v", got, tc.want)
			}
		})
	}
}

// A provider's own errors pass through the helpers untouched.
func TestOptionalAbilityErrorPassesThrough(t *testing.T) {
	want := &llm.Error{Provider: "remote", Op: "list models", Code: llm.CodeUnreachable, Retryable: true}
	_, err := llm.Models(context.Background(), failing{err: want})
	if err != want {
		t.Errorf("got %v, want the provider's own error %v", err, want)
	}
	if errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("a provider's own failure reads as unsupported: %v", err)
	}
}

// failing lists models by failing with err.
type failing struct {
	chatOnly
	err error
}

func (f failing) Models(context.Context) ([]llm.ModelInfo, error) {
	return nil, f.err
}

// A provider needs only Kind and Chat; what it can do besides, it says by
// implementing the optional interfaces, and callers ask through the
// package's helpers.
func ExampleModels() {
	var p llm.Provider = chatOnly{} // a provider with Chat and nothing else
	_, err := llm.Models(context.Background(), p)
	fmt.Println(err)
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// remote list models: the provider cannot list its models
	// true
}
