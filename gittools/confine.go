package gittools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
)

// Bounds of the repository files confine reads itself.
const (
	// maxPointerFile bounds a .git file or a commondir file.
	maxPointerFile = 4 << 10
	// maxAlternatesFile bounds an objects/info/alternates file.
	maxAlternatesFile = 64 << 10
	// maxAlternateDepth is git's own limit on alternates of alternates.
	maxAlternateDepth = 5
	// maxIncludeDepth is git's own limit on nested configuration includes.
	maxIncludeDepth = 10
)

// WorkTreeOf returns the nearest directory at or above dir that holds a
// .git entry (a directory, a file or a symlink), without running git and
// without reading the entry. It is a candidate top level: New checks it.
// It fails with an error wrapping ErrNotRepository when no ancestor has one.
func WorkTreeOf(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find the work tree of %s: %w", dir, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("find the work tree of %s: %w", dir, err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("find the work tree of %s: %w", dir, err)
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("%w: neither %s nor any directory above it holds .git", ErrNotRepository, abs)
		}
	}
}

// confine checks that nothing in the repository's own files points git
// outside the root; see confineRoot.
func (t *Toolset) confine(ctx context.Context) error {
	return confineRoot(ctx, t.gitPath, t.root)
}

// confineRoot checks that git, run in root, would read nothing outside root
// through the repository's own pointers: the .git entry (a symlink, or a
// file's gitdir), the git directory's commondir, every symlink inside the
// git directories, every objects/info/alternates entry (and theirs), and
// every include.path and includeIf.*.path of the repository's
// configuration files (and of the files they include). The first pointer
// found outside is an *OutsideError. Git itself is run only on files already
// checked, to list their include keys, never following the includes.
//
// What the command line can switch off (the mailmap file, the work tree,
// attributes, hooks) is switched off by globalArgs and baseEnv instead.
func confineRoot(ctx context.Context, gitPath, root string) error {
	gitDir, err := gitDirOf(root)
	if err != nil {
		return err
	}
	commonDir, err := commonDirOf(root, gitDir)
	if err != nil {
		return err
	}
	if err := noSymlinkOut(root, gitDir); err != nil {
		return err
	}
	if commonDir != gitDir && !within(commonDir, gitDir) {
		if err := noSymlinkOut(root, commonDir); err != nil {
			return err
		}
	}
	if err := alternatesIn(root, filepath.Join(commonDir, "objects"), 0); err != nil {
		return err
	}
	for _, cfg := range []string{filepath.Join(commonDir, "config"), filepath.Join(gitDir, "config.worktree")} {
		if err := includesIn(ctx, gitPath, root, cfg, 0); err != nil {
			return err
		}
	}
	return nil
}

// gitDirOf returns the git directory of the work tree root, with symlinks
// resolved: root/.git itself, or where its symlink or its "gitdir:" line
// points, which must be inside root.
func gitDirOf(root string) (string, error) {
	dotGit := filepath.Join(root, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrNotRepository, root, err)
	}
	path := dotGit
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, _ := os.Readlink(dotGit)
		if path, err = inside(root, dotGit, "symlink", target, root); err != nil {
			return "", err
		}
		if fi, err = os.Stat(path); err != nil {
			return "", fmt.Errorf("%w: %s: %v", ErrNotRepository, dotGit, err)
		}
	}
	switch {
	case fi.IsDir():
		return path, nil
	case !fi.Mode().IsRegular():
		return "", fmt.Errorf("%w: %s is neither a directory nor a file", ErrNotRepository, dotGit)
	}
	b, err := readBounded(path, maxPointerFile)
	if err != nil {
		return "", fmt.Errorf("%w: read %s: %v", ErrNotRepository, dotGit, err)
	}
	// Read as git reads it: all that follows "gitdir: ", less trailing
	// line ends. A line break or NUL inside would be part of the path git
	// follows (a directory "x\n", then ".." out), not where a first-line
	// check looks: refused as leading outside.
	target, ok := strings.CutPrefix(strings.TrimRight(string(b), "\r\n"), "gitdir: ")
	if !ok || target == "" {
		return "", fmt.Errorf("%w: %s is a file without a \"gitdir: \" line", ErrNotRepository, dotGit)
	}
	if strings.ContainsAny(target, "\r\n\x00") {
		return "", &OutsideError{File: dotGit, What: "gitdir", Target: target}
	}
	return inside(root, dotGit, "gitdir", target, filepath.Dir(path))
}

// commonDirOf returns the git directory's common directory: where its
// commondir file points (relative to gitDir), which must be inside root,
// else gitDir itself.
func commonDirOf(root, gitDir string) (string, error) {
	file := filepath.Join(gitDir, "commondir")
	b, err := readBounded(file, maxPointerFile)
	if errors.Is(err, fs.ErrNotExist) {
		return gitDir, nil
	}
	if err != nil {
		return "", fmt.Errorf("read %s: %w", file, err)
	}
	target := strings.TrimRight(string(b), "\r\n")
	return inside(root, file, "commondir", target, gitDir)
}

// noSymlinkOut walks dir without following symlinks and refuses the first
// symlink below it that resolves outside root.
func noSymlinkOut(root, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("check %s for symlinks: %w", dir, err)
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		target, _ := os.Readlink(p)
		_, err = inside(root, p, "symlink", target, filepath.Dir(p))
		return err
	})
}

// alternatesIn refuses an objects/info/alternates entry of objDir (and of
// the object directories it names, to git's depth) that is outside root.
func alternatesIn(root, objDir string, depth int) error {
	file := filepath.Join(objDir, "info", "alternates")
	b, err := readBounded(file, maxAlternatesFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w; replace it with a regular file or remove it", file, err)
	}
	for _, entry := range strings.Split(string(b), "\n") {
		if entry == "" || entry[0] == '#' {
			continue
		}
		// git unquotes a quoted entry its own way and keeps a carriage
		// return or any other control character as part of the path: an
		// entry this check could read otherwise than git is refused as
		// leading outside.
		if entry[0] == '"' || strings.ContainsFunc(entry, unicode.IsControl) {
			return &OutsideError{File: file, What: "alternates", Target: entry}
		}
		if _, err := inside(root, file, "alternates", entry, objDir); err != nil {
			return err
		}
		// git reads the entry from the object directory's real path, with
		// its ".." taken lexically.
		alt := entry
		if !filepath.IsAbs(alt) {
			alt = objDir + string(filepath.Separator) + entry
		}
		if alt, err = resolve(filepath.Clean(alt)); err != nil {
			return &OutsideError{File: file, What: "alternates", Target: entry}
		}
		if depth+1 >= maxAlternateDepth {
			continue // git stops here too
		}
		if err := noSymlinkOut(root, alt); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := alternatesIn(root, alt, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// includesIn refuses an include.path or includeIf.*.path of the
// configuration file cfg (and of the files it includes, to git's depth)
// that is outside root. cfg is an absolute path as git would open it,
// symlinks unresolved; it is read by git with includes off.
func includesIn(ctx context.Context, gitPath, root, cfg string, depth int) error {
	fi, err := os.Stat(cfg)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("check configuration file %s: %w", cfg, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("configuration file %s is not a regular file; replace it with one", cfg)
	}
	// A section name is never escaped or continued: a file without the word
	// has no include, and git need not be asked.
	if b, err := readBounded(cfg, maxInternalOutput); err == nil && !bytes.Contains(bytes.ToLower(b), []byte("include")) {
		return nil
	}
	if depth > maxIncludeDepth {
		return fmt.Errorf("%s: configuration includes nested deeper than %d; remove the include loop", cfg, maxIncludeDepth)
	}
	ctx, cancel := context.WithTimeout(ctx, internalTimeout)
	defer cancel()
	out, err := runGit(ctx, gitPath, root, baseEnv(root), "config", "--file", cfg, "--no-includes", "--null",
		"--get-regexp", `^include(if\..*)?\.path$`)
	var ge *gitError
	if errors.As(err, &ge) && ge.code == 1 {
		return nil // no include keys
	}
	if err != nil {
		return fmt.Errorf("read the includes of %s: %w", cfg, err)
	}
	bases := []string{filepath.Dir(cfg)}
	if real, err := resolve(cfg); err == nil && filepath.Dir(real) != bases[0] {
		bases = append(bases, filepath.Dir(real))
	}
	for _, kv := range bytes.Split(out, []byte{0}) {
		key, value, ok := strings.Cut(string(kv), "\n")
		if !ok || value == "" {
			continue // no value: git refuses the file itself
		}
		if strings.HasPrefix(value, "~") || strings.HasPrefix(value, "%(prefix)") {
			return &OutsideError{File: cfg, What: key, Target: value}
		}
		// git takes a relative include from the directory of the file as
		// it opened it; check that and the file's real directory.
		for _, base := range bases {
			if _, err := inside(root, cfg, key, value, base); err != nil {
				return err
			}
		}
		next := value
		if !filepath.IsAbs(next) {
			next = bases[0] + string(filepath.Separator) + value
		}
		if err := includesIn(ctx, gitPath, root, next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// inside resolves target (relative to base unless absolute) with every
// symlink followed, as the kernel walks it, and returns it when it is
// inside root, and so is the path read with its ".." taken lexically first;
// otherwise it is an *OutsideError naming file, what and target.
func inside(root, file, what, target, base string) (string, error) {
	abs := target
	if !filepath.IsAbs(abs) {
		// Not filepath.Join: its lexical ".." would skip a symlink that
		// the kernel (and git) follow first.
		abs = base + string(filepath.Separator) + target
	}
	resolved, err := resolve(abs)
	if err != nil || !within(resolved, root) {
		return "", &OutsideError{File: file, What: what, Target: target}
	}
	// git normalises some pointers lexically first (alternates): that
	// reading must stay inside too.
	if lexical, err := resolve(filepath.Clean(abs)); err != nil || !within(lexical, root) {
		return "", &OutsideError{File: file, What: what, Target: target}
	}
	return resolved, nil
}

// readBounded reads at most limit bytes of the regular file path; a longer
// file is an error, and so is anything but a regular file (fs.ErrInvalid).
func readBounded(path string, limit int64) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w: not a regular file", path, fs.ErrInvalid)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}
