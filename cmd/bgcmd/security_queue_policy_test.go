//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAQueuedJobDoesNotStartUnderAPolicyThatNoLongerAllowsIt: the policy
// had been checked once, when a job was queued, and a dispatch started it
// later from its row alone. An agent that queued commands behind a
// long-running job (--after, or a full max_running group) kept them
// startable after the operator had taken the executable off the
// allowlist, denied a variable it had been given, or removed the policy
// file altogether ("no policy means every start is refused"). Each variant
// queues a job, tightens the policy, releases the dependency and checks
// that the queued command never ran and that its start_failed says why.
// The environment, whose values are never stored, had not been checked
// again even once the holder re-checked the rest.
func TestAQueuedJobDoesNotStartUnderAPolicyThatNoLongerAllowsIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		tighten func(h *home)
		why     string
	}{
		{"executable removed from the allowlist", func(h *home) {
			allowed, _ := json.Marshal([]string{fixture(h.t, "wait-for-file.sh")})
			h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\ndefault_timeout = \"10m\"\n", allowed, h.root))
		}, "the policy no longer allows it (not_allowlisted"},
		{"variable it was given now denied", func(h *home) {
			allowed, _ := json.Marshal([]string{fixture(h.t, "wait-for-file.sh"), fixture(h.t, "exit-with.sh")})
			h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\ndefault_timeout = \"10m\"\ndenied_env = [\"BGCMD_TEST_TOKEN\"]\n",
				allowed, h.root))
		}, "the policy no longer allows it (bad_env"},
		{"policy file removed", func(h *home) {
			require.NoError(h.t, os.Remove(filepath.Join(h.dir, "policy.toml")))
		}, "the policy it was queued under no longer loads"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t)
			gate := filepath.Join(h.root, "gate")
			first := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
			t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", first) })
			queued := strings.TrimSpace(h.ok("run", "--after", first, "--env", "BGCMD_TEST_TOKEN=secret", "--", fixture(t, "exit-with.sh"), "0"))
			require.Regexp(t, uuidRE, queued)
			require.Equal(t, "queued", h.peekState(queued))

			tc.tighten(h)
			// The tightened policy refuses the same start now.
			r := h.bgcmd("run", "--env", "BGCMD_TEST_TOKEN=secret", "--", fixture(t, "exit-with.sh"), "0")
			require.Equal(t, 3, r.code, "the new policy refuses a fresh start: %q", r.stderr)

			require.NoError(t, os.WriteFile(gate, nil, 0o600))
			h.bgcmd("wait", first)
			h.bgcmd("wait", queued)
			st := h.status(queued)
			require.Equal(t, "start_failed", st["state"],
				"the queued job ran under a policy that refuses it (status %v)", st)
			require.Contains(t, st["error"], tc.why)
			out := h.bgcmd("output", queued)
			require.NotContains(t, out.stdout, "exiting with 0", "the refused command ran")
		})
	}
}

// TestAQueuedJobDoesNotRunAFileReplacedWhileItWasQueued: a queued job's
// digest is taken when it is queued, and its file had been run by its
// path when the job was dispatched, maybe hours later: a file replaced
// meanwhile ran with the digest of the one it replaced on record (and in
// the hash chain and evidence bundles). Such a job does not start now,
// and says why; the same command started again runs the new file, with
// its digest.
func TestAQueuedJobDoesNotRunAFileReplacedWhileItWasQueued(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	tool := filepath.Join(h.root, "tool.sh")
	first := []byte("#!/bin/sh\necho first version\n")
	require.NoError(t, os.WriteFile(tool, first, 0o700))
	allowed, _ := json.Marshal([]string{fixture(t, "wait-for-file.sh"), tool})
	h.writePolicy(fmt.Sprintf("allowed_executables = %s\ncwd_root = %q\ndefault_timeout = \"10m\"\n", allowed, h.root))

	gate := filepath.Join(h.root, "gate")
	blocker := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	t.Cleanup(func() { h.bgcmd("kill", "--signal", "KILL", blocker) })
	queued := strings.TrimSpace(h.ok("run", "--after", blocker, "--", tool))
	require.Equal(t, "queued", h.peekState(queued))
	require.Equal(t, fmt.Sprintf("%x", sha256.Sum256(first)), h.status(queued)["exe_sha256"])

	second := []byte("#!/bin/sh\necho second version\n")
	require.NoError(t, os.WriteFile(tool+".new", second, 0o700))
	require.NoError(t, os.Rename(tool+".new", tool))
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	h.bgcmd("wait", blocker)
	h.bgcmd("wait", queued)
	st := h.status(queued)
	require.Equal(t, "start_failed", st["state"], "status %v", st)
	require.Contains(t, st["error"], "changed while the job was queued")
	require.NotContains(t, h.ok("output", queued), "version", "neither file ran")

	again := h.start(tool)
	require.Equal(t, 0, h.bgcmd("wait", again).code)
	require.Contains(t, h.ok("output", again), "second version")
	require.Equal(t, fmt.Sprintf("%x", sha256.Sum256(second)), h.status(again)["exe_sha256"])
}
