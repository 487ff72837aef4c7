package policy

import (
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
)

// deniedEnv is the built-in deny set: variables that make a program load or
// run code other than its own, or change which files it trusts. A caller may
// not set them; allowed_env cannot re-allow them.
var deniedEnv = []struct{ pattern, why string }{
	{"LD_*", "the dynamic loader loads code from it"},
	{"DYLD_*", "the dynamic loader loads code from it"},
	{"BASH_ENV", "a shell runs it at start-up"},
	{"ENV", "a shell runs it at start-up"},
	{"BASH_FUNC_*", "it exports a shell function"},
	{"SHELLOPTS", "it changes how a shell runs"},
	{"BASHOPTS", "it changes how a shell runs"},
	{"PS4", "a shell expands it when tracing"},
	{"GCONV_PATH", "glibc loads modules from it"},
	{"LOCPATH", "glibc loads locale data from it"},
	{"NLSPATH", "glibc loads message catalogs from it"},
	{"HOSTALIASES", "glibc's resolver reads it"},
	{"RESOLV_HOST_CONF", "glibc's resolver reads it"},
	{"MALLOC_*", "it changes glibc's allocator"},
	{"GLIBC_TUNABLES", "it changes glibc's internals"},
	{"NODE_OPTIONS", "Node.js takes options and preloads code from it"},
	{"NODE_PATH", "Node.js loads modules from it"},
	{"PYTHONSTARTUP", "Python runs it"},
	{"PYTHONPATH", "Python loads modules from it"},
	{"PYTHONHOME", "Python loads its library from it"},
	{"PYTHONINSPECT", "it makes Python interactive"},
	{"PYTHONUSERBASE", "Python loads site modules from it"},
	{"PYTHONBREAKPOINT", "Python runs it at a breakpoint"},
	{"PERL5OPT", "Perl takes options from it"},
	{"PERL5LIB", "Perl loads modules from it"},
	{"PERLLIB", "Perl loads modules from it"},
	{"PERL5DB", "Perl runs it as its debugger"},
	{"RUBYOPT", "Ruby takes options from it"},
	{"RUBYLIB", "Ruby loads modules from it"},
	{"LUA_INIT*", "Lua runs it at start-up"},
	{"LUA_PATH*", "Lua loads modules from it"},
	{"LUA_CPATH*", "Lua loads modules from it"},
	{"JAVA_TOOL_OPTIONS", "the JVM takes options and agents from it"},
	{"_JAVA_OPTIONS", "the JVM takes options and agents from it"},
	{"JDK_JAVA_OPTIONS", "the JVM takes options and agents from it"},
	{"CLASSPATH", "the JVM loads classes from it"},
	{"GIT_*", "git runs programs and reads configuration from it"},
}

// BuiltinDeniedEnv returns the names and globs (path.Match syntax) of the
// environment variables a caller may never set: the dynamic loader's, shell
// start-up, glibc's loadable modules, interpreter options and start-up
// hooks, and git's. A fresh slice each call.
func BuiltinDeniedEnv() []string {
	out := make([]string, len(deniedEnv))
	for i, d := range deniedEnv {
		out[i] = d.pattern
	}
	return out
}

// exportedFunction is how bash marks a variable's value as an exported
// function definition.
const exportedFunction = "() {"

// buildEnv returns the child's complete environment and, when it is
// replaced, the sorted variable names and, of those, the names it checked
// against the policy's rules (those the caller set). A nil env inherits
// os.Environ(). Bad keys and values are refused, as is a variable the
// caller set that the policy denies (see checkEnvName); a refusal names
// the key, never the value. With inherited (env was built from this
// process's own), a variable whose name and value are exactly this
// process's own is inherited, not set by the caller, and passes unchecked.
func (p *Policy) buildEnv(env map[string]string, inherited bool) (list, names, checked []string, r *Refusal) {
	if env == nil {
		return os.Environ(), nil, nil, nil
	}
	names = make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	// Sorted first, so that of several bad variables the same one is named
	// every time.
	slices.Sort(names)
	for _, k := range names {
		v := env[k]
		switch {
		case k == "":
			return nil, nil, nil, refuse(CodeBadEnv, "give every environment variable a name", nil,
				"an environment variable has an empty name")
		case strings.IndexByte(k, 0) >= 0:
			return nil, nil, nil, refuse(CodeBadEnv, "remove the NUL byte from the name", nil,
				"environment variable name %q contains a NUL byte", k)
		case strings.IndexByte(k, '=') >= 0:
			return nil, nil, nil, refuse(CodeBadEnv, "pass the name and the value separately: the name may not contain '='", nil,
				"environment variable name %q contains '='", k)
		case strings.IndexByte(v, 0) >= 0:
			return nil, nil, nil, refuse(CodeBadEnv, "remove the NUL byte from the value: a program cannot receive it", nil,
				"the value of environment variable %q contains a NUL byte", k)
		}
		if own, ok := os.LookupEnv(k); inherited && ok && own == v {
			continue
		}
		if r := p.checkEnvName(k, v); r != nil {
			return nil, nil, nil, r
		}
		checked = append(checked, k)
	}
	list = make([]string, len(names))
	for i, k := range names {
		list[i] = k + "=" + env[k]
	}
	return list, names, checked, nil
}

// CheckEnvVar checks one variable a caller set, by name and value, against
// the policy's environment rules as a start does (the built-in deny set,
// denied_env, allowed_env, trusted_env, exported shell functions): a
// queued job's holder asks it again of the variables checked when the job
// was queued (Decision.EnvChecked), under the policy as it stands at the
// job's start. The refusal names the variable, never its value.
func (p *Policy) CheckEnvVar(name, value string) error {
	if r := p.checkEnvName(name, value); r != nil {
		return r
	}
	return nil
}

// checkEnvName refuses a variable the caller set when the built-in deny set
// or denied_env matches its name, when allowed_env is set and does not, or
// when its value is an exported shell function. TrustedEnv exempts a name
// from all three.
func (p *Policy) checkEnvName(k, v string) *Refusal {
	if matchEnv(p.TrustedEnv, k) {
		return nil
	}
	if !plainEnvName(k) {
		// bgcmd stores the names and shows them to the operator (a rerun
		// lists those it needs again, as --env flags to paste): a name
		// with escapes, spaces or shell syntax in it is no variable's.
		return refuse(CodeBadEnv, "name the variable with ASCII letters, digits and '_' ('.' and '-' after the first character), starting with a letter or '_'", nil,
			"environment variable name %q is not a plain name", k)
	}
	for _, d := range deniedEnv {
		if ok, _ := path.Match(d.pattern, k); ok {
			return refuse(CodeBadEnv,
				"drop the variable: bgcmd never lets a caller set it, whatever the policy says (an operator can still pass it on through the environment bgcmd inherits)",
				nil, "environment variable %q may not be set by the caller: %s", k, d.why)
		}
	}
	if strings.HasPrefix(v, exportedFunction) {
		return refuse(CodeBadEnv, "drop the variable: a shell would import its value as a function", nil,
			"the value of environment variable %q is an exported shell function", k)
	}
	if matchEnv(p.DeniedEnv, k) {
		return refuse(CodeBadEnv, "drop the variable, or ask the operator to take it out of the policy's denied_env", nil,
			"environment variable %q is denied by the policy's denied_env", k)
	}
	if p.AllowedEnv != nil && !matchEnv(p.AllowedEnv, k) {
		return refuse(CodeBadEnv, "drop the variable, or ask the operator to add it to the policy's allowed_env", nil,
			"environment variable %q is not on the policy's allowed_env", k)
	}
	return nil
}

// matchEnv reports whether a name or glob of patterns matches name.
// Patterns are validated before Check uses them, so a malformed one never
// reaches here.
func matchEnv(patterns []string, name string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// checkEnvPattern validates one allowed_env, denied_env or TrustedEnv
// entry: a variable name or a path.Match glob over names.
func checkEnvPattern(pat string) error {
	switch {
	case pat == "":
		return errors.New("an empty entry matches no variable: remove it")
	case strings.IndexByte(pat, 0) >= 0:
		return fmt.Errorf("entry %q contains a NUL byte", pat)
	case strings.IndexByte(pat, '=') >= 0:
		return fmt.Errorf("entry %q contains '=': list variable names, not values", pat)
	}
	if _, err := path.Match(pat, ""); err != nil {
		return fmt.Errorf("entry %q is not a valid name or glob: %v", pat, err)
	}
	return nil
}

// validateEnvPatterns checks every entry of the policy's environment lists.
func (p *Policy) validateEnvPatterns() error {
	for _, l := range []struct {
		key  string
		list []string
	}{{keyAllowedEnv, p.AllowedEnv}, {keyDeniedEnv, p.DeniedEnv}, {"TrustedEnv", p.TrustedEnv}} {
		for _, pat := range l.list {
			if err := checkEnvPattern(pat); err != nil {
				return &policyError{l.key, err.Error()}
			}
		}
	}
	return nil
}

// plainEnvName reports whether name is a variable name as shells and
// programs write them: [A-Za-z_][A-Za-z0-9_.-]*.
func plainEnvName(name string) bool {
	for i, c := range name {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return name != ""
}
