package policy_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestRefusalErrorFormat(t *testing.T) {
	t.Parallel()
	r := &policy.Refusal{Code: policy.CodeVetoed, Message: "no builds today", Hint: "try tomorrow"}
	require.Equal(t, "refused (vetoed): no builds today; try tomorrow", r.Error())
	r.Hint = ""
	require.Equal(t, "refused (vetoed): no builds today", r.Error())
}

func TestIsRefusalFindsWrappedRefusals(t *testing.T) {
	t.Parallel()
	cause := errors.New("cause")
	r := &policy.Refusal{Code: policy.CodeBadCwd, Message: "m", Hint: "h", Err: cause}
	wrapped := fmt.Errorf("start: %w", r)

	got, ok := policy.IsRefusal(wrapped)
	require.True(t, ok)
	require.Same(t, r, got)
	require.ErrorIs(t, wrapped, cause)

	var as *policy.Refusal
	require.ErrorAs(t, wrapped, &as)
	require.Same(t, r, as)

	got, ok = policy.IsRefusal(errors.New("plain"))
	require.False(t, ok)
	require.Nil(t, got)
	got, ok = policy.IsRefusal(nil)
	require.False(t, ok)
	require.Nil(t, got)
}

func TestCodesAreStableStrings(t *testing.T) {
	t.Parallel()
	want := map[policy.Code]string{
		policy.CodeNoPolicy:       "no_policy",
		policy.CodeBadPolicy:      "bad_policy",
		policy.CodeEmptyArgv:      "empty_argv",
		policy.CodeNulByte:        "nul_byte",
		policy.CodeShellSyntax:    "shell_syntax",
		policy.CodeNotAllowlisted: "not_allowlisted",
		policy.CodeVetoed:         "vetoed",
		policy.CodeCwdEscape:      "cwd_escape",
		policy.CodeBadCwd:         "bad_cwd",
		policy.CodeBadEnv:         "bad_env",
		policy.CodeOverLimit:      "over_limit",
		policy.CodeNotFound:       "exe_not_found",
	}
	for code, s := range want {
		require.Equal(t, s, string(code))
	}
}
