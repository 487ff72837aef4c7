package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bgcmd/bgcmd/artifacts"
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
	path := filepath.Join(store.Dir, artifactsLockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock artifacts: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err = syscall.Flock(int(f.Fd()), how)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
