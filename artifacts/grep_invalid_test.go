package artifacts

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGrepMatchesALineAsItsTextShowsIt: a line is matched as the text a
// page shows for it, each invalid byte a U+FFFD, on lines of valid and
// invalid UTF-8 alike, whatever the pattern says of U+FFFD and of any
// character. The model decodes every line and matches the text.
func TestGrepMatchesALineAsItsTextShowsIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 21))
	content := invalidText(r, 256<<10)
	path := filepath.Join(t.TempDir(), "mixed.log")
	require.NoError(t, os.WriteFile(path, content, 0o600))
	lines := bytes.Split(bytes.TrimSuffix(content, []byte("\n")), []byte("\n"))
	for _, pat := range []string{`\x{FFFD}`, `\x{FFFD}{2}`, `^\x{FFFD}`, `k \x{FFFD}$`, `日.ok`, `^.{3}$`, `[^\x00-\x7f]{4}`, `ok`, `é\x{FFFD}`} {
		re := regexp.MustCompile(pat)
		var want []Match
		for i, l := range lines {
			if text := decodeText(l); re.MatchString(text) {
				want = append(want, Match{Line: int64(i + 1), Text: text})
			}
		}
		require.NotEmpty(t, want, "%s matches some line: the case tests something", pat)
		var got []Match
		for off := int64(0); ; {
			res, err := Read(Source{Path: path, Final: true}, Page{Grep: pat, Offset: off, MaxMatches: 1000})
			require.NoError(t, err, pat)
			got = append(got, res.Matches...)
			if !res.HasMore {
				break
			}
			off = res.NextOffset
		}
		require.Equal(t, want, got, pat)
	}
}
