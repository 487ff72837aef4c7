package runner

import "github.com/bgcmd/bgcmd/artifacts"

// artifactsLockName is the artifact store's lock file (artifacts.LockName).
const artifactsLockName = artifacts.LockName

// lockArtifacts takes the artifact store's lock, shared or exclusive, and
// returns the function that releases it (artifacts.Store.Lock).
func lockArtifacts(store *artifacts.Store, exclusive bool) (func(), error) {
	return store.Lock(exclusive)
}
