package artifacts

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd/internal/flock"
)

// LockName is the lock file in the artifact store that keeps deleting
// artifact files (prune, gc) apart from banking or fetching them. A
// supervisor holds it shared from banking its output until the row that
// references it is committed, and a reader fetching another host's output
// holds it shared while the file is put in place; prune and gc hold it
// exclusively while they re-check references and delete. Without it, a job
// whose identical output was just deduplicated against an existing file
// could see prune delete that file before its row was written.
const LockName = ".lock"

// Lock takes the store's lock (LockName), shared or exclusive, creating the
// store's directory if needed, and returns the function that releases it.
func (s *Store) Lock(exclusive bool) (unlock func(), err error) {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock artifacts: %w", err)
	}
	return flock.Lock(filepath.Join(s.Dir, LockName), exclusive)
}
