// Package pgtest gives tests a throwaway PostgreSQL database on a real
// server that the tests start themselves.
//
// URL returns the address of a new, empty database, dropped when the test
// ends. The first call in a test binary starts a server that the binary's
// tests then share: initdb into a temporary directory (trust
// authentication, UTF8, locale C), then the postgres binary as a child
// process on a free TCP port of 127.0.0.1 (and a Unix socket in that
// directory), with the durability settings a throwaway server does not need
// turned off (fsync, synchronous_commit, full_page_writes). The start
// takes a few seconds, initdb's mostly; each database after it a fraction
// of one.
//
// The binaries are those of the first initdb on PATH (with the postgres
// beside it), or else the newest of Debian's /usr/lib/postgresql/*/bin:
// scripts/postgres.sh --deps installs Debian's postgresql package. Without
// them a test that calls URL skips, or fails when HEARTH_PG_REQUIRED=1 (as
// scripts/test.sh's race stage sets it). With HEARTH_TEST_DATABASE_URL set
// (a postgres:// URL of a role allowed to create databases) no server is
// started: the databases are created on that one.
//
// PostgreSQL refuses to run as root. As root (CI's case) initdb and
// postgres run as the postgres user that Debian's package creates, or else
// as nobody, in a temporary directory given to that user.
//
// A package whose tests use URL stops the server when they end with
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// Without Main, on Linux, the server still ends with the test binary (the
// kernel signals it when the binary exits, even when it is killed), but
// its temporary directory is left behind; elsewhere the server is left
// running too.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables that change what URL does.
const (
	// envURL names a server to use instead of starting one.
	envURL = "HEARTH_TEST_DATABASE_URL"
	// envRequired, set to 1, turns the skip without PostgreSQL into a
	// failure.
	envRequired = "HEARTH_PG_REQUIRED"
)

// notInstalled is what a test is told when there are no binaries.
const notInstalled = "PostgreSQL is not installed: scripts/postgres.sh --deps installs it"

// errNotInstalled is findBinaries' answer when there are none.
var errNotInstalled = errors.New(notInstalled)

// opTimeout bounds one CREATE or DROP DATABASE (with its connection).
const opTimeout = 60 * time.Second

// shared is the test binary's server, and the connection that creates and
// drops its databases. A test binary has one server for all its tests,
// started by the first URL call of whichever test comes first (tests in
// parallel included) and stopped by Main after the last: that makes it
// process-wide state, which has to live in a package variable. It is this
// one value, and every field is read and written with mu held; holding mu
// through the start makes the other callers wait for it, as sync.Once
// would, and an error is kept so that they fail with it rather than start
// again.
var shared struct {
	mu sync.Mutex
	// started is set by the first URL call, before it starts anything.
	started bool
	// err is why the start failed.
	err error
	// srv is the server this process started; nil with
	// HEARTH_TEST_DATABASE_URL, or before the start.
	srv *server
	// base is the URL the databases' URLs are made from: the postgres
	// database of srv, or HEARTH_TEST_DATABASE_URL.
	base *url.URL
	// admin is the connection to base that creates and drops databases;
	// nil until needed, and again after it broke.
	admin *pgx.Conn
	// n counts the databases created, for their names.
	n int
	// stopped is set by Main once the tests have run.
	stopped bool
}

// URL returns a postgres:// URL of a new, empty database, created for t on
// the server that the test binary shares (started by the first call), and
// dropped when t ends (WITH (FORCE): connections still open to it are
// closed). Each call creates another database. It skips t when PostgreSQL
// is not installed (and under go test -short), and fails it instead when
// HEARTH_PG_REQUIRED=1; it fails t when the server does not start or the
// database cannot be created.
func URL(t testing.TB) string {
	t.Helper()
	if testing.Short() && os.Getenv(envRequired) != "1" {
		// The quick check (go test -short) starts no server; the race
		// stage runs these tests, and requires them.
		t.Skip("-short: the PostgreSQL tests run without -short (scripts/test.sh race)")
	}
	s := &shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		t.Fatal("pgtest: URL called after Main stopped the server")
	}
	if !s.started {
		s.started = true
		s.err = start()
	}
	if s.err != nil {
		if errors.Is(s.err, errNotInstalled) {
			if os.Getenv(envRequired) == "1" {
				t.Fatal(notInstalled + " (and " + envRequired + "=1 requires it)")
			}
			t.Skip(notInstalled)
		}
		t.Fatalf("pgtest: %v", s.err)
	}

	s.n++
	name := dbName(t.Name(), s.n)
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	conn, err := adminConn(ctx)
	if err == nil {
		_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()+createOptions(conn))
	}
	if err != nil {
		if s.srv != nil && s.srv.exited() {
			t.Fatalf("pgtest: creating database %s: %v; %s", name, err, s.srv.exitReport())
		}
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() { drop(t, name) })
	u := *s.base
	u.Path = "/" + name
	u.RawPath = ""
	return u.String()
}

// createOptions is what CREATE DATABASE adds on the server this process
// started, when it is PostgreSQL 15 or newer: STRATEGY FILE_COPY copies
// template1's files and checkpoints, where 15's default (WAL_LOG) writes
// the whole template through the WAL; with fsync off the copy is some
// three times faster. A server of HEARTH_TEST_DATABASE_URL keeps its
// default: its checkpoints may be slow.
func createOptions(conn *pgx.Conn) string {
	if shared.srv == nil {
		return ""
	}
	version := conn.PgConn().ParameterStatus("server_version") // "15.18 (Debian …)"
	digits := strings.IndexFunc(version, func(r rune) bool { return r < '0' || r > '9' })
	if digits < 0 {
		digits = len(version)
	}
	if major, _ := strconv.Atoi(version[:digits]); major < 15 {
		return ""
	}
	return " STRATEGY FILE_COPY"
}

// drop drops a database URL created, at the end of its test. An error is
// ignored when the server is gone (it exited, or refuses connections); any
// other fails the test.
func drop(t testing.TB, name string) {
	s := &shared
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped || (s.srv != nil && s.srv.exited()) {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	conn, err := adminConn(ctx)
	if err != nil {
		return // the server is gone
	}
	_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	if err != nil && !conn.IsClosed() && !(s.srv != nil && s.srv.exited()) {
		t.Errorf("pgtest: dropping database %s: %v", name, err)
	}
}

// adminConn returns shared.admin, connecting it first when it is not
// connected. shared.mu must be held.
func adminConn(ctx context.Context) (*pgx.Conn, error) {
	s := &shared
	if s.admin != nil && !s.admin.IsClosed() {
		return s.admin, nil
	}
	s.admin = nil
	conn, err := pgx.Connect(ctx, s.base.String())
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", s.base.Redacted(), err)
	}
	s.admin = conn
	return conn, nil
}

// start starts the shared server, or checks HEARTH_TEST_DATABASE_URL.
// shared.mu must be held.
func start() error {
	s := &shared
	if raw := os.Getenv(envURL); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") || u.Host == "" {
			return fmt.Errorf("%s must be a postgres:// URL (postgres://user:password@host:port/database)", envURL)
		}
		s.base = u
		ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		defer cancel()
		_, err = adminConn(ctx)
		return err
	}
	bin, err := findBinaries()
	if err != nil {
		return err
	}
	srv, conn, err := startServer(bin)
	if err != nil {
		return err
	}
	s.srv, s.base, s.admin = srv, srv.url, conn
	return nil
}

// Main runs the tests, then stops the server they shared (when this
// process started one) and removes its temporary directory; it returns
// m.Run's exit code. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
// The server is asked to stop at once (PostgreSQL's immediate shutdown:
// connections the tests left open do not hold it), and killed after 10 s.
// Without Main the server still ends with the test binary (see the package
// documentation), but its temporary directory stays.
func Main(m *testing.M) int {
	code := m.Run()
	s := &shared
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = true
	if s.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.admin.Close(ctx)
		cancel()
		s.admin = nil
	}
	if s.srv != nil {
		s.srv.stop()
	}
	return code
}

// Available reports whether URL can give a database without skipping: the
// PostgreSQL binaries are installed, or HEARTH_TEST_DATABASE_URL names a
// server. It does not start anything, so the server may still fail to
// start. A test that skips itself when Available is false skips even with
// HEARTH_PG_REQUIRED=1; one that calls URL fails there instead.
func Available() bool {
	if os.Getenv(envURL) != "" {
		return true
	}
	_, err := findBinaries()
	return err == nil
}

// dbName makes the name of a test's n-th database: the test's name, for
// whoever finds one left behind on a shared server, then n and random
// digits, unique among the test binaries sharing a server. It fits
// PostgreSQL's 63 bytes and needs no quoting.
func dbName(test string, n int) string {
	var b strings.Builder
	for _, r := range strings.ToLower(test) {
		if b.Len() >= 32 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return fmt.Sprintf("pgtest_%s_%d_%08x", b.String(), n, rand.Uint32())
}
