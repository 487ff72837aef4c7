//go:build linux

package runner

import (
	"encoding/json"
	"os"
	"syscall"
	"time"

	"github.com/bgcmd/bgcmd/internal/atomicfile"
)

// digestsFile is the file in the home that keeps executables' sha256
// across processes (exeDigests): each `bgcmd run` is a process of its own,
// and would otherwise hash the whole tool it starts (a 15 MiB go binary,
// some 10 ms) at every start.
const digestsFile = "exe-digests.json"

// maxDigests bounds the entries digestsFile keeps, most recent first.
const maxDigests = 128

// digestEntry is one executable's sha256, for the version of the file its
// key names.
type digestEntry struct {
	Path   string `json:"path"`
	Dev    uint64 `json:"dev"`
	Ino    uint64 `json:"ino"`
	Size   int64  `json:"size"`
	Mtime  int64  `json:"mtime_ns"`
	Ctime  int64  `json:"ctime_ns"`
	SHA256 string `json:"sha256"`
}

func (e digestEntry) key() exeKey {
	return exeKey{path: e.Path, dev: e.Dev, ino: e.Ino, size: e.Size, mtime: e.Mtime, ctime: e.Ctime}
}

// exeDigests is the home's digest cache, digestsFile. A digest is served
// only for the exact version of the file it was computed from (exeKey: a
// rewritten, replaced or touched file has a new ctime, which cannot be set
// back), so the cache saves the reading, never changes the evidence. It is
// a cache: a file that is missing, unreadable or malformed is an empty
// one, and an update that fails is dropped. The home is private (0700),
// as the database beside it is.
type exeDigests struct {
	path string
	// racy is how recently changed a file may be and still have its
	// digest cached (settled).
	racy time.Duration
}

// racyWindow is the runner's exeDigests.racy.
const racyWindow = 2 * time.Second

// settled says whether key's file was last changed (its ctime) at least
// d.racy ago. A file's times move by the kernel's clock tick, which can be
// coarser than the time a rewrite takes: a file rewritten in place, to the
// same size, within the tick in which it was hashed, would keep its key,
// and be served the old digest. So a file changed just now is hashed
// again at every start until it has settled, as git re-reads its "racy"
// index entries.
func (d exeDigests) settled(key exeKey) bool {
	return time.Since(time.Unix(0, key.ctime)) >= d.racy
}

// lookup returns the digest recorded for key (none without a path).
func (d exeDigests) lookup(key exeKey) (string, bool) {
	if d.path == "" {
		return "", false
	}
	for _, e := range d.read() {
		if e.key() == key {
			return e.SHA256, true
		}
	}
	return "", false
}

// record adds the digest sum of key, first, replacing any entry for the
// same path, and keeps at most maxDigests (nothing without a path).
func (d exeDigests) record(key exeKey, sum string) {
	if d.path == "" {
		return
	}
	entries := []digestEntry{{Path: key.path, Dev: key.dev, Ino: key.ino, Size: key.size,
		Mtime: key.mtime, Ctime: key.ctime, SHA256: sum}}
	for _, e := range d.read() {
		if e.Path != key.path && len(entries) < maxDigests {
			entries = append(entries, e)
		}
	}
	// Replaced whole by a rename, so a reader sees the old list or the
	// new one; not fsynced: after a crash, a lost update is a later miss.
	if data, err := json.Marshal(entries); err == nil {
		_ = atomicfile.Replace(d.path, data)
	}
}

// read returns the entries of the file, none when it cannot be read. A
// symbolic link in its place is not followed.
func (d exeDigests) read() []digestEntry {
	f, err := os.OpenFile(d.path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil
	}
	defer f.Close()
	var entries []digestEntry
	if json.NewDecoder(f).Decode(&entries) != nil {
		return nil
	}
	return entries
}
