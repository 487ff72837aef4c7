package artifacts

import (
	"fmt"
	"unicode/utf8"
)

// Preview returns the last maxChars characters of the log src names, as
// text (invalid bytes as U+FFFD), reading only the end of the file: at most
// 4*maxChars bytes, and never more than MaxPageBytes. It is meant for status
// previews (bgcmd.MaxPreviewChars); the paged Read serves the rest. For a
// live source it leaves out a trailing UTF-8 sequence that may still be
// completed. A negative maxChars is an error wrapping ErrInvalidPage.
func Preview(src Source, maxChars int) (string, error) {
	if maxChars < 0 {
		return "", fmt.Errorf("preview: %w: negative max chars %d", ErrInvalidPage, maxChars)
	}
	v, err := openView(src)
	if err != nil {
		return "", err
	}
	defer v.close()
	s, err := v.preview(maxChars)
	if err != nil {
		return "", fmt.Errorf("preview %s: %w", src.Path, err)
	}
	return s, nil
}

func (v *view) preview(maxChars int) (string, error) {
	if maxChars == 0 || v.size == 0 {
		return "", nil
	}
	window := int64(MaxPageBytes)
	if maxChars < MaxPageBytes/utf8.UTFMax {
		window = int64(maxChars) * utf8.UTFMax
	}
	lo := max(0, v.size-window)
	// Three bytes before lo tell whether the walk from the start of the log
	// lands on lo or inside a sequence.
	from := max(0, lo-(utf8.UTFMax-1))
	b := make([]byte, v.size-from)
	if err := v.readAt(b, from); err != nil {
		return "", err
	}
	b = b[firstBoundary(b, int(lo-from)):]
	if !v.final {
		b = b[:incompleteSuffix(b)]
	}
	if extra := countRunes(b) - maxChars; extra > 0 {
		k, _, _ := takeRunes(b, int64(extra), len(b), true)
		b = b[k:]
	}
	return decodeText(b), nil
}
