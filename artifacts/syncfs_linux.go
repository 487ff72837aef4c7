//go:build linux

package artifacts

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// syncFS syncs the filesystem that holds dir (syncfs(2)).
func syncFS(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync filesystem of %s: %w", dir, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err != nil {
		return fmt.Errorf("sync filesystem of %s: %w", dir, err)
	}
	return nil
}
