package migrations_test

import (
	"fmt"
	"io/fs"
	"path"
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

// TestPostgresMigrationsFollowTheSQLiteOnes: PostgreSQL's migrations start
// at 00010, the whole schema as of SQLite's version 10, and every later
// version exists in both directories under the same number, so that a
// schema change is made for both backends at once.
func TestPostgresMigrationsFollowTheSQLiteOnes(t *testing.T) {
	t.Parallel()
	pg, err := fs.Glob(migrations.PostgresFS, "postgres/*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, pg)
	lite, err := fs.Glob(migrations.FS, "*.sql")
	require.NoError(t, err)
	version := func(name string) string { return strings.SplitN(path.Base(name), "_", 2)[0] }
	want := []string{}
	for _, name := range lite {
		if version(name) > "00010" {
			want = append(want, version(name))
		}
	}
	got := []string{}
	for _, name := range pg {
		got = append(got, version(name))
		b, err := fs.ReadFile(migrations.PostgresFS, name)
		require.NoError(t, err)
		require.Contains(t, string(b), "-- +goose Up", name)
	}
	require.Equal(t, "00010", got[0], "the first PostgreSQL migration is the schema as of SQLite's version 10")
	require.Equal(t, want, got[1:], "each SQLite migration after 10 has its PostgreSQL twin under the same number")
}
