package loader

import (
	"context"
	"testing"

	"github.com/hearth-agent/hearth/session"
)

// hearth serve --trust read-only over a store that says trusted:
// the user's choice in the web UI of the level the store already holds
// (trusted) changes nothing in the store, so --trust keeps holding and the
// choice is silently ignored.
func TestAttackFlagIgnoresSameChoice(t *testing.T) {
	ctx := context.Background()
	o, _ := setup(t, "", "", nil)
	o.Trust = "read-only"
	p := newPool(t, o, func(ctx context.Context, st session.Store, root string) {
		must(t)(st.AddWorkspace(ctx, session.Workspace{Path: root, Trust: session.TrustTrusted}))
	})
	// What the web UI's trust dialog makes the server do (POST
	// /v1/workspaces, then Workspaces.TrustChanged).
	must(t)(p.store().AddWorkspace(ctx, session.Workspace{Path: p.root, Trust: session.TrustTrusted}))
	p.agents.TrustChanged(p.root)
	if got := p.get("").Trust(); got != session.TrustTrusted {
		tr, from := p.agents.Override(ctx, p.root)
		t.Errorf("the user chose trusted: the agent runs %q (Override %q %q)", got, tr, from)
	}
}
