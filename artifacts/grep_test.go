package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// grepLog writes lines "line 1" … "line n", every 7th one an error (with a
// multi-byte word), and returns a final source for it.
func grepLog(t *testing.T, n int) Source {
	t.Helper()
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i%7 == 0 {
			fmt.Fprintf(&b, "line %d: ERROR 失敗\n", i)
		} else {
			fmt.Fprintf(&b, "line %d: ok\n", i)
		}
	}
	path := filepath.Join(t.TempDir(), "grep.log")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return Source{Path: path, Final: true}
}

func TestGrepReturnsMatchingLinesWithLineNumbers(t *testing.T) {
	t.Parallel()
	src := grepLog(t, 10_000)
	res, err := Read(src, Page{Grep: `ERROR 失`, MaxMatches: 3})
	require.NoError(t, err)
	require.Equal(t, []Match{
		{Line: 7, Text: "line 7: ERROR 失敗"},
		{Line: 14, Text: "line 14: ERROR 失敗"},
		{Line: 21, Text: "line 21: ERROR 失敗"},
	}, res.Matches)
	require.Equal(t, UnitLines, res.Unit)
	require.EqualValues(t, 21, res.NextOffset, "the next grep page starts after the last match")
	require.EqualValues(t, 10_000, res.TotalSize)
	require.True(t, res.HasMore)
	require.Empty(t, res.Text)

	again, err := Read(src, Page{Grep: `ERROR 失`, MaxMatches: 3})
	require.NoError(t, err)
	require.Equal(t, res.Matches, again.Matches, "reading consumes nothing")

	next, err := Read(src, Page{Grep: `ERROR`, Offset: res.NextOffset, MaxMatches: 1})
	require.NoError(t, err)
	require.Equal(t, []Match{{Line: 28, Text: "line 28: ERROR 失敗"}}, next.Matches)
}

func TestGrepFollowsAllMatchesToTheEnd(t *testing.T) {
	t.Parallel()
	src := grepLog(t, 5000)
	var got []int64
	offset := int64(0)
	for {
		res, err := Read(src, Page{Grep: `^line \d+: ERROR`, Offset: offset, MaxMatches: 50})
		require.NoError(t, err)
		for _, m := range res.Matches {
			got = append(got, m.Line)
		}
		offset = res.NextOffset
		if !res.HasMore {
			break
		}
	}
	require.Len(t, got, 5000/7)
	for i, line := range got {
		require.EqualValues(t, 7*(i+1), line)
	}
}

func TestGrepLimitTailAndDefaults(t *testing.T) {
	t.Parallel()
	src := grepLog(t, 1000)
	res, err := Read(src, Page{Grep: "ERROR", Limit: 20})
	require.NoError(t, err)
	require.Len(t, res.Matches, 2, "Limit bounds the lines scanned")
	require.EqualValues(t, 20, res.NextOffset)

	res, err = Read(src, Page{Grep: "ERROR", Tail: 10})
	require.NoError(t, err)
	require.Equal(t, []Match{{Line: 994, Text: "line 994: ERROR 失敗"}}, res.Matches)
	require.EqualValues(t, 990, res.Offset)
	require.False(t, res.HasMore)

	res, err = Read(src, Page{Grep: "ok"})
	require.NoError(t, err)
	require.Len(t, res.Matches, DefaultMaxMatches)

	res, err = Read(src, Page{Grep: "no such text"})
	require.NoError(t, err)
	require.Empty(t, res.Matches)
	require.NotNil(t, res.Matches)
	require.EqualValues(t, 1000, res.NextOffset)
	require.False(t, res.HasMore)
}

func TestGrepSkipsALiveLogsUnfinishedLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "live.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	_, err = c.Write([]byte("error one\nerror tw"))
	require.NoError(t, err)
	res, err := Read(Source{Path: path}, Page{Grep: "error", Unit: UnitLines})
	require.NoError(t, err)
	require.Equal(t, []Match{{Line: 1, Text: "error one"}}, res.Matches)
	require.EqualValues(t, 1, res.NextOffset)
	require.True(t, res.HasMore)
	require.NoError(t, c.Close())

	res, err = Read(Source{Path: path, Final: true}, Page{Grep: "error"})
	require.NoError(t, err)
	require.Equal(t, []Match{{Line: 1, Text: "error one"}, {Line: 2, Text: "error tw"}}, res.Matches)
	require.False(t, res.HasMore)
}

func TestGrepKeepsMatchesWithinMaxPageBytes(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 600_000)
	giant := "needle " + strings.Repeat("é", MaxPageBytes/2) + " needle-at-the-end"
	path := filepath.Join(t.TempDir(), "big.log")
	content := "match " + big + "\nmatch " + big + "\n" + giant + "\nmatch\n"
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	src := Source{Path: path, Final: true}

	res, err := Read(src, Page{Grep: "match"})
	require.NoError(t, err)
	require.Len(t, res.Matches, 1, "a second 600 kB match would pass MaxPageBytes")
	require.True(t, res.LimitCapped)
	require.EqualValues(t, 1, res.NextOffset, "the next page starts at the line left out")

	res, err = Read(src, Page{Grep: "needle", Offset: 2})
	require.NoError(t, err)
	require.Len(t, res.Matches, 1)
	require.EqualValues(t, 3, res.Matches[0].Line)
	require.Len(t, res.Matches[0].Text, MaxPageBytes-1, "the giant line's first MiB, cut between characters")
	require.True(t, strings.HasPrefix(res.Matches[0].Text, "needle é"))

	res, err = Read(src, Page{Grep: "needle-at-the-end"})
	require.NoError(t, err)
	require.Empty(t, res.Matches, "only a long line's first MaxPageBytes are matched")
	require.EqualValues(t, 4, res.NextOffset)
}
