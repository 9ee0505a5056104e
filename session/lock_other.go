//go:build !unix

package session

import (
	"context"
	"fmt"
)

// Lock takes the session within this store only (file locks are not used
// on this system).
func (s *SQLite) Lock(ctx context.Context, id string) (func(), error) {
	if _, busy := s.locks.LoadOrStore(id, true); busy {
		return nil, fmt.Errorf("%w: session %s is being used", ErrBusy, id)
	}
	return func() { s.locks.Delete(id) }, nil
}

// RemoveLock does nothing: no lock files are used here.
func (s *SQLite) RemoveLock(id string) {}
