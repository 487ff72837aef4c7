package testkit_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

func TestFixtureIsTheAbsolutePathOfAnExecutableScript(t *testing.T) {
	t.Parallel()
	p := testkit.Fixture(t, "exit-with.sh")
	require.True(t, filepath.IsAbs(p), p)
	require.Equal(t, "testdata", filepath.Base(filepath.Dir(p)))
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&0o100, "%s is executable", p)
}
