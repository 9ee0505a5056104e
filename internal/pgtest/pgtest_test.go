//go:build unix

package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// connect opens a connection to url, closed when t ends.
func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatalf("connecting to %s: %v", url, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// queryOne runs a query that returns one value.
func queryOne[T any](t *testing.T, conn *pgx.Conn, sql string, args ...any) T {
	t.Helper()
	var v T
	if err := conn.QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func TestServerIsPostgreSQL(t *testing.T) {
	began := time.Now()
	url := URL(t)
	// Not an assertion: how long the first call (which may have started
	// the server) and a later one take, for whoever reads -v.
	t.Logf("URL took %v (the server's start included if this was the first call)", time.Since(began))
	began = time.Now()
	URL(t)
	t.Logf("another URL took %v", time.Since(began))

	conn := connect(t, url)
	version := queryOne[string](t, conn, "SELECT version()")
	if !strings.HasPrefix(version, "PostgreSQL ") {
		t.Fatalf("version() = %q, not PostgreSQL's", version)
	}
	t.Log(version)

	shared.mu.Lock()
	srv := shared.srv
	shared.mu.Unlock()
	if os.Getenv(envURL) != "" {
		if srv != nil {
			t.Fatalf("%s is set, yet a server was started", envURL)
		}
		return
	}
	if srv == nil {
		t.Fatal("no server was started, nor is " + envURL + " set")
	}
	for name, want := range map[string]string{
		"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off",
		"max_connections": "300", "server_encoding": "UTF8",
		"listen_addresses": "127.0.0.1",
	} {
		if got := queryOne[string](t, conn, "SELECT current_setting($1)", name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := queryOne[string](t, conn, "SELECT datcollate FROM pg_database WHERE datname = current_database()"); got != "C" {
		t.Errorf("collation %q, want C", got)
	}
	if got := queryOne[string](t, conn, "SELECT current_user"); got != "postgres" {
		t.Errorf("current_user = %q, want postgres", got)
	}
	if runtime.GOOS == "linux" && os.Geteuid() == 0 {
		fi, err := os.Stat(fmt.Sprintf("/proc/%d", srv.proc.pid))
		if err != nil {
			t.Fatal(err)
		}
		if uid := fi.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Error("the server runs as root")
		} else {
			t.Logf("as root: the server runs as uid %d", uid)
		}
	}
}

// userTables counts the tables a database holds outside the system
// catalogs.
const userTables = `SELECT count(*) FROM pg_catalog.pg_class c
	JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
	AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`

func TestURLGivesFreshEmptyDatabases(t *testing.T) {
	url1, url2 := URL(t), URL(t)
	if url1 == url2 {
		t.Fatalf("URL returned %s twice", url1)
	}
	c1, c2 := connect(t, url1), connect(t, url2)
	db1 := queryOne[string](t, c1, "SELECT current_database()")
	db2 := queryOne[string](t, c2, "SELECT current_database()")
	if db1 == db2 {
		t.Fatalf("both URLs lead to database %s", db1)
	}
	for _, c := range []*pgx.Conn{c1, c2} {
		if n := queryOne[int64](t, c, userTables); n != 0 {
			t.Errorf("a new database holds %d tables", n)
		}
		if _, err := c.Exec(context.Background(), "CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c1.Exec(context.Background(), "INSERT INTO notes (body) VALUES ('only in the first')"); err != nil {
		t.Fatal(err)
	}
	if n := queryOne[int64](t, c1, "SELECT count(*) FROM notes"); n != 1 {
		t.Errorf("the first database's notes: %d rows, want 1", n)
	}
	if n := queryOne[int64](t, c2, "SELECT count(*) FROM notes"); n != 0 {
		t.Errorf("the second database's notes: %d rows, want 0", n)
	}
}

func TestDatabaseIsDroppedWhenTheTestEnds(t *testing.T) {
	observer := connect(t, URL(t))
	var name string
	var leaked *pgx.Conn
	t.Run("uses a database", func(t *testing.T) {
		url := URL(t)
		// A connection the test does not close: the drop closes it.
		var err error
		if leaked, err = pgx.Connect(context.Background(), url); err != nil {
			t.Fatal(err)
		}
		name = queryOne[string](t, leaked, "SELECT current_database()")
		if _, err := leaked.Exec(context.Background(), "CREATE TABLE t (x int)"); err != nil {
			t.Fatal(err)
		}
	})
	if name == "" {
		t.Fatal("the subtest did not get a database")
	}
	defer leaked.Close(context.Background())
	if n := queryOne[int64](t, observer, "SELECT count(*) FROM pg_database WHERE datname = $1", name); n != 0 {
		t.Errorf("database %s still exists after its test ended", name)
	}
	if _, err := leaked.Exec(context.Background(), "SELECT 1"); err == nil {
		t.Error("a connection to the dropped database still works")
	}
}

func TestManyTestsInParallel(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	t.Run("group", func(t *testing.T) {
		for i := range 12 {
			t.Run(strconv.Itoa(i), func(t *testing.T) {
				t.Parallel()
				url := URL(t)
				conn := connect(t, url)
				if _, err := conn.Exec(context.Background(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
					t.Fatal(err)
				}
				db := queryOne[string](t, conn, "SELECT current_database()")
				mu.Lock()
				defer mu.Unlock()
				if seen[db] {
					t.Errorf("database %s given twice", db)
				}
				seen[db] = true
			})
		}
	})
	if len(seen) != 12 && !t.Failed() && !t.Skipped() && !testing.Short() {
		t.Errorf("%d databases for 12 tests", len(seen))
	}
}

// TestHelperServerChild is TestServerDiesWithTestBinary's child: it starts
// a server, says where, and waits to be killed.
func TestHelperServerChild(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "1" {
		t.Skip("run by TestServerDiesWithTestBinary")
	}
	URL(t)
	shared.mu.Lock()
	pid, dir := shared.srv.proc.pid, shared.srv.dir
	shared.mu.Unlock()
	fmt.Printf("pgtest-child pid=%d dir=%s\n", pid, dir)
	time.Sleep(10 * time.Minute)
}

// TestServerDiesWithTestBinary kills a test binary that started a server,
// without Main, with SIGKILL: the server and its backends must end too.
func TestServerDiesWithTestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	if testing.Short() {
		t.Skip("-short: starts a second server")
	}
	if os.Getenv(envURL) != "" {
		t.Skip(envURL + " is set: no server is started")
	}
	URL(t) // skips, or fails, as the child would without PostgreSQL

	child := exec.Command(os.Args[0], "-test.run=^TestHelperServerChild$", "-test.timeout=5m")
	child.Env = append(os.Environ(), "PGTEST_CHILD=1")
	var stderr strings.Builder
	child.Stderr = &stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	var dir string
	var lines []string
	scanner := bufio.NewScanner(out)
	for scanner.Scan() {
		lines = append(lines, scanner.Text())
		if n, _ := fmt.Sscanf(scanner.Text(), "pgtest-child pid=%d dir=%s", &pid, &dir); n == 2 {
			break
		}
	}
	if pid == 0 {
		child.Wait()
		t.Fatalf("the child did not start a server:\n%s\n%s", strings.Join(lines, "\n"), stderr.String())
	}
	defer os.RemoveAll(dir) // the child had no Main to remove it

	// The postmaster and its children (backends, checkpointer, …).
	server := append([]int{pid}, children(t, pid)...)
	if len(server) < 3 {
		t.Fatalf("the server's processes: %v; want the postmaster and its children", server)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()

	// A bound against hanging, not a speed target.
	deadline := time.Now().Add(time.Minute)
	for {
		var left []int
		for _, p := range server {
			if alive(p) {
				left = append(left, p)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the test binary was killed, the server's processes %v still run", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Errorf("the killed child's server directory: %v", err)
	}
}

// stat returns the fields of /proc/PID/stat after the command's name
// (state, ppid, …), or nil when there is no such process.
func stat(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	// pid (comm) state ppid …; comm may hold anything.
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// alive reports whether process pid runs; a zombie has exited (nothing may
// reap it in a container).
func alive(pid int) bool {
	f := stat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// children lists the processes whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var kids []int
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f := stat(p); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			kids = append(kids, p)
		}
	}
	return kids
}

// TestExternalServer runs two of these tests in a child with
// HEARTH_TEST_DATABASE_URL naming this binary's server: they must pass on
// it without starting one.
func TestExternalServer(t *testing.T) {
	if os.Getenv(envURL) != "" {
		t.Skip(envURL + " is set already")
	}
	URL(t)
	shared.mu.Lock()
	base := shared.base.String()
	shared.mu.Unlock()
	child := exec.Command(os.Args[0], "-test.v", "-test.timeout=5m",
		"-test.run=^(TestServerIsPostgreSQL|TestURLGivesFreshEmptyDatabases)$")
	child.Env = append(os.Environ(), envURL+"="+base)
	out, err := child.CombinedOutput()
	if err != nil {
		t.Fatalf("the tests failed on %s=%s: %v\n%s", envURL, base, err, out)
	}
	if n := strings.Count(string(out), "--- PASS"); n != 2 {
		t.Fatalf("%d of the 2 tests passed:\n%s", n, out)
	}
}

func TestVersionOrder(t *testing.T) {
	dirs := []string{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/15/bin"}
	sort.Slice(dirs, func(i, j int) bool { return versionLess(dirs[i], dirs[j]) })
	want := []string{"/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/10/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin"}
	if strings.Join(dirs, " ") != strings.Join(want, " ") {
		t.Errorf("sorted: %v, want %v", dirs, want)
	}
}

func TestDBName(t *testing.T) {
	long := strings.Repeat("TestSomething/with spaces/", 10)
	for _, test := range []string{"TestX", long, "Test/ünïcode/日本"} {
		name := dbName(test, 123456)
		if len(name) > 63 {
			t.Errorf("dbName(%q) = %q: over PostgreSQL's 63 bytes", test, name)
		}
		for _, r := range name {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
				t.Errorf("dbName(%q) = %q: holds %q", test, name, r)
				break
			}
		}
	}
	if a, b := dbName("TestX", 1), dbName("TestX", 1); a == b {
		t.Errorf("dbName gave %s twice", a)
	}
}
