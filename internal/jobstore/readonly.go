package jobstore

import "context"

// OpenReadOnly opens the existing database at path for reading only: the
// connections are opened with SQLite's mode=ro, so SQLite itself refuses
// every write whatever runs on them, and nothing is migrated or created.
// It fails, naming the path, when the file does not exist (no bgcmd command
// has written there yet) or is not a bgcmd database.
func OpenReadOnly(ctx context.Context, path string) (*Store, error) {
	return Open(ctx, Options{Path: path, ReadOnly: true})
}

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.readOnly }
