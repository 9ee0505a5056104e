package shell

import "strings"

// Shells, and the builtins that run code.

// shells whose -c string Hearth interprets itself; other shells run
// for real.
var (
	posixShells = set("sh", "bash", "dash", "ash", "rbash")
	otherShells = set("zsh", "ksh", "mksh", "yash", "posh", "ksh93", "oksh", "loksh")
	alienShells = set("fish", "csh", "tcsh", "nu", "elvish", "xonsh", "pwsh", "powershell")
)

// shellOptions are a shell's options, as bash reads them: a cluster may
// start with - or +, each o or O in it takes the next word (-co pipefail),
// and a lone - ends them.
var shellOptions = optSpec{short: "oO", long: []string{"rcfile", "init-file"}, exactLong: true,
	following: true, signs: "+", loneDashEnds: true, stopAtOperand: true}

// shell checks a shell started with args: its -c string, its script file,
// or its standard input (refused: it cannot be checked).
func (c *checker) shell(name string, args []string) *Refusal {
	p := operands(args, shellOptions)
	hasC, stdin := false, p.end == "-"
	for _, o := range p.opts {
		switch o.short {
		case 'c':
			hasC = true
		case 's':
			stdin = true
		}
	}
	switch {
	case hasC:
		if len(p.afterOpts) == 0 {
			return nil
		}
		if alienShells[name] {
			return c.refuse(RuleUnchecked, "only sh and bash command strings can be checked; write the commands for bash")
		}
		sub := *c
		sub.depth++
		// Hearth interprets sh and bash -c strings itself, checking each
		// command as it runs; strings run by a real shell must be fully
		// checkable beforehand.
		return sub.script(p.afterOpts[0], c.real || !posixShells[name])
	case stdin || len(p.afterOpts) == 0:
		return c.refuse(RuleUnchecked, "a shell reading its commands from its input cannot be checked; pass them with %s -c '…'", name)
	}
	return nil // a script file: it runs under the OS sandbox
}

// multicall checks busybox and toybox: their operands are a command.
func (c *checker) multicall(_ string, args []string) *Refusal {
	return c.nested(args)
}

// eval runs its words, joined, as a command string.
func (c *checker) eval(_ string, args []string) *Refusal {
	return c.script(strings.Join(args, " "), c.real)
}
