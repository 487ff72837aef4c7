package artifacts_test

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// keysOf returns the sorted top-level JSON keys of v.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	return slices.Sorted(maps.Keys(m))
}

func TestOutputPageHasTheContractsFieldsForEachForm(t *testing.T) {
	t.Parallel()
	res := &artifacts.Result{Unit: artifacts.UnitLines, Offset: 2, NextOffset: 4, TotalSize: 9, HasMore: true,
		Text: "a\nb\n", Data: []byte("a\nb\n")}
	base := []string{"has_more", "next_offset", "offset", "stream", "total_size", "unit"}
	t.Run("A text page carries text.", func(t *testing.T) {
		t.Parallel()
		p := artifacts.NewOutputPage(bgcmd.Stdout, res, false, false)
		require.Equal(t, slices.Sorted(slices.Values(append(slices.Clone(base), "text"))), keysOf(t, p))
		require.Equal(t, "a\nb\n", *p.Text)
	})
	t.Run("A raw page carries data_base64 and no text.", func(t *testing.T) {
		t.Parallel()
		p := artifacts.NewOutputPage(bgcmd.Stdout, res, true, false)
		require.Equal(t, slices.Sorted(slices.Values(append(slices.Clone(base), "data_base64"))), keysOf(t, p))
		require.Equal(t, "YQpiCg==", *p.DataBase64)
	})
	t.Run("A filter page without a match carries an empty matches list.", func(t *testing.T) {
		t.Parallel()
		p := artifacts.NewOutputPage(bgcmd.Stderr, &artifacts.Result{Unit: artifacts.UnitLines}, false, true)
		require.Equal(t, slices.Sorted(slices.Values(append(slices.Clone(base), "matches"))), keysOf(t, p))
		require.NotNil(t, p.Matches)
	})
	t.Run("A page cut by the page size ceiling says truncated.", func(t *testing.T) {
		t.Parallel()
		capped := *res
		capped.LimitCapped = true
		p := artifacts.NewOutputPage(bgcmd.Stdout, &capped, false, false)
		require.Contains(t, keysOf(t, p), "truncated")
		require.True(t, p.Truncated)
	})
}
