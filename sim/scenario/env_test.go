package scenario

import "testing"

// An "# Env:" line switches the data consistency detector for the run,
// as the variable does for a process (V1); without one it is off.
func TestEnvLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"", false},
		{"# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true\n", true},
		{"# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=1\n", true},
		{"# Env:KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=false\n", false},
	} {
		sc, err := Parse("x.txt", []byte("# s\n"+tc.line+"\nstart\n----\n"))
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if sc.Detector != tc.want {
			t.Errorf("%q: Detector=%t, want %t", tc.line, sc.Detector, tc.want)
		}
	}
}

// A placement of a scenario with the detector on is written with its
// "# Env:" line, so that explore's runs of it have the detector on too.
func TestPlacementKeepsTheEnv(t *testing.T) {
	sc, err := Parse("x.txt", []byte("# s.\n# Env: KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true\n\nstart\n----\n"))
	if err != nil {
		t.Fatal(err)
	}
	text := Placement{Faults: []PlacedFault{{Kind: "compact", At: 2}}}.Text(sc, ServerWatchCache, "", 0, nil)
	placed, err := Parse("x.explored.txt", []byte(text))
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	if !placed.Detector {
		t.Errorf("the placed scenario lost its # Env: line:\n%s", text)
	}
}
