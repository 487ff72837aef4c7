// Package flock takes advisory whole-file locks (flock(2)) on lock files:
// the migration lock of the store, the reconcile lock of a home and the
// artifact store's lock. It is internal: a detail of how bgcmd processes
// that share one home take turns.
package flock

import (
	"fmt"
	"os"
	"syscall"
)

// Lock takes a lock on path, creating the file if needed: exclusive, or
// shared when exclusive is false. It blocks until the lock is granted and
// returns the function that releases it.
func Lock(path string, exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	if err := Fd(f, how); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// Fd takes the lock how (syscall.LOCK_SH or LOCK_EX, with LOCK_NB or not)
// on the open file f, as flock(2) does, made again when a signal
// interrupted it. The lock goes with f's last descriptor.
func Fd(f *os.File, how int) error {
	for {
		if err := syscall.Flock(int(f.Fd()), how); err != syscall.EINTR {
			return err
		}
	}
}
