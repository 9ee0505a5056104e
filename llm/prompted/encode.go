package prompted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hearth-agent/hearth/llm"
)

// Limits of the rendered descriptions, in bytes. A tool's description is
// kept whole up to toolDescLimit: it says how to use the tool well ("copy
// old_string exactly", "no interactive input"), and for Hearth's tools it is
// a fifth of the native schema's size, the rest being JSON Schema syntax. A
// longer one (an MCP server's manual) is cut after its last sentence that
// fits. Parameter descriptions are shorter notes, cut the same way.
const (
	toolDescLimit   = 400
	paramDescLimit  = 120
	nestedDescLimit = 60
	// typeLimit bounds the type of one parameter written out; a larger
	// nested object is written "object".
	typeLimit = 300
	// enumLimit is how many enum values are listed.
	enumLimit = 20
	// maxDepth is how deep nested objects are written out.
	maxDepth = 2
)

// Encode returns a copy of req for a model driven by the prompted protocol:
// no Tools or ToolChoice; the tools described compactly in the system prompt
// (appended to the first system message, or in a new one at the front); the
// history rewritten: an assistant message's ToolCalls become text after its
// Content, one `<tool_call>{"name": "…", "arguments": {…}}</tool_call>` per
// call; RoleTool messages become RoleUser messages
// `<tool_response name="read_file">\n…\n</tool_response>` (in the result,
// "</tool_response" is written "<\/tool_response", so that it cannot close
// its own block); consecutive user messages are merged (a blank line
// between) so that roles still alternate. No stop sequence is added: Decode
// ends the reply where the model starts to write a result, outside its
// reasoning and its calls' arguments. req is not modified.
//
// The output is deterministic (the same req gives the same bytes: a
// server's prompt cache depends on it): tools are described in the order
// given, parameters in the order of their schema's properties.
func Encode(req *llm.Request) *llm.Request {
	out := *req
	out.Tools, out.ToolChoice = nil, llm.ToolChoiceAuto
	out.Messages = rewriteHistory(req.Messages)
	if len(req.Tools) > 0 {
		out.Messages = withSystem(out.Messages, SystemPrompt(req.Tools, req.ToolChoice))
	}
	return &out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// withSystem appends text to the first system message, or puts a new one
// at the front. msgs is a fresh slice Encode owns.
func withSystem(msgs []llm.Message, text string) []llm.Message {
	for i := range msgs {
		if msgs[i].Role == llm.RoleSystem {
			if msgs[i].Content == "" {
				msgs[i].Content = text
			} else {
				msgs[i].Content = strings.TrimRight(msgs[i].Content, "\n") + "\n\n" + text
			}
			return msgs
		}
	}
	return append([]llm.Message{{Role: llm.RoleSystem, Content: text}}, msgs...)
}

// rewriteHistory turns native tool calls and results into the protocol's
// text, and merges the user messages that then follow each other.
func rewriteHistory(in []llm.Message) []llm.Message {
	out := make([]llm.Message, 0, len(in))
	names := map[string]string{} // call id -> tool name
	for _, m := range in {
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			var b strings.Builder
			b.WriteString(m.Content)
			for i, tc := range m.ToolCalls {
				names[tc.ID] = tc.Name
				if i > 0 || (b.Len() > 0 && !strings.HasSuffix(m.Content, "\n")) {
					b.WriteByte('\n')
				}
				b.WriteString(callText(tc.Name, tc.Args))
			}
			m.Content = b.String()
			m.ToolCalls = nil
		case m.Role == llm.RoleTool:
			name := m.ToolName
			if name == "" {
				name = names[m.ToolCallID]
			}
			open := "<tool_response>"
			if name != "" {
				open = `<tool_response name="` + attr(name) + `">`
			}
			m = llm.Message{Role: llm.RoleUser, Content: open + "\n" + escapeResult(m.Content) + "\n</tool_response>", Images: m.Images}
		}
		if n := len(out); n > 0 && m.Role == llm.RoleUser && out[n-1].Role == llm.RoleUser {
			prev := &out[n-1]
			switch {
			case prev.Content == "":
				prev.Content = m.Content
			case m.Content != "":
				prev.Content += "\n\n" + m.Content
			}
			if len(m.Images) > 0 {
				prev.Images = append(append([][]byte(nil), prev.Images...), m.Images...)
			}
			continue
		}
		out = append(out, m)
	}
	return out
}

// escapeResult writes "</tool_response" in a tool's result as
// "<\/tool_response": a file or a page that holds the closing tag cannot
// end its block early and have the rest read as the user's own words. The
// same content always gives the same bytes (the prompt cache depends on it).
func escapeResult(s string) string {
	return strings.ReplaceAll(s, "</tool_response", `<\/tool_response`)
}

// attr makes a tool name safe inside a double-quoted attribute.
func attr(s string) string {
	return strings.NewReplacer(`"`, "'", "\n", " ", "<", "", ">", "").Replace(s)
}

// callText writes one call the way the protocol asks the model to.
// "</tool_call" inside an argument is written "<\/tool_call" (the same JSON
// string), so that the call's text ends only at its own closing tag.
func callText(name string, args json.RawMessage) string {
	var buf bytes.Buffer
	if len(bytes.TrimSpace(args)) == 0 || json.Compact(&buf, args) != nil {
		buf.Reset()
		buf.WriteString("{}")
	}
	a := strings.ReplaceAll(buf.String(), "</tool_call", `<\/tool_call`)
	return `<tool_call>{"name": ` + jsonString(name) + `, "arguments": ` + a + `}</tool_call>`
}

// jsonString encodes s as a JSON string, without escaping <, > and &.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// SystemPrompt is what Encode adds to the system prompt for tools: how to
// call, an example, and one compact entry per tool. choice adds a last line
// when the request requires a call, names the tool to call, or refuses
// calls.
func SystemPrompt(tools []llm.ToolSpec, choice llm.ToolChoice) string {
	if len(tools) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("# Tools\n\nYou can call tools. To call one, write exactly this form, the JSON inside the tags:\n")
	b.WriteString(example(tools[0]))
	b.WriteString("\nYou may make several calls in one reply. After your calls, stop: the results come back in the next message, each as <tool_response name=\"…\">…</tool_response>; never write those yourself. When you need no more tools, answer without calls.\n\nTools (* marks a required parameter):\n")
	for _, t := range tools {
		describeTool(&b, t)
	}
	switch choice {
	case llm.ToolChoiceAuto:
	case llm.ToolChoiceNone:
		b.WriteString("\nIn this reply, call no tool.\n")
	case llm.ToolChoiceRequired:
		b.WriteString("\nIn this reply, you must call a tool.\n")
	default:
		fmt.Fprintf(&b, "\nIn this reply, you must call %s.\n", choice)
	}
	return strings.TrimRight(b.String(), "\n")
}

// example is a call of t in the protocol's form, with its first required
// parameter (if any) given a placeholder value.
func example(t llm.ToolSpec) string {
	args := "{}"
	if o, ok := parseObject(t.Parameters); ok {
		props, _ := parseObject(o.vals["properties"])
		for _, name := range strList(o.vals["required"]) {
			if p, ok := props.vals[name]; ok || props.vals == nil {
				args = "{" + jsonString(name) + ": " + placeholder(p) + "}"
				break
			}
		}
	}
	return `<tool_call>{"name": ` + jsonString(t.Name) + `, "arguments": ` + args + `}</tool_call>`
}

// placeholder is an example value for a parameter of the given schema.
func placeholder(schema json.RawMessage) string {
	o, _ := parseObject(schema)
	for _, t := range typeList(o.vals["type"]) {
		switch t {
		case "integer", "number":
			return "1"
		case "boolean":
			return "true"
		case "array":
			return "[]"
		case "object":
			return "{}"
		}
	}
	return `"…"`
}

func describeTool(b *strings.Builder, t llm.ToolSpec) {
	b.WriteString("- ")
	b.WriteString(t.Name)
	if d := shorten(t.Description, toolDescLimit); d != "" {
		b.WriteString(": ")
		b.WriteString(d)
	}
	b.WriteByte('\n')
	o, ok := parseObject(t.Parameters)
	if !ok {
		return
	}
	props, _ := parseObject(o.vals["properties"])
	required := map[string]bool{}
	for _, r := range strList(o.vals["required"]) {
		required[r] = true
	}
	for _, name := range props.keys {
		p := props.vals[name]
		b.WriteString("  ")
		b.WriteString(name)
		if required[name] {
			b.WriteByte('*')
		}
		b.WriteByte(' ')
		b.WriteString(typeExpr(p, 0))
		po, _ := parseObject(p)
		if d := shorten(str(po.vals["description"]), paramDescLimit); d != "" {
			b.WriteString(": ")
			b.WriteString(d)
		}
		b.WriteByte('\n')
	}
}

// typeExpr writes the type of a schema: string, integer, number, boolean,
// "array of T", an object's properties in braces (or "object"), enum values
// joined by |, alternatives joined by "or"; "any" for what it cannot read.
func typeExpr(schema json.RawMessage, depth int) string {
	o, ok := parseObject(schema)
	if !ok {
		return "any"
	}
	if c, ok := o.vals["const"]; ok {
		return compact(c)
	}
	if e, ok := o.vals["enum"]; ok {
		var vals []json.RawMessage
		if json.Unmarshal(e, &vals) == nil && len(vals) > 0 {
			parts := make([]string, 0, min(len(vals), enumLimit+1))
			for i, v := range vals {
				if i == enumLimit {
					parts = append(parts, "…")
					break
				}
				parts = append(parts, compact(v))
			}
			return strings.Join(parts, "|")
		}
	}
	types := typeList(o.vals["type"])
	if len(types) == 0 {
		for _, k := range []string{"anyOf", "oneOf"} {
			var alts []json.RawMessage
			if json.Unmarshal(o.vals[k], &alts) != nil || len(alts) == 0 {
				continue
			}
			var parts []string
			for _, a := range alts {
				if isNull(a) {
					continue
				}
				t := typeExpr(a, depth)
				if t == "any" {
					return "any"
				}
				if !contains(parts, t) {
					parts = append(parts, t)
				}
			}
			if len(parts) > 0 {
				return strings.Join(parts, " or ")
			}
		}
		switch {
		case o.vals["properties"] != nil:
			types = []string{"object"}
		case o.vals["items"] != nil:
			types = []string{"array"}
		default:
			return "any"
		}
	}
	parts := make([]string, 0, len(types))
	for _, t := range types {
		var s string
		switch t {
		case "string", "integer", "number", "boolean":
			s = t
		case "array":
			s = "array"
			if items, ok := o.vals["items"]; ok && depth < maxDepth+1 {
				s = "array of " + typeExpr(items, depth+1)
			}
		case "object":
			s = objectExpr(o, depth)
		default:
			s = "any"
		}
		if !contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " or ")
}

// objectExpr writes an object's properties, {name*: type (note), …}, if it
// has some and is not nested too deep or too large.
func objectExpr(o object, depth int) string {
	props, ok := parseObject(o.vals["properties"])
	if !ok || len(props.keys) == 0 || depth >= maxDepth {
		return "object"
	}
	required := map[string]bool{}
	for _, r := range strList(o.vals["required"]) {
		required[r] = true
	}
	var b strings.Builder
	b.WriteByte('{')
	for i, name := range props.keys {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		if required[name] {
			b.WriteByte('*')
		}
		b.WriteString(": ")
		b.WriteString(typeExpr(props.vals[name], depth+1))
		po, _ := parseObject(props.vals[name])
		if d := shorten(str(po.vals["description"]), nestedDescLimit); d != "" {
			b.WriteString(" (")
			b.WriteString(d)
			b.WriteByte(')')
		}
		if b.Len() > typeLimit {
			return "object"
		}
	}
	b.WriteByte('}')
	return b.String()
}

// object is a JSON object with its keys in the order written.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseObject reads raw as a JSON object, keeping the order of its keys (a
// repeated key keeps its first place and its last value). ok is false for
// anything that is not an object.
func parseObject(raw json.RawMessage) (o object, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return object{}, false
	}
	o.vals = map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return object{}, false
		}
		k, isKey := t.(string)
		if !isKey {
			return object{}, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return object{}, false
		}
		if _, dup := o.vals[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.vals[k] = v
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return object{}, false
	}
	return o, true
}

// typeList reads "type": a name or a list of names; "null" is left out
// (an optional parameter may be left out instead).
func typeList(raw json.RawMessage) []string {
	if s := str(raw); s != "" {
		if s == "null" {
			return nil
		}
		return []string{s}
	}
	var out []string
	for _, s := range strList(raw) {
		if s != "null" && !contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func isNull(schema json.RawMessage) bool {
	o, ok := parseObject(schema)
	return ok && str(o.vals["type"]) == "null"
}

// str reads a JSON string, "" for anything else.
func str(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// strList reads a JSON list of strings, skipping what is not one.
func strList(raw json.RawMessage) []string {
	var vals []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &vals) != nil {
		return nil
	}
	var out []string
	for _, v := range vals {
		if s := str(v); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return "any"
	}
	return b.String()
}

// shorten puts s on one line and, if it is longer than limit bytes, cuts
// it after its last sentence that fits, or else at a space, marked with "…".
func shorten(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= limit {
		return s
	}
	end := 0
	for i := 0; i < limit; i++ {
		if c := s[i]; (c == '.' || c == '!' || c == '?') && s[i+1] == ' ' && i+2 < len(s) && isUpper(s[i+2]) {
			end = i + 1
		}
	}
	if end >= limit/3 {
		return s[:end]
	}
	cut := strings.LastIndexByte(s[:limit], ' ')
	if cut < limit/2 {
		cut = limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
	}
	return strings.TrimRight(s[:cut], " ,;:") + "…"
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
