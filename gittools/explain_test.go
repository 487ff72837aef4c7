package gittools_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/gittools"
)

// testCalls names calls plainly, so the explanation's own words show.
var testCalls = gittools.Calls{
	Output: func(id, stream string) string { return "out(" + id + "," + stream + ")" },
	Wait:   func(id string) string { return "wait(" + id + ")" },
	Quote:  func(s string) string { return "<" + s + ">" },
}

func TestExplainWordsEachReasonWithTheSurfacesCalls(t *testing.T) {
	two := 2
	cases := []struct {
		name string
		res  gittools.Result
		want string
	}{
		{"running", gittools.Result{JobID: "j", Reason: gittools.ReasonRunning, Status: &bgcmd.Status{State: bgcmd.StateRunning}},
			"git is still running: wait(j), then out(j,stdout)"},
		{"success", gittools.Result{JobID: "j", Status: &bgcmd.Status{State: bgcmd.StateExited}},
			"full output: out(j,stdout)"},
		{"success with stderr, capped", gittools.Result{JobID: "j", Capped: true, Status: &bgcmd.Status{State: bgcmd.StateExited, Stderr: bgcmd.StreamStatus{Bytes: 3}}},
			"full output: out(j,stdout); git also wrote to stderr: out(j,stderr); stdout reached the byte cap and was cut there"},
		{"exit status", gittools.Result{JobID: "j", Reason: gittools.ReasonExitStatus, Status: &bgcmd.Status{State: bgcmd.StateExited, ExitCode: &two}},
			"full output: out(j,stdout); git exited with status 2; its message: out(j,stderr)"},
		{"no common ancestor", gittools.Result{JobID: "j", Reason: gittools.ReasonNoCommonAncestor, Status: &bgcmd.Status{State: bgcmd.StateExited, ExitCode: &two}},
			"the two commits have no common ancestor; full output: out(j,stdout)"},
		{"not finished", gittools.Result{JobID: "j", Reason: gittools.ReasonNotFinished, Status: &bgcmd.Status{State: bgcmd.StateTimeout, Error: "line\nbreak"}},
			"full output: out(j,stdout); git did not finish normally (timeout: <line\nbreak>)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, c.res.Explain(testCalls))
		})
	}
	unquoted := testCalls
	unquoted.Quote = nil
	res := cases[len(cases)-1].res
	require.Contains(t, res.Explain(unquoted), "(timeout: line\nbreak)", "without Quote the message is shown as it is")
}
