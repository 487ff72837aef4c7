package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// errOutside says a walk failed, or went back up, where what it found
// must not be told: every such outcome is this one error.
var errOutside = errors.New("the path leads through a place whose contents are not told")

// maxLinks bounds the symlinks one walk follows, as the kernel's 40 does.
const maxLinks = 40

// walk resolves the absolute path name element by element, as the kernel
// would: each symlink is read and its target resolved in its place, and
// ".." goes up from the directory resolved so far. Unlike
// filepath.EvalSymlinks, it keeps apart what told tells and what it does
// not: at a path told does not allow, a missing name, a file where a
// directory is needed, a loop or a ".." going back up all end the walk with
// the same errOutside. So a path that goes through such a place and comes
// back ("/elsewhere/NAME/../../root") tells nothing of whether NAME is
// there, while a symlink there that leads on (a link to the sandbox) is
// still followed. With plainLinks, a symlink whose target holds a ".."
// ends the walk with errOutside too. Other errors name a path told allows.
func walk(name string, told func(string) bool, plainLinks bool) (string, error) {
	if !filepath.IsAbs(name) {
		return "", &fs.PathError{Op: "resolve", Path: name, Err: errors.New("not an absolute path")}
	}
	fail := func(at string, err error) error {
		if !told(at) {
			return errOutside
		}
		return err
	}
	cur, rest, links := string(filepath.Separator), name, 0
	for rest != "" {
		var elem string
		elem, rest, _ = strings.Cut(strings.TrimLeft(rest, "/"), "/")
		switch elem {
		case "", ".":
			continue
		case "..":
			if !told(cur) {
				return "", errOutside
			}
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, elem)
		fi, err := os.Lstat(next)
		if err != nil {
			return "", fail(next, err)
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if links++; links > maxLinks {
				return "", fail(next, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ELOOP})
			}
			target, err := os.Readlink(next)
			if err != nil {
				return "", fail(next, err)
			}
			if plainLinks && hasDotDot(target) {
				return "", errOutside
			}
			if filepath.IsAbs(target) {
				cur = string(filepath.Separator)
			}
			rest = target + "/" + rest
		case !fi.IsDir() && strings.Trim(rest, "/.") != "":
			return "", fail(next, &fs.PathError{Op: "resolve", Path: next, Err: syscall.ENOTDIR})
		default:
			cur = next
		}
	}
	return cur, nil
}

// hasDotDot reports whether the path has a ".." element.
func hasDotDot(p string) bool {
	for _, e := range strings.Split(p, "/") {
		if e == ".." {
			return true
		}
	}
	return false
}

// beneathOrAbove reports whether the clean absolute path is root, below it
// or one of root's own ancestors: where resolving a cwd may tell what it
// found.
func beneathOrAbove(path, root string) bool {
	return within(path, root) || within(root, path)
}
