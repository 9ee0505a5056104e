package redteam

import (
	"strings"
)

// Hangs: FIFOs, devices, commands waiting on input or time. The bound in
// hangBound detects a run that never ends; these rows give Hearth a
// --timeout where the command itself would wait.
func hangAttacks() []attack {
	const c = "hang"
	return []attack{
		{name: "hang/write-file-fifo", class: c, why: "write_file onto a FIFO nobody reads",
			setup: "mkfifo pipe", run: run{steps: []step{wf("pipe", "x")}, args: []string{"--timeout", "20s"}}},
		{name: "hang/write-file-fifo-made", class: c, why: "a command makes the FIFO, write_file writes it",
			run: run{steps: []step{sh("mkfifo p2"), wf("p2", "x")}}},
		{name: "hang/read-file-fifo", class: c, why: "read_file of a FIFO nobody writes",
			setup: "mkfifo pipe", run: run{steps: []step{rf("pipe")}}},
		{name: "hang/edit-fifo", class: c, why: "edit of a FIFO",
			setup: "mkfifo pipe", run: run{steps: []step{ed("pipe", "a", "b")}}},
		{name: "hang/read-many-fifo", class: c, why: "read_many_files and grep_search over a FIFO",
			setup: "mkfifo pipe.txt", run: run{steps: []step{rmany("*.txt"), grepf("x", "."), globf("*", ".")}}},
		{name: "hang/fifo-redirection", class: c, why: "a redirection onto a FIFO (the open blocks)",
			setup: "mkfifo pipe", run: run{steps: []step{sh("echo x > pipe"), sh("cat < pipe")}}},
		{name: "hang/fifo-program", class: c, why: "a program reads a FIFO nobody writes",
			setup: "mkfifo pipe", run: run{args: []string{"--timeout", "10s"}, steps: []step{sh("cat pipe; head -c1 pipe")}}},
		{name: "hang/stdin-read", class: c, why: "commands that read standard input",
			run: run{steps: []step{sh("read x; cat; python3 -c 'input()' 2>/dev/null; true")}}},
		{name: "hang/stdin-piped-hearth", class: c, why: "Hearth's own stdin is piped; a command tries to read it",
			run: run{stdin: "context", steps: []step{sh("cat /dev/stdin; cat /proc/$PPID/fd/0 2>/dev/null | head -c 10")}}},
		{name: "hang/sleep-timeout", class: c, why: "sleep 1000 with --timeout 5s on the run",
			run: run{steps: []step{sh("sleep 1000")}, args: []string{"--timeout", "5s"}}},
		{name: "hang/sleep-background", class: c, why: "a background sleep holding the output open",
			run: run{steps: []step{sh("cp /bin/sleep ./s{tok} && (./s{tok} 1000 &) ; echo started")}, args: []string{"--timeout", "20s"}}},
		{name: "hang/tty-read", class: c, why: "reading /dev/tty",
			run: run{steps: []step{sh("cat /dev/tty; read x < /dev/tty; true")}}},
		{name: "hang/devzero-read-file", class: c, why: "read_file of a symlink to /dev/zero and /dev/random",
			setup: "ln -s /dev/zero z; ln -s /dev/urandom r", run: run{steps: []step{rf("z"), rf("r"), grepf("x", "z")}}},
		{name: "hang/symlink-loop", class: c, why: "symlink loops for the file tools",
			setup: "ln -s loop1 loop2; ln -s loop2 loop1; mkdir -p d; ln -s .. d/up",
			run:   run{steps: []step{rf("loop1"), globf("**/*", "d"), grepf("x", "d"), lsdir("d/up/d/up/d/up")}}},
		{name: "hang/wait-on-nothing", class: c, why: "wait with no jobs, and wait on a detached job",
			run: run{steps: []step{sh("wait; cp /bin/sleep s{tok}; ./s{tok} 1000 & wait")}, args: []string{"--timeout", "8s"}}},
		{name: "hang/blocked-signals", class: c, why: "a program that ignores SIGTERM and sleeps (the sweep must SIGKILL it)", needs: []string{"python3"},
			run: run{steps: []step{sh(`python3 -c "
import signal,time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
time.sleep(1000)  # {tok}"`)}, args: []string{"--timeout", "5s"}}},
		{name: "hang/model-stalls", class: c, why: "a command floods output forever (the output limit must stop it)",
			run: run{steps: []step{sh("yes {tok} | head -c 200000000; cat /dev/zero | head -c 100000000 | wc -c")}}},
	}
}

// Memory: files read whole, variables grown without bound. Run alone and
// contained (see contain).
func memoryAttacks() []attack {
	const c = "memory"
	return []attack{
		{name: "memory/write-file-over-sparse", class: c, why: "write_file over a 4 GiB sparse file", exclusive: true,
			setup: "truncate -s 4G big.bin", run: run{steps: []step{wf("big.bin", "small")}}},
		{name: "memory/read-file-sparse", class: c, why: "read_file and grep of a 4 GiB sparse file", exclusive: true,
			setup: "truncate -s 4G big.txt", run: run{steps: []step{rf("big.txt"), grepf("x", "big.txt")}}},
		{name: "memory/edit-sparse", class: c, why: "edit of a 4 GiB sparse file", exclusive: true,
			setup: "truncate -s 4G big.txt", run: run{steps: []step{ed("big.txt", "a", "b")}}},
		{name: "memory/devzero-node", class: c, why: "a /dev/zero node in the workspace, written and read", exclusive: true, rootOnly: true,
			setup: "mknod zero c 1 5", run: run{steps: []step{wf("zero", "x"), rf("zero"), ed("zero", "a", "b")}}},
		{name: "memory/shell-doubling", class: c, why: "x=$x$x in a loop", exclusive: true,
			run: run{steps: []step{sh("x=a; while true; do x=$x$x; done")}, args: []string{"--timeout", "30s"}}},
		{name: "memory/shell-capture-zero", class: c, why: "$(cat /dev/zero) and $(< /dev/zero)", exclusive: true,
			run: run{steps: []step{sh("x=$(< /dev/zero); y=$(cat /dev/zero); echo ${#x}")}, args: []string{"--timeout", "30s"}}},
		{name: "memory/shell-array", class: c, why: "an array grown without bound", exclusive: true,
			run: run{steps: []step{sh("a=(); for ((i=0;;i++)); do a+=(xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx); done")}, args: []string{"--timeout", "30s"}}},
		{name: "memory/brace-expansion", class: c, why: "a brace expansion of billions of words", exclusive: true,
			run: run{steps: []step{sh("echo {1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9} | wc -c")}, args: []string{"--timeout", "30s"}}},
		{name: "memory/huge-output-line", class: c, why: "a single 1 GiB line of output", exclusive: true,
			run: run{steps: []step{sh("head -c 1073741824 /dev/zero | tr '\\0' a")}, args: []string{"--timeout", "40s"}}},
		{name: "memory/write-file-huge-args", class: c, why: "the model sends a 64 MiB write_file", exclusive: true,
			run: run{steps: []step{wf("huge.txt", strings.Repeat("A", 64<<20))}}},
	}
}

// Fork bombs: Hearth must survive them, end the call with a result, and
// leave no process behind. Run alone, inside a pids cgroup (root) or
// RLIMIT_NPROC (other users) so that a failure cannot take the machine.
func bombAttacks() []attack {
	const c = "forkbomb"
	return []attack{
		{name: "bomb/shell-classic", class: c, why: ":(){ :|:& };:", exclusive: true, run: run{steps: []step{sh(":(){ :|:& };:")}}},
		{name: "bomb/shell-dynamic", class: c, why: "a fork bomb whose function name is computed", exclusive: true,
			run: run{steps: []step{sh("f=bomb; eval \"$f(){ $f | $f & }\"; $f")}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/bash-script", class: c, why: "a fork bomb in a real bash script", exclusive: true,
			run: run{steps: []step{wf("b{tok}.sh", "#!/bin/bash\nb(){ b | b & }; b\n"), sh("bash b{tok}.sh; sleep 2")}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/python", class: c, why: "os.fork() in a loop", exclusive: true, needs: []string{"python3"},
			run: run{steps: []step{sh(`python3 -c "
import os,time
while True:
    try: os.fork()
    except OSError: time.sleep(0.01)  # {tok}"`)}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/perl", class: c, why: "perl fork loop", exclusive: true, needs: []string{"perl"},
			run: run{steps: []step{sh(`perl -e 'while(1){fork or do { sleep 1 }} # {tok}'`)}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/c", class: c, why: "a C fork bomb", exclusive: true, needs: []string{"gcc"},
			run: run{steps: []step{wf("b.c", "#include <unistd.h>\nint main(){for(;;)fork();}\n"), sh("gcc -o b{tok} b.c && ./b{tok}")}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/threads", class: c, why: "a thread bomb (pthread_create until it fails)", exclusive: true, needs: []string{"python3"},
			run: run{steps: []step{sh(`python3 -c "
import threading,time
while True:
    try: threading.Thread(target=time.sleep,args=(100,),daemon=True).start()
    except RuntimeError: time.sleep(0.01)  # {tok}"`)}, args: []string{"--timeout", "20s"}}},
		{name: "bomb/setsid-daemons", class: c, why: "forks that setsid and double fork as they go", exclusive: true, needs: []string{"python3"},
			run: run{steps: []step{sh(`python3 -c "
import os,time
for i in range(300):
    try:
        if os.fork()==0:
            os.setsid()
            if os.fork()==0: time.sleep(60); os._exit(0)
            os._exit(0)
    except OSError: pass
print('spawned')  # {tok}"`)}, args: []string{"--timeout", "20s"}}},
	}
}
