package shell

import "strings"

// Commands that write files named by their options or by a place among
// their operands: in-place editors, sort and uniq, archivers, downloaders.

// inPlace checks sed and perl: with -i they write the files they are given
// (all operands but the script, unless -e or -f gave it).
func (c *checker) inPlace(name string, args []string) *Refusal {
	spec := optSpec{short: "efl", long: []string{"expression", "file"}, glued: "i"}
	if name == "perl" {
		spec = optSpec{short: "eEIlmMxC", glued: "i"}
	}
	p := operands(args, spec)
	inPlace := false
	script := false // the script came from an option
	for _, o := range p.opts {
		switch {
		case o.short == 'i', o.short == 0 && strings.HasPrefix("in-place", o.given) && len(o.given) >= 2:
			inPlace = true // -i: the rest of the word is a backup suffix
		case o.takes && (o.short == 0 || strings.IndexByte("efE", o.short) >= 0):
			script = true // sed -e, -f, --expression, --file; perl -e, -E
		}
	}
	if !inPlace {
		return nil
	}
	files := p.ops
	if !script && len(files) > 0 {
		files = files[1:]
	}
	return c.paths(opWrite, files)
}

func (c *checker) sort(_ string, args []string) *Refusal {
	p := operands(args, optSpec{short: "kStTo", long: []string{"key", "buffer-size", "field-separator", "temporary-directory", "output", "files0-from", "parallel", "batch-size", "compress-program", "random-source", "sort"}})
	return c.paths(opWrite, append(p.values("o", "output"), p.values("T", "temporary-directory")...))
}

// uniq INPUT OUTPUT writes OUTPUT.
func (c *checker) uniq(_ string, args []string) *Refusal {
	if ops := operands(args, optSpec{short: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars", "group", "all-repeated"}}).ops; len(ops) >= 2 {
		return c.path(opWrite, ops[1])
	}
	return nil
}

// tarOptions are tar's options, old style (tar xzf a.tgz) included. "--"
// does not end them here: a -C or -P after it still counts.
var tarOptions = optSpec{short: "fCTXbgHKLNV", long: []string{"file", "directory", "listed-incremental"},
	exactLong: true, oldStyle: true, throughDashes: true}

// tar writes where it extracts (-C, or the working directory) and the
// archive it creates or changes; absolute names (-P) cannot be checked.
func (c *checker) tar(_ string, args []string) *Refusal {
	extract, create, absolute := false, false, false
	var files, dirs []string
	for _, o := range operands(args, tarOptions).opts {
		switch o.short {
		case 'x':
			extract = true
		case 'c', 'r', 'u', 'A':
			create = true
		case 'P':
			absolute = true
		case 'f', 'g':
			if o.takes {
				files = append(files, o.value)
			}
		case 'C':
			if o.takes {
				dirs = append(dirs, o.value)
			}
		case 0:
			switch o.long {
			case "extract", "get":
				extract = true
			case "create", "append", "update", "catenate", "concatenate":
				create = true
			case "absolute-names":
				absolute = true
			case "file", "listed-incremental":
				files = append(files, o.value)
			case "directory":
				dirs = append(dirs, o.value)
			}
		}
	}
	if extract {
		if absolute {
			return c.refuse(RuleUnchecked, "tar -P extracts absolute paths, which cannot be checked before they are written; extract without -P")
		}
		if len(dirs) == 0 {
			dirs = []string{"."}
		}
		if r := c.paths(opWrite, dirs); r != nil {
			return r
		}
	}
	if create {
		// Without -C the archive path is relative to the start directory.
		if r := c.paths(opWrite, dropStdio(files)); r != nil {
			return r
		}
	}
	return nil
}

// unzip -d DIR extracts into DIR.
func (c *checker) unzip(_ string, args []string) *Refusal {
	p := operands(args, optSpec{short: "dxP", long: nil})
	return c.paths(opWrite, p.values("d", ""))
}

// curl writes what its output options name.
func (c *checker) curl(_ string, args []string) *Refusal {
	p := operands(args, optSpec{short: "AbCcDdEeFHhKmoQrTtUuwXxYyz", long: []string{"output", "output-dir", "dump-header", "cookie-jar", "trace", "trace-ascii", "stderr", "etag-save", "data", "header", "user", "url", "config", "cookie", "form", "request", "proxy", "user-agent", "referer", "upload-file", "max-time", "connect-timeout", "retry", "write-out", "cert", "key", "cacert", "resolve"}})
	var w []string
	for _, o := range []struct{ s, l string }{{"o", "output"}, {"D", "dump-header"}, {"c", "cookie-jar"}, {"", "output-dir"}, {"", "trace"}, {"", "trace-ascii"}, {"", "stderr"}, {"", "etag-save"}} {
		w = append(w, p.values(o.s, o.l)...)
	}
	return c.paths(opWrite, dropStdio(w))
}

// wget writes what its output options name.
func (c *checker) wget(_ string, args []string) *Refusal {
	p := operands(args, optSpec{short: "OPoaeiBUTtwQlARDIX", long: []string{"output-document", "directory-prefix", "output-file", "append-output", "execute", "input-file", "base", "user-agent", "timeout", "tries", "wait", "quota", "level", "accept", "reject", "domains", "include-directories", "exclude-directories", "header", "post-data", "user", "password"}})
	var w []string
	for _, o := range []struct{ s, l string }{{"O", "output-document"}, {"P", "directory-prefix"}, {"o", "output-file"}, {"a", "append-output"}} {
		w = append(w, p.values(o.s, o.l)...)
	}
	return c.paths(opWrite, dropStdio(w))
}
