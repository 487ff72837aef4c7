// Package atomicfile writes small files so that a crash leaves either the
// old file or the whole new one: a temporary file beside the target,
// fsynced, renamed over it, then the directory fsynced. Exit records and
// output indexes are written this way; caches, whose lost update only
// makes them miss, the same way without the fsyncs (Replace).
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write replaces path with data atomically and durably. On error the
// temporary file is removed and the target is left as it was.
func Write(path string, data []byte) error {
	if err := replace(path, data, true); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// Replace replaces path with data atomically but not durably: a reader
// sees the old file or the whole new one, and after a crash either may be
// there, or the old one whole. It is for caches, which a lost update only
// makes miss. On error the temporary file is removed and the target is
// left as it was.
func Replace(path string, data []byte) error { return replace(path, data, false) }

// replace writes data to a temporary file beside path, fsyncs it when
// durable, and renames it over path.
func replace(path string, data []byte, durable bool) error {
	f, err := CreateTemp(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && durable {
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
	return nil
}

// CreateTemp creates a new temporary file beside path, for a write of path
// to end in a rename over it; IsTemp names it. The caller removes it when
// the write fails.
func CreateTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), tempPrefix(path)+"*")
}

// tempPrefix begins the name of every temporary file written for path;
// os.CreateTemp ends it with a random decimal number.
func tempPrefix(path string) string { return "." + filepath.Base(path) + ".tmp" }

// IsTemp says whether name, a file in path's directory, is a temporary
// file that Write or Replace made for path: one a crash between its write
// and its rename left behind, unless a write of path is in progress.
func IsTemp(path, name string) bool {
	rest, ok := strings.CutPrefix(name, tempPrefix(path))
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
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
