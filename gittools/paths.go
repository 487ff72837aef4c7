package gittools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds the symlinks followed while resolving one path, as the
// kernel's ELOOP does.
const maxSymlinks = 40

// errLoop is returned by resolve for a path with too many symlinks.
var errLoop = errors.New("too many levels of symbolic links")

// path checks a path value and returns it relative to root ("." for the root
// itself). The path, absolute or relative to root, is resolved with every
// symlink followed; a part that does not exist in the work tree (a file
// deleted in history) is taken as written below its deepest existing
// ancestor. The result must be root or inside it, and not inside .git.
func (c checker) path(root, field, v string) (string, *ArgError) {
	if err := c.value(field, v, maxPathLen); err != nil {
		if strings.HasPrefix(v, "-") {
			err.Hint = "write a path beginning with '-' as ./" + v
		}
		return "", err
	}
	hint := "pass a path inside the repository, relative to its root"
	if v == "" {
		return "", c.refuse(field, v, "is empty", hint)
	}
	abs := v
	if !filepath.IsAbs(v) {
		abs = root + string(filepath.Separator) + v
	}
	resolved, err := resolve(abs)
	if err != nil {
		return "", &ArgError{Tool: c.tool, Field: field, Value: v, Err: err,
			Reason: fmt.Sprintf("cannot be resolved: %v", err), Hint: hint}
	}
	if !within(resolved, root) {
		return "", c.refuse(field, v, "resolves outside the repository (symlinks followed)", hint)
	}
	if _, err := os.Lstat(resolved); err != nil && hasShellOrControl(v, revForbidden) {
		// A file of that name would be taken as it is; a name that does
		// not exist is far likelier an injection attempt than a file
		// deleted in history.
		return "", c.refuse(field, v, "does not exist in the work tree and contains shell syntax or a control character",
			"pass the path of a file or directory; no shell runs, so quoting and ';' are not needed")
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || !(rel == "." || filepath.IsLocal(rel)) {
		return "", c.refuse(field, v, "resolves outside the repository", hint)
	}
	if rel == ".git" || strings.HasPrefix(rel, ".git"+string(filepath.Separator)) {
		return "", c.refuse(field, v, "is inside .git, which holds no tracked files", hint)
	}
	return filepath.ToSlash(rel), nil
}

// resolve returns the absolute path abs names with every symlink resolved,
// as the kernel walks it: ".." applies to the directory reached so far, after
// the symlinks before it. Components that do not exist are kept as written
// (a later ".." steps back out of them); only errors other than "does not
// exist" and "not a directory" are returned, and a symlink loop.
func resolve(abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("%q is not absolute", abs)
	}
	sep := string(filepath.Separator)
	resolved := sep
	rest := strings.Split(abs, sep)
	links := 0
	for len(rest) > 0 {
		comp := rest[0]
		rest = rest[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, comp)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			resolved = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		if links++; links > maxSymlinks {
			return "", errLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = sep
		}
		rest = append(strings.Split(target, sep), rest...)
	}
	return resolved, nil
}

// within reports whether the clean absolute path is root or below it,
// comparing whole path elements.
func within(path, root string) bool {
	if root == string(filepath.Separator) {
		return filepath.IsAbs(path)
	}
	return path == root || strings.HasPrefix(path, root+string(filepath.Separator))
}

// literal makes a relative path a pathspec that matches exactly that path:
// no glob characters, no magic of its own.
func literal(rel string) string { return ":(literal)" + rel }

// globEscape escapes the characters a :(glob) pathspec treats specially, so
// a literal path can prefix a pattern.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
