package runner_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestCallerEnvCannotRunCodeInAnAllowedProgram: BASH_ENV set by the caller
// would make an allowlisted bash run the caller's file first. The start is
// refused (bad_env, naming the variable) and the file never runs.
func TestCallerEnvCannotRunCodeInAnAllowedProgram(t *testing.T) {
	t.Parallel()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, bash)
	marker := filepath.Join(t.TempDir(), "pwned")
	payload := filepath.Join(t.TempDir(), "payload.sh")
	require.NoError(t, os.WriteFile(payload, []byte("echo owned > "+marker+"\n"), 0o644))

	j, err := e.r.Start(context.Background(), []string{bash, "-c", "true"},
		runner.StartOptions{Env: map[string]string{"PATH": "/usr/bin:/bin", "BASH_ENV": payload}})
	if j != nil {
		e.await(j.ID)
	}
	require.NoFileExists(t, marker, "the caller's BASH_ENV ran inside the allowlisted bash")
	r, ok := policy.IsRefusal(err)
	require.True(t, ok, "error %v", err)
	require.Equal(t, policy.CodeBadEnv, r.Code)
	require.Contains(t, r.Message, `"BASH_ENV"`)
	require.NotContains(t, err.Error(), payload)
}

// TestCallerPathCannotChooseTheBinary: with the bare name "sleep"
// allowlisted, a caller-set PATH that puts its own "sleep" first must not
// run it: the job runs (and records) the sleep of the policy's search path.
func TestCallerPathCannotChooseTheBinary(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, "sleep")
	evil := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	require.NoError(t, os.WriteFile(filepath.Join(evil, "sleep"), []byte("#!/bin/sh\necho owned > "+marker+"\n"), 0o755))

	j, err := e.r.Start(context.Background(), []string{"sleep", "0"},
		runner.StartOptions{Env: map[string]string{"PATH": evil + ":/usr/bin:/bin"}})
	require.NoError(t, err)
	s := e.await(j.ID)
	require.NotContains(t, j.Exe, evil, "the caller's PATH chose the executable")
	require.NotContains(t, s.Exe, evil)
	require.True(t, filepath.IsAbs(j.Exe))
	require.NoFileExists(t, marker, "the caller's own sleep ran")
}
