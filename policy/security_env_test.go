package policy_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// callerSecret is the value of every variable the attacks set: a refusal
// must never repeat it.
const callerSecret = "/tmp/attacker-payload-5d1e"

// TestCallerCannotInjectCodeThroughTheEnvironment: every variable of the
// built-in deny set, set by the caller, is refused as bad_env naming the
// variable and never its value.
func TestCallerCannotInjectCodeThroughTheEnvironment(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	for _, name := range []string{
		"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "DYLD_INSERT_LIBRARIES",
		"BASH_ENV", "ENV", "BASH_FUNC_ls%%",
		"GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "MALLOC_CHECK_", "GLIBC_TUNABLES",
		"NODE_OPTIONS", "NODE_PATH", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT",
		"PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB",
		"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH",
		"GIT_CONFIG_GLOBAL", "GIT_SSH_COMMAND", "GIT_EXEC_PATH",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"},
				Env: map[string]string{"HOME": "/home/x", name: callerSecret}})
			require.Nil(t, d)
			r := requireRefused(t, err, policy.CodeBadEnv)
			require.Contains(t, r.Message, `"`+name+`"`)
			require.NotContains(t, err.Error(), callerSecret, "an environment value is never reported")
		})
	}
}

// TestCallerCannotExportAShellFunction: a value a shell would import as a
// function is refused whatever the variable's name.
func TestCallerCannotExportAShellFunction(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	d, err := s.policy("/usr/bin/git").Check(policy.Request{Argv: []string{"/usr/bin/git"},
		Env: map[string]string{"harmless": "() { " + callerSecret + "; }"}})
	require.Nil(t, d)
	r := requireRefused(t, err, policy.CodeBadEnv)
	require.Contains(t, r.Message, `"harmless"`)
	require.NotContains(t, err.Error(), callerSecret)
}

// TestInheritedVariablesPass: a denied variable the operator's own
// environment holds is inherited, not injected, and passes; the same name
// with another value is the caller's and is refused. (t.Setenv: not
// parallel.)
func TestInheritedVariablesPass(t *testing.T) {
	s := newSandbox(t)
	t.Setenv("LD_LIBRARY_PATH", "/opt/operator/lib")
	p := s.policy("/usr/bin/git")

	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}})
	require.NoError(t, err)
	require.Contains(t, d.Env, "LD_LIBRARY_PATH=/opt/operator/lib")
	require.NoError(t, d.Close())

	// The CLI's --env without --replace-env passes the inherited variables
	// along with the caller's, and says so (InheritedEnv).
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	env["CI"] = "1"
	d, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: env, InheritedEnv: true})
	require.NoError(t, err)
	require.Contains(t, d.Env, "LD_LIBRARY_PATH=/opt/operator/lib")
	require.NoError(t, d.Close())

	env["LD_LIBRARY_PATH"] = callerSecret
	_, err = p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: env, InheritedEnv: true})
	requireRefused(t, err, policy.CodeBadEnv)
}

// TestNoRefusalSaysWhetherAGuessEqualsAVariableOfThisProcess: an
// environment that does not say it was built from this process's own
// (an agent's, through the MCP server) has every variable checked as the
// caller's, whatever its value. Before, a variable whose value happened to
// equal this process's passed as inherited, and any other value was
// refused: one call per guess told an agent that may not set the variable
// whether its guess was the server's secret. (t.Setenv: not parallel.)
func TestNoRefusalSaysWhetherAGuessEqualsAVariableOfThisProcess(t *testing.T) {
	s := newSandbox(t)
	t.Setenv("BGCMD_TEST_DB_PASSWORD", "1987")
	t.Setenv("LD_LIBRARY_PATH", "/opt/operator/lib")
	p := s.policy("/usr/bin/git")
	p.AllowedEnv = []string{"LANG"}
	for _, guess := range []string{"1986", "1987"} {
		_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"BGCMD_TEST_DB_PASSWORD": guess}})
		requireRefused(t, err, policy.CodeBadEnv)
		require.NotContains(t, err.Error(), guess)
	}
	_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"LD_LIBRARY_PATH": "/opt/operator/lib"}})
	requireRefused(t, err, policy.CodeBadEnv)
	d, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, Env: map[string]string{"LANG": "C.UTF-8"}})
	require.NoError(t, err)
	require.NoError(t, d.Close())
}
