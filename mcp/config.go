package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"
	"time"
)

// Default timeouts, used where a server's config gives none.
const (
	// DefaultStartTimeout bounds a server's start: launching it, the MCP
	// handshake, and listing its tools, resources and prompts.
	DefaultStartTimeout = 30 * time.Second
	// DefaultCallTimeout bounds one call while the server is silent: a
	// progress notification from the server starts the wait again.
	DefaultCallTimeout = 2 * time.Minute
)

// Transport names how Hearth talks to a server.
type Transport string

// The transports.
const (
	// TransportStdio runs the server as a child process and talks over its
	// standard input and output.
	TransportStdio Transport = "stdio"
	// TransportHTTP is MCP's streamable HTTP transport.
	TransportHTTP Transport = "http"
	// TransportSSE is the older HTTP+SSE transport (protocol 2024-11-05).
	TransportSSE Transport = "sse"
)

// ServerConfig describes one MCP server.
type ServerConfig struct {
	// Name is the server's name in the config; its tools are offered as
	// NAME__TOOL.
	Name string
	// Command, Args, Env and Cwd start a stdio server. Env adds to (or
	// overrides) Hearth's own environment; values may refer to environment
	// variables as $VAR or ${VAR}. A relative Cwd is taken from the
	// Manager's Dir.
	Command string
	Args    []string
	Env     map[string]string
	Cwd     string
	// URL and Headers reach an HTTP server. Header values may refer to
	// environment variables as $VAR or ${VAR}.
	URL     string
	Headers map[string]string
	// Transport is stdio for a command; for a URL it is http (streamable
	// HTTP), sse, or "" to choose: sse when the URL's path ends in /sse,
	// else streamable HTTP, falling back to SSE when the server refuses it.
	Transport Transport
	// StartTimeout bounds the start (0: DefaultStartTimeout); CallTimeout
	// bounds a silent call (0: DefaultCallTimeout).
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// Include, when not empty, keeps only the tools it names; Exclude
	// drops tools. Both take path.Match globs over the server's own tool
	// names ("get_*").
	Include []string
	Exclude []string
}

// Validate checks what can be checked without starting the server.
func (c ServerConfig) Validate() error {
	if c.Name == "" {
		return errors.New("mcp server without a name")
	}
	if !ValidServerName(c.Name) {
		return fmt.Errorf("mcp server %q: use letters, digits, _ and - in the name (it prefixes the tools' names)", c.Name)
	}
	if (c.Command == "") == (c.URL == "") {
		return fmt.Errorf("mcp server %q: give either command (stdio) or url (HTTP)", c.Name)
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("mcp server %q: url %q: want an http:// or https:// address", c.Name, c.URL)
		}
	}
	switch c.Transport {
	case "":
	case TransportStdio:
		if c.Command == "" {
			return fmt.Errorf("mcp server %q: transport stdio needs a command", c.Name)
		}
	case TransportHTTP, TransportSSE:
		if c.URL == "" {
			return fmt.Errorf("mcp server %q: transport %s needs a url", c.Name, c.Transport)
		}
	default:
		return fmt.Errorf("mcp server %q: transport %q: use stdio, http or sse", c.Name, c.Transport)
	}
	for _, p := range append(append([]string(nil), c.Include...), c.Exclude...) {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("mcp server %q: bad tool pattern %q: %v", c.Name, p, err)
		}
	}
	return nil
}

// transport is the transport the config asks for ("" for a URL whose kind
// is found by trying).
func (c ServerConfig) transport() Transport {
	if c.Transport != "" {
		return c.Transport
	}
	if c.Command != "" {
		return TransportStdio
	}
	if u, err := url.Parse(c.URL); err == nil && strings.HasSuffix(strings.TrimRight(u.Path, "/"), "/sse") {
		return TransportSSE
	}
	return ""
}

// TransportName says, for people, how the server is reached.
func (c ServerConfig) TransportName() string {
	switch t := c.transport(); t {
	case "":
		return "http"
	default:
		return string(t)
	}
}

// Target is the command line or URL, for status displays. Header values and
// the URL's user information are left out.
func (c ServerConfig) Target() string {
	if c.Command != "" {
		return strings.Join(append([]string{c.Command}, c.Args...), " ")
	}
	if u, err := url.Parse(c.URL); err == nil {
		u.User = nil
		return u.String()
	}
	return c.URL
}

func (c ServerConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return DefaultStartTimeout
}

func (c ServerConfig) callTimeout() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return DefaultCallTimeout
}

// wants says whether the config offers the server's tool.
func (c ServerConfig) wants(tool string) bool {
	if len(c.Include) > 0 && !matchAny(c.Include, tool) {
		return false
	}
	return !matchAny(c.Exclude, tool)
}

func matchAny(pats []string, s string) bool {
	for _, p := range pats {
		if ok, _ := path.Match(p, s); ok {
			return true
		}
	}
	return false
}

// maxName is the longest tool name every provider accepts.
const maxName = 64

// Separator joins a server's name and its tool's name.
const Separator = "__"

// ValidServerName reports whether name can prefix tool names as it is.
func ValidServerName(name string) bool {
	return name != "" && sanitize(name) == name && len(name) <= 32
}

// ToolName is the name under which a server's tool is offered to the
// model: server__tool, with characters providers refuse replaced by _, and
// cut to 64 characters (a cut name ends in a short hash of the full one, so
// that two long names stay apart).
func ToolName(server, tool string) string {
	full := sanitize(server) + Separator + sanitize(tool)
	if len(full) <= maxName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	h := hex.EncodeToString(sum[:])[:8]
	return full[:maxName-len(h)-1] + "_" + h
}

// sanitize keeps letters, digits, _ and -; anything else becomes _.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// IsServerPattern reports whether a profile pattern can only match tools of
// the named servers (it starts with "server__", after an optional "!"), so
// that it must not be checked against the built-in tools.
func IsServerPattern(pattern string, servers []string) bool {
	p := strings.TrimPrefix(pattern, "!")
	for _, s := range servers {
		if strings.HasPrefix(p, sanitize(s)+Separator) {
			return true
		}
	}
	return false
}
