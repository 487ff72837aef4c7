package flock_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/flock"
)

func TestAnExclusiveLockWaitsForSharedHolders(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.lock")
	r1, err := flock.Lock(path, false)
	require.NoError(t, err)
	r2, err := flock.Lock(path, false)
	require.NoError(t, err, "shared locks coexist")

	got := make(chan struct{})
	go func() {
		unlock, err := flock.Lock(path, true)
		if err == nil {
			close(got)
			unlock()
		}
	}()
	select {
	case <-got:
		t.Fatal("an exclusive lock was granted beside shared ones")
	case <-time.After(50 * time.Millisecond): // nothing to wait for: proving absence
	}
	r1()
	r2()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the exclusive lock was not granted once the shared ones were released")
	}
}

func TestLockFailsClearlyWhenTheFileCannotBeCreated(t *testing.T) {
	t.Parallel()
	_, err := flock.Lock(filepath.Join(t.TempDir(), "missing", "x.lock"), true)
	require.ErrorContains(t, err, "x.lock")
}
