//go:build !unix

package pgtest

import (
	"errors"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// server is never started here.
type server struct {
	url *url.URL
}

// findBinaries finds nothing: pgtest starts PostgreSQL on Unix systems
// only (HEARTH_TEST_DATABASE_URL still works).
func findBinaries() (string, error) { return "", errNotInstalled }

// startServer is not reached: findBinaries finds nothing.
func startServer(string) (*server, *pgx.Conn, error) {
	return nil, nil, errors.New("pgtest starts PostgreSQL on Unix systems only: set " + envURL)
}

func (*server) exited() bool { return true }

func (*server) exitReport() string { return "" }

func (*server) stop() {}
