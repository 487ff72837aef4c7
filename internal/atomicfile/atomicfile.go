// Package atomicfile writes small files so that a crash leaves either the
// old file or the whole new one: a temporary file beside the target,
// fsynced, renamed over it, then the directory fsynced. Exit records and
// output indexes are written this way.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with data atomically and durably. On error the
// temporary file is removed and the target is left as it was.
func Write(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making the names created, renamed or removed
// in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return nil
}
