//go:build !linux

package artifacts

import "os"

// openFile opens path for reading (os.Open).
func openFile(path string) (*os.File, error) { return os.Open(path) }
