//go:build linux

package artifacts

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing [off, off+n) of f to
// disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE): the
// log streams to disk while the command runs, and the fsync at Close has
// only the tail left to flush. Errors are ignored; the fsync reports them.
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
