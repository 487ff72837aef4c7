//go:build linux

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// dirFlags open a directory as a handle only: no read permission needed,
// not inherited across exec.
const dirFlags = unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC

// openCwd opens the resolved cwd as a directory handle, beneath the
// resolved root and without following any symlink, so that the directory
// the child starts in is the one that was checked: a directory of the path
// swapped for a symlink since the check makes the open fail (and the start
// be refused) instead of leading out of the sandbox.
func (p *Policy) openCwd(root, resolved string) (*os.File, *Refusal) {
	rootFD, err := unix.Open(root, dirFlags, 0)
	if err != nil {
		return nil, badPolicy(&policyError{keyCwdRoot, "open " + root + ": " + err.Error()})
	}
	rel, err := filepath.Rel(root, resolved)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		unix.Close(rootFD)
		return nil, escape(p.CwdRoot)
	}
	if rel == "." {
		return os.NewFile(uintptr(rootFD), resolved), nil
	}
	fd, err := openBeneath(rootFD, rel)
	unix.Close(rootFD)
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), resolved), nil
	case errors.Is(err, unix.ENOENT):
		return nil, refuse(CodeBadCwd, "create it first, or pass an existing directory inside the sandbox root", err,
			"the cwd was removed while it was checked")
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV), errors.Is(err, unix.ENOTDIR):
		// A directory of the path became a symlink (or something else)
		// after it was resolved: wherever it leads now, it is not the
		// directory that was checked.
		return nil, escape(p.CwdRoot)
	}
	return nil, refuse(CodeBadCwd, "pass an existing, accessible directory inside the sandbox root", err,
		"the cwd cannot be opened: %v", err)
}

// openBeneath opens the relative, clean, symlink-free path rel beneath the
// directory rootFD, refusing every symlink and any step out of rootFD. It
// uses openat2 and, on a kernel without it, an openat walk one component at
// a time.
func openBeneath(rootFD int, rel string) (int, error) {
	fd, err := unix.Openat2(rootFD, rel, &unix.OpenHow{
		Flags:   dirFlags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if !errors.Is(err, unix.ENOSYS) {
		return fd, err
	}
	return openWalk(rootFD, rel)
}

// openWalk opens rel beneath rootFD one component at a time with
// O_NOFOLLOW, so no component may be a symlink; rel is clean, so it holds
// no "..".
func openWalk(rootFD int, rel string) (int, error) {
	dir, err := unix.Dup(rootFD)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." || name == ".." {
			unix.Close(dir)
			return -1, unix.EXDEV
		}
		next, err := unix.Openat(dir, name, dirFlags|unix.O_NOFOLLOW, 0)
		unix.Close(dir)
		if err != nil {
			return -1, err
		}
		dir = next
	}
	return dir, nil
}
