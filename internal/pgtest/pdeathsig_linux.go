package pgtest

import "syscall"

// setPdeathsig has the kernel send the child SIGQUIT when the thread that
// started it ends (see launch), which is when the test binary ends, however
// it ends: killed, crashed, or without Main. For postgres SIGQUIT is the
// immediate shutdown (see server.stop): it ends its backends and exits.
// A change of user clears the signal, but Go sets it after switching to
// SysProcAttr.Credential's user, so it holds for a server run as postgres
// too.
func setPdeathsig(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGQUIT
}
