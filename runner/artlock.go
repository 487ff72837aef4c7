package runner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/flock"
)

// artifactsLockName is the lock file in the artifact store that keeps
// deleting artifact files (prune, gc) apart from banking them. A supervisor
// holds it shared from banking its output until the row that references it
// is committed; prune and gc hold it exclusively while they re-check
// references and delete. Without it, a job whose identical output was just
// deduplicated against an existing file could see prune delete that file
// before its row was written.
const artifactsLockName = ".lock"

// lockArtifacts takes the artifact store's lock, shared or exclusive, and
// returns the function that releases it.
func lockArtifacts(store *artifacts.Store, exclusive bool) (func(), error) {
	if err := os.MkdirAll(store.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("lock artifacts: %w", err)
	}
	return flock.Lock(filepath.Join(store.Dir, artifactsLockName), exclusive)
}
