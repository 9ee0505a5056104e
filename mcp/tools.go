package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hearth-agent/hearth/llm"
	"github.com/hearth-agent/hearth/tool"
)

// maxDescription caps a tool description sent to the model.
const maxDescription = 2000

// proxy is a server's tool as a Hearth tool.
type proxy struct {
	s    *server
	tool string // the server's name for it
	spec llm.ToolSpec
	kind tool.Kind
}

func newProxy(s *server, t *sdk.Tool, name string) (*proxy, error) {
	params, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %s not offered: its input schema: %v", t.Name, err)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("The %s tool of the MCP server %s.", t.Name, s.cfg.Name)
	}
	if len(desc) > maxDescription {
		desc = desc[:maxDescription] + "…"
	}
	kind := tool.Execute
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		kind = tool.ReadOnly
	}
	return &proxy{s: s, tool: t.Name, spec: llm.ToolSpec{Name: name, Description: desc, Parameters: params}, kind: kind}, nil
}

// inputSchema makes a server's schema fit for the registry: an object
// schema jsonschema-go can resolve, without "$schema" (noise to a model).
func inputSchema(v any) (json.RawMessage, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	delete(m, "$schema")
	if m["type"] == nil {
		m["type"] = "object"
	}
	if m["type"] != "object" {
		return nil, fmt.Errorf("type %v: a tool's arguments must be an object", m["type"])
	}
	out, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, err
	}
	if _, err := s.Resolve(nil); err != nil {
		return nil, err
	}
	return out, nil
}

func (p *proxy) Spec() llm.ToolSpec { return p.spec }
func (p *proxy) Kind() tool.Kind    { return p.kind }

// Describe says what a call will do, for approval prompts.
func (p *proxy) Describe(args json.RawMessage) string {
	return fmt.Sprintf("call %s on MCP server %s %s", p.tool, p.s.cfg.Name, clip(compact(args), 200))
}

// Server is the name of the tool's server; Tool is the server's own name
// for the tool.
func (p *proxy) Server() string { return p.s.cfg.Name }

// Tool is the server's own name for the tool.
func (p *proxy) Tool() string { return p.tool }

func (p *proxy) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	res, err := p.s.m.callTool(ctx, p.s, p.tool, c.Args, c.Progress)
	if err != nil {
		return tool.Result{}, err
	}
	if res.IsError {
		msg := strings.TrimSpace(res.Text)
		if msg == "" {
			msg = "the tool failed without saying why"
		}
		return tool.Result{}, errors.New(msg)
	}
	return tool.Result{Output: res.Text}, nil
}

// Result is a tool call's result in full.
type Result struct {
	// Text is what the model is shown: the text parts, a line describing
	// each image, audio clip or resource, and the structured content as
	// JSON when no text part already holds it.
	Text string
	// Images are the images returned, with their bytes.
	Images []Image
	// Structured is the structured content, as JSON (nil: none).
	Structured json.RawMessage
	// IsError: the tool reported a failure (Text says what).
	IsError bool
}

// Image is an image a tool returned.
type Image struct {
	MIMEType string
	Data     []byte
	// Path is where it was saved (Options.ImageDir), or "".
	Path string
}

// CallTool calls a tool by the server's own name for it, with arguments as
// a JSON object, starting the server if it is not running.
func (m *Manager) CallTool(ctx context.Context, server, name string, args json.RawMessage) (*Result, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	return m.callTool(ctx, s, name, args, nil)
}

// callTool runs the call in a goroutine so that progress reaches the
// caller's goroutine only (the agent's events are emitted from one), and
// never after the call has returned.
func (m *Manager) callTool(ctx context.Context, s *server, name string, args json.RawMessage, progress func(string)) (*Result, error) {
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	notes := make(chan string, 64)
	type outcome struct {
		res *sdk.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := s.call(ctx, name, args, func(msg string) {
			select {
			case notes <- msg:
			default: // a flood of progress: drop some
			}
		})
		done <- outcome{res, err}
	}()
	for {
		select {
		case n := <-notes:
			if progress != nil {
				progress(n)
			}
		case o := <-done:
			for drained := false; !drained; { // notes that came with the answer
				select {
				case n := <-notes:
					if progress != nil {
						progress(n)
					}
				default:
					drained = true
				}
			}
			if o.err != nil {
				return nil, o.err
			}
			return m.result(s.cfg.Name, name, o.res), nil
		}
	}
}

// result turns the SDK's result into text for the model, keeping images.
func (m *Manager) result(server, name string, r *sdk.CallToolResult) *Result {
	out := &Result{IsError: r.IsError}
	var parts []string
	for _, c := range r.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			img := Image{MIMEType: c.MIMEType, Data: c.Data}
			img.Path = m.saveImage(server, name, c.MIMEType, c.Data)
			out.Images = append(out.Images, img)
			line := fmt.Sprintf("[image: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
			if img.Path != "" {
				line = fmt.Sprintf("[image: %s, %s, saved to %s]", orUnknown(c.MIMEType), size(len(c.Data)), img.Path)
			}
			parts = append(parts, line)
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data))))
		case *sdk.ResourceLink:
			line := fmt.Sprintf("[resource %s: %s", c.URI, c.Name)
			if c.Description != "" {
				line += " — " + c.Description
			}
			parts = append(parts, line+"]")
		case *sdk.EmbeddedResource:
			parts = append(parts, describeContents(c.Resource))
		default:
			parts = append(parts, "[content of a kind Hearth does not show]")
		}
	}
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			out.Structured = b
			if !holdsJSON(parts, b) {
				parts = append(parts, string(b))
			}
		}
	}
	out.Text = strings.Join(parts, "\n")
	return out
}

// holdsJSON reports whether a text part is the same JSON as b.
func holdsJSON(parts []string, b []byte) bool {
	for _, p := range parts {
		if compact(json.RawMessage(p)) == string(b) || canonicalJSON(p) == canonicalJSON(string(b)) {
			return true
		}
	}
	return false
}

func canonicalJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return "\x00" + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func describeContents(rc *sdk.ResourceContents) string {
	if rc == nil {
		return "[empty resource]"
	}
	if rc.Blob != nil && rc.Text == "" {
		return fmt.Sprintf("[resource %s: %s, %s of binary data]", rc.URI, orUnknown(rc.MIMEType), size(len(rc.Blob)))
	}
	head := "[resource " + rc.URI
	if rc.MIMEType != "" {
		head += " (" + rc.MIMEType + ")"
	}
	return head + "]\n" + rc.Text
}

// saveImage writes an image to ImageDir and returns its path ("" when
// images are not kept or it could not be written).
func (m *Manager) saveImage(server, name, mimeType string, data []byte) string {
	dir := m.opts.ImageDir
	if dir == "" || len(data) == 0 {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		m.log.Warn("mcp: cannot keep an image", "error", err)
		return ""
	}
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
		ext = exts[len(exts)-1]
		if mimeType == "image/png" {
			ext = ".png"
		}
	}
	f, err := os.CreateTemp(dir, sanitize(server+"-"+name)+"-*"+ext)
	if err != nil {
		m.log.Warn("mcp: cannot keep an image", "error", err)
		return ""
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		m.log.Warn("mcp: cannot keep an image", "error", err)
		return ""
	}
	return f.Name()
}

// ---- resources ----

// resourceTool reads a server's resources by URI.
type resourceTool struct {
	s    *server
	spec llm.ToolSpec
}

type readArgs struct {
	URI string `json:"uri" jsonschema:"the resource's URI, from the list in this tool's description or from a link a tool returned"`
}

// maxListed caps the resources named in the reader's description.
const maxListed = 20

// newResourceTool describes the resources of cat in the tool's description.
func newResourceTool(s *server, name string, cat *catalog) *resourceTool {
	var b strings.Builder
	fmt.Fprintf(&b, "Read a resource of the MCP server %s by its URI.", s.cfg.Name)
	if cat != nil {
		if len(cat.resources) > 0 {
			b.WriteString(" Resources:")
			for i, r := range cat.resources {
				if i == maxListed {
					fmt.Fprintf(&b, "\n- … and %d more", len(cat.resources)-maxListed)
					break
				}
				fmt.Fprintf(&b, "\n- %s (%s)", r.URI, firstNonEmpty(r.Description, r.Title, r.Name))
			}
		}
		if len(cat.templates) > 0 {
			b.WriteString("\nURI templates (fill in the {parts}):")
			for i, r := range cat.templates {
				if i == maxListed {
					break
				}
				fmt.Fprintf(&b, "\n- %s (%s)", r.URITemplate, firstNonEmpty(r.Description, r.Title, r.Name))
			}
		}
	}
	return &resourceTool{s: s, spec: llm.ToolSpec{Name: name, Description: b.String(), Parameters: tool.Schema[readArgs]()}}
}

func (t *resourceTool) Spec() llm.ToolSpec { return t.spec }

// Kind: reading a resource changes nothing.
func (t *resourceTool) Kind() tool.Kind { return tool.ReadOnly }

// Describe says which resource a call reads.
func (t *resourceTool) Describe(args json.RawMessage) string {
	var a readArgs
	json.Unmarshal(args, &a)
	return fmt.Sprintf("read %s from MCP server %s", a.URI, t.s.cfg.Name)
}

func (t *resourceTool) Run(ctx context.Context, c tool.Call) (tool.Result, error) {
	a, err := tool.Decode[readArgs](c)
	if err != nil {
		return tool.Result{}, err
	}
	text, err := t.s.m.readResource(ctx, t.s, a.URI)
	return tool.Result{Output: text}, err
}

// Resource is a resource a server offers.
type Resource struct {
	Server, URI, Name, Description, MIMEType string
	// Template: URI is a URI template.
	Template bool
}

// Resources lists the resources of the servers that have started.
func (m *Manager) Resources() []Resource {
	var out []Resource
	for _, s := range m.servers {
		s.mu.Lock()
		if cat := s.cat; cat != nil {
			for _, r := range cat.resources {
				out = append(out, Resource{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
			}
			for _, r := range cat.templates {
				out = append(out, Resource{Server: s.cfg.Name, URI: r.URITemplate, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType, Template: true})
			}
		}
		s.mu.Unlock()
	}
	return out
}

// ReadResource reads a resource of a server as text (binary parts are
// described, images saved as for tools).
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	s, err := m.server(server)
	if err != nil {
		return "", err
	}
	return m.readResource(ctx, s, uri)
}

func (m *Manager) readResource(ctx context.Context, s *server, uri string) (string, error) {
	var res *sdk.ReadResourceResult
	err := s.request(ctx, func(ctx context.Context, c *conn) (err error) {
		res, err = c.sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		return err
	})
	if err != nil {
		return "", err
	}
	var parts []string
	for _, rc := range res.Contents {
		if rc.Blob != nil && strings.HasPrefix(rc.MIMEType, "image/") {
			if p := m.saveImage(s.cfg.Name, "resource", rc.MIMEType, rc.Blob); p != "" {
				parts = append(parts, fmt.Sprintf("[image resource %s: %s, %s, saved to %s]", rc.URI, rc.MIMEType, size(len(rc.Blob)), p))
				continue
			}
		}
		parts = append(parts, describeContents(rc))
	}
	if len(parts) == 0 {
		return "(the resource is empty)", nil
	}
	return strings.Join(parts, "\n"), nil
}

// ---- prompts ----

// Prompt is a prompt template a server offers (for a UI's slash commands).
type Prompt struct {
	Server, Name, Description string
	Arguments                 []PromptArgument
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// Prompts lists the prompts of the servers that have started.
func (m *Manager) Prompts() []Prompt {
	var out []Prompt
	for _, s := range m.servers {
		s.mu.Lock()
		if cat := s.cat; cat != nil {
			for _, p := range cat.prompts {
				pr := Prompt{Server: s.cfg.Name, Name: p.Name, Description: firstNonEmpty(p.Description, p.Title)}
				for _, a := range p.Arguments {
					pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
				}
				out = append(out, pr)
			}
		}
		s.mu.Unlock()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Server < out[j].Server })
	return out
}

// GetPrompt fills a server's prompt with args and returns its messages
// (content other than text is described).
func (m *Manager) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]llm.Message, error) {
	s, err := m.server(server)
	if err != nil {
		return nil, err
	}
	var res *sdk.GetPromptResult
	err = s.request(ctx, func(ctx context.Context, c *conn) (err error) {
		res, err = c.sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
		return err
	})
	if err != nil {
		return nil, err
	}
	var out []llm.Message
	for _, pm := range res.Messages {
		role := llm.RoleUser
		if pm.Role == "assistant" {
			role = llm.RoleAssistant
		}
		var text string
		switch c := pm.Content.(type) {
		case *sdk.TextContent:
			text = c.Text
		case *sdk.EmbeddedResource:
			text = describeContents(c.Resource)
		case *sdk.ImageContent:
			text = fmt.Sprintf("[image: %s, %s]", orUnknown(c.MIMEType), size(len(c.Data)))
		default:
			text = "[content of a kind Hearth does not show]"
		}
		out = append(out, llm.Message{Role: role, Content: text})
	}
	return out, nil
}

// ---- helpers ----

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
