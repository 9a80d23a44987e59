package campaign

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// One mechanism sets a Slurm or launcher key from a TOML value, whether the
// value comes from a [benchmark.slurm] override, a [variant.slurm] table or
// a [sweep]: the struct's toml tags are the key names, so a key added to
// Slurm is at once overridable and sweepable.

// tomlFields maps the toml names of a struct's fields to their indices.
func tomlFields(t reflect.Type) map[string]int {
	m := map[string]int{}
	for i, name := range tomlNames(t) {
		if name != "" {
			m[name] = i
		}
	}
	return m
}

// tomlNames are a struct's toml names by field index ("" for a field
// that has none).
func tomlNames(t reflect.Type) []string {
	names := make([]string, t.NumField())
	for i := range names {
		if tag := t.Field(i).Tag.Get("toml"); tag != "-" {
			names[i] = tag
		}
	}
	return names
}

var (
	slurmFields    = tomlFields(reflect.TypeOf(Slurm{}))
	launcherFields = tomlFields(reflect.TypeOf(Launcher{}))
)

// setKey sets the field named key of the struct *dst (a *Slurm or
// *Launcher) to the TOML value v.
func setKey(dst any, fields map[string]int, key string, v any) error {
	i, ok := fields[key]
	if !ok {
		return fmt.Errorf("unknown key%s", didYouMean(key, slices.Sorted(maps.Keys(fields)), true))
	}
	f := reflect.ValueOf(dst).Elem().Field(i)
	switch f.Interface().(type) {
	case Nodes:
		n, err := parseNodes(v)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(n))
		return nil
	}
	switch f.Kind() {
	case reflect.String:
		s, err := scalarString(v)
		if err != nil {
			return err
		}
		f.SetString(s)
	case reflect.Int:
		n, ok := v.(int64)
		if !ok || n < 0 || n > 1<<30 {
			return fmt.Errorf("%v is not a non-negative integer", v)
		}
		f.SetInt(n)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("%v is not true or false", v)
		}
		f.SetBool(b)
	case reflect.Slice:
		list, err := stringList(v)
		if err != nil {
			return err
		}
		f.Set(reflect.ValueOf(list))
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("must be a table of strings")
		}
		out := make(map[string]string, len(m))
		for k, e := range m {
			s, err := scalarString(e)
			if err != nil {
				return fmt.Errorf("%s: %v", k, err)
			}
			out[k] = s
		}
		f.Set(reflect.ValueOf(out))
	default:
		return fmt.Errorf("cannot be set")
	}
	return nil
}

// scalarString formats a string, number or boolean the way it is passed on.
func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if strings.ContainsRune(x, 0) {
			return "", fmt.Errorf("holds a NUL byte")
		}
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("has type %s; want a string, number or boolean", tomlType(v))
}

// stringList reads a list of strings; a single string is a list of one.
func stringList(v any) ([]string, error) {
	if s, ok := v.(string); ok {
		return []string{s}, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be a list of strings")
	}
	out := make([]string, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok || strings.ContainsRune(s, 0) {
			return nil, fmt.Errorf("item %d is not a string", i+1)
		}
		out[i] = s
	}
	return out, nil
}

// paramString formats a parameter: a scalar, or a list of scalars joined
// by commas (sizes = [1, 2, 4]).
func paramString(v any) (string, error) {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			s, err := scalarString(e)
			if err != nil {
				return "", fmt.Errorf("item %d %v", i+1, err)
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	return scalarString(v)
}

// tomlType names a decoded value's type as TOML does.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any, []map[string]any:
		return "list"
	case map[string]any:
		return "table"
	case nil:
		return "nothing"
	}
	return "datetime"
}

// valueText is how a swept value is written in a variant's name.
func valueText(v any) string {
	if list, ok := v.([]any); ok {
		return strings.Join(mapped(list, valueText), "+")
	}
	s, err := scalarString(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

// mapped is f of each of xs.
func mapped[T any](xs []T, f func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// mergeMaps copies src into dst, made if nil.
func mergeMaps(dst, src map[string]string) map[string]string {
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, src)
	return dst
}
