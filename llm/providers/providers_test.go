package providers

import (
	"strings"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		flags   Config
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults to local Ollama", Config{}, nil, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11434"}, ""},
		{"OLLAMA_HOST", Config{}, map[string]string{"OLLAMA_HOST": "0.0.0.0:11555"}, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11555"}, ""},
		{"flag beats HEARTH_ beats OLLAMA_HOST", Config{BaseURL: "a:1"}, map[string]string{"HEARTH_BASE_URL": "b:2", "OLLAMA_HOST": "c:3"}, Config{Kind: "ollama", BaseURL: "http://a:1"}, ""},
		{"HEARTH_BASE_URL beats OLLAMA_HOST", Config{}, map[string]string{"HEARTH_BASE_URL": "b:2", "OLLAMA_HOST": "c:3"}, Config{Kind: "ollama", BaseURL: "http://b:2"}, ""},
		{"openai from env", Config{Kind: "openai"}, map[string]string{"OPENAI_BASE_URL": "http://localhost:8000", "OPENAI_API_KEY": "sk-1"},
			Config{Kind: "openai", BaseURL: "http://localhost:8000/v1", APIKey: "sk-1"}, ""},
		{"only OPENAI_BASE_URL set means openai", Config{}, map[string]string{"OPENAI_BASE_URL": "http://localhost:1234/v1"}, Config{Kind: "openai", BaseURL: "http://localhost:1234/v1"}, ""},
		{"OPENAI_BASE_URL ignored when OLLAMA_HOST set", Config{}, map[string]string{"OPENAI_BASE_URL": "http://x/v1", "OLLAMA_HOST": "y:1"}, Config{Kind: "ollama", BaseURL: "http://y:1"}, ""},
		{"openai default is OpenAI", Config{Kind: "OpenAI"}, nil, Config{Kind: "openai", BaseURL: "https://api.openai.com/v1"}, ""},
		{"key flag beats env", Config{Kind: "openai", APIKey: "flag"}, map[string]string{"OPENAI_API_KEY": "env", "HEARTH_API_KEY": "h"}, Config{Kind: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "flag"}, ""},
		{"HEARTH_API_KEY beats OPENAI_API_KEY", Config{Kind: "openai"}, map[string]string{"OPENAI_API_KEY": "env", "HEARTH_API_KEY": "h"}, Config{Kind: "openai", BaseURL: "https://api.openai.com/v1", APIKey: "h"}, ""},
		{"model from env", Config{}, map[string]string{"HEARTH_MODEL": "qwen3:4b"}, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11434", Model: "qwen3:4b"}, ""},
		{"responses takes the OpenAI settings", Config{Kind: "Responses"}, map[string]string{"OPENAI_BASE_URL": "http://localhost:11434", "OPENAI_API_KEY": "sk-1"},
			Config{Kind: "responses", BaseURL: "http://localhost:11434/v1", APIKey: "sk-1"}, ""},
		{"responses default is OpenAI", Config{Kind: "responses"}, map[string]string{"HEARTH_API_KEY": "h"}, Config{Kind: "responses", BaseURL: "https://api.openai.com/v1", APIKey: "h"}, ""},
		{"unknown kind", Config{Kind: "anthropic"}, nil, Config{}, "unknown provider"},
		{"tool mode defaults to auto", Config{}, nil, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11434", ToolMode: "auto"}, ""},
		{"tool mode flag beats env", Config{ToolMode: "native"}, map[string]string{"HEARTH_TOOL_MODE": "prompted"}, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11434", ToolMode: "native"}, ""},
		{"tool mode from env", Config{}, map[string]string{"HEARTH_TOOL_MODE": "Prompted"}, Config{Kind: "ollama", BaseURL: "http://127.0.0.1:11434", ToolMode: "prompted"}, ""},
		{"bad tool mode", Config{}, map[string]string{"HEARTH_TOOL_MODE": "text"}, Config{}, `HEARTH_TOOL_MODE: unknown tool mode "text": use auto, native or prompted`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.flags, Config{}, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tc.want.Kind || got.BaseURL != tc.want.BaseURL || got.APIKey != tc.want.APIKey || got.Model != tc.want.Model || (tc.want.ToolMode != "" && got.ToolMode != tc.want.ToolMode) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if _, err := New(got); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
}

func TestResolveLayers(t *testing.T) {
	file := Config{Kind: "openai", BaseURL: "http://file:8000/v1", Model: "file-model", APIKey: "file-key", NumCtx: 4096}
	env := map[string]string{"OPENAI_BASE_URL": "http://env:1/v1"}
	got, err := Resolve(Config{Model: "flag-model"}, file, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind != "openai" || got.BaseURL != "http://env:1/v1" || got.Model != "flag-model" || got.APIKey != "file-key" || got.NumCtx != 4096 {
		t.Errorf("flags over env over file: %+v", got)
	}
}

// TestResolveKnobs: the HEARTH_* knobs of the model server are read here,
// under flags and over the config file; a bad value says what is wanted.
func TestResolveKnobs(t *testing.T) {
	base := Config{NumCtx: 4096, IdleTimeout: time.Minute}
	tests := []struct {
		name  string
		flags Config
		env   map[string]string
		want  Config // NumCtx, IdleTimeout, ImplicitThink
		err   string
	}{
		{"the file", Config{}, nil, Config{NumCtx: 4096, IdleTimeout: time.Minute}, ""},
		{"the environment over the file", Config{}, map[string]string{"HEARTH_NUM_CTX": "8192", "HEARTH_IDLE_TIMEOUT": "5m", "HEARTH_IMPLICIT_THINK": "true"},
			Config{NumCtx: 8192, IdleTimeout: 5 * time.Minute, ImplicitThink: true}, ""},
		{"flags over the environment", Config{NumCtx: 2048, IdleTimeout: time.Second}, map[string]string{"HEARTH_NUM_CTX": "8192", "HEARTH_IDLE_TIMEOUT": "5m"},
			Config{NumCtx: 2048, IdleTimeout: time.Second}, ""},
		{"a bad window", Config{}, map[string]string{"HEARTH_NUM_CTX": "lots"}, Config{}, "HEARTH_NUM_CTX=\"lots\": want a number of tokens"},
		{"a negative window", Config{}, map[string]string{"HEARTH_NUM_CTX": "-1"}, Config{}, "want a number of tokens"},
		{"a bad timeout", Config{}, map[string]string{"HEARTH_IDLE_TIMEOUT": "soon"}, Config{}, "want a duration such as 5m"},
		{"a bad switch", Config{}, map[string]string{"HEARTH_IMPLICIT_THINK": "maybe"}, Config{}, "want true or false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.flags, base, func(k string) string { return tt.env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got.NumCtx != tt.want.NumCtx || got.IdleTimeout != tt.want.IdleTimeout || got.ImplicitThink != tt.want.ImplicitThink {
				t.Errorf("%+v %v, want %+v", got, err, tt.want)
			}
		})
	}
}

// TestNewKinds: each kind makes the provider of its dialect.
func TestNewKinds(t *testing.T) {
	for _, kind := range []string{KindOllama, KindOpenAI, KindResponses} {
		c, err := Resolve(Config{Kind: kind}, Config{}, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		p, err := New(c)
		if err != nil || p.Kind() != kind {
			t.Errorf("%s: %v, kind %q", kind, err, p.Kind())
		}
	}
}
