package session

import "fmt"

// Describe says, for a person, where a store keeps its sessions: "SQLite
// /home/me/.local/share/hearth/hearth.db", or "PostgreSQL database
// "hearth" on db:5432 (shared)".
func Describe(s Store) string {
	switch st := s.(type) {
	case *SQLite:
		return "SQLite " + st.Path()
	case *Postgres:
		return "PostgreSQL " + st.name + " (shared)"
	case nil:
		return "none"
	}
	return fmt.Sprintf("%T", s)
}
