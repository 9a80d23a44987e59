package results

import "testing"

// A rate per unit of time is higher-is-better whatever it counts
// (LAMMPS's timesteps/s and tau/day, GROMACS's ns/day); a count has no
// direction.
func TestRateDirection(t *testing.T) {
	for unit, want := range map[string]Better{
		"timesteps/s": BetterHigher, "tau/day": BetterHigher, "ns/day": BetterHigher, "katom-step/s": BetterHigher, "events/h": BetterHigher,
		"atoms": BetterUnknown, "%": BetterUnknown, "MB/GB": BetterUnknown, "/s": BetterUnknown, "s": BetterLower, "MB/s": BetterHigher,
	} {
		if got := BetterFor(unit); got != want {
			t.Errorf("%q: %v, want %v", unit, got, want)
		}
	}
}

func TestGroupUnmarshalTOML(t *testing.T) {
	var g Group
	if err := g.UnmarshalTOML(int64(2)); err != nil || g != "2" {
		t.Errorf("2: %q %v", g, err)
	}
	if err := g.UnmarshalTOML("steps"); err != nil || g != "steps" {
		t.Errorf("steps: %q %v", g, err)
	}
	for _, bad := range []any{int64(-1), 1.5, true} {
		if err := g.UnmarshalTOML(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
