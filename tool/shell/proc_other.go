//go:build !unix

package shell

import (
	"fmt"
	"os"

	"mvdan.cc/sh/v3/interp"
)

// signalGroup can only stop the process itself here.
func signalGroup(p *os.Process, kill bool) { _ = p.Kill() }

func exitSignal(ps *os.ProcessState) (int, bool) { return 0, false }

func isETXTBSY(err error) bool { return false }

func (rs *runState) kill(hc interp.HandlerContext, args []string) bool {
	fmt.Fprintln(hc.Stderr, "kill: not supported on this system")
	return false
}
