package store

import (
	"slices"
	"strings"
)

// A selection KEY=VALUE — a compare selector, --label, a history's
// --config, the site's and the report's filters — names a label, or
// whatever the user varied under that name: a sweep's value is a run
// parameter (param.buf = [16384, 262144] runs with buf=16384) or, for a
// Slurm key or an environment variable, only the variant's name
// ("ntasks_per_node=2", "native,env.UCX_TLS=rc"). Setting is that rule in
// Go; Filter.where is the same rule in SQL, and a test holds them to each
// other.

// sweepPrefixes are the prefixes a sweep writes its keys with, which a
// selection may leave out: param.buf=16384 and buf=16384 select alike.
var sweepPrefixes = []string{"param.", "label.", "env.", "launcher."}

// Setting returns the value key has for r, as a KEY=VALUE selection reads
// it: r's label key if it has one; else its parameter key ("param.NAME"
// names the parameter NAME too); else the value the variant's name gives
// key or a prefixed form of it, a variant of a sweep being named by its
// settings, "k=v" joined by commas. ok is false when none names key.
func (r *Run) Setting(key string) (value string, ok bool) {
	if v, ok := r.Labels[key]; ok {
		return v, true
	}
	if key == "system" && r.System != "" {
		return r.System, true
	}
	for _, k := range paramKeys(key) {
		if v, ok := r.Params[k]; ok {
			return v, true
		}
	}
	return variantSetting(r.Variant, key)
}

// paramKeys are the parameter names key may mean: itself, and NAME for
// "param.NAME".
func paramKeys(key string) []string {
	if name, ok := strings.CutPrefix(key, "param."); ok && name != "" {
		return []string{key, name}
	}
	return []string{key}
}

// variantKeys are the names a variant's name may give key under: key,
// key with each sweep prefix, and key less its prefix.
func variantKeys(key string) []string {
	out := []string{key}
	bare := key
	for _, p := range sweepPrefixes {
		if name, ok := strings.CutPrefix(key, p); ok && name != "" {
			bare = name
			out = append(out, name)
		}
	}
	for _, p := range sweepPrefixes {
		if p+bare != key {
			out = append(out, p+bare)
		}
	}
	return out
}

// variantSetting finds key in a variant named "k=v,k=v" (a sweep's point,
// perhaps after the name of a [[variant]]).
func variantSetting(variant, key string) (string, bool) {
	if !strings.Contains(variant, "=") {
		return "", false
	}
	names := variantKeys(key)
	for _, part := range strings.Split(variant, ",") {
		if k, v, ok := strings.Cut(part, "="); ok && slices.Contains(names, k) {
			return v, true
		}
	}
	return "", false
}

// SettingKeys returns the names a variant's name gives settings under,
// less their sweep prefixes: "ntasks_per_node" of "ntasks_per_node=2",
// "buf" of "native,param.buf=16384". For messages that list what a
// selection could have named.
func SettingKeys(variant string) map[string]string {
	out := map[string]string{}
	if !strings.Contains(variant, "=") {
		return out
	}
	for _, part := range strings.Split(variant, ",") {
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			continue
		}
		for _, p := range sweepPrefixes {
			if name, ok := strings.CutPrefix(k, p); ok && name != "" {
				k = name
				break
			}
		}
		if _, seen := out[k]; !seen {
			out[k] = v
		}
	}
	return out
}
