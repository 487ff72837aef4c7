//go:build !linux

package artifacts

import "os"

// startWriteback does nothing where sync_file_range does not exist: the
// fsync at Close writes everything.
func startWriteback(*os.File, int64, int64) {}

// dropWritten does nothing where posix_fadvise is not used: the pages stay
// cached until the kernel needs them.
func dropWritten(*os.File, int64, int64) {}
