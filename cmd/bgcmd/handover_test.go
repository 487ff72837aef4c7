package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A command line bgcmd hands over unparsed asks for --json as the flag
// would have: before any "--", the last --json or --json=BOOL says.
func TestAsksForJSON(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"mcp"}, false},
		{[]string{"--json", "mcp"}, true},
		{[]string{"git", "log", "--json"}, true},
		{[]string{"git", "--json=1", "log"}, true},
		{[]string{"--json", "git", "--json=false", "log"}, false},
		{[]string{"--json=no", "ui"}, false},
		{[]string{"git", "log", "--", "--json"}, false},
		{[]string{"--jsonx", "mcp"}, false},
	} {
		require.Equal(t, tc.want, asksForJSON(tc.args), "%q", tc.args)
	}
}
