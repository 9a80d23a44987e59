package store

import (
	"reflect"
	"testing"

	"github.com/sbench/sbench/results"
)

// TestCloneHostIsDeep: every slice and map of a host is copied, those
// added since cloneHost was written too (Traffic), so that a run loadRuns
// returns shares nothing with another run of the same nodes.
func TestCloneHostIsDeep(t *testing.T) {
	h := results.Host{
		Ranks: []int{0}, CPUFlags: []string{"avx2"}, Modules: []string{"gcc"},
		IB: []results.IBPort{{Device: "mlx5_0"}}, Net: []results.NetIf{{Name: "eth0"}},
		Extra: map[string]string{"k": "v"}, Traffic: []string{"eth0"},
	}
	c := cloneHost(&h)
	hv, cv := reflect.ValueOf(h), reflect.ValueOf(c)
	for i := range hv.NumField() {
		f := hv.Type().Field(i)
		switch f.Type.Kind() {
		case reflect.Slice, reflect.Map:
			if hv.Field(i).Len() == 0 {
				t.Errorf("%s: the test's host has none; give it one", f.Name)
				continue
			}
			if hv.Field(i).UnsafePointer() == cv.Field(i).UnsafePointer() {
				t.Errorf("%s is shared between the host and its clone", f.Name)
			}
		}
	}
	if !reflect.DeepEqual(h, c) {
		t.Errorf("clone %+v differs from %+v", c, h)
	}
}
