// Command embed shows Hearth embedded in a Go program: a small shop back
// office gives the model three host tools — its configuration, a read-only
// query on its orders, and a feature-flag switch that needs the user's
// approval — runs a turn with the page the user is looking at as context,
// prints the events as they come, and asks on the terminal before the flag
// changes.
//
//	go run ./examples/embed -model qwen3:4b "Why is checkout slow?"
//
// It talks to Ollama (OLLAMA_HOST, or 127.0.0.1:11434) unless -provider
// openai and -base-url say otherwise. -yes approves without asking.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"

	"github.com/hearth-agent/hearth"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// shop is the host application.
type shop struct {
	mu     sync.Mutex
	config map[string]string
	flags  map[string]bool
	orders []order
}

type order struct {
	ID     int
	Status string
	Total  string
}

func newShop() *shop {
	return &shop{
		config: map[string]string{"db_pool_size": "4", "payment_timeout": "30s", "cache": "off"},
		flags:  map[string]bool{"fast_checkout": false, "new_search": true},
		orders: []order{{1040, "paid", "12.00"}, {1041, "pending", "99.90"}, {1042, "pending", "5.50"}, {1043, "paid", "42.00"}},
	}
}

// The arguments of each host tool; their JSON Schema is inferred.
type (
	configArgs struct {
		Key string `json:"key,omitempty" jsonschema:"one setting; empty for all of them"`
	}
	queryArgs struct {
		Table  string `json:"table" jsonschema:"the table: orders"`
		Status string `json:"status,omitempty" jsonschema:"keep rows with this status (paid, pending)"`
	}
	flagArgs struct {
		Name string `json:"name" jsonschema:"the feature flag"`
		On   bool   `json:"on" jsonschema:"true to turn it on"`
	}
)

func (s *shop) getConfig(ctx context.Context, a configArgs) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Key != "" {
		v, ok := s.config[a.Key]
		if !ok {
			return "", fmt.Errorf("no setting %q: call get_app_config without a key to list them", a.Key)
		}
		return a.Key + " = " + v, nil
	}
	var lines []string
	for k, v := range s.config {
		lines = append(lines, k+" = "+v)
	}
	for k, v := range s.flags {
		lines = append(lines, fmt.Sprintf("flag %s = %v", k, v))
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n"), nil
}

func (s *shop) queryDatabase(ctx context.Context, a queryArgs) (string, error) {
	if a.Table != "orders" {
		return "", fmt.Errorf("no table %q: the only table is orders", a.Table)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	b.WriteString("id,status,total\n")
	for _, o := range s.orders {
		if a.Status == "" || o.Status == a.Status {
			fmt.Fprintf(&b, "%d,%s,%s\n", o.ID, o.Status, o.Total)
		}
	}
	return b.String(), nil
}

func (s *shop) setFlag(ctx context.Context, a flagArgs) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.flags[a.Name]; !ok {
		return "", fmt.Errorf("no flag %q: get_app_config lists the flags", a.Name)
	}
	s.flags[a.Name] = a.On
	return fmt.Sprintf("flag %s is now %v", a.Name, a.On), nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("embed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	provider := fs.String("provider", "ollama", "ollama, or openai for any OpenAI-compatible server")
	baseURL := fs.String("base-url", "", "the model server (default: OLLAMA_HOST, or 127.0.0.1:11434)")
	model := fs.String("model", "qwen3:4b", "the model")
	yes := fs.Bool("yes", false, "approve every call without asking")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	question := strings.Join(fs.Args(), " ")
	if question == "" {
		question = "Why are so many orders stuck in pending? Fix it if a flag would help."
	}

	s := newShop()
	var p = hearth.Ollama(*baseURL)
	if *provider == "openai" {
		p = hearth.OpenAI(*baseURL, os.Getenv("OPENAI_API_KEY"))
	}
	bot, err := hearth.New(hearth.Config{
		Provider: p,
		Model:    *model,
		Tools: []hearth.Tool{
			hearth.Func("get_app_config", "Return the shop's settings and feature flags", hearth.ReadOnly, s.getConfig),
			hearth.Func("query_database", "List rows of a table of the shop's database", hearth.ReadOnly, s.queryDatabase),
			hearth.Func("set_feature_flag", "Turn a feature flag of the shop on or off", hearth.Edit, s.setFlag),
		},
		Profile: hearth.Profile{System: "You help the owner of a small online shop run it. Use the tools to look before you answer. Be brief."},
	})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	defer bot.Close()

	answers := bufio.NewReader(stdin)
	turn := bot.NewTurn(ctx, hearth.Request{
		Message: question,
		// What the user is looking at: the model sees it with this turn,
		// the saved conversation does not keep it.
		Context: "The owner is on the page /admin/orders with order 1042 selected.",
	})
	for ev := range turn.Events() {
		switch ev.Type {
		case hearth.EventThinkingDelta:
			fmt.Fprint(stderr, ev.Text)
		case hearth.EventThinkingEnd:
			fmt.Fprintln(stderr)
		case hearth.EventTextDelta:
			fmt.Fprint(stdout, ev.Text)
		case hearth.EventToolCall:
			fmt.Fprintf(stderr, "[%s %s]\n", ev.Name, ev.Args)
		case hearth.EventApprovalRequired:
			d := hearth.Allow
			if !*yes {
				d = ask(answers, stderr, ev)
			}
			turn.Approve(ev.ID, d)
		case hearth.EventToolResult:
			if !ev.OK {
				fmt.Fprintf(stderr, "[%s failed: %s]\n", ev.Name, ev.Error)
			}
		case hearth.EventError:
			fmt.Fprintf(stderr, "[error %s: %s]\n", ev.Code, ev.Error)
		}
	}
	res, err := turn.Result()
	fmt.Fprintln(stdout)
	if err != nil {
		fmt.Fprintln(stderr, "embed:", err)
		if errors.Is(err, context.Canceled) {
			return 130
		}
		return 1
	}
	fmt.Fprintf(stderr, "(session %s, %d+%d tokens, fast_checkout=%v)\n", res.SessionID, res.Usage.InputTokens, res.Usage.OutputTokens, s.flags["fast_checkout"])
	return 0
}

// ask asks the user on the terminal.
func ask(in *bufio.Reader, out io.Writer, ev hearth.Event) hearth.Decision {
	fmt.Fprintf(out, "Allow %s (%s)? [y]es, [n]o, [a]lways: ", ev.Name, ev.Reason)
	line, _ := in.ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return hearth.Allow
	case "a", "always":
		return hearth.AllowAlways
	}
	return hearth.Deny
}
