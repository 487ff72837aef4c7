//go:build linux

package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"sync"
	"syscall"
)

// maxExeHashCache bounds the executable hash cache; past it the cache starts
// over.
const maxExeHashCache = 512

// exeKey identifies one version of a file: a replaced, rewritten or touched
// executable gets a new key (ctime changes on every write and cannot be
// set back), so a cached hash is never served for other bytes.
type exeKey struct {
	path         string
	dev, ino     uint64
	size         int64
	mtime, ctime int64
}

// exeHashes caches executables' sha256 in this process by exeKey.
var exeHashes = struct {
	sync.Mutex
	m map[exeKey]string
}{m: map[exeKey]string{}}

// hashExecutable returns the hex sha256 of the file at path (the executable
// as the policy resolved it), or "" when it cannot be read (an
// execute-only binary, say): the hash is evidence, never a gate. It is
// cached by (path, device, inode, size, mtime, ctime), checked on the open
// file, in this process and in the home's digest cache (disk), so the
// common start of the same tool costs one open and one fstat, and a new
// process (every `bgcmd run`) one small read more. A file changed within
// disk's racy window is hashed at every start (see exeDigests.settled).
func hashExecutable(path string, disk exeDigests) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	key, ok := fileKey(f, path)
	if !ok {
		return ""
	}
	exeHashes.Lock()
	sum, hit := exeHashes.m[key]
	exeHashes.Unlock()
	if hit {
		return sum
	}
	if sum, hit = disk.lookup(key); hit {
		remember(key, sum)
		return sum
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	sum = hex.EncodeToString(h.Sum(nil))
	if after, ok := fileKey(f, path); !ok || after != key || !disk.settled(key) {
		return sum // written while hashed, or just now: right for these bytes, not cached
	}
	remember(key, sum)
	disk.record(key, sum)
	return sum
}

// remember caches sum for key in this process.
func remember(key exeKey, sum string) {
	exeHashes.Lock()
	defer exeHashes.Unlock()
	if len(exeHashes.m) >= maxExeHashCache {
		exeHashes.m = map[exeKey]string{}
	}
	exeHashes.m[key] = sum
}

// fileKey is the open file's identity and version; ok is false for
// anything but a regular file.
func fileKey(f *os.File, path string) (exeKey, bool) {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return exeKey{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return exeKey{}, false
	}
	return exeKey{path: path, dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: fi.ModTime().UnixNano(), ctime: int64(st.Ctim.Sec)*1e9 + int64(st.Ctim.Nsec)}, true
}
