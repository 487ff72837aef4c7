package artifacts

import (
	"bytes"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// FuzzPaging writes content through a capture in chunks, then pages it back
// from the live log and from the final one, in one unit, following
// NextOffset with one limit, and checks that the pages join up to exactly
// the content (raw) and its decoded text, and that one page at offset is
// what the reference model says.
func FuzzPaging(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint8(0), int64(0), int64(3), 1)
	f.Add([]byte("日本語\n😀🎉\ne\u0301\n"), uint8(1), int64(2), int64(2), 2)
	f.Add([]byte("a\xffb\xe4\xb8\n\xf0\x9f\x98"), uint8(2), int64(1), int64(1), 3)
	f.Add([]byte("no newline at the end, 終わり"), uint8(2), int64(0), int64(1), 4)
	f.Add(trickyText(400), uint8(1), int64(50), int64(7), 5)
	f.Add(trickyText(400), uint8(0), int64(17), int64(1), 7)
	f.Add([]byte{}, uint8(0), int64(0), int64(0), 1)
	f.Add([]byte("\n\n\n"), uint8(2), int64(5), int64(1), 1)
	f.Add([]byte("\xc3\xa9\xc3"), uint8(0), int64(1), int64(1), 1)
	f.Fuzz(func(t *testing.T, content []byte, unitSel uint8, offset, limit int64, chunk int) {
		if len(content) > 2<<10 {
			content = content[:2<<10] // with a 16-byte stride that is 128 checkpoints
		}
		unit := []Unit{UnitBytes, UnitChars, UnitLines}[int(unitSel)%3]
		limit = 1 + int64(uint64(limit)%64)
		offset = int64(uint64(offset) % uint64(len(content)+3))
		chunk = 1 + int(uint(chunk)%97)

		c, path := capture(t, t.TempDir(), "fuzz.log", content, chunk, 16)
		defer c.Close()
		fixed := func() int64 { return limit }

		// Live: what is shown never changes as the log grows.
		settled := content[:liveEnd(content)]
		complete := content[:bytes.LastIndexByte(content, '\n')+1]
		live := Source{Path: path}
		text, _ := pageAll(t, live, Page{Unit: unit}, fixed)
		_, data := pageAll(t, live, Page{Unit: unit, Raw: true}, fixed)
		switch unit {
		case UnitBytes:
			require.Equal(t, refText(settled), text)
			require.Equal(t, content, data)
		case UnitChars:
			require.Equal(t, refText(settled), text)
			require.Equal(t, settled, data)
		case UnitLines:
			require.Equal(t, refText(complete), text)
			require.Equal(t, complete, data)
		}

		require.NoError(t, c.Close())
		if len(content) == 0 {
			_, err := os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist, "an empty stream creates no log")
			return
		}
		final := Source{Path: path, Final: true}
		text, _ = pageAll(t, final, Page{Unit: unit}, fixed)
		require.Equal(t, refText(content), text)
		_, data = pageAll(t, final, Page{Unit: unit, Raw: true}, fixed)
		require.Equal(t, content, data)

		res, err := Read(final, Page{Unit: unit, Offset: offset, Limit: limit, Raw: true})
		require.NoError(t, err)
		var pieces [][]byte
		switch unit {
		case UnitBytes:
			require.Equal(t, content[min(offset, int64(len(content))):min(offset+limit, int64(len(content)))], res.Data)
			return
		case UnitChars:
			pieces = refChars(content)
		case UnitLines:
			pieces = refLines(content)
		}
		from := min(offset, int64(len(pieces)))
		to := min(offset+limit, int64(len(pieces)))
		require.Equal(t, bytes.Join(pieces[from:to], nil), res.Data)
		require.Equal(t, max(offset, to), res.NextOffset)
		require.EqualValues(t, len(pieces), res.TotalSize)
		require.Equal(t, to < int64(len(pieces)), res.HasMore)
	})
}

// liveEnd is where a live log's settled characters end: before a trailing
// sequence that more bytes could still complete.
func liveEnd(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		if utf8.RuneStart(b[len(b)-k]) {
			if !utf8.FullRune(b[len(b)-k:]) {
				return len(b) - k
			}
			break
		}
	}
	return len(b)
}
