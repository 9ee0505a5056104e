package acpagent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

func TestPromptText(t *testing.T) {
	const root = "/w"
	tests := []struct {
		name   string
		blocks string // JSON, as the editor sends it
		want   string
		err    string
	}{
		{"text", `[{"type":"text","text":"fix the build"}]`, "fix the build", ""},
		{"a link to a file in the workspace", `[{"type":"text","text":"explain"},{"type":"resource_link","name":"a.go","uri":"file:///w/src/a.go"}]`, "explain @src/a.go", ""},
		{"a link to a file outside it", `[{"type":"resource_link","name":"x","uri":"file:///etc/hosts"},{"type":"text","text":" says what?"}]`, "@/etc/hosts says what?", ""},
		{"a link that is no file", `[{"type":"text","text":"see "},{"type":"resource_link","name":"doc","uri":"https://example.com/x"}]`, "see https://example.com/x", ""},
		{"an embedded file", `[{"type":"text","text":"why?"},{"type":"resource","resource":{"uri":"file:///w/a.go","text":"package a"}}]`,
			"why?\n<context ref=\"@a.go\">\npackage a\n</context>\n", ""},
		{"an embedded blob", `[{"type":"resource","resource":{"uri":"file:///w/logo.png","blob":"AAAA","mimeType":"image/png"}},{"type":"text","text":"what is it?"}]`,
			"[@logo.png: binary content, not included]\nwhat is it?", ""},
		{"an image", `[{"type":"image","data":"AAAA","mimeType":"image/png"}]`, "", "image"},
		{"audio", `[{"type":"audio","data":"AAAA","mimeType":"audio/wav"}]`, "", "audio"},
		{"nothing", `[]`, "", "empty"},
		{"blank", `[{"type":"text","text":"  \n"}]`, "", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var blocks []acp.ContentBlock
			if err := json.Unmarshal([]byte(tt.blocks), &blocks); err != nil {
				t.Fatal(err)
			}
			got, err := promptText(blocks, root)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("promptText: %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestPromptTooLarge(t *testing.T) {
	big := acp.ContentBlock{Resource: &acp.ContentBlockResource{Type: "resource", Resource: acp.EmbeddedResourceResource{
		TextResourceContents: &acp.TextResourceContents{Uri: "file:///w/big.log", Text: strings.Repeat("x", maxPrompt)}}}}
	if _, err := promptText([]acp.ContentBlock{acp.TextBlock("look"), big}, "/w"); err == nil || !strings.Contains(err.Error(), "mention the large files") {
		t.Errorf("a prompt over the limit: %v", err)
	}
}

// FuzzPromptText feeds promptText the content blocks of a session/prompt as
// an editor (or anything speaking for one) may send them: whatever they
// hold, it never panics, and a message it accepts keeps every text block's
// text.
func FuzzPromptText(f *testing.F) {
	f.Add(`[{"type":"text","text":"hi"}]`, "/w")
	f.Add(`[{"type":"resource_link","name":"a","uri":"file:///w/../../etc/passwd"}]`, "/w")
	f.Add(`[{"type":"resource_link","name":"a","uri":"file://host/%zz"}]`, "/")
	f.Add(`[{"type":"resource","resource":{"uri":"file:///w/a","text":"x"}},{"type":"text","text":"y"}]`, "/w")
	f.Add(`[{"type":"resource","resource":{"uri":":::","blob":"x"}}]`, "")
	f.Add(`[{"type":"image","data":"","mimeType":""}]`, "/w")
	f.Add(`[{"type":"text"},{"type":"resource_link"},{"type":"resource","resource":{}}]`, "/w")
	f.Fuzz(func(t *testing.T, raw, root string) {
		var blocks []acp.ContentBlock
		if json.Unmarshal([]byte(raw), &blocks) != nil {
			return
		}
		got, err := promptText(blocks, root)
		if err != nil {
			return
		}
		if strings.TrimSpace(got) == "" {
			t.Fatalf("an empty message was accepted from %s", raw)
		}
		for _, b := range blocks {
			if b.Text != nil && !strings.Contains(got, b.Text.Text) {
				t.Fatalf("the text %q of %s is not in the message %q", b.Text.Text, raw, got)
			}
		}
		if utf8.ValidString(raw) && !utf8.ValidString(got) {
			t.Fatalf("valid UTF-8 in, invalid out: %q", got)
		}
	})
}
