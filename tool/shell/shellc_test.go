package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The interpreter reads sh and bash options as the policy does. Before, the
// policy read -O NAME, --rcfile FILE and a lone - as bash does, and checked
// the string after them as one Hearth would interpret; the interpreter did
// not see the -c, and handed the string to a real bash, unchecked. Nor did
// it find the script file after -o NAME. Dry runs: nothing starts.
func TestShellOptionsReadAsThePolicyReadsThem(t *testing.T) {
	for _, cmd := range []string{
		"bash -O extglob -c 'rm -rf $(echo /)'",
		"bash +O extglob -c 'rm -rf $(echo /)'",
		"bash --rcfile rc -c 'rm -rf $(echo /)'",
		"sh -c - 'rm -rf $(echo /)'",
		"bash -o errexit evil.sh",
	} {
		t.Run(cmd, func(t *testing.T) {
			f := newFixture(t, true)
			if err := os.WriteFile(filepath.Join(f.ws, "evil.sh"), []byte("rm -rf /\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := f.run(t, cmd)
			if o.refusal == nil || o.refusal.Rule != RuleRoot {
				t.Errorf("refusal %v, want rule %s: %+v", o.refusal, RuleRoot, o)
			}
			if len(f.ran) > 0 {
				t.Errorf("ran %q", f.ran)
			}
		})
	}
	// The options the interpreter knows still reach it.
	f := newFixture(t, true)
	o := f.run(t, "bash -eo pipefail -c 'false | true; echo reached'")
	if o.exit == 0 || strings.Contains(o.output, "reached") || len(f.ran) > 0 {
		t.Errorf("-e and -o pipefail not applied: %+v, ran %q", o, f.ran)
	}
}
