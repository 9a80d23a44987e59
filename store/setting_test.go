package store

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/sbench/sbench/results"
)

// sweepArchive holds the runs of sweeps, as sbench-runner records them:
//
//	variant                      params           labels
//	param.buf=16384              buf=16384        -
//	param.buf=262144             buf=262144       -
//	ntasks_per_node=1            -                -
//	native,ntasks_per_node=2     -                impl=native
//	env.UCX_TLS=rc               -                -
//	tagged                       buf=16384        buf=small
//	label.mode=fast              -                mode=fast
func sweepArchive(t *testing.T) (*DB, map[string]int64) {
	t.Helper()
	db := openTemp(t)
	ids := map[string]int64{}
	for i, c := range []struct {
		variant        string
		params, labels map[string]string
	}{
		{"param.buf=16384", map[string]string{"buf": "16384"}, nil},
		{"param.buf=262144", map[string]string{"buf": "262144"}, nil},
		{"ntasks_per_node=1", nil, nil},
		{"native,ntasks_per_node=2", nil, map[string]string{"impl": "native"}},
		{"env.UCX_TLS=rc", nil, nil},
		{"tagged", map[string]string{"buf": "16384"}, map[string]string{"buf": "small"}},
		{"label.mode=fast", nil, map[string]string{"mode": "fast"}},
	} {
		b := osuBundle("sweep", c.variant, strconv.Itoa(100+i), 2)
		b.Params, b.Labels = c.params, c.labels
		res := ingest(t, db, "f.json", b)
		ids[c.variant] = res.Added[0]
	}
	return db, ids
}

// TestFilterSelectsSweptValues: KEY=VALUE selects a label, else a
// parameter (with or without "param."), else what the variant's name
// says, with or without the sweep's prefix; a label of the name wins,
// but not over "param.NAME".
func TestFilterSelectsSweptValues(t *testing.T) {
	db, ids := sweepArchive(t)
	ctx := context.Background()
	for _, c := range []struct {
		labels map[string]string
		want   []string
	}{
		{map[string]string{"buf": "16384"}, []string{"param.buf=16384"}},
		// param.NAME names the parameter: a label buf does not hide it.
		{map[string]string{"param.buf": "16384"}, []string{"param.buf=16384", "tagged"}},
		{map[string]string{"buf": "262144"}, []string{"param.buf=262144"}},
		{map[string]string{"buf": "small"}, []string{"tagged"}},
		{map[string]string{"buf": "1638"}, nil},
		{map[string]string{"ntasks_per_node": "2"}, []string{"native,ntasks_per_node=2"}},
		{map[string]string{"ntasks_per_node": "2", "impl": "native"}, []string{"native,ntasks_per_node=2"}},
		{map[string]string{"ntasks_per_node": "1"}, []string{"ntasks_per_node=1"}},
		{map[string]string{"UCX_TLS": "rc"}, []string{"env.UCX_TLS=rc"}},
		{map[string]string{"env.UCX_TLS": "rc"}, []string{"env.UCX_TLS=rc"}},
		{map[string]string{"mode": "fast"}, []string{"label.mode=fast"}},
		{map[string]string{"fabric": "ib"}, nil},
	} {
		runs, err := db.Runs(ctx, Filter{Labels: c.labels})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range runs {
			got = append(got, r.Variant)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("Labels %v select %q, want %q", c.labels, got, c.want)
		}
		n, err := db.CountRuns(ctx, Filter{Labels: c.labels})
		if err != nil || n != len(c.want) {
			t.Errorf("Labels %v: CountRuns %d (%v), want %d", c.labels, n, err, len(c.want))
		}
	}
	if len(ids) != 7 {
		t.Fatalf("ids %v", ids)
	}
}

// TestSettingIsTheFilter: for every run and every KEY=VALUE any run
// has, Run.Setting (Go) and the filter (SQL) agree.
func TestSettingIsTheFilter(t *testing.T) {
	db, _ := sweepArchive(t)
	ctx := context.Background()
	all, err := db.Runs(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	asked := map[[2]string]bool{}
	for _, r := range all {
		for k, v := range r.Labels {
			asked[[2]string{k, v}] = true
		}
		for k, v := range r.Params {
			asked[[2]string{k, v}] = true
			asked[[2]string{"param." + k, v}] = true
		}
		for k, v := range SettingKeys(r.Variant) {
			asked[[2]string{k, v}] = true
			asked[[2]string{"env." + k, v}] = true
		}
	}
	for _, kv := range slices.SortedFunc(maps.Keys(asked), func(a, b [2]string) int { return slices.Compare(a[:], b[:]) }) {
		sel, err := db.Runs(ctx, Filter{Labels: map[string]string{kv[0]: kv[1]}})
		if err != nil {
			t.Fatal(err)
		}
		in := map[int64]bool{}
		for _, r := range sel {
			in[r.ID] = true
		}
		for _, r := range all {
			v, ok := r.Setting(kv[0])
			if match := ok && v == kv[1]; match != in[r.ID] {
				t.Errorf("%s=%s: run %d (variant %s): Setting says %v, the filter %v", kv[0], kv[1], r.ID, r.Variant, match, in[r.ID])
			}
		}
	}
}

func TestSettingKeys(t *testing.T) {
	got := SettingKeys("native,param.buf=16384,ntasks_per_node=2,env.X=a=b")
	want := map[string]string{"buf": "16384", "ntasks_per_node": "2", "X": "a=b"}
	if !maps.Equal(got, want) {
		t.Errorf("SettingKeys = %v, want %v", got, want)
	}
	if r := (&Run{Variant: "plain"}); len(SettingKeys(r.Variant)) != 0 {
		t.Errorf("a variant named by no setting has settings")
	}
	r := &Run{Variant: "nodes=2,ntasks_per_node=1", Labels: map[string]string{"nodes": "two"}, Params: map[string]string{"ntasks_per_node": "3"},
		Status: results.StatusOK}
	for _, c := range []struct{ key, want string }{{"nodes", "two"}, {"ntasks_per_node", "3"}, {"param.ntasks_per_node", "3"}} {
		if v, ok := r.Setting(c.key); !ok || v != c.want {
			t.Errorf("Setting(%s) = %q %v, want %q: a label, then a parameter, then the variant", c.key, v, ok, c.want)
		}
	}
}
