package migrations_test

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/migrations"
)

// TestMigrationsAreNumberedWithoutGaps: goose applies the embedded files in
// the order of their numbers, so they run 00001, 00002, … with none missing
// but the versions held by Go migrations, and each holds an Up section.
func TestMigrationsAreNumberedWithoutGaps(t *testing.T) {
	t.Parallel()
	names, err := fs.Glob(migrations.FS, "*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	want := int64(1)
	for _, name := range names {
		for slices.Contains(migrations.GoVersions, want) {
			want++
		}
		require.True(t, strings.HasPrefix(name, fmt.Sprintf("%05d_", want)), "migration %d is %s", want, name)
		want++
		b, err := fs.ReadFile(migrations.FS, name)
		require.NoError(t, err)
		require.Contains(t, string(b), "-- +goose Up", name)
	}
}
