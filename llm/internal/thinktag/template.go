package thinktag

import "strings"

// TemplateOpensThink reports whether a chat template opens a <think> block
// in the generation prompt, the part it renders after the conversation for
// the model to continue (Qwen3 "thinking-2507" and QwQ end it with
// "<|im_start|>assistant\n<think>\n", DeepSeek-R1 with
// "<｜Assistant｜><think>\n"): the model's reply then holds only the closing
// tag. Both template languages are read: Jinja (llama.cpp's /props
// chat_template, Hugging Face's tokenizer_config.json) and Go's text/template
// (Ollama's /api/show template).
//
// It is a reading of the template's text, not a rendering: in Jinja, a piece
// of output (a string literal or raw text) inside an {% if %} whose
// condition names add_generation_prompt that ends, white space aside, with
// <think>; in a Go template, raw text ending with <think> that the
// template's end, an {{ end }}, an {{ else }} or {{ .Response }} follows
// (where history is rendered, {{ .Thinking }} or {{ .Content }} follows
// instead). A generation prompt that opens and closes an empty block
// ("<think>\n\n</think>\n\n", Qwen3 with thinking off) does not count.
func TemplateOpensThink(tmpl string) bool {
	if !strings.Contains(tmpl, openTag) {
		return false
	}
	if strings.Contains(tmpl, "{%") || strings.Contains(tmpl, "add_generation_prompt") {
		return jinjaOpens(tmpl)
	}
	return goOpens(tmpl)
}

// endsOpen reports whether a piece of output ends by opening a block.
func endsOpen(s string) bool {
	return strings.HasSuffix(strings.TrimRight(s, " \t\r\n"), openTag)
}

// jinjaOpens reads a Jinja template: tags ({% %}), expressions ({{ }}),
// comments ({# #}) and raw text between them.
func jinjaOpens(t string) bool {
	// gen is, for each open {% if %}, whether its current branch is in a
	// generation prompt.
	var gen []bool
	inGen := func() bool { return len(gen) > 0 && gen[len(gen)-1] }
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 || i+1 >= len(t) {
			return inGen() && endsOpen(t)
		}
		var end string
		switch t[i+1] {
		case '%':
			end = "%}"
		case '{':
			end = "}}"
		case '#':
			end = "#}"
		default:
			// A brace in raw text.
			t = t[i+1:]
			continue
		}
		if inGen() && endsOpen(t[:i]) {
			return true
		}
		j := strings.Index(t[i+2:], end)
		if j < 0 {
			return false
		}
		body := strings.Trim(t[i+2:i+2+j], "-+ \t\r\n")
		t = t[i+2+j+len(end):]
		switch {
		case end == "}}":
			if inGen() {
				for _, lit := range literals(body) {
					if endsOpen(lit) {
						return true
					}
				}
			}
		case end == "%}":
			word, rest, _ := strings.Cut(body, " ")
			switch word {
			case "if":
				gen = append(gen, inGen() || genCond(rest))
			case "elif", "else":
				if len(gen) > 0 {
					// Another branch: in a generation prompt only if the
					// enclosing block is.
					gen[len(gen)-1] = len(gen) > 1 && gen[len(gen)-2] ||
						word == "elif" && genCond(rest)
				}
			case "endif":
				if len(gen) > 0 {
					gen = gen[:len(gen)-1]
				}
			}
		}
	}
	return false
}

// genCond reports whether an {% if %} condition holds when the generation
// prompt is rendered ("add_generation_prompt and not ns.is_tool", not "not
// add_generation_prompt is defined").
func genCond(cond string) bool {
	return strings.Contains(cond, "add_generation_prompt") && !strings.Contains(cond, "not add_generation_prompt")
}

// literals returns the string literals of a Jinja expression, unescaped.
func literals(expr string) []string {
	var out []string
	for i := 0; i < len(expr); i++ {
		q := expr[i]
		if q != '\'' && q != '"' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(expr) && expr[j] != q; j++ {
			c := expr[j]
			if c == '\\' && j+1 < len(expr) {
				j++
				switch expr[j] {
				case 'n':
					c = '\n'
				case 't':
					c = '\t'
				case 'r':
					c = '\r'
				default:
					c = expr[j]
				}
			}
			b.WriteByte(c)
		}
		out = append(out, b.String())
		i = j
	}
	return out
}

// goOpens reads a Go text/template: raw text and {{ actions }}.
func goOpens(t string) bool {
	for t != "" {
		i := strings.Index(t, "{{")
		if i < 0 {
			return endsOpen(t)
		}
		text := t[:i]
		j := strings.Index(t[i:], "}}")
		if j < 0 {
			return false
		}
		action := strings.Trim(t[i+2:i+j], "- \t\r\n")
		t = t[i+j+2:]
		if !endsOpen(text) {
			continue
		}
		switch {
		case action == "end", action == "else", strings.HasPrefix(action, "else "),
			action == ".Response", action == "$.Response":
			return true
		}
	}
	return false
}
