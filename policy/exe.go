package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// notAllowlisted refuses argv[0]. The message names only the requested
// executable, never the allowlist.
func notAllowlisted(name string) *Refusal {
	return refuse(CodeNotAllowlisted,
		"ask the operator to add the exact string "+strconv.Quote(name)+
			" to allowed_executables; matching is exact, with no basename or PATH equivalence",
		nil, "executable %q is not on the policy's allowlist", name)
}

// StandardPath is the search path for bare allowlisted names when
// Policy.Path is empty.
const StandardPath = "/usr/local/bin:/usr/bin:/bin"

// resolveExe returns the absolute path that will run for the allowlisted
// name. An absolute name is returned as is, even when missing (the runner
// records that as a failed start); a relative name with a slash is joined to
// cwd, as the child would see it. A bare name is looked up on search, the
// policy's own search path: never on a PATH the caller set or the host's.
func resolveExe(name, cwd, search string) (string, *Refusal) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	if strings.ContainsRune(name, '/') {
		return filepath.Join(cwd, name), nil
	}
	for _, dir := range filepath.SplitList(search) {
		candidate := filepath.Join(dir, name)
		if isExecutable(candidate) {
			return candidate, nil
		}
	}
	return "", refuse(CodeNotFound,
		"install it in a directory of the policy's search path, or ask the operator to add its directory to the policy's path (a PATH set in the environment does not choose the executable)",
		nil, "executable %q is allowlisted but is not an executable file in any directory of the policy's search path", name)
}

// checkSearchPath validates the policy's path: directories separated by
// ':', each absolute and free of NUL bytes.
func checkSearchPath(search string) error {
	for _, dir := range filepath.SplitList(search) {
		switch {
		case strings.IndexByte(dir, 0) >= 0:
			return fmt.Errorf("directory %q contains a NUL byte", dir)
		case !filepath.IsAbs(dir):
			return fmt.Errorf("directory %q is not absolute: every directory of the search path must be", dir)
		}
	}
	return nil
}

// isExecutable reports whether path is a regular file (after symlinks) with
// an execute bit set.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
