package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rewriteBundle rewrites the bundle at in into out as anyone holding it
// can: edit changes the manifest (as plain JSON) and the members, and
// SHA256SUMS is computed again over the result. Only the chain's hashes,
// which tie the bundle to the store, cannot be made again.
func rewriteBundle(t *testing.T, in, out string, edit func(m map[string]any, members map[string][]byte)) {
	t.Helper()
	order, members := readBundleRaw(t, in)
	var m map[string]any
	require.NoError(t, json.Unmarshal(members["manifest.json"], &m))
	edit(m, members)
	mb, err := json.MarshalIndent(m, "", "  ")
	require.NoError(t, err)
	members["manifest.json"] = append(mb, '\n')
	for n := range members {
		if !slices.Contains(order, n) {
			order = append(order, n)
		}
	}
	writeBundleRaw(t, out, order, members)
}

// A bundle whose status was rewritten, its SHA256SUMS made again, keeps
// every event and its hash, so it still names the store's chain: verify
// --bundle must refuse it all the same. Each case is a forgery that once
// verified: a state that does not say settled (a character the eye does
// not see after "exited", or "running") turned the check of the files
// against the settle event off, so forged output passed; a timeout
// relabelled "exited" and a job credited to another session passed as
// well.
func TestVerifyBundleRefusesAStatusTheEventsDoNotBear(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.settled(fixture(t, "exit-with.sh"), "3")
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", id, "-o", genuine).code)
	require.Equal(t, 0, h.bgcmd("verify", "--bundle", genuine).code, "the genuine bundle verifies")

	forged := []byte("all 1742 tests passed\n")
	sum := sha256.Sum256(forged)
	forgeOutput := func(state string) func(map[string]any, map[string][]byte) {
		return func(m map[string]any, members map[string][]byte) {
			job := m["jobs"].([]any)[0].(map[string]any)
			st := job["status"].(map[string]any)
			st["state"] = state
			st["exit_code"] = 0
			st["stdout"].(map[string]any)["sha256"] = hex.EncodeToString(sum[:])
			st["tail_preview"] = string(forged)
			for _, f := range job["files"].([]any) {
				if f := f.(map[string]any); f["stream"] == "stdout" {
					f["sha256"], f["bytes"] = hex.EncodeToString(sum[:]), len(forged)
				}
			}
			members["jobs/"+id+"/stdout"] = forged
		}
	}
	status := func(key string, v any) func(map[string]any, map[string][]byte) {
		return func(m map[string]any, _ map[string][]byte) {
			m["jobs"].([]any)[0].(map[string]any)["status"].(map[string]any)[key] = v
		}
	}
	for name, edit := range map[string]func(map[string]any, map[string][]byte){
		"forged output, state exited and an invisible character": forgeOutput("exited\u200b"),
		"forged output, state running":                           forgeOutput("running"),
		"forged output, state exited":                            forgeOutput("exited"),
		"exit code 3 said 0":                                     status("exit_code", 0),
		"state said timeout":                                     status("state", "timeout"),
		"another session":                                        status("session", "alice"),
		"another host":                                           status("host", "elsewhere"),
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "forged.tar")
			rewriteBundle(t, genuine, out, edit)
			r := h.bgcmd("verify", "--bundle", out)
			require.Equal(t, 1, r.code, "a forged bundle verified:\n%s%s", r.stdout, r.stderr)
			require.Contains(t, r.stdout, "bundle FAILED")
		})
	}
}

// A job's events in a bundle are each hashed into the chain, but nothing
// in one event names the job's event before it: a holder who dropped one
// from the middle of a job's history (here the start of a queued job, and
// so when it ran) kept a bundle whose every remaining hash, SHA256SUMS
// made again, still verified. Each event must take the job from the state
// the one before it left it in, starting from its creation.
func TestVerifyBundleRefusesAJobHistoryWithAGap(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	gate := filepath.Join(h.root, "go")
	a := h.start(fixture(t, "wait-for-file.sh"), gate, "0")
	b := strings.TrimSpace(h.ok("run", "--after", a, "--", fixture(t, "exit-with.sh"), "0"))
	require.Equal(t, "queued", h.peekState(b))
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Equal(t, 0, h.bgcmd("wait", b).code)
	genuine := filepath.Join(t.TempDir(), "genuine.tar")
	require.Equal(t, 0, h.bgcmd("export", b, "-o", genuine).code)
	require.Equal(t, 0, h.bgcmd("verify", "--bundle", genuine).code, "the genuine bundle verifies")

	events := func(m map[string]any) []any {
		return m["jobs"].([]any)[0].(map[string]any)["events"].([]any)
	}
	setEvents := func(m map[string]any, evs []any) {
		m["jobs"].([]any)[0].(map[string]any)["events"] = evs
	}
	for name, edit := range map[string]func(map[string]any, map[string][]byte){
		"the start dropped": func(m map[string]any, _ map[string][]byte) {
			evs := events(m)
			require.Len(t, evs, 3, "created queued, started, settled")
			setEvents(m, []any{evs[0], evs[2]})
		},
		"the creation moved after the start": func(m map[string]any, _ map[string][]byte) {
			evs := events(m)
			setEvents(m, []any{evs[1], evs[0], evs[2]})
		},
	} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "forged.tar")
			rewriteBundle(t, genuine, out, edit)
			r := h.bgcmd("verify", "--bundle", out)
			require.Equal(t, 1, r.code, "a bundle with a gap in a job's history verified:\n%s%s", r.stdout, r.stderr)
			require.Contains(t, r.stdout, "bundle FAILED")
		})
	}
}
