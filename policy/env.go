package policy

import (
	"os"
	"slices"
	"strings"
)

// buildEnv returns the child's complete environment and, when it is
// replaced, the sorted variable names. A nil env inherits os.Environ(). Bad
// keys and values are refused; a refusal names the key, never the value.
func buildEnv(env map[string]string) (list, names []string, r *Refusal) {
	if env == nil {
		return os.Environ(), nil, nil
	}
	names = make([]string, 0, len(env))
	for k, v := range env {
		switch {
		case k == "":
			return nil, nil, refuse(CodeBadEnv, "give every environment variable a name", nil,
				"an environment variable has an empty name")
		case strings.IndexByte(k, 0) >= 0:
			return nil, nil, refuse(CodeBadEnv, "remove the NUL byte from the name", nil,
				"environment variable name %q contains a NUL byte", k)
		case strings.IndexByte(k, '=') >= 0:
			return nil, nil, refuse(CodeBadEnv, "pass the name and the value separately: the name may not contain '='", nil,
				"environment variable name %q contains '='", k)
		case strings.IndexByte(v, 0) >= 0:
			return nil, nil, refuse(CodeBadEnv, "remove the NUL byte from the value: a program cannot receive it", nil,
				"the value of environment variable %q contains a NUL byte", k)
		}
		names = append(names, k)
	}
	slices.Sort(names)
	list = make([]string, len(names))
	for i, k := range names {
		list[i] = k + "=" + env[k]
	}
	return list, names, nil
}
