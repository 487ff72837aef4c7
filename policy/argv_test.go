package policy_test

import (
	"testing"

	"github.com/bgcmd/bgcmd/policy"
	"github.com/stretchr/testify/require"
)

func TestArgvShapeRefusals(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git", "pnpm")
	tests := []struct {
		name string
		argv []string
		code policy.Code
		msg  string
	}{
		{"A nil argv is refused.", nil, policy.CodeEmptyArgv, "argv is empty"},
		{"An empty argv is refused.", []string{}, policy.CodeEmptyArgv, "argv is empty"},
		{"An empty argv[0] is refused.", []string{"", "status"}, policy.CodeEmptyArgv, "argv[0] is the empty string"},
		{"A NUL byte in argv[0] is refused.", []string{"/usr/bin/git\x00x"}, policy.CodeNulByte, `argv[0] "/usr/bin/git\x00x"`},
		{"A NUL byte in a later argument is refused.", []string{"/usr/bin/git", "log", "a\x00b"}, policy.CodeNulByte, "argv[2]"},
		{"A shell line as argv[0] is refused.", []string{"pnpm run lint && echo done"}, policy.CodeShellSyntax, "argv is not a shell line"},
		{"A command and its argument in argv[0] are refused.", []string{"git status"}, policy.CodeShellSyntax, "whitespace"},
		{"A newline in argv[0] is refused.", []string{"/usr/bin/git\nrm"}, policy.CodeShellSyntax, "whitespace"},
		{"A tab in argv[0] is refused.", []string{"/usr/bin/git\t"}, policy.CodeShellSyntax, "whitespace"},
		{"A command substitution is refused.", []string{"$(id)"}, policy.CodeShellSyntax, `'$'`},
		{"A tilde path is refused.", []string{"~/bin/git"}, policy.CodeShellSyntax, `'~'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := p.Check(policy.Request{Argv: tt.argv})
			require.Nil(t, d)
			r := requireRefused(t, err, tt.code)
			require.Contains(t, r.Message, tt.msg)
		})
	}
}

func TestEveryShellMetacharacterInArgv0IsRefused(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	for _, c := range ";|&$<>()`'\"*?[]{}~ \n\t\r\v\f" {
		argv0 := "/usr/bin/git" + string(c) + "x"
		// Allowlisting the very string must not help: argv is not a shell line.
		_, err := s.policy(argv0).Check(policy.Request{Argv: []string{argv0}})
		requireRefused(t, err, policy.CodeShellSyntax)
	}
}

func TestShellSyntaxHintShowsTheSplit(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("pnpm", "/usr/bin/git")
	tests := []struct {
		name  string
		argv  []string
		hint  string
		notIn string
	}{
		{
			"A chained line is split up to the operator.",
			[]string{"pnpm run lint && echo done"},
			`["pnpm","run","lint"]`, "echo",
		},
		{
			"A piped line is split up to the pipe.",
			[]string{"/usr/bin/git log | head -5"},
			`["/usr/bin/git","log"]`, "head",
		},
		{
			"Words alone are split and the remaining argv kept.",
			[]string{"/usr/bin/git log", "-n", "3"},
			`["/usr/bin/git","log","-n","3"]`, "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := p.Check(policy.Request{Argv: tt.argv})
			r := requireRefused(t, err, policy.CodeShellSyntax)
			require.Contains(t, r.Message, "argv is not a shell line")
			require.Contains(t, r.Hint, tt.hint)
			require.Contains(t, r.Hint, "operators like &&")
			require.Contains(t, r.Hint, "not supported")
			require.Contains(t, r.Hint, "separate commands")
			if tt.notIn != "" {
				require.NotContains(t, r.Hint, tt.notIn)
			}
		})
	}
}

func TestShellCharactersInLaterArgumentsAreAllowed(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	argv := []string{"/usr/bin/git", "log", "--format=%H %s", "$HOME", "*.go", "a;b", "x\ny"}
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: argv})
	require.NoError(t, err)
	require.Equal(t, argv, d.Argv)
}
