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

// dropWritten lets the kernel free the page cache of [off, off+n) of f,
// a range whose writeback started earlier (POSIX_FADV_DONTNEED): the pages
// already written back go at once, and those still dirty or being written
// stay, so that the call never waits for the disk. Errors are ignored: the
// pages then stay cached, which costs only memory.
func dropWritten(f *os.File, off, n int64) {
	if n > 0 {
		_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
	}
}
