package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// The test binary doubles as fake MCP servers: with HEARTH_MCP_FAKE set it
// serves (or pretends to) on stdio instead of running tests.
//
//	ok      a well-behaved server (see newFake), after HEARTH_FAKE_DELAY;
//	        with HEARTH_FAKE_BARRIER=dir:n it first creates a file in dir
//	        and waits until n files are there (n servers started together)
//	silent  reads its input and never answers
//	exit    writes an error to stderr and exits with status 2
func TestMain(m *testing.M) {
	switch mode := os.Getenv("HEARTH_MCP_FAKE"); mode {
	case "":
		goleak.VerifyTestMain(m,
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"))
	case "ok":
		if d, err := time.ParseDuration(os.Getenv("HEARTH_FAKE_DELAY")); err == nil {
			time.Sleep(d)
		}
		if b := os.Getenv("HEARTH_FAKE_BARRIER"); b != "" {
			barrier(b)
		}
		if f := os.Getenv("HEARTH_FAKE_PIDFILE"); f != "" {
			os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644)
		}
		fmt.Fprintln(os.Stderr, "fake server ready")
		if err := newFake().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	case "silent":
		buf := make([]byte, 4096)
		for {
			if _, err := os.Stdin.Read(buf); err != nil {
				time.Sleep(time.Hour) // input closed: still say nothing
			}
		}
	case "exit":
		fmt.Fprintln(os.Stderr, "fatal: GITHUB_TOKEN is not set")
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "unknown fake mode", mode)
		os.Exit(1)
	}
}

// barrier ("dir:n") creates this process's file in dir, then waits until
// there are n: it returns only if n servers are starting at once.
func barrier(spec string) {
	i := strings.LastIndexByte(spec, ':')
	dir := spec[:i]
	n, _ := strconv.Atoi(spec[i+1:])
	os.WriteFile(filepath.Join(dir, strconv.Itoa(os.Getpid())), nil, 0o644)
	for {
		if es, _ := os.ReadDir(dir); len(es) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type echoIn struct {
	Text string `json:"text" jsonschema:"what to say back"`
}

type waitIn struct {
	Steps int `json:"steps,omitempty"`
	Ms    int `json:"ms,omitempty"`
}

type weather struct {
	Temperature int    `json:"temperature"`
	Conditions  string `json:"conditions"`
}

// tinyPNG is a 1×1 PNG.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// newFake is the well-behaved fake server: tools, a resource, a prompt.
func newFake() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1.2.3"}, nil)
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Say the text back.", Annotations: ro},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "write.note", Description: "Pretend to write a note."},
		func(ctx context.Context, req *sdk.CallToolRequest, in echoIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "noted"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "weather", Description: "Structured weather.", Annotations: ro},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, weather, error) {
			return nil, weather{Temperature: 21, Conditions: "sunny"}, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "picture", Description: "An image.", Annotations: ro},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "here it is"}, &sdk.ImageContent{MIMEType: "image/png", Data: tinyPNG}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "fail", Description: "Always fails."},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			return nil, nil, fmt.Errorf("the disk is full")
		})
	sdk.AddTool(s, &sdk.Tool{Name: "slow", Description: "Reports progress, then answers."},
		func(ctx context.Context, req *sdk.CallToolRequest, in waitIn) (*sdk.CallToolResult, any, error) {
			for i := 1; i <= in.Steps; i++ {
				select {
				case <-time.After(time.Duration(in.Ms) * time.Millisecond):
				case <-ctx.Done():
					return nil, nil, ctx.Err()
				}
				req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: float64(in.Steps), Message: "step " + strconv.Itoa(i)})
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slow done"}}}, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "crash", Description: "Exits mid-call."},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "panic: something broke")
			os.Exit(3)
			return nil, nil, nil
		})
	sdk.AddTool(s, &sdk.Tool{Name: "hang", Description: "Never answers this call."},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			if f := os.Getenv("HEARTH_FAKE_HANGING"); f != "" {
				os.WriteFile(f, nil, 0o644) // the call is here
			}
			<-ctx.Done()
			return nil, nil, ctx.Err()
		})
	sdk.AddTool(s, &sdk.Tool{Name: "freeze", Description: "Stops the whole server."},
		func(ctx context.Context, req *sdk.CallToolRequest, in struct{}) (*sdk.CallToolResult, any, error) {
			syscall.Kill(os.Getpid(), syscall.SIGSTOP)
			time.Sleep(time.Hour) // the stop may land a moment later
			return nil, nil, nil
		})
	s.AddResource(&sdk.Resource{URI: "fake://notes/today", Name: "today", Description: "Today's notes", MIMEType: "text/plain"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "buy milk"}}}, nil
		})
	s.AddPrompt(&sdk.Prompt{Name: "greet", Description: "Greet someone", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hello to " + req.Params.Arguments["who"]}}}}, nil
		})
	return s
}

// fake is a ServerConfig running this test binary as a fake server.
func fake(t testing.TB, name, mode string, env ...string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"HEARTH_MCP_FAKE": mode}
	for i := 0; i+1 < len(env); i += 2 {
		e[env[i]] = env[i+1]
	}
	return ServerConfig{Name: name, Command: exe, Args: []string{"-test.run=^$"}, Env: e}
}

// httpFake serves the fake over streamable HTTP and SSE: /mcp and /sse.
// seen receives the Authorization header of each request.
func httpFake(seen chan<- string) http.Handler {
	srv := newFake()
	get := func(*http.Request) *sdk.Server { return srv }
	mux := http.NewServeMux()
	mux.Handle("/mcp", sdk.NewStreamableHTTPHandler(get, nil))
	mux.Handle("/sse", sdk.NewSSEHandler(get, nil))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seen != nil {
			select {
			case seen <- r.Header.Get("Authorization"):
			default:
			}
		}
		mux.ServeHTTP(w, r)
	})
}
