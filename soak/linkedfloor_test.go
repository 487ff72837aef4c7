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

	"github.com/bgcmd/bgcmd/internal/launch"
)

// TestLinkedFloorLinksWhatBgcmdLinks checks that the linked floor of
// BenchmarkCLIRun imports exactly what bgcmd's two programs import as make
// build builds them (lean: launch.LeanTag), their own start-up packages
// aside: testdata/clifloor/linked.go what bgcmd's
// main package imports, linkedsup.go (its second program) what
// bgcmd-supervisor's imports. A package bgcmd gains and the floor lacks
// would make the floor's binary lighter, and the report would count its
// initialisation as bgcmd's own work.
func TestLinkedFloorLinksWhatBgcmdLinks(t *testing.T) {
	for pkg, file := range map[string]string{
		"github.com/bgcmd/bgcmd/cmd/bgcmd":            "testdata/clifloor/linked.go",
		"github.com/bgcmd/bgcmd/cmd/bgcmd-supervisor": "testdata/clifloor/linkedsup.go",
	} {
		out, err := exec.Command("go", "list", "-tags", launch.LeanTag, "-f", `{{join .Imports "\n"}}`, pkg).Output()
		require.NoError(t, err, "go list %s", pkg)
		var want []string
		for _, p := range strings.Fields(string(out)) {
			if !strings.HasPrefix(p, "github.com/bgcmd/bgcmd/cmd/") && p != "github.com/bgcmd/bgcmd/internal/prefault" {
				want = append(want, p)
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err)
		var got []string
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			got = append(got, p)
		}
		slices.Sort(want)
		slices.Sort(got)
		require.Equal(t, want, got, "%s must import (blank) what %s imports, its start-up packages aside", file, pkg)
	}
}
