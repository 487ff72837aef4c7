package gittools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// indexStaysInside checks that every name the repository's index holds is
// a path inside the work tree, before a tool reads the work tree through
// the index (a diff against the work tree). Git checks a name when it adds
// it, never when it reads an index, and opens each entry's name from the
// work tree's root: an index an agent forged with "../x" or "/etc/x" in it
// would have the diff open that file and print it whole. The first name
// that is absolute or holds an empty, "." or ".." element is an
// *OutsideError. The names are read from `git ls-files -z --cached`, one
// at a time, whatever their number.
func (t *Toolset) indexStaysInside(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, internalTimeout)
	defer cancel()
	args := []string{"ls-files", "-z", "--cached", "--full-name"}
	cmd, stderr := gitCommand(ctx, t.gitPath, t.root, t.env, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("read the index's names: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("read the index's names: %w", err)
	}
	var outside string
	rd := bufio.NewReader(out)
	for outside == "" {
		name, err := rd.ReadString(0)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return fmt.Errorf("read the index's names: %w", err)
		}
		if name = strings.TrimSuffix(name, "\x00"); !localName(name) {
			outside = name
		}
	}
	if outside != "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		index := ".git/index"
		if gitDir, err := gitDirOf(t.root); err == nil {
			index = filepath.Join(gitDir, "index")
		}
		return &OutsideError{File: index, What: "entry", Target: outside}
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("read the index's names: %w", gitFailed(args, err, stderr))
	}
	return nil
}

// localName says whether an index name stays inside the work tree: not
// absolute, and no empty, "." or ".." element (git's own rule when it
// adds a name).
func localName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") {
		return false
	}
	for elem := range strings.SplitSeq(name, "/") {
		if elem == "" || elem == "." || elem == ".." {
			return false
		}
	}
	return true
}
