//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTheCommandWritesBothReportsFromASavedRun runs the real command on the
// recorded run (-from) and reads what it wrote: report.json with the
// machine, the run and every figure the table names, and REPORT.md with
// each of them; a saved run with a failed package makes it exit non-zero
// after writing, naming the package.
func TestTheCommandWritesBothReportsFromASavedRun(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "report")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	fixture, err := filepath.Abs("testdata/bench-output.txt")
	require.NoError(t, err)

	outDir := filepath.Join(dir, "out")
	run := exec.Command(bin, "-from", fixture, "-out", outDir)
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "REPORT.md")

	b, err := os.ReadFile(filepath.Join(outDir, "report.json"))
	require.NoError(t, err)
	var rep report
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Equal(t, fixture, rep.Config.From)
	require.Positive(t, rep.Machine.Cores)
	require.Len(t, rep.Figures, len(figures), "every figure of the table is reported")
	require.NotEmpty(t, rep.Benchmarks)
	md, err := os.ReadFile(filepath.Join(outDir, "REPORT.md"))
	require.NoError(t, err)
	for _, f := range rep.Figures {
		require.Contains(t, string(md), f.Name)
	}

	failed := filepath.Join(dir, "failed.txt")
	saved, err := os.ReadFile(fixture)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(failed, append(saved, []byte("FAIL\tgithub.com/bgcmd/bgcmd/runner\t1.0s\n")...), 0o644))
	out, err = exec.Command(bin, "-from", failed, "-out", filepath.Join(dir, "out2")).CombinedOutput()
	require.Error(t, err, "a failed package fails the report")
	require.True(t, strings.Contains(string(out), "benchmarks failed in") && strings.Contains(string(out), "runner"), "%s", out)
	_, err = os.Stat(filepath.Join(dir, "out2", "REPORT.md"))
	require.NoError(t, err, "the report is written even so")
}
