package tool

import (
	"crypto/sha256"
	"fmt"
	"sync"
)

// Seen remembers, per file, the content the model last saw (read or wrote),
// as a hash. Edit tools use it to refuse a file that changed since, so that
// the model never edits from a stale picture. It is safe for concurrent use;
// one Seen serves one session.
type Seen struct {
	mu sync.Mutex
	m  map[string][32]byte
}

// NewSeen returns an empty Seen.
func NewSeen() *Seen { return &Seen{m: map[string][32]byte{}} }

// Record notes that the model has seen content as the file at path (an
// absolute, resolved path).
func (s *Seen) Record(path string, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[path] = sha256.Sum256(content)
}

// Forget drops what is known of path (the file was deleted).
func (s *Seen) Forget(path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, path)
}

// Check returns an error if the model saw path with other content than
// current. A file the model never saw passes: the edit itself must then
// match what is there.
func (s *Seen) Check(path string, current []byte) error {
	s.mu.Lock()
	h, ok := s.m[path]
	s.mu.Unlock()
	if ok && h != sha256.Sum256(current) {
		return fmt.Errorf("%s changed since you last read it: read it again, then edit", path)
	}
	return nil
}
