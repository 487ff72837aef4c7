package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// EmptySHA256 is the hex sha256 of no bytes: the digest of a stream that
// printed nothing (its log may never have been created).
const EmptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Summary is what a stream's log amounts to: its size in bytes, characters
// and lines (as the package doc defines them), the hex sha256 of its bytes,
// and whether the capture's byte cap cut it short.
type Summary struct {
	Bytes  int64
	Chars  int64
	Lines  int64
	SHA256 string
	// Capped is true when the stream reached its byte cap and at least one
	// byte was dropped; the log then holds exactly the cap's bytes.
	Capped bool
}

// Summarize reads the file at path once, from its start, and returns its
// Summary (Capped is false: a file does not know whether it was capped).
func Summarize(path string) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("summarize: %w", err)
	}
	defer f.Close()
	sum, _, err := scanLog(f, defaultStride, true)
	if err != nil {
		return Summary{}, fmt.Errorf("summarize %s: %w", path, err)
	}
	return sum, nil
}

// scanLog reads r to its end, returning its Summary (with the sha256 when
// hash is set) and the encoded index checkpoints for stride.
func scanLog(r io.Reader, stride int64, hash bool) (Summary, []byte, error) {
	h := sha256.New()
	ix := newIndexer(stride)
	size := int64(256 << 10)
	if sr, ok := r.(interface{ Size() int64 }); ok {
		size = min(size, max(sr.Size(), 512)) // a small log, a small buffer
	}
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		if hash {
			h.Write(buf[:n])
		}
		ix.write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return Summary{}, nil, fmt.Errorf("read log: %w", err)
		}
	}
	sum := ix.summary()
	if hash {
		sum.SHA256 = hex.EncodeToString(h.Sum(nil))
	}
	return sum, ix.takeRecords(), nil
}
