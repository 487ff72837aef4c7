package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// resolveCwd returns the resolved root and cwd, or refuses the cwd. ""
// means the root; a relative cwd resolves against the root. Both the root and
// the cwd are resolved through the filesystem before they are compared, so a
// symlink inside the root that points out of it escapes, and a symlinked root
// contains its own target. Every cwd that does not resolve inside the root
// gets the same refusal, whatever is there: a refusal never tells whether a
// path outside the sandbox exists or where a symlink points.
func (p *Policy) resolveCwd(cwd string) (root, resolved string, r *Refusal) {
	root, err := resolveRoot(p.CwdRoot)
	if err != nil {
		return "", "", badPolicy(err)
	}
	if strings.IndexByte(cwd, 0) >= 0 {
		return "", "", refuse(CodeNulByte, "remove the NUL byte from the cwd", nil,
			"cwd %q contains a NUL byte", cwd)
	}
	path := cwd
	switch {
	case cwd == "":
		path = root
	case !filepath.IsAbs(cwd):
		// Not filepath.Join: ".." must be resolved after the symlinks before
		// it, as the kernel does, not cleaned away first.
		path = root + string(filepath.Separator) + cwd
	}
	// Resolved element by element, telling what it finds only inside the
	// root and at its ancestors: anywhere else a failure, or a ".." back
	// up, is an escape whatever is there, so a cwd that passes through such
	// a place ("/elsewhere/NAME/../../root", or a symlink whose target does)
	// tells nothing of what exists there (see walk).
	resolved, err = walk(path, func(p string) bool { return beneathOrAbove(p, root) }, false)
	switch {
	case errors.Is(err, errOutside):
		return "", "", escape(p.CwdRoot)
	case errors.Is(err, fs.ErrNotExist):
		return "", "", refuse(CodeBadCwd, "create it first, or pass an existing directory inside the sandbox root", err,
			"cwd %q does not exist", cwd)
	case err != nil:
		return "", "", refuse(CodeBadCwd, "pass an existing, accessible directory inside the sandbox root", err,
			"cwd %q cannot be resolved: %v", cwd, err)
	}
	if !within(resolved, root) { // walk's result is absolute and clean
		return "", "", escape(p.CwdRoot)
	}
	fi, err := os.Stat(resolved)
	switch {
	case err != nil:
		return "", "", refuse(CodeBadCwd, "pass an existing, accessible directory inside the sandbox root", err,
			"cwd %q cannot be used: %v", cwd, err)
	case !fi.IsDir():
		return "", "", refuse(CodeBadCwd, "pass a directory, not a file", nil,
			"cwd %q is not a directory", cwd)
	}
	return root, resolved, nil
}

// resolveRoot resolves the sandbox root through the filesystem and checks
// that it is a directory.
func resolveRoot(root string) (string, error) {
	resolved, err := filepath.EvalSymlinks(root)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &policyError{"cwd_root", root + " does not exist"}
	}
	if err != nil {
		return "", &policyError{"cwd_root", err.Error()}
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", &policyError{"cwd_root", err.Error()}
	}
	if !fi.IsDir() {
		return "", &policyError{"cwd_root", root + " is not a directory"}
	}
	return resolved, nil
}

// escapeMessage is the one message of every cwd refused as outside the
// sandbox root. It names neither the cwd's target nor whether it exists.
const escapeMessage = "the cwd is outside the sandbox root"

// escape refuses a cwd outside the sandbox with escapeMessage.
func escape(root string) *Refusal {
	return refuse(CodeCwdEscape, "pass a directory inside the sandbox root "+root+", or omit cwd to use the root",
		nil, "%s", escapeMessage)
}

// within reports whether the clean absolute path is root or below it. It
// compares whole path elements: /srv/checkout-evil is not within
// /srv/checkout.
func within(path, root string) bool {
	if root == string(filepath.Separator) {
		return filepath.IsAbs(path)
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}
