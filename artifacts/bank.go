package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// Store is the content-addressed artifact store: a banked log lives at
// Dir/<sha[0:2]>/<sha>, named by the sha256 of its bytes, with its index
// beside it as <sha>+IndexSuffix. Identical content is stored once.
type Store struct {
	// Dir is the store's root, <home>/artifacts. It is created on demand.
	Dir string
	// DeferSync leaves out Bank's fsyncs of the log and of the
	// directories: a caller banking many logs at once makes them all
	// durable with one sync of the filesystem (SyncFS) before it relies on
	// them (before the settle that references them).
	DeferSync bool
}

// SyncFS makes everything written to the store's filesystem durable
// (syncfs): the one sync after banking many logs with DeferSync.
func (s *Store) SyncFS() error {
	return syncFS(s.Dir)
}

// Path returns where the artifact with this hex sha256 lives. It does not
// check that it exists (Verify does); a malformed sha256 gets a path in the
// store that no artifact has, never one built from the malformed text.
func (s *Store) Path(sha256 string) string {
	if !bgcmd.ValidSHA256(sha256) {
		// Never a path built from what a record says: a record edited to
		// hold "../../etc/passwd" names a file that cannot exist.
		return filepath.Join(s.Dir, "malformed-sha256")
	}
	return filepath.Join(s.Dir, sha256[:2], sha256)
}

// ValidSHA256 reports whether s is a well-formed artifact name (see
// bgcmd.ValidSHA256).
func ValidSHA256(s string) bool { return bgcmd.ValidSHA256(s) }

// Bank moves the settled log at logPath into the store and returns its
// Summary and artifact path.
//
// sum is the capture's Summary; nil means compute it by scanning the log
// (for an orphaned job whose writer died). The log is the truth: when sum's
// size disagrees with the file, or its index is missing or does not match,
// the log is scanned and what it holds is banked (sum's Capped is kept).
//
// The log is fsynced, its index (rebuilt if needed) is renamed to
// <sha>+IndexSuffix and the log to <sha>, then the directory is fsynced.
// When the artifact already exists with the same size, the log and its index
// are dropped instead: identical content is stored once. An artifact of the
// same name but another size is corrupt and is replaced. Within one
// filesystem Bank only renames; across filesystems it copies (to a
// temporary file, fsynced, renamed into place) and removes the log.
//
// Banking again after a success finds the log gone and the artifact in
// place, and returns it (this needs sum, to know which artifact).
func (s *Store) Bank(logPath string, sum *Summary) (Summary, string, error) {
	return s.bank(logPath, sum, s.move)
}

// bank is Bank and BankLink: place puts the settled log at its artifact's
// path (a move, or a hard link that leaves the log where it is).
func (s *Store) bank(logPath string, sum *Summary, place func(logPath, target string, size int64) error) (Summary, string, error) {
	if s.Dir == "" {
		return Summary{}, "", errors.New("bank: store has no directory")
	}
	got, err := s.settle(logPath, sum)
	if errors.Is(err, os.ErrNotExist) && sum != nil && bgcmd.ValidSHA256(sum.SHA256) {
		// Banked before by a move: the log is gone and the artifact is in
		// place.
		if fi, serr := os.Stat(s.Path(sum.SHA256)); serr == nil && fi.Size() == sum.Bytes {
			return *sum, s.Path(sum.SHA256), nil
		}
	}
	if errors.Is(err, os.ErrNotExist) && sum != nil && sum.Bytes == 0 {
		// A stream that stayed empty never created its log.
		return s.bankEmpty(sum.Capped)
	}
	if err != nil {
		return Summary{}, "", fmt.Errorf("bank %s: %w", logPath, err)
	}
	target := s.Path(got.SHA256)
	if err := place(logPath, target, got.Bytes); err != nil {
		return Summary{}, "", fmt.Errorf("bank %s: %w", logPath, err)
	}
	unseal(logPath)
	return got, target, nil
}

// settle makes the log durable and its index right, and returns what it
// holds.
func (s *Store) settle(logPath string, sum *Summary) (Summary, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Summary{}, err
	}
	idxPath := logPath + IndexSuffix
	var got Summary
	trusted := sum != nil && sum.Bytes == fi.Size() && bgcmd.ValidSHA256(sum.SHA256)
	if trusted && sealedIndexMatches(logPath, f, fi, sum) {
		// Closed, fsynced, by a capture of this process: its index is the
		// one it wrote.
		return *sum, nil
	}
	if trusted && indexMatches(idxPath, f, fi.Size()) {
		got = *sum
	} else {
		var recs []byte
		got, recs, err = scanLog(io.NewSectionReader(f, 0, fi.Size()), defaultStride, true)
		if err != nil {
			return Summary{}, err
		}
		if sum != nil {
			got.Capped = sum.Capped
		}
		if len(recs) == 0 {
			// Shorter than one stride: readers scan it, no index needed.
			if err := os.Remove(idxPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return Summary{}, err
			}
		} else if err := writeIndexFile(idxPath, defaultStride, recs); err != nil {
			return Summary{}, err
		}
	}
	if s.DeferSync {
		return got, nil
	}
	if err := f.Sync(); err != nil {
		return Summary{}, fmt.Errorf("sync log: %w", err)
	}
	return got, nil
}

// indexMatches reports whether the index at path fits a final log of size
// bytes: its header, its record count, and every record's range, order and
// the log bytes before it.
func indexMatches(path string, log io.ReaderAt, size int64) bool {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && size < defaultStride {
		return true // a log shorter than one stride has no index
	}
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	ix, err := loadIndex(f, fi.Size(), size, true)
	if err != nil {
		return false
	}
	return ix.checkAll(log) == nil
}

// move puts the log and its index at target, or drops them when target
// already holds the same content.
func (s *Store) move(logPath, target string, size int64) error {
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create store directory: %w", err)
	}
	// The index goes first: the log's rename is what makes it banked. A log
	// shorter than one stride has none.
	if _, err := os.Stat(logPath + IndexSuffix); err == nil {
		if err := moveFile(logPath+IndexSuffix, target+IndexSuffix); err != nil {
			return err
		}
	}
	if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() && fi.Size() == size {
		if err := os.Remove(logPath); err != nil {
			return fmt.Errorf("drop duplicate log: %w", err)
		}
	} else if err := moveFile(logPath, target); err != nil {
		return err
	}
	if s.DeferSync {
		return nil
	}
	if err := atomicfile.SyncDir(dir); err != nil {
		return err
	}
	return atomicfile.SyncDir(filepath.Dir(logPath))
}

// moveFile renames src to dst, or, across filesystems, copies it to a
// fsynced temporary file beside dst, renames that into place and removes
// src.
func moveFile(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil || !errors.Is(err, syscall.EXDEV) {
		if err != nil {
			return fmt.Errorf("move: %w", err)
		}
		return nil
	}
	if err := copyFile(src, dst); err != nil {
		return err
	}
	if err := os.Remove(src); err != nil {
		return fmt.Errorf("move: %w", err)
	}
	return nil
}

// Verify re-hashes the artifact named sha256. It returns nil when the
// content still hashes to its name, an error wrapping ErrCorrupt (naming
// the file and both hashes) when it does not, an error wrapping
// os.ErrNotExist (naming the file) when it is missing, and an error for a
// malformed sha256.
func (s *Store) Verify(sha256 string) error {
	if !bgcmd.ValidSHA256(sha256) {
		return fmt.Errorf("verify artifact: malformed sha256 %q", sha256)
	}
	path := s.Path(sha256)
	got, err := hashFile(path)
	if err != nil {
		return fmt.Errorf("verify artifact: %w", err)
	}
	if got != sha256 {
		return fmt.Errorf("verify artifact %s: %w: content hashes to %s", path, ErrCorrupt, got)
	}
	return nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// bankEmpty banks the empty stream: one empty artifact file shared by every
// job stream that printed nothing.
func (s *Store) bankEmpty(capped bool) (Summary, string, error) {
	target := s.Path(EmptySHA256)
	if _, err := os.Stat(target); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(target), 0o700); err != nil {
			return Summary{}, "", fmt.Errorf("bank empty stream: %w", err)
		}
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE, 0o600)
		if err != nil {
			return Summary{}, "", fmt.Errorf("bank empty stream: %w", err)
		}
		if err := f.Close(); err != nil {
			return Summary{}, "", fmt.Errorf("bank empty stream: %w", err)
		}
		if err := atomicfile.SyncDir(filepath.Dir(target)); err != nil {
			return Summary{}, "", err
		}
	}
	return Summary{SHA256: EmptySHA256, Capped: capped}, target, nil
}
