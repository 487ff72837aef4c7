//go:build linux

package runner

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInheritedOnExec marks every descriptor from 3 up close-on-exec, so
// that a child started afterwards gets exactly the descriptors its exec.Cmd
// names (0, 1 and 2 for a job). Go opens its own descriptors close-on-exec;
// this reaches the ones a process inherited or a library opened without it.
// It uses close_range(2) and, on a kernel without CLOSE_RANGE_CLOEXEC, walks
// /proc/self/fd.
func closeInheritedOnExec() error {
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err == nil {
		return nil
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd < 3 {
			continue
		}
		// The directory's own descriptor is gone by now: EBADF is fine.
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil && err != unix.EBADF {
			return err
		}
	}
	return nil
}
