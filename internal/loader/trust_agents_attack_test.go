package loader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/hearth-agent/hearth/session"
	"github.com/hearth-agent/hearth/tool"
)

// a known workspace whose folder became a symlink to another known
// workspace gets an agent rooted in the other one, with its own trust
// (and the other's .hearth/config.toml read as trusted).
func TestAttackAgentsSymlinkSwap(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	p := newPool(t, o, nil)
	st := p.store()
	parent := newWorkspace(t)
	trusted := filepath.Join(parent, "x")
	os.Mkdir(trusted, 0o755)
	ro := newWorkspace(t)
	os.WriteFile(filepath.Join(ro, "canary.txt"), []byte("RO"), 0o644)
	must(t)(st.AddWorkspace(ctx, session.Workspace{Path: trusted, Trust: session.TrustTrusted}))
	must(t)(st.AddWorkspace(ctx, session.Workspace{Path: ro, Trust: session.TrustReadOnly}))
	// Whoever may write parent swaps the folder for a symlink.
	os.Remove(trusted)
	if err := os.Symlink(ro, trusted); err != nil {
		t.Fatal(err)
	}
	a, err := p.agents.Agent(ctx, trusted)
	if err != nil {
		return // refused: fixed
	}
	t.Logf("agent of %s: workspace %s, trust %s", trusted, a.Workspace(), a.Trust())
	wf, ok := a.Session("s").Tool("write_file")
	if !ok {
		t.Fatal("no write_file")
	}
	args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(ro, "canary.txt"), "content": "WRITTEN"})
	wf.Run(ctx, tool.Call{ID: "c", Args: args})
	if b, _ := os.ReadFile(filepath.Join(ro, "canary.txt")); string(b) != "RO" {
		t.Errorf("the read-only workspace %s was written through %s's trusted agent: %q", ro, trusted, b)
	}
}
