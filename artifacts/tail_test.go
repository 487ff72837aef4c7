package artifacts

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTailReturnsTheLastLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i, content := range []string{
		"one\ntwo\nthree\n", "one\ntwo\nthree", "\n\n\n", "single", "single\n", "日本\n😀 end",
		string(trickyText(200_000)),
	} {
		path := filepath.Join(dir, fmt.Sprintf("case%d.log", i))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		src := Source{Path: path, Final: true}
		lines := refLines([]byte(content))
		for _, n := range []int64{1, 2, 3, 4, 100, 5000} {
			res, err := Read(src, Page{Tail: n, Offset: 99})
			require.NoError(t, err)
			from := max(0, len(lines)-int(n))
			require.Equal(t, string(bytes.Join(lines[from:], nil)), res.Text, "%q tail %d", content[:min(len(content), 20)], n)
			require.EqualValues(t, from, res.Offset, "Offset is the first line's index")
			require.EqualValues(t, len(lines), res.NextOffset)
			require.EqualValues(t, len(lines), res.TotalSize)
			require.Equal(t, UnitLines, res.Unit)
			require.False(t, res.HasMore)
			require.False(t, res.LimitCapped)

			raw, err := Read(src, Page{Tail: n, Raw: true, Unit: UnitLines})
			require.NoError(t, err)
			require.Equal(t, bytes.Join(lines[from:], nil), raw.Data)
		}
	}
}

func TestTailOfALiveLogShowsTheUnfinishedLine(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "live.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	_, err = c.Write([]byte("building...\nPassword: \xe5\xaf"))
	require.NoError(t, err)
	res, err := Read(Source{Path: path}, Page{Tail: 5})
	require.NoError(t, err)
	require.Equal(t, "building...\nPassword: ", res.Text, "no unfinished sequence")
	require.EqualValues(t, 0, res.Offset)
	require.EqualValues(t, 1, res.NextOffset, "following on reads the prompt line whole later")
	require.EqualValues(t, 2, res.TotalSize)
	require.True(t, res.HasMore)
	require.NoError(t, c.Close())
}
