//go:build linux

package policy

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// checkCgroup says why dir cannot hold bgcmd's per-job cgroups: it must be
// an absolute directory of a cgroup v2 file system that this process may
// create cgroups in.
func checkCgroup(dir string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%q is not an absolute path", dir)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("%s: %v", dir, err)
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("%s is not on a cgroup v2 file system (cgroup2 is often mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified)", dir)
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		return fmt.Errorf("%s is not writable: delegate it to this user first", dir)
	}
	return nil
}
