package artifacts

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One grep page scans for grepBudget at most: a costly pattern over a long
// log (an agent's filter) ends the page early, marked ScanCapped, with
// NextOffset past the lines it scanned, so that no single read holds a CPU
// for as long as the log takes to scan. Pages read on from NextOffset
// still find every match, in order. The budget is shrunk here so that
// every page ends on it whatever the machine's speed; a page always scans
// some lines first, so reading on makes progress.
func TestAGrepPageEndsOnItsScanBudgetAndReadingOnFindsEveryMatch(t *testing.T) {
	defer func(b time.Duration) { grepBudget = b }(grepBudget)
	src := grepLog(t, 5_000)
	want, err := Read(src, Page{Grep: `ERROR`, MaxMatches: 10_000})
	require.NoError(t, err)
	require.False(t, want.ScanCapped)
	require.Len(t, want.Matches, 5_000/7)

	grepBudget = time.Nanosecond
	var got []Match
	pages := 0
	for off := int64(0); ; pages++ {
		res, err := Read(src, Page{Grep: `ERROR`, Offset: off, MaxMatches: 10_000})
		require.NoError(t, err)
		got = append(got, res.Matches...)
		if !res.HasMore {
			break
		}
		require.True(t, res.ScanCapped, "a page that ended before the end of the log says why")
		require.Greater(t, res.NextOffset, off, "each page scans some lines")
		off = res.NextOffset
	}
	require.Greater(t, pages, 1, "the budget ended pages")
	require.Equal(t, want.Matches, got)

	whole, err := Read(src, Page{Grep: `ERROR`, MaxMatches: 10_000, Unbudgeted: true})
	require.NoError(t, err)
	require.False(t, whole.ScanCapped, "an unbudgeted page scans to its end")
	require.Equal(t, want.Matches, whole.Matches)
}

// The costly pattern of the attack: on a log of short lines it scans about
// a line per 250 µs. A page of it over 200,000 lines, without a budget,
// took minutes of CPU; with one it ends as the budget says.
func TestACostlyFilterEndsOnTheBudget(t *testing.T) {
	defer func(b time.Duration) { grepBudget = b }(grepBudget)
	grepBudget = 10 * time.Millisecond
	src := grepLog(t, 200_000)
	re := strings.Repeat(`\w?`, 330) + "Q"
	_, err := regexp.Compile(re)
	require.NoError(t, err)
	res, err := Read(src, Page{Grep: re})
	require.NoError(t, err)
	require.True(t, res.ScanCapped)
	require.True(t, res.HasMore)
	require.Less(t, res.NextOffset, int64(200_000))
}

// Long lines bring the clock round sooner than grepCheckLines: a page of
// lines of 100 KiB looks at it after each, so one costly line is the most
// a page scans past its budget.
func TestAGrepPageOfLongLinesLooksAtTheClockByBytes(t *testing.T) {
	defer func(b time.Duration) { grepBudget = b }(grepBudget)
	path := filepath.Join(t.TempDir(), "long.log")
	line := strings.Repeat("x", 100<<10) + "\n"
	require.NoError(t, os.WriteFile(path, []byte(strings.Repeat(line, 10)), 0o600))
	grepBudget = time.Nanosecond
	res, err := Read(Source{Path: path, Final: true}, Page{Grep: `y`})
	require.NoError(t, err)
	require.True(t, res.ScanCapped)
	require.Equal(t, int64(1), res.NextOffset, "one line scanned, then the clock")
}
