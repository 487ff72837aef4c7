package artifacts

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/bgcmd/bgcmd"
	"github.com/stretchr/testify/require"
)

func TestPreviewReturnsTheLastCharacters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(15, 16))
	for i, content := range [][]byte{
		nil, []byte("short"), trickyText(50_000), invalidText(r, 30_000),
		append([]byte("x\x80\x80\x80"), trickyText(100)...),
	} {
		path := filepath.Join(dir, string(rune('a'+i))+".log")
		require.NoError(t, os.WriteFile(path, content, 0o600))
		chars := refChars(content)
		for _, n := range []int{0, 1, 2, 3, 7, 100, bgcmd.MaxPreviewChars} {
			got, err := Preview(Source{Path: path, Final: true}, n)
			require.NoError(t, err)
			var want []byte
			for _, c := range chars[max(0, len(chars)-n):] {
				want = append(want, c...)
			}
			require.Equal(t, refText(want), got, "case %d, %d chars", i, n)
		}
	}
}

func TestPreviewOfALiveLogLeavesOutAnUnfinishedSequence(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "live.log")
	require.NoError(t, os.WriteFile(path, []byte("abc日\xe6\x9c"), 0o600))
	got, err := Preview(Source{Path: path}, 2)
	require.NoError(t, err)
	require.Equal(t, "c日", got)
	got, err = Preview(Source{Path: path, Final: true}, 2)
	require.NoError(t, err)
	require.Equal(t, "\uFFFD\uFFFD", got)
}
