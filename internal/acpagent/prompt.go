package acpagent

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	acp "github.com/coder/acp-go-sdk"
)

// maxPrompt bounds a prompt's text, the editor's embedded files included
// (they are kept in the session with the message).
const maxPrompt = 4 << 20

// promptText turns the content blocks of a session/prompt into the user's
// message, as Hearth keeps it: text as it is; a file the editor embeds
// (an @-mention, a selection) as a context block with its path; a link to
// a file as @path, relative to the workspace root when it is inside it
// (the model reads it with read_file). Images and audio are refused: Hearth
// does not offer them (promptCapabilities).
func promptText(blocks []acp.ContentBlock, root string) (string, error) {
	var b strings.Builder
	sep := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	for _, blk := range blocks {
		switch {
		case blk.Text != nil:
			b.WriteString(blk.Text.Text)
		case blk.ResourceLink != nil:
			if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") && !strings.HasSuffix(b.String(), "\n") {
				b.WriteString(" ")
			}
			b.WriteString(mention(blk.ResourceLink.Uri, root))
		case blk.Resource != nil:
			r := blk.Resource.Resource
			switch {
			case r.TextResourceContents != nil:
				sep()
				fmt.Fprintf(&b, "<context ref=%q>\n%s", mention(r.TextResourceContents.Uri, root), r.TextResourceContents.Text)
				if !strings.HasSuffix(r.TextResourceContents.Text, "\n") {
					b.WriteString("\n")
				}
				b.WriteString("</context>\n")
			case r.BlobResourceContents != nil:
				sep()
				fmt.Fprintf(&b, "[%s: binary content, not included]\n", mention(r.BlobResourceContents.Uri, root))
			}
		case blk.Image != nil:
			return "", errors.New("the prompt holds an image: Hearth takes text only over ACP (promptCapabilities says so); describe the image in words, or give the path of the file")
		case blk.Audio != nil:
			return "", errors.New("the prompt holds audio: Hearth takes text only over ACP (promptCapabilities says so)")
		}
		if b.Len() > maxPrompt {
			return "", fmt.Errorf("the prompt is over %d MiB with its embedded files: mention the large files (Hearth reads them itself) rather than embedding them", maxPrompt>>20)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", errors.New("the prompt is empty: write a message")
	}
	return b.String(), nil
}

// mention names a resource for the model: @path for a file:// URI (its
// path relative to root when it is inside it), else the URI as it is.
func mention(uri, root string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || u.Path == "" {
		return uri
	}
	p := filepath.Clean(filepath.FromSlash(u.Path))
	if root != "" {
		if rel, err := filepath.Rel(root, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			p = rel
		}
	}
	return "@" + p
}
