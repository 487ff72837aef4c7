//go:build !linux

package artifacts

import "syscall"

// syncFS syncs every filesystem where syncfs(2) does not exist.
func syncFS(string) error {
	syscall.Sync()
	return nil
}
