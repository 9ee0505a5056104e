//go:build unix

package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// startTimeout bounds the wait for a started server to accept
	// connections.
	startTimeout = 60 * time.Second
	// stopTimeout is how long stop waits before it kills.
	stopTimeout = 10 * time.Second
	// maxSocketPath is what a Unix socket's path may hold (sun_path, less
	// its NUL, on Linux; macOS allows less, 103).
	maxSocketPath = 103
)

// server is a running postgres and its temporary directory.
type server struct {
	// dir holds data/ (the cluster), postgres.log and the Unix socket.
	dir string
	// url is the postgres database's, as the superuser postgres.
	url *url.URL
	// proc is the postmaster.
	proc *process
}

// process is a child started by launch.
type process struct {
	// os is the child; its Signal is safe once the child was waited for
	// (Linux: it signals through a pidfd, never a reused pid).
	os  *os.Process
	pid int
	// done is closed when the child has exited (and been waited for).
	done chan struct{}
	// err is Wait's error; read it after done is closed.
	err error
}

// findBinaries returns the directory of initdb and postgres: that of the
// first initdb on PATH (after symbolic links: initdb runs the postgres
// beside its own file) when postgres is there too, or else the newest
// /usr/lib/postgresql/VERSION/bin (Debian's layout) that has both.
func findBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && hasBinaries(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionLess(dirs[j], dirs[i]) }) // newest first
	for _, d := range dirs {
		if hasBinaries(d) {
			return d, nil
		}
	}
	return "", errNotInstalled
}

// hasBinaries reports whether dir holds executable initdb and postgres.
func hasBinaries(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// versionLess orders /usr/lib/postgresql/VERSION/bin paths by VERSION,
// numerically (9.6 < 10 < 15 < 16.1).
func versionLess(a, b string) bool {
	va := strings.Split(filepath.Base(filepath.Dir(a)), ".")
	vb := strings.Split(filepath.Base(filepath.Dir(b)), ".")
	for i := 0; i < len(va) && i < len(vb); i++ {
		na, errA := strconv.Atoi(va[i])
		nb, errB := strconv.Atoi(vb[i])
		if errA != nil || errB != nil {
			if va[i] != vb[i] {
				return va[i] < vb[i]
			}
			continue
		}
		if na != nb {
			return na < nb
		}
	}
	return len(va) < len(vb)
}

// startServer creates a cluster with bin's initdb and starts bin's postgres
// on it, then waits until it accepts connections; it returns the server
// and a connection to its postgres database. On failure it leaves nothing
// behind, and the error ends with the server's log.
func startServer(bin string) (srv *server, conn *pgx.Conn, err error) {
	cred, err := credential()
	if err != nil {
		return nil, nil, err
	}
	dir, err := os.MkdirTemp("", "hearth-pgtest-")
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(dir)
		}
	}()
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, nil, err
		}
		if err := reachable(dir, cred); err != nil {
			return nil, nil, err
		}
	}
	data := filepath.Join(dir, "data")

	var out bytes.Buffer
	initdb := exec.Command(filepath.Join(bin, "initdb"),
		"-D", data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.Stdout, initdb.Stderr = &out, &out
	p, err := launch(initdb, dir, cred)
	if err == nil {
		<-p.done
		err = p.err
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s failed: %v\n%s", initdb, err, strings.TrimSpace(out.String()))
	}

	logPath := filepath.Join(dir, "postgres.log")
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	socketDir := dir
	if len(dir)+len("/.s.PGSQL.65535.lock") > maxSocketPath {
		socketDir = "" // TCP only: TMPDIR is too long a path for a socket
	}

	// The port is one that was free a moment ago: another process may take
	// it before postgres binds it, so a start that fails on that is tried
	// again, on another port.
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, nil, err
		}
		pg := exec.Command(filepath.Join(bin, "postgres"),
			"-D", data,
			"-c", "listen_addresses=127.0.0.1",
			"-c", "port="+strconv.Itoa(port),
			"-c", "unix_socket_directories="+socketDir,
			"-c", "fsync=off",
			"-c", "synchronous_commit=off",
			"-c", "full_page_writes=off",
			"-c", "max_connections=300",
			"-c", "shared_buffers=32MB",
			"-c", "jit=off",
			"-c", "logging_collector=off",
		)
		pg.Stdout, pg.Stderr = logFile, logFile
		logStart := fileSize(logPath)
		proc, err := launch(pg, dir, cred)
		if err != nil {
			return nil, nil, fmt.Errorf("starting %s: %v", pg.Path, err)
		}
		srv = &server{
			dir:  dir,
			url:  &url.URL{Scheme: "postgres", User: url.User("postgres"), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres", RawQuery: "sslmode=disable"},
			proc: proc,
		}
		conn, err := srv.waitReady()
		if err == nil {
			return srv, conn, nil
		}
		srv.kill()
		if attempt < 3 && strings.Contains(readFrom(logPath, logStart), "could not bind") {
			continue
		}
		return nil, nil, fmt.Errorf("starting %s: %v; its log ends:\n%s", pg.Path, err, tail(logPath, 30))
	}
}

// waitReady waits until the server accepts a connection to its postgres
// database, which it returns; or until it exits, or startTimeout passes.
func (srv *server) waitReady() (*pgx.Conn, error) {
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, srv.url.String())
		cancel()
		if err == nil {
			return conn, nil
		}
		select {
		case <-srv.proc.done:
			return nil, fmt.Errorf("PostgreSQL exited while starting (%v)", srv.proc.err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("PostgreSQL did not accept connections on %s within %v (last: %v)", srv.url.Host, startTimeout, err)
		}
	}
}

// exited reports whether the postmaster has exited.
func (srv *server) exited() bool {
	select {
	case <-srv.proc.done:
		return true
	default:
		return false
	}
}

// exitReport says, once the server has exited, how, and what its log
// ends with.
func (srv *server) exitReport() string {
	path := filepath.Join(srv.dir, "postgres.log")
	return fmt.Sprintf("the server has exited (%v); its log (%s) ends:\n%s", srv.proc.err, path, tail(path, 30))
}

// stop stops the server and removes its directory. It sends SIGQUIT,
// PostgreSQL's immediate shutdown: the postmaster ends its backends (even
// those of connections still open, which SIGTERM's smart shutdown would
// wait for) and exits without a checkpoint, which a cluster about to be
// deleted does not need. After stopTimeout it kills it.
func (srv *server) stop() {
	_ = srv.proc.os.Signal(syscall.SIGQUIT)
	select {
	case <-srv.proc.done:
	case <-time.After(stopTimeout):
		srv.kill()
	}
	os.RemoveAll(srv.dir)
}

// kill kills the postmaster and waits for it. Its backends (each in a
// session of its own: they call setsid) see it gone and exit.
func (srv *server) kill() {
	_ = srv.proc.os.Kill()
	<-srv.proc.done
}

// launch starts cmd in dir, as cred's user when cred is not nil, in a
// process group of its own (a Ctrl-C meant for go test does not reach it
// first), and on Linux with a parent-death signal (see setPdeathsig).
//
// The parent-death signal is sent when the thread that started the child
// ends, not the process, and the Go runtime ends a thread whose goroutine
// exits while locked to it. So the child is started, and waited for, by a
// goroutine locked to its thread for the child's whole life: the thread
// lives as long as the child, and ends before it only with the process.
func launch(cmd *exec.Cmd, dir string, cred *syscall.Credential) (*process, error) {
	cmd.Dir = dir // the user of cred may not be allowed in ours
	cmd.Env = childEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	setPdeathsig(cmd.SysProcAttr)
	p := &process{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.os, p.pid = cmd.Process, cmd.Process.Pid
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// childEnv is the environment of initdb and postgres: ours without the PG*
// variables libpq and the server read (PGDATA, PGPORT, …), and with the C
// locale, so that messages are in English whatever LANG says.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_ALL=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "LC_ALL=C")
}

// credential returns the user to run PostgreSQL as: nil, ourselves, unless
// we are root, which initdb and postgres refuse to run as; then the
// postgres user (Debian's package creates it), or else nobody.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 != nil || err2 != nil || uid == 0 {
			continue
		}
		// Groups empty: none of root's supplementary groups.
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
	}
	return nil, errors.New("running as root, which PostgreSQL refuses, and there is no postgres or nobody user to run it as")
}

// reachable checks, as root, that cred's user may enter every directory
// above dir, which it owns: otherwise initdb fails with a message that
// hides why.
func reachable(dir string, cred *syscall.Credential) error {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		perm := fi.Mode().Perm()
		var x fs.FileMode
		switch {
		case st.Uid == cred.Uid:
			x = 0o100
		case st.Gid == cred.Gid:
			x = 0o010
		default:
			x = 0o001
		}
		if perm&x == 0 {
			return fmt.Errorf("running as root, PostgreSQL runs as uid %d, which cannot enter %s (above the temporary directory %s): set TMPDIR to a directory it can reach, such as /tmp", cred.Uid, d, dir)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free when asked.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// fileSize returns the size of the file at path, 0 when it cannot.
func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom returns what the file at path holds from offset on.
func readFrom(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	return string(b[offset:])
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
