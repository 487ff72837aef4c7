package artifacts

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"sync"
)

// A Capture that closes cleanly remembers, in this process, what it left:
// the log's identity and size, and the sha256 of every byte of the index it
// wrote. Bank, handed that capture's Summary for that log, then checks the
// index by reading it once (about 2 MiB per GiB of log) instead of reading
// the log's bytes before each of its checkpoints (one read per 16 KiB of
// log, some 0.1 s per GiB): an index byte for byte the one the capture
// computed from the very bytes it wrote is exactly right for the log, as
// long as the log is unchanged, which Bank assumes anyway when it takes a
// Summary's sha256 without re-hashing. Anything else (another process, a
// replaced or resized file, an index that differs in any byte) takes the
// full check.

// sealedLog is what a cleanly closed Capture left at one path.
type sealedLog struct {
	log     os.FileInfo // the log as Close left it (fsynced)
	sha256  string
	hasIdx  bool
	stride  int64
	idxSize int64
	idxSum  [sha256.Size]byte
}

// maxSealed bounds the remembered captures: a process that captures but
// never banks (or banks elsewhere) forgets the oldest.
const maxSealed = 1024

var sealed struct {
	mu    sync.Mutex
	byLog map[string]sealedLog
	order []string
}

// seal remembers what the capture of path left.
func seal(path string, s sealedLog) {
	sealed.mu.Lock()
	defer sealed.mu.Unlock()
	if sealed.byLog == nil {
		sealed.byLog = map[string]sealedLog{}
	}
	if _, ok := sealed.byLog[path]; !ok {
		sealed.order = append(sealed.order, path)
	}
	sealed.byLog[path] = s
	for len(sealed.order) > maxSealed {
		delete(sealed.byLog, sealed.order[0])
		sealed.order = sealed.order[1:]
	}
}

// unseal forgets path: it has been banked (moved or linked away).
func unseal(path string) {
	sealed.mu.Lock()
	defer sealed.mu.Unlock()
	if _, ok := sealed.byLog[path]; !ok {
		return
	}
	delete(sealed.byLog, path)
	for i, p := range sealed.order {
		if p == path {
			sealed.order = append(sealed.order[:i], sealed.order[i+1:]...)
			break
		}
	}
}

// sealedIndexMatches reports whether the log open as log (described by fi),
// with sum, is what a Capture of this process closed cleanly at logPath,
// and its index is byte for byte the one that capture wrote (or, for a log
// shorter than one stride, still absent). False means: check the long way.
func sealedIndexMatches(logPath string, log io.ReaderAt, fi os.FileInfo, sum *Summary) bool {
	sealed.mu.Lock()
	s, ok := sealed.byLog[logPath]
	sealed.mu.Unlock()
	if !ok || s.sha256 != sum.SHA256 || s.log.Size() != fi.Size() || !os.SameFile(s.log, fi) ||
		!s.log.ModTime().Equal(fi.ModTime()) {
		return false
	}
	idx, err := os.Open(logPath + IndexSuffix)
	if !s.hasIdx {
		if err == nil {
			idx.Close()
		}
		return errors.Is(err, os.ErrNotExist)
	}
	if err != nil {
		return false
	}
	defer idx.Close()
	h := sha256.New()
	if n, err := io.Copy(h, idx); err != nil || n != s.idxSize || !bytes.Equal(h.Sum(nil), s.idxSum[:]) {
		return false
	}
	// And the log still holds the bytes before its first and last
	// checkpoints, as the full check would see: a log rewritten within the
	// clock's granularity shows there when it was shifted or replaced.
	ix := newIndex(idx, s.stride, (s.idxSize-headerSize)/recordSize)
	for _, i := range []int64{0, ix.n - 1} {
		c, err := ix.record(i)
		if err != nil || verifyCheckpoint(log, c) != nil {
			return false
		}
	}
	return true
}
