package soak

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLinkedFloorLinksWhatBgcmdLinks checks that the linked floor of
// BenchmarkCLIRun (testdata/clifloor/linked.go) imports exactly what
// bgcmd's main package imports, its own internal packages aside: a package
// bgcmd gains and the floor lacks would make the floor's binary lighter,
// and the report would count its initialisation as bgcmd's own work.
func TestLinkedFloorLinksWhatBgcmdLinks(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "github.com/bgcmd/bgcmd/cmd/bgcmd").Output()
	require.NoError(t, err, "go list cmd/bgcmd")
	var want []string
	for _, p := range strings.Fields(string(out)) {
		if !strings.HasPrefix(p, "github.com/bgcmd/bgcmd/cmd/") {
			want = append(want, p)
		}
	}
	f, err := parser.ParseFile(token.NewFileSet(), "testdata/clifloor/linked.go", nil, parser.ImportsOnly)
	require.NoError(t, err)
	var got []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		require.NoError(t, err)
		got = append(got, p)
	}
	slices.Sort(want)
	slices.Sort(got)
	require.Equal(t, want, got, "testdata/clifloor/linked.go must import (blank) what cmd/bgcmd imports, its internal packages aside")
}
