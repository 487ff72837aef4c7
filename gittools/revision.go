package gittools

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Object kinds a revision is verified as (the ^{...} peel).
const (
	anyObject = "object"
	commitish = "commit"
	blobKind  = "blob"
)

// verify checks the text of the revision in field, then asks git to resolve
// it to an object of kind, and returns the full object id: the only form in
// which a revision reaches a tool's command. A revision git cannot resolve is
// an *ArgError wrapping ErrUnknownRevision.
func (t *Toolset) verify(ctx context.Context, c checker, field, rev, kind string) (string, error) {
	if err := c.revText(field, rev); err != nil {
		return "", err
	}
	oid, err := t.resolveObject(ctx, rev+"^{"+kind+"}")
	if err == nil {
		return oid, nil
	}
	if !errors.Is(err, ErrUnknownRevision) {
		return "", fmt.Errorf("%s: verify %s: %w", c.tool, field, err)
	}
	reason, hint := "is not a known revision", "pass a branch, tag or commit id that exists in the repository"
	try := []Try{{Tool: ToolLog, Does: "lists commits"}}
	if kind == commitish {
		reason = "does not name a commit"
	}
	if detail := strings.TrimPrefix(err.Error(), ErrUnknownRevision.Error()); detail != "" {
		reason += detail
	}
	if strings.Contains(rev, ":") {
		hint, try = "pass the revision and the path in separate fields", nil
	}
	return "", &ArgError{Tool: c.tool, Field: field, Value: rev, Reason: reason, Hint: hint, Try: try, Err: ErrUnknownRevision}
}

// verifyPath resolves rel (a checked path relative to the root) inside the
// verified object oid and returns the id of the blob or tree found there;
// when kind is blobKind it must be a file.
func (t *Toolset) verifyPath(ctx context.Context, c checker, field, value, oid, rel, kind string) (string, error) {
	spec := oid + ":"
	if rel != "." {
		spec += rel
	}
	obj, err := t.resolveObject(ctx, spec)
	if err == nil && kind == blobKind {
		obj, err = t.resolveObject(ctx, obj+"^{blob}")
		if errors.Is(err, ErrUnknownRevision) {
			return "", &ArgError{Tool: c.tool, Field: field, Value: value, Err: err,
				Reason: "is not a file at revision " + oid, Hint: "pass the path of a file"}
		}
	}
	if errors.Is(err, ErrUnknownRevision) {
		return "", &ArgError{Tool: c.tool, Field: field, Value: value, Err: err,
			Reason: "does not exist at revision " + oid,
			Hint:   "pass a path that exists in that revision",
			Try: []Try{{Tool: ToolLsFiles, Does: "lists the current files"},
				{Tool: ToolLog, With: "path", Does: "finds where it went"}}}
	}
	if err != nil {
		return "", fmt.Errorf("%s: verify %s: %w", c.tool, field, err)
	}
	return obj, nil
}

// resolveObject runs git rev-parse --verify on spec and returns the object
// id. A spec git cannot resolve returns ErrUnknownRevision.
func (t *Toolset) resolveObject(ctx context.Context, spec string) (string, error) {
	out, err := t.git(ctx, t.env, "rev-parse", "--verify", "--quiet", "--end-of-options", spec)
	if err != nil {
		// 1 is --quiet's "no such object"; 128 is git refusing the
		// expression itself (a malformed @{...}, a reflog too short).
		var ge *gitError
		switch {
		case errors.As(err, &ge) && ge.code == 1:
			return "", ErrUnknownRevision
		case errors.As(err, &ge) && ge.code == 128 && ge.stderr != "":
			return "", fmt.Errorf("%w (git: %s)", ErrUnknownRevision, strings.TrimPrefix(ge.stderr, "fatal: "))
		case errors.As(err, &ge) && ge.code == 128:
			return "", ErrUnknownRevision
		}
		return "", err
	}
	oid := strings.TrimSuffix(string(out), "\n")
	if !isObjectID(oid) {
		return "", fmt.Errorf("git rev-parse printed %q, not an object id", oid)
	}
	return oid, nil
}

// isObjectID reports whether s is a full SHA-1 or SHA-256 object id in
// lower-case hex.
func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
