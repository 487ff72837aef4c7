package agenttools_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
)

// An agent passes run_command_bg a cwd that goes out of the sandbox root
// to a name and back in with "..". Whether the name existed outside the
// root (a directory: the command ran; a file: bad_cwd "not a directory";
// nothing: cwd_escape) changed the answer, so the agent learnt what exists
// anywhere on the host, which "Every cwd outside gets the same bounded
// refusal, which tells nothing about what exists there" rules out.
func TestAnAgentCannotProbePathsOutsideTheSandboxThroughCwd(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// A private tree of another project beside the sandbox root.
	outside, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(outside, "customer-acme"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "id_rsa"), []byte("x"), 0o600))

	// outside/NAME/../.. + the root as seen from "/".
	back := strings.Repeat("../", strings.Count(filepath.Join(outside, "X"), "/"))
	probe := func(name string) string {
		cwd := filepath.Join(outside, name) + "/" + back + strings.TrimPrefix(h.root, "/")
		res := h.call("run_command_bg", map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "cwd": cwd, "wait_ms": 60000})
		if !res.IsError {
			return "ran"
		}
		er := res.Value.(*agenttools.ErrorResult)
		return er.Error.Code + ": " + strings.ReplaceAll(er.Error.Message, name, "NAME")
	}
	dir, file, missing := probe("customer-acme"), probe("id_rsa"), probe("no-such-name")
	require.Equal(t, missing, dir, "the answer tells that a directory outside the sandbox exists")
	require.Equal(t, missing, file, "the answer tells that a file outside the sandbox exists")
}
