package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// BankLink banks the log at logPath as Bank does, but leaves the log where
// it is: the artifact is a hard link to it (a copy across filesystems). Until
// the caller removes the log, banking again finds it and banks the same
// artifact, so a caller that dies between banking and the row that
// references the artifact leaves the log for the next one, and needs no
// record of what it banked. Reconcile banks an orphan's logs this way.
//
// As with Bank, an identical artifact already in place is kept, an artifact
// of the same name but another size is replaced, and DeferSync leaves out
// the fsyncs (the caller syncs the filesystem before it relies on them).
func (s *Store) BankLink(logPath string, sum *Summary) (Summary, string, error) {
	return s.bank(logPath, sum, s.link)
}

// link puts a hard link to the log (and to its index) at target, unless
// target already holds the same content.
func (s *Store) link(logPath, target string, size int64) error {
	dir := filepath.Dir(target)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("create store directory: %w", err)
		}
	}
	// The index goes first, as in move: the log's link is what makes it
	// banked. A log shorter than one stride has none.
	if err := linkFile(logPath+IndexSuffix, target+IndexSuffix, nil); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	same := func() bool {
		fi, err := os.Lstat(target)
		return err == nil && fi.Mode().IsRegular() && fi.Size() == size
	}
	if err := linkFile(logPath, target, same); err != nil {
		return err
	}
	if s.DeferSync {
		return nil
	}
	return atomicfile.SyncDir(dir)
}

// linkFile makes dst a hard link to src. A dst that exists is kept when
// keep says so, else replaced through a temporary name renamed over it.
// Across filesystems dst becomes a fsynced copy. The error wraps
// os.ErrNotExist when src does not exist.
func linkFile(src, dst string, keep func() bool) error {
	err := os.Link(src, dst)
	if errors.Is(err, os.ErrExist) {
		if keep != nil && keep() {
			return nil // identical content is stored once
		}
		tmp := dst + ".link.tmp"
		if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("link: %w", err)
		}
		if err = os.Link(src, tmp); err == nil {
			if err = os.Rename(tmp, dst); err != nil {
				_ = os.Remove(tmp)
			}
		}
	}
	if errors.Is(err, syscall.EXDEV) {
		return copyFile(src, dst)
	}
	if err != nil {
		return fmt.Errorf("link: %w", err)
	}
	return nil
}

// copyFile copies src to a fsynced temporary file beside dst and renames it
// into place; src stays.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".tmp*")
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	_, err = io.Copy(tmp, in)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("copy %s across filesystems: %w", src, err)
	}
	return nil
}
