package jobstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestResolveIDTakesAUniquePrefixOrSuffix(t *testing.T) {
	t.Parallel()
	eachBackend(t, testResolveIDTakesAUniquePrefixOrSuffix)
}

func testResolveIDTakesAUniquePrefixOrSuffix(t *testing.T) {
	st := openTest(t, jobstore.Options{})
	ctx := context.Background()
	a, b := newJob("s"), newJob("s")
	require.NoError(t, st.Create(ctx, a))
	require.NoError(t, st.Create(ctx, b))
	require.NotEqual(t, a.ID, b.ID)

	for _, ref := range []string{a.ID, a.ID[len(a.ID)-8:], strings.ToUpper(a.ID[len(a.ID)-6:]), " " + a.ID[len(a.ID)-12:]} {
		got, err := st.ResolveID(ctx, ref)
		require.NoError(t, err, ref)
		require.Equal(t, a.ID, got, ref)
	}

	// Both ids share their time-ordered start: a short prefix is ambiguous
	// and the error lists both, newest first.
	_, err := st.ResolveID(ctx, a.ID[:4])
	var amb *jobstore.AmbiguousIDError
	require.ErrorAs(t, err, &amb)
	require.Len(t, amb.Candidates, 2)
	require.Equal(t, []string{b.ID, a.ID}, []string{amb.Candidates[0].ID, amb.Candidates[1].ID})
	require.Contains(t, err.Error(), "give more characters")

	_, err = st.ResolveID(ctx, "ffffffff")
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
	_, err = st.ResolveID(ctx, "abc")
	require.ErrorContains(t, err, "too short")
	_, err = st.ResolveID(ctx, "x*?[]")
	require.ErrorContains(t, err, "not a job id")
	_, err = st.ResolveID(ctx, "'; DROP")
	require.ErrorContains(t, err, "not a job id")
}
