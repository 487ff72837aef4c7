//go:build linux

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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

// checkController says why the cgroup dir cannot limit its child cgroups
// with controller (memory, pids): the controller must be listed in its
// cgroup.controllers, that is enabled in its parent's cgroup.subtree_control.
func checkController(dir, controller string) error {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("read the controllers of cgroup %s: %v", dir, err)
	}
	have := strings.Fields(string(b))
	if slices.Contains(have, controller) {
		return nil
	}
	listed := "none"
	if len(have) > 0 {
		listed = strings.Join(have, " ")
	}
	return fmt.Errorf("the %s controller is not available in cgroup %s (its cgroup.controllers lists: %s): enable it in the parent's cgroup.subtree_control (+%s); a controller still bound to a cgroup v1 hierarchy is never available in cgroup v2",
		controller, dir, listed, controller)
}
