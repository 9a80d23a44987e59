package campaign

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// decoder fills a Campaign from a parsed document one field at a time, so
// that every wrong type and every unknown key is a problem of its own,
// placed at its own key: toml.Decode stops at the first wrong type, and
// names keys of [[benchmark]] tables without their index.
type decoder struct {
	md *toml.MetaData
	c  *Campaign
	ps Problems
	// bad are the keys whose value could not be decoded: what validation
	// would say about the zero value left there is noise.
	bad map[string]bool
}

var unmarshalerType = reflect.TypeFor[toml.Unmarshaler]()

// table decodes the keys of one TOML table into the struct rv; path is
// the table's key path ("" for the document, "benchmark[0]").
func (d *decoder) table(path string, m map[string]toml.Primitive, rv reflect.Value) {
	fields := tomlFields(rv.Type())
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := join(path, k)
		i, ok := fields[k]
		if !ok {
			d.problem(key, "unknown key%s", didYouMean(k, slices.Sorted(maps.Keys(fields)), false))
			continue
		}
		d.value(key, m[k], rv.Field(i))
	}
}

// join adds key to path, quoted if it must be (keyPart).
func join(path, key string) string {
	if path == "" {
		return keyPart(key)
	}
	return path + "." + keyPart(key)
}

// value decodes one value into the field f: tables and lists of tables
// field by field, the elements of a table each at its own key, everything
// else at once.
func (d *decoder) value(key string, p toml.Primitive, f reflect.Value) {
	t := f.Type()
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		d.leaf(key, p, f)
		return
	}
	// toml decodes any value that is not a table into a Go map as no
	// table at all (its unifyMap returns nil), and so a list of them into
	// a list of empty tables: a launcher = "srun --mpi=pmix" would be
	// dropped without a word. So the shape is checked before decoding.
	var raw any
	if err := d.md.PrimitiveDecode(p, &raw); err == nil {
		if msg := shape(key, raw, t); msg != "" {
			d.bad[key] = true
			d.problem(key, "%s", msg)
			return
		}
	}
	switch {
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		if m, ok := d.subtable(key, p, t); ok {
			if t.Kind() == reflect.Pointer {
				f.Set(reflect.New(t.Elem()))
				f = f.Elem()
			}
			d.table(key, m, f)
		}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct:
		var list []map[string]toml.Primitive
		if err := d.md.PrimitiveDecode(p, &list); err != nil {
			d.mismatch(key, p, t, err)
			return
		}
		f.Set(reflect.MakeSlice(t, len(list), len(list)))
		for i, m := range list {
			d.table(fmt.Sprintf("%s[%d]", key, i), m, f.Index(i))
		}
	case t.Kind() == reflect.Map:
		m, ok := d.subtable(key, p, t)
		if !ok {
			return
		}
		f.Set(reflect.MakeMap(t))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			e := reflect.New(t.Elem()).Elem()
			bad := len(d.bad)
			d.value(join(key, k), m[k], e)
			if len(d.bad) == bad {
				f.SetMapIndex(reflect.ValueOf(k), e)
			}
		}
	default:
		d.leaf(key, p, f)
	}
}

// tableExamples are what a table the user wrote as a string usually
// means: launcher = "srun --mpi=pmix" is launcher = { type = "srun", mpi
// = "pmix" }.
var (
	tableExamples = map[string]string{
		"launcher": `{ type = "srun", mpi = "pmix" }`,
		"slurm":    `{ nodes = 2, ntasks_per_node = 4 }`,
	}
	slurmStruct, launcherStruct, overridesMap = reflect.TypeFor[Slurm](), reflect.TypeFor[Launcher](), reflect.TypeFor[map[string]any]()
)

// subtable decodes a table's keys, for a struct or map of type t.
func (d *decoder) subtable(key string, p toml.Primitive, t reflect.Type) (map[string]toml.Primitive, bool) {
	var m map[string]toml.Primitive
	if err := d.md.PrimitiveDecode(p, &m); err != nil {
		d.mismatch(key, p, t, err)
		return nil, false
	}
	return m, true
}

// shape says why the TOML value v cannot be a value of type t where a
// table, or a list of tables, is wanted; "" when it can, or when t is
// not a table (leaf reports those).
func shape(key string, v any, t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		if _, ok := v.(map[string]any); ok {
			return ""
		}
		msg := fmt.Sprintf("has type %s; want %s", tomlType(v), wanted(t))
		name := key[strings.LastIndexByte(key, '.')+1:]
		if ex, ok := tableExamples[name]; ok && (t == slurmStruct || t == launcherStruct || t == overridesMap) {
			msg += fmt.Sprintf(", e.g. %s = %s", name, ex)
		}
		return msg
	case reflect.Slice:
		if t.Elem().Kind() != reflect.Struct {
			return ""
		}
		var items []any
		switch list := v.(type) {
		case []map[string]any:
			return ""
		case []any:
			items = list
		default:
			return fmt.Sprintf("has type %s; want %s", tomlType(v), wanted(t))
		}
		for i, e := range items {
			if _, ok := e.(map[string]any); !ok {
				return fmt.Sprintf("item %d has type %s; want a table", i+1, tomlType(e))
			}
		}
	}
	return ""
}

func (d *decoder) leaf(key string, p toml.Primitive, f reflect.Value) {
	if err := d.md.PrimitiveDecode(p, f.Addr().Interface()); err != nil {
		d.mismatch(key, p, f.Type(), err)
	}
}

// mismatch reports a value that does not fit its field: what it is and
// what the field wants, down to the item or key that does not fit.
func (d *decoder) mismatch(key string, p toml.Primitive, t reflect.Type, err error) {
	d.bad[key] = true
	var pe toml.ParseError
	if errors.As(err, &pe) {
		// An UnmarshalTOML's own message (Nodes).
		d.problem(key, "%s", pe.Message)
		return
	}
	var raw any
	if d.md.PrimitiveDecode(p, &raw) == nil {
		if msg := misfit(raw, t); msg != "" {
			d.problem(key, "%s", msg)
			return
		}
	}
	// Fits by type, yet failed (an integer out of range): toml's words,
	// without its "toml: line N (last key …):" that the problem says.
	msg := err.Error()
	if i := strings.Index(msg, "): "); strings.HasPrefix(msg, "toml: ") && i >= 0 {
		msg = msg[i+3:]
	}
	d.problem(key, "%s", strings.TrimPrefix(msg, "toml: "))
}

// misfit says why the TOML value v does not fit the Go type t, or "".
func misfit(v any, t reflect.Type) string {
	want := wanted(t)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Interface:
		return ""
	case reflect.String:
		if _, ok := v.(string); ok {
			return ""
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if _, ok := v.(int64); ok {
			return ""
		}
	case reflect.Float64:
		switch v.(type) {
		case int64, float64:
			return ""
		}
	case reflect.Bool:
		if _, ok := v.(bool); ok {
			return ""
		}
	case reflect.Slice:
		list, ok := v.([]any)
		if !ok {
			break
		}
		for i, e := range list {
			if msg := misfit(e, t.Elem()); msg != "" {
				return fmt.Sprintf("item %d %s", i+1, msg)
			}
		}
		return ""
	case reflect.Map, reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			break
		}
		if t.Kind() == reflect.Struct {
			return ""
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if msg := misfit(m[k], t.Elem()); msg != "" {
				return fmt.Sprintf("%s %s", k, msg)
			}
		}
		return ""
	}
	return fmt.Sprintf("has type %s; want %s", tomlType(v), want)
}

// wanted describes the values of a Go type as a campaign writes them.
func wanted(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "tables"
		}
		return "a list of " + plural(wanted(t.Elem()))
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "a table"
		}
		return "a table of " + plural(wanted(t.Elem()))
	case reflect.Struct:
		return "a table"
	}
	return "a value"
}

// plural turns "a string" into "strings", "a list of strings" into
// "lists of strings".
func plural(s string) string {
	if s == "true or false" {
		return "booleans"
	}
	s = strings.TrimPrefix(strings.TrimPrefix(s, "an "), "a ")
	if first, rest, ok := strings.Cut(s, " "); ok {
		return first + "s " + rest
	}
	return s + "s"
}

func (d *decoder) problem(key, format string, args ...any) {
	d.ps = append(d.ps, d.c.problem(key, format, args...))
}

// within reports whether a key inside key could not be decoded.
func (d *decoder) within(key string) bool {
	for k := range d.bad {
		if strings.HasPrefix(k, key+".") || strings.HasPrefix(k, key+"[") {
			return true
		}
	}
	return false
}

// covers reports whether a problem about key is about a value that could
// not be decoded (or inside one).
func (d *decoder) covers(key string) bool {
	for k := range d.bad {
		if key == k || strings.HasPrefix(key, k+".") || strings.HasPrefix(key, k+"[") {
			return true
		}
	}
	return false
}
