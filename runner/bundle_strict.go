package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// decodeManifest decodes manifest.json as verify reads it, and refuses one
// that another reader could read otherwise. encoding/json takes a key for
// its field whatever its case and keeps the last of several: a job with a
// forged "status" followed by the genuine "Status" verified, while jq, a
// script or a person read the forged one. So a key is refused when it
// appears twice in one object in any case, the manifest must be one JSON
// value, and it must be, key for key and value for value, the JSON bgcmd
// writes for what verify decoded: no unknown key, no key in another case.
func decodeManifest(data []byte) (*BundleManifest, error) {
	if err := uniqueKeys(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m BundleManifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest.json does not decode: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("manifest.json holds more than one JSON value")
	}
	written, err := json.Marshal(&m)
	if err != nil {
		return nil, fmt.Errorf("manifest.json does not encode again: %v", err)
	}
	as, err := plainJSON(data)
	if err != nil {
		return nil, fmt.Errorf("manifest.json does not decode: %v", err)
	}
	again, err := plainJSON(written)
	if err != nil || !reflect.DeepEqual(as, again) {
		return nil, errors.New("manifest.json is not what bgcmd writes for what it says: " +
			"a key in another case, a field no bundle has, or a value written otherwise")
	}
	return &m, nil
}

// plainJSON decodes data as any JSON reader would: objects keyed by exact
// name, numbers as their text.
func plainJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// uniqueKeys refuses a JSON object that names a key twice, in any case.
func uniqueKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	// One frame per open object or array: the object's keys so far.
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("manifest.json does not decode: %v", err)
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := strings.ToLower(tok.(string))
			if top.keys[k] {
				return fmt.Errorf("manifest.json names the key %q twice in one object (in some case): readers would disagree on its value", tok)
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		if top != nil && top.object {
			top.key = true // a value: a key comes next
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{keys: map[string]bool{}, object: true, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}
