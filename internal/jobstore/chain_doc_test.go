package jobstore

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The worked example in docs/schema.md is what this encoder writes, and its
// hashes link: an auditor following the page gets bgcmd's bytes.
func TestChainWorkedExampleInTheSchemaDocs(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/schema.md")
	require.NoError(t, err)
	var texts []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, `["`+ChainVersion+`",`) {
			texts = append(texts, line)
		}
	}
	require.Len(t, texts, 3)
	for i, text := range texts {
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var raw []any
		require.NoError(t, dec.Decode(&raw))
		for j, x := range raw {
			if n, ok := x.(json.Number); ok {
				v, err := n.Int64()
				require.NoError(t, err)
				raw[j] = v
			}
		}
		require.Equal(t, text, encodeCanonical(raw), "the example is in canonical form")
		hash := HashCanonical(text)
		require.True(t, strings.Contains(string(doc), "hashes to `"+hash+"`"), "the page gives the hash of row %d as %s", i, hash)
		if i+1 < len(texts) {
			require.Contains(t, texts[i+1], `"`+hash+`"`, "the next row links to it")
		}
	}
}
