package shell

import (
	"path/filepath"
	"strings"
)

// Deleting, creating, writing, copying and moving files: the commands
// whose operands are the paths they change.

// deleteCmds remove their operands (the links themselves, not what they
// point to).
var deleteCmds = set("rm", "unlink", "rmdir", "srm", "wipe", "trash", "trash-put")

func (c *checker) delete(_ string, args []string) *Refusal {
	for _, op := range operands(args, optSpec{}).ops {
		if r := c.path(opDelete, op); r != nil {
			return r
		}
	}
	return nil
}

// shred overwrites its operands, and with -u deletes them.
func (c *checker) shred(_ string, args []string) *Refusal {
	p := operands(args, optSpec{short: "ns", long: []string{"iterations", "size", "random-source"}})
	for _, op := range p.ops {
		if r := c.path(opWrite, op); r != nil {
			return r
		}
		if p.has('u', "remove") {
			if r := c.path(opDelete, op); r != nil {
				return r
			}
		}
	}
	return nil
}

// createSpecs are the options of the commands that create or change every
// operand they are given.
var createSpecs = map[string]optSpec{
	"touch":    {short: "dtr", long: []string{"date", "reference", "time"}},
	"mkdir":    {short: "mZ", long: []string{"mode", "context"}},
	"mkfifo":   {short: "mZ", long: []string{"mode", "context"}},
	"truncate": {short: "sr", long: []string{"size", "reference"}},
	"tee":      {},
	"setfacl":  {short: "mMxX", long: []string{"modify", "modify-file", "remove", "remove-file", "set", "set-file"}},
	"chcon":    {short: "urtl", long: []string{"reference", "user", "role", "type", "range"}},
}

func (c *checker) create(name string, args []string) *Refusal {
	return c.paths(opWrite, operands(args, createSpecs[name]).ops)
}

// mknod NAME TYPE …: only the first operand is a path.
func (c *checker) mknod(_ string, args []string) *Refusal {
	if ops := operands(args, optSpec{short: "mZ", long: []string{"mode", "context"}}).ops; len(ops) > 0 {
		return c.path(opWrite, ops[0])
	}
	return nil
}

// chmod checks chmod, chown and chgrp: the first operand is the mode or
// owner (unless --reference gave it), the rest are the files.
func (c *checker) chmod(name string, args []string) *Refusal {
	spec := optSpec{long: []string{"reference"}}
	if name == "chown" {
		spec.long = append(spec.long, "from")
	}
	p := operands(args, spec)
	modeSeen := false
	noDeref := false
	for _, o := range p.opts {
		switch {
		case o.short == 0:
			// Any prefix of reference, even --=FILE.
			if strings.HasPrefix("reference", o.given) {
				modeSeen = true
			}
			if strings.HasPrefix("no-dereference", o.given) && len(o.given) > 3 {
				noDeref = true
			}
		case name == "chmod":
			if strings.IndexByte("cfvR", o.short) < 0 {
				modeSeen = true // chmod -w file: a mode, not options
			}
		case o.short == 'h':
			noDeref = true
		}
	}
	files := p.ops
	if !modeSeen && len(files) > 0 {
		files = files[1:] // the mode or owner
	}
	if noDeref {
		return c.paths(opWriteNoFollow, files) // -h: the links themselves
	}
	return c.paths(opWrite, files)
}

// chattr's words that start with +, - or = are modes and options (- alone
// too), whatever their place; the rest are the files.
func (c *checker) chattr(_ string, args []string) *Refusal {
	var files []string
	for _, op := range operands(args, optSpec{signs: "+=", throughDashes: true}).ops {
		if op != "-" {
			files = append(files, op)
		}
	}
	return c.paths(opWrite, files)
}

// copyMove checks cp, install, mv, ln and link: the target is written,
// mv's sources deleted, and a hard link's sources are written through it.
func (c *checker) copyMove(name string, args []string) *Refusal {
	spec := optSpec{short: "St", long: []string{"target-directory", "suffix"}}
	if name == "install" {
		spec = optSpec{short: "gmoSt", long: []string{"group", "mode", "owner", "suffix", "target-directory", "strip-program"}}
	}
	p := operands(args, spec)
	ops := p.ops
	targets := p.values("t", "target-directory")
	if name == "install" && p.has('d', "directory") {
		return c.paths(opWrite, ops)
	}
	var sources []string
	switch {
	case len(targets) > 0:
		sources = ops
	case name == "ln" && len(ops) == 1:
		// ln TARGET: the link is made here, named after the target.
		sources, targets = ops, []string{filepath.Base(ops[0])}
	case len(ops) >= 2:
		sources, targets = ops[:len(ops)-1], ops[len(ops)-1:]
	default:
		return nil
	}
	if name == "mv" {
		for _, s := range sources {
			if r := c.path(opDelete, s); r != nil {
				return r
			}
		}
	}
	// A hard link shares the file: writing the link writes the original.
	hard := name == "link" || name == "ln" && !p.has('s', "symbolic") ||
		name == "cp" && (p.has('l', "link"))
	if hard {
		for _, s := range sources {
			if r := c.path(opWrite, s); r != nil {
				r.Reason = "a hard link to it would let writes in the workspace change it: " + r.Reason
				return r
			}
		}
	}
	return c.paths(opWrite, targets)
}

// rsync and scp write their last operand, unless it is on another host.
func (c *checker) rsync(_ string, args []string) *Refusal {
	ops := operands(args, optSpec{short: "eBfTiPlocF", long: []string{"rsh", "rsync-path", "exclude", "include", "filter", "files-from", "temp-dir", "partial-dir", "log-file", "password-file", "chmod", "chown", "backup-dir", "suffix", "compare-dest", "copy-dest", "link-dest"}}).ops
	if len(ops) >= 2 && !isRemote(ops[len(ops)-1]) {
		return c.path(opWrite, ops[len(ops)-1])
	}
	return nil
}

// isRemote reports whether an rsync/scp operand names another host
// (host:path), not a local file.
func isRemote(p string) bool {
	i := strings.IndexByte(p, ':')
	return i > 0 && !strings.Contains(p[:i], "/")
}

// dd writes what its of= operand names; a device there could be a disk.
func (c *checker) dd(_ string, args []string) *Refusal {
	for _, a := range operands(args, optSpec{}).ops {
		if of, ok := strings.CutPrefix(a, "of="); ok {
			if isDevice(c.abs(of)) && !harmlessDevice(c.abs(of)) {
				return c.refuse(RuleDisk, "dd writing to the device %s could destroy a disk; Hearth never does that", of)
			}
			if r := c.path(opWrite, of); r != nil {
				return r
			}
		}
	}
	return nil
}
