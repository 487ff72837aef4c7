package jobstore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// leadingKeyword finds the statement's first word past what PostgreSQL
// skips before it, so no comment or parenthesis hides a COPY behind a
// SELECT-looking start.
func TestLeadingKeywordSkipsWhatPostgreSQLSkips(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1":                              "select",
		"  \n\t(( select 1 ))":                  "select",
		"-- SELECT\nCOPY x TO '/tmp/f'":         "copy",
		"/* SELECT */ COPY x TO PROGRAM 'id'":   "copy",
		"/* a /* nested SELECT */ */ DO $$ $$":  "do",
		"/* a /* unclosed */ SELECT 1":          "",
		"-- only a comment":                     "",
		"WITH d AS (DELETE FROM jobs) SELECT 1": "with",
		"Explain analyze select 1":              "explain",
		"copy(select 1) to stdout":              "copy",
		"selectx":                               "selectx",
		"":                                      "",
	} {
		require.Equal(t, want, leadingKeyword(q), q)
	}
	for _, q := range []string{"COPY (SELECT 1) TO '/tmp/x'", "/**/copy x to program 'id'", "CALL p()", "DO $$ BEGIN END $$", "SET role postgres", "selectx"} {
		require.False(t, pgQueryKinds[leadingKeyword(q)], q)
	}
}
