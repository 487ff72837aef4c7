package agenttools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/require"
)

// TestSchemasAreValidJSONSchemaThatAgreesWithTheChecks: each tool's input
// schema resolves with a JSON Schema validator; the examples in its
// description pass both the validator and the tool's own checks, and
// arguments the checks refuse, the validator refuses too.
func TestSchemasAreValidJSONSchemaThatAgreesWithTheChecks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, tl := range h.ts.Tools() {
		var s jsonschema.Schema
		require.NoError(t, json.Unmarshal(tl.InputSchema, &s), tl.Name)
		rs, err := s.Resolve(nil)
		require.NoError(t, err, tl.Name)
		examples := 0
		for _, line := range strings.Split(tl.Description, "\n") {
			ex, ok := strings.CutPrefix(line, "Example: ")
			if !ok {
				if ex, ok = strings.CutPrefix(line, "Examples: "); !ok {
					continue
				}
			}
			// The examples are JSON values separated by "; ", maybe with
			// prose after them.
			dec := json.NewDecoder(strings.NewReader(ex))
			for {
				var args map[string]any
				require.NoError(t, dec.Decode(&args), "%s: %s", tl.Name, ex)
				examples++
				require.NoError(t, rs.Validate(args), "%s: the schema refuses its own example %v", tl.Name, args)
				rest := strings.TrimSpace(ex[dec.InputOffset():])
				if !strings.HasPrefix(rest, "; {") {
					break
				}
				ex = strings.TrimPrefix(rest, "; ")
				dec = json.NewDecoder(strings.NewReader(ex))
			}
		}
		require.NotZero(t, examples, tl.Name)
		for _, bad := range []string{`{"no_such_argument": 1}`, `{"task_id": 7, "argv": 7, "timeout_ms": "soon", "limit": -1}`} {
			var args map[string]any
			require.NoError(t, json.Unmarshal([]byte(bad), &args))
			require.Error(t, rs.Validate(args), "%s: the schema takes %s", tl.Name, bad)
			res := h.call(tl.Name, json.RawMessage(bad))
			require.True(t, res.IsError, "%s: the checks take %s", tl.Name, bad)
		}
	}
}
