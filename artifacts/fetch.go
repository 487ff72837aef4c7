package artifacts

import (
	"fmt"
	"io"
	"os"

	"github.com/bgcmd/bgcmd"
)

// fetchPrefix names the temporary files Fetch writes in the store's root;
// one left by a crash is garbage (gc removes it).
const fetchPrefix = ".fetch-"

// Fetch puts the content named sha in the store when it is not there yet:
// fill writes it to a temporary file in the store, which is then banked as
// Bank banks a log (fsynced, its index built, renamed into place). The
// bytes must hash to sha, or nothing is put at sha's place and the error
// wraps ErrCorrupt. It returns the artifact's path. A host that reads
// output banked on another host fetches it from the shared store this way
// once, and reads it like its own after.
func (s *Store) Fetch(sha string, fill func(io.Writer) error) (string, error) {
	if !bgcmd.ValidSHA256(sha) {
		return "", fmt.Errorf("fetch artifact: malformed sha256 %q", sha)
	}
	target := s.Path(sha)
	if fi, err := os.Stat(target); err == nil && fi.Mode().IsRegular() {
		return target, nil
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return "", fmt.Errorf("fetch artifact %s: %w", sha, err)
	}
	f, err := os.CreateTemp(s.Dir, fetchPrefix+"*")
	if err != nil {
		return "", fmt.Errorf("fetch artifact %s: %w", sha, err)
	}
	tmp := f.Name()
	defer func() {
		os.Remove(tmp)
		os.Remove(tmp + IndexSuffix)
	}()
	err = fill(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("fetch artifact %s: %w", sha, err)
	}
	// Bytes that hash to another name are banked under that name, never
	// under sha; no row names them, so gc removes them.
	got, _, err := s.Bank(tmp, nil)
	if err != nil {
		return "", fmt.Errorf("fetch artifact %s: %w", sha, err)
	}
	if got.SHA256 != sha {
		return "", fmt.Errorf("fetch artifact %s: the stored bytes hash to %s: %w", sha, got.SHA256, ErrCorrupt)
	}
	return target, nil
}
