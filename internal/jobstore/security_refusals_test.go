package jobstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestRefusalRecordIsBoundedWhateverItHolds: argv that JSON blows up six
// times (control bytes), multi-byte characters at every cut and a huge cwd
// and message all end in a bounded, valid record marked as cut.
func TestRefusalRecordIsBoundedWhateverItHolds(t *testing.T) {
	t.Parallel()
	eachBackend(t, testRefusalRecordIsBoundedWhateverItHolds)
}

func testRefusalRecordIsBoundedWhateverItHolds(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	cases := []bgcmd.Refusal{
		{Argv: []string{"/bin/x", strings.Repeat("\x01", 100_000)}, Cwd: "/", Message: "m"},
		{Argv: []string{strings.Repeat("é", 100_000)}, Cwd: strings.Repeat("ü", 100_000), Message: strings.Repeat("€", 100_000)},
		{Argv: make([]string, 50_000), Cwd: "/", Message: "many empty arguments"},
		{Argv: []string{"/bin/ok", "small"}, Cwd: "/tmp", Message: "fits"},
	}
	for i := range cases {
		in := cases[i]
		require.NoError(t, s.RecordRefusal(ctx, &in))
	}
	got, err := s.Refusals(ctx, 10)
	require.NoError(t, err)
	require.Len(t, got, len(cases))
	byCount := map[int]bgcmd.Refusal{}
	byMsg := map[string]bgcmd.Refusal{}
	for _, r := range got {
		argv, err := json.Marshal(r.Argv)
		require.NoError(t, err)
		require.LessOrEqual(t, len(argv), jobstore.MaxRefusalArgvBytes)
		require.LessOrEqual(t, len(r.Cwd), jobstore.MaxRefusalCwdBytes)
		require.LessOrEqual(t, len(r.Message), jobstore.MaxRefusalMessageBytes)
		for _, a := range append(r.Argv, r.Cwd, r.Message) {
			require.True(t, utf8.ValidString(a), "cut on a character boundary")
		}
		byCount[r.ArgvCount] = r
		byMsg[r.Message] = r
	}
	small := byMsg["fits"]
	require.False(t, small.Cut)
	require.Equal(t, []string{"/bin/ok", "small"}, small.Argv)
	require.Equal(t, "fits", small.Message)
	many := byMsg["many empty arguments"]
	require.True(t, many.Cut)
	require.Less(t, len(many.Argv), 50_000)
	control := byMsg["m"]
	require.True(t, control.Cut)
	require.Equal(t, "/bin/x", control.Argv[0])
	require.Equal(t, int64(len("/bin/x")+100_000+len("/")+len("m")), control.OriginalBytes)
	one := byCount[1]
	require.Equal(t, 1, one.ArgvCount)
	require.True(t, one.Cut)
	require.Equal(t, int64(3*200_000+100_000), one.OriginalBytes)
}
