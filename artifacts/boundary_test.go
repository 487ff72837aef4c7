package artifacts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestATextBytePageNeverStartsInsideACharacter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "log")
	text := "aé€😀z\n" // 1, 2, 3 and 4 bytes
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	src := Source{Path: path, IndexPath: path + ".idx", Final: true}
	for _, tc := range []struct {
		offset, start int64
		text          string
	}{
		{0, 0, text},
		{1, 1, "é€😀z\n"},
		{2, 3, "€😀z\n"}, // inside é
		{4, 6, "😀z\n"},  // inside €
		{5, 6, "😀z\n"},
		{7, 10, "z\n"}, // inside 😀
		{9, 10, "z\n"},
	} {
		res, err := Read(src, Page{Offset: tc.offset})
		require.NoError(t, err)
		require.Equal(t, tc.start, res.Offset, "offset %d", tc.offset)
		require.Equal(t, tc.text, res.Text, "offset %d", tc.offset)
		require.NotContains(t, res.Text, "\uFFFD")

		raw, err := Read(src, Page{Offset: tc.offset, Raw: true})
		require.NoError(t, err)
		require.Equal(t, tc.offset, raw.Offset, "a raw page starts where asked")
		require.Equal(t, text[tc.offset:], string(raw.Data))
	}

	// Bytes that are not UTF-8 are not skipped: they show as U+FFFD.
	require.NoError(t, os.WriteFile(path, []byte("a\x80\x80b"), 0o600))
	res, err := Read(src, Page{Offset: 1})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Offset)
	require.Equal(t, "\uFFFD\uFFFDb", res.Text)
}
