package thinktag

import "testing"

func TestTemplateOpensThink(t *testing.T) {
	tests := []struct {
		name string
		tmpl string
		want bool
	}{
		// Jinja, as llama.cpp's /props gives it.
		{"jinja: ChatML generation prompt opens the block",
			"{%- for m in messages %}{{- '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{%- endfor %}\n" +
				"{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n<think>\\n' }}\n{%- endif %}\n", true},
		{"jinja: DeepSeek-R1 shape",
			"{% if not add_generation_prompt is defined -%}{%- set add_generation_prompt = false -%}{%- endif -%}" +
				"{%- for message in messages -%}{%- if message['role'] == 'assistant' -%}{%- if '</think>' in content -%}" +
				"{%- set content = content.split('</think>')[-1] -%}{%- endif -%}{{'<｜Assistant｜>' + content}}{%- endif -%}{%- endfor -%}" +
				"{%- if add_generation_prompt and not ns.is_tool -%}{{'<｜Assistant｜><think>\\n'}}\n{%- endif %}", true},
		{"jinja: the tag in a literal of its own",
			"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{{- \"<think>\" }}{{- '\\n' }}{%- endif %}", true},
		{"jinja: raw text in the block",
			"{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}", true},
		{"jinja: opened unless thinking is switched off",
			"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}" +
				"{{- '<think>\\n\\n</think>\\n\\n' }}{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}", true},
		{"jinja: Qwen3 hybrid (the model opens the block itself)",
			"{%- for m in messages %}{%- if m.role == 'assistant' %}{{- '<|im_start|>' + m.role + '\\n<think>\\n' + reasoning_content.strip('\\n') + '\\n</think>\\n\\n' + content }}{%- endif %}{%- endfor %}" +
				"{%- if add_generation_prompt %}\n    {{- '<|im_start|>assistant\\n' }}\n    {%- if enable_thinking is defined and enable_thinking is false %}\n" +
				"        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}\n{%- endif %}", false},
		{"jinja: the tag only where history is rendered",
			"{%- for m in messages %}{{- '<|im_start|>assistant\\n<think>\\n' }}{{ m.reasoning }}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}", false},
		{"jinja: the other branch of the generation prompt's if",
			"{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- else %}{{- '<think>' }}{%- endif %}", false},
		{"jinja: no generation prompt at all", "{%- for m in messages %}{{ m.content }}{%- endfor %}<think>", false},
		{"jinja: no think", "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}", false},
		{"jinja: unclosed tag", "{%- if add_generation_prompt %}{{- '<think>'", false},
		{"empty", "", false},

		// Go text/template, as Ollama's /api/show gives it.
		{"go: messages style opens at the generation prompt",
			"{{- range $i, $_ := .Messages }}{{- $last := eq (len (slice $.Messages $i)) 1 -}}\n" +
				"{{- if eq .Role \"user\" }}<|im_start|>user\n{{ .Content }}<|im_end|>\n{{ end }}\n" +
				"{{- if and (ne .Role \"assistant\") $last }}<|im_start|>assistant\n<think>\n{{ end }}\n{{- end }}", true},
		{"go: prompt style, before the response",
			"{{ if .Prompt }}<|im_start|>user\n{{ .Prompt }}<|im_end|>\n{{ end }}<|im_start|>assistant\n<think>\n{{ .Response }}<|im_end|>\n", true},
		{"go: DeepSeek-R1 shape at the end of the template",
			"{{- range .Messages }}{{ if eq .Role \"user\" }}<｜User｜>{{ .Content }}{{ end }}{{ end }}<｜Assistant｜><think>\n", true},
		{"go: thinking rendered in history",
			"{{- range .Messages }}{{ if .Thinking }}<think>{{ .Thinking }}</think>{{ end }}{{ .Content }}{{ end }}<|im_start|>assistant\n", false},
		{"go: an empty block when thinking is off",
			"{{- if and $.IsThinkSet (not $.Think) }}<think>\n\n</think>\n\n{{ end }}", false},
		{"go: no think", "{{ .System }}{{ .Prompt }}", false},
	}
	for _, tc := range tests {
		if got := TemplateOpensThink(tc.tmpl); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
