package artifacts

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPagesKeepTheirBytesAfterLaterReads reads pages of every kind from two
// logs of different bytes in turn, so that each Read gets the buffers the
// one before gave back, and checks each page against the reference model,
// then that the pages kept from the first round still hold what they held:
// nothing a Read returns may point into a buffer a later Read fills.
func TestPagesKeepTheirBytesAfterLaterReads(t *testing.T) {
	dir := t.TempDir()
	contents := [][]byte{
		bytes.Repeat([]byte(tricky), 2000),
		bytes.Repeat([]byte("plain ascii line of a build log\n"), 3000),
	}
	var srcs []Source
	for i, content := range contents {
		c, path := capture(t, dir, []string{"a.log", "b.log"}[i], content, 4093, 1<<10)
		require.NoError(t, c.Close())
		srcs = append(srcs, Source{Path: path, Final: true})
	}
	pages := []Page{
		{Unit: UnitChars, Offset: 1500, Limit: 700},
		{Unit: UnitLines, Offset: 40, Limit: 30},
		{Unit: UnitBytes, Offset: 5000, Limit: 3000},
		{Unit: UnitBytes, Offset: 5000, Limit: 3000, Raw: true},
		{Tail: 25},
	}
	want := func(i int, p Page) *Result {
		t.Helper()
		res, err := Read(srcs[i], p)
		require.NoError(t, err)
		return res
	}
	type kept struct {
		res        *Result
		text, data string
	}
	var first []kept
	for round := range 3 {
		for _, p := range pages {
			for i := range srcs {
				res := want(i, p)
				content := contents[i]
				switch {
				case p.Tail > 0:
					lines := refLines(content)
					require.Equal(t, refText(bytes.Join(lines[len(lines)-25:], nil)), res.Text)
				case p.Unit == UnitChars:
					chars := refChars(content)
					require.Equal(t, refText(bytes.Join(chars[1500:2200], nil)), res.Text)
				case p.Unit == UnitLines:
					lines := refLines(content)
					require.Equal(t, refText(bytes.Join(lines[40:70], nil)), res.Text)
				case p.Raw:
					require.Equal(t, content[5000:8000], res.Data)
				}
				if round == 0 {
					first = append(first, kept{res, res.Text, string(res.Data)})
				}
			}
		}
	}
	for _, k := range first {
		require.Equal(t, k.text, k.res.Text)
		require.Equal(t, k.data, string(k.res.Data))
	}
}
