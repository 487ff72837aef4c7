package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// notAllowlisted refuses argv[0]. The message names only the requested
// executable; the hint names an allowlisted spelling of the same program
// when there is one (the same file through a symlinked directory such as
// /bin, or the same name in another directory), which the caller may run
// anyway.
func notAllowlisted(name string, allowed []string, search string) *Refusal {
	hint := "ask the operator to add the exact string " + strconv.Quote(name) +
		" to allowed_executables; matching is exact, with no basename or PATH equivalence"
	if alt := allowedSpelling(name, allowed, search); alt != "" {
		hint = fmt.Sprintf("did you mean %q? It is allowed: pass exactly that as argv[0]; otherwise ", alt) + hint
	}
	return refuse(CodeNotAllowlisted, hint, nil, "executable %q is not on the policy's allowlist", name)
}

// allowedSpelling returns the allowlist entry that names the same program
// as name: the same file once symlinks are resolved (/bin/sh for
// /usr/bin/sh), else, between a bare name and an absolute path, the same
// base name (sh for /usr/bin/sh). Two absolute paths to different files are
// different programs. It returns "" when there is none, or more than one
// with the same base name (a guess would mislead), and for a name that is
// not a clean path: one with ".." in it would be resolved through
// directories anywhere, and whether a hint came would tell whether they
// exist.
func allowedSpelling(name string, allowed []string, search string) string {
	if name == "" || strings.IndexByte(name, 0) >= 0 || filepath.Clean(name) != name {
		return ""
	}
	target := realExe(name, search)
	var sameBase []string
	for _, e := range allowed {
		if target != "" && realExe(e, search) == target {
			return e
		}
		if filepath.IsAbs(e) != filepath.IsAbs(name) && filepath.Base(e) == filepath.Base(name) {
			sameBase = append(sameBase, e)
		}
	}
	if len(sameBase) == 1 {
		return sameBase[0]
	}
	return ""
}

// realExe is the file name runs as, with every symlink resolved, or "":
// a bare name is looked up on search; a relative path with a slash is not
// resolved (it depends on the cwd).
func realExe(name, search string) string {
	path := name
	if !filepath.IsAbs(name) {
		if strings.ContainsRune(name, '/') {
			return ""
		}
		var r *Refusal
		if path, r = resolveExe(name, "/", search); r != nil {
			return ""
		}
	}
	// The caller's name: a symlink whose target holds ".." would take
	// the walk through directories anywhere (a link in the sandbox to
	// "/elsewhere/NAME/../../usr/bin/env"), and whether a hint came would
	// tell whether they exist.
	real, err := walk(path, func(string) bool { return true }, true)
	if err != nil || !isExecutable(real) {
		return ""
	}
	return real
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
