package agenttools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// def is one tool: what the model reads, its arguments and its handler.
type def struct {
	Tool
	props []prop
	// call runs the tool on arguments that check has accepted.
	call func(ctx context.Context, args json.RawMessage) (counted, error)
}

// prop is one argument of a tool. Its JSON Schema is generated from it, and
// check enforces the same rules, so the schema a model reads is the
// contract.
type prop struct {
	name     string
	typ      string // "string", "integer", "boolean", "array" (of strings) or "object" (of strings)
	desc     string
	required bool
	enum     []string
	// min and max bound an integer (inclusive).
	min, max int64
	// maxLen bounds a string's bytes, an array's items or an object's
	// properties; 0 means no bound.
	maxLen int
	// minItems is an array's least length.
	minItems int
	// stringToo lets a string through the type check where an array is
	// expected, for a handler that explains the mistake better (argv given
	// as a shell line).
	stringToo bool
}

// schema returns the tool's input schema as JSON: an object of the
// tool's properties, in their order, and nothing else.
func (d *def) schema() json.RawMessage {
	s := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}} // false: no other arguments
	for _, p := range d.props {
		s.Properties[p.name] = p.schema()
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		if p.required {
			s.Required = append(s.Required, p.name)
		}
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("agenttools: schema of %s: %v", d.Name, err)) // a programmer's error in a prop
	}
	return b
}

// schema returns the property's JSON Schema.
func (p prop) schema() *jsonschema.Schema {
	s := &jsonschema.Schema{Type: p.typ, Description: p.desc}
	for _, e := range p.enum {
		s.Enum = append(s.Enum, e)
	}
	bound := func(n int) *int {
		if n > 0 {
			return &n
		}
		return nil
	}
	switch p.typ {
	case "integer":
		s.Minimum, s.Maximum = jsonschema.Ptr(float64(p.min)), jsonschema.Ptr(float64(p.max))
	case "string":
		s.MaxLength = bound(p.maxLen)
	case "array":
		s.Items = &jsonschema.Schema{Type: "string"}
		s.MaxItems, s.MinItems = bound(p.maxLen), bound(p.minItems)
	case "object":
		s.AdditionalProperties = &jsonschema.Schema{Type: "string"}
		s.MaxProperties = bound(p.maxLen)
	}
	return s
}

// check validates raw arguments against the tool's properties and returns
// them as a JSON object ("{}" for empty or null arguments).
func (d *def) check(raw json.RawMessage) (json.RawMessage, *ToolError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	example := "call it with a JSON object of arguments as its input schema describes, e.g. " + d.example()
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		if !json.Valid(raw) {
			return nil, invalid(example, "the arguments of %s are not valid JSON: %v", d.Name, err)
		}
		return nil, invalid(example, "the arguments of %s must be a JSON object, not %s", d.Name, kind(raw))
	}
	if k, dup := repeatedKey(raw); dup {
		// The check reads the last value, which may be null (absent), while
		// decoding leaves a field alone on null: the handler would get an
		// earlier value that no check saw.
		return nil, invalid("give each argument once", "argument %q is given more than once", k)
	}
	var unknown []string
	for k := range obj {
		if !slices.ContainsFunc(d.props, func(p prop) bool { return p.name == k }) {
			unknown = append(unknown, fmt.Sprintf("%q", k))
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		it := "it"
		if len(unknown) > 1 {
			it = "them"
		}
		return nil, invalid(fmt.Sprintf("remove %s; %s takes only %s", it, d.Name, d.argNames()),
			"unknown argument%s %s", plural(len(unknown)), strings.Join(unknown, ", "))
	}
	for _, p := range d.props {
		v, ok := obj[p.name]
		if !ok || string(v) == "null" {
			if p.required {
				return nil, invalid(example, "missing required argument %q (%s): %s", p.name, typeName(p.typ), p.desc)
			}
			continue
		}
		if te := p.check(v); te != nil {
			return nil, te
		}
	}
	return raw, nil
}

// repeatedKey returns the first key the JSON object raw repeats.
func repeatedKey(raw json.RawMessage) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		k, _ := t.(string)
		if seen[k] {
			return k, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// check validates one present argument.
func (p prop) check(v json.RawMessage) *ToolError {
	hint := fmt.Sprintf("pass %s as %s: %s", p.name, typeName(p.typ), p.desc)
	got := kind(v)
	want := map[string]string{"string": "a string", "integer": "a number", "boolean": "a boolean",
		"array": "an array", "object": "an object"}[p.typ]
	if got != want && !(p.stringToo && got == "a string") {
		return invalid(hint, "argument %q must be %s, not %s", p.name, typeName(p.typ), got)
	}
	switch p.typ {
	case "integer":
		return p.checkInt(v, hint)
	case "string":
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return invalid(hint, "argument %q: %v", p.name, err)
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, s) {
			return invalid(fmt.Sprintf("pass one of %s", quoteAll(p.enum)), "argument %q is %q, which is not one of its values", p.name, s)
		}
		if p.maxLen > 0 && len(s) > p.maxLen {
			return invalid(hint, "argument %q is %d bytes long, above its limit of %d", p.name, len(s), p.maxLen)
		}
	case "array":
		var items []json.RawMessage
		if err := json.Unmarshal(v, &items); err != nil {
			return nil // a string that stringToo let through: the handler explains it
		}
		if p.maxLen > 0 && len(items) > p.maxLen {
			return invalid(hint, "argument %q has %d items, above its limit of %d", p.name, len(items), p.maxLen)
		}
		if len(items) < p.minItems {
			return invalid(hint, "argument %q needs at least %d item%s", p.name, p.minItems, plural(p.minItems))
		}
		for i, it := range items {
			if k := kind(it); k != "a string" {
				return invalid(hint, "argument %s[%d] must be a string, not %s", p.name, i, k)
			}
		}
	case "object":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(v, &m); err != nil {
			return invalid(hint, "argument %q: %v", p.name, err)
		}
		if p.maxLen > 0 && len(m) > p.maxLen {
			return invalid(hint, "argument %q has %d entries, above its limit of %d", p.name, len(m), p.maxLen)
		}
		for k, it := range m {
			if kd := kind(it); kd != "a string" {
				return invalid(hint, "argument %s[%q] must be a string, not %s", p.name, k, kd)
			}
		}
	}
	return nil
}

// checkInt checks that v is a whole number within the property's bounds.
func (p prop) checkInt(v json.RawMessage, hint string) *ToolError {
	f, _, err := big.ParseFloat(string(v), 10, 256, big.ToNearestEven)
	if err != nil {
		return invalid(hint, "argument %q is not a number: %v", p.name, err)
	}
	if !f.IsInt() {
		return invalid(hint, "argument %q is %s, but it must be a whole number", p.name, v)
	}
	// Compared as a float, never made an integer first: "1e646000000" is
	// eleven bytes of JSON and an integer of two billion bits. The bounds
	// are int64s, exact at this precision.
	rng := fmt.Sprintf("pass %s from %d to %d: %s", p.name, p.min, p.max, p.desc)
	if f.Cmp(new(big.Float).SetInt64(p.min)) < 0 {
		return invalid(rng, "argument %q is %s, below its minimum of %d", p.name, v, p.min)
	}
	if f.Cmp(new(big.Float).SetInt64(p.max)) > 0 {
		return invalid(rng, "argument %q is %s, above its maximum of %d", p.name, v, p.max)
	}
	return nil
}

// decode unmarshals arguments that check accepted into v.
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return invalid("fix the arguments to match the tool's input schema", "cannot decode the arguments: %v", err)
	}
	return nil
}

// argNames lists the tool's argument names for a message.
func (d *def) argNames() string {
	if len(d.props) == 0 {
		return "no arguments"
	}
	names := make([]string, len(d.props))
	for i, p := range d.props {
		names[i] = p.name
	}
	return strings.Join(names, ", ")
}

// example is a minimal call: the required arguments with placeholder
// values.
func (d *def) example() string {
	var parts []string
	for _, p := range d.props {
		if !p.required {
			continue
		}
		val := map[string]string{"string": `"..."`, "integer": "0", "boolean": "false",
			"array": `["..."]`, "object": "{}"}[p.typ]
		if len(p.enum) > 0 {
			val = fmt.Sprintf("%q", p.enum[0])
		}
		parts = append(parts, fmt.Sprintf("%q: %s", p.name, val))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// kind names the JSON type of a valid JSON value.
func kind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// typeName describes a property type for a message.
func typeName(typ string) string {
	switch typ {
	case "integer":
		return "an integer"
	case "boolean":
		return "true or false"
	case "array":
		return "an array of strings"
	case "object":
		return "an object whose values are strings"
	}
	return "a string"
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
