package gittools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// internalTimeout bounds each git process gittools runs itself (revision
// verification, reading the configuration): they are quick, and a
// repository that makes them slow is refused rather than waited for.
const internalTimeout = 15 * time.Second

// maxInternalOutput bounds what one internal git process may print.
const maxInternalOutput = 1 << 20

// errTooMuchOutput is returned by a cappedBuffer that overflowed.
var errTooMuchOutput = errors.New("output above the limit")

// cappedBuffer is a bytes.Buffer that fails past a limit.
type cappedBuffer struct {
	bytes.Buffer
	limit int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, errTooMuchOutput
	}
	return b.Buffer.Write(p)
}

// gitError is an internal git process that failed: its exit code (-1 when
// it did not exit normally) and the first line of its stderr.
type gitError struct {
	args   []string
	code   int
	stderr string
	err    error
}

func (e *gitError) Error() string {
	msg := fmt.Sprintf("git %s: %v", strings.Join(e.args, " "), e.err)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg
}

func (e *gitError) Unwrap() error { return e.err }

// git runs one internal git process in the root with env (replaced) and the
// global hardening arguments, and returns its stdout. It is used only for
// verification and inspection, never for a tool's own output.
func (t *Toolset) git(ctx context.Context, env map[string]string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, internalTimeout)
	defer cancel()
	return runGit(ctx, t.gitPath, t.root, env, args...)
}

// runGit runs git at gitPath in dir; see Toolset.git.
func runGit(ctx context.Context, gitPath, dir string, env map[string]string, args ...string) ([]byte, error) {
	cmd, stderr := gitCommand(ctx, gitPath, dir, env, args...)
	stdout := &cappedBuffer{limit: maxInternalOutput}
	cmd.Stdout = stdout
	if err := cmd.Run(); err != nil {
		return nil, gitFailed(args, err, stderr)
	}
	return stdout.Bytes(), nil
}

// gitCommand is an internal git process at gitPath in dir with env
// (replaced) and the global hardening arguments, its stderr kept (up to
// 64 KiB) for gitFailed; the caller sets its stdout.
func gitCommand(ctx context.Context, gitPath, dir string, env map[string]string, args ...string) (*exec.Cmd, *cappedBuffer) {
	argv := append(append([]string(nil), globalArgs...), args...)
	cmd := exec.CommandContext(ctx, gitPath, argv...)
	cmd.Dir = dir
	cmd.Env = envList(env)
	stderr := &cappedBuffer{limit: 64 << 10}
	cmd.Stderr = stderr
	cmd.WaitDelay = time.Second
	return cmd, stderr
}

// gitFailed is the *gitError of an internal git process run with args that
// ended with err: its exit code and the first line of its stderr.
func gitFailed(args []string, err error, stderr *cappedBuffer) *gitError {
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	line, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n")
	return &gitError{args: args, code: code, stderr: line, err: err}
}
