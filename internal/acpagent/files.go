package acpagent

import (
	"context"
	"errors"
	"fmt"

	acp "github.com/coder/acp-go-sdk"

	"github.com/hearth-agent/hearth/tool"
)

// clientFiles reads and writes text files through the editor
// (fs/read_text_file, fs/write_text_file), as far as it offers them: what
// it does not is done on disk (errors.ErrUnsupported). The file tools give
// it only paths they have checked against the workspace's rules
// (tool.Files).
type clientFiles struct {
	conn        *acp.AgentSideConnection
	session     acp.SessionId
	read, write bool
}

var _ tool.Files = clientFiles{}

// ReadTextFile asks the editor for the text of the file at path: its
// buffer when it has the file open, unsaved changes included.
func (f clientFiles) ReadTextFile(ctx context.Context, path string) (string, error) {
	if !f.read {
		return "", errors.ErrUnsupported
	}
	resp, err := f.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: f.session, Path: path})
	if err != nil {
		return "", fmt.Errorf("fs/read_text_file: %s", describeErr(err))
	}
	return resp.Content, nil
}

// WriteTextFile has the editor write the file at path: into its buffer,
// where the user sees the change, and to disk.
func (f clientFiles) WriteTextFile(ctx context.Context, path, content string) error {
	if !f.write {
		return errors.ErrUnsupported
	}
	if _, err := f.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: f.session, Path: path, Content: content}); err != nil {
		return fmt.Errorf("fs/write_text_file: %s", describeErr(err))
	}
	return nil
}

// describeErr says what an error of the editor said: its message, and the
// details it gave.
func describeErr(err error) string {
	var re *acp.RequestError
	if errors.As(err, &re) {
		if re.Data != nil {
			return fmt.Sprintf("%s (%v)", re.Message, re.Data)
		}
		return re.Message
	}
	return err.Error()
}
