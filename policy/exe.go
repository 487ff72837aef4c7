package policy

import (
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

// resolveExe returns the absolute path that will run for the allowlisted
// name. An absolute name is returned as is, even when missing (the runner
// records that as a failed start); a relative name with a slash is joined to
// cwd, as the child would see it. A bare name is looked up on path, the PATH
// of the child's environment; relative PATH entries are skipped, since they
// would depend on the directory of whoever resolves them.
func resolveExe(name, cwd, path string, replaced bool) (string, *Refusal) {
	if filepath.IsAbs(name) {
		return name, nil
	}
	if strings.ContainsRune(name, '/') {
		return filepath.Join(cwd, name), nil
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		candidate := filepath.Join(dir, name)
		if isExecutable(candidate) {
			return candidate, nil
		}
	}
	hint := "install it, or make sure the PATH the child inherits contains its directory"
	if replaced {
		hint = "the environment is replaced, so set PATH in it to include the executable's directory (or install it there)"
	}
	// The PATH value is not named: environment values are never reported.
	return "", refuse(CodeNotFound, hint, nil,
		"executable %q is allowlisted but is not an executable file in any directory of the child's PATH", name)
}

// isExecutable reports whether path is a regular file (after symlinks) with
// an execute bit set.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
