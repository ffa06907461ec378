package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// EnvDetector is the environment variable that switches client-go's data
// consistency detector on (and cachelab's: package consistencydetector),
// read once as the process starts. It is the one variable a scenario's
// "# Env:" line may set.
const EnvDetector = "KUBE_WATCHLIST_INCONSISTENCY_DETECTOR"

// parseEnv reads a scenario's "# Env: NAME=value" line from its opening
// comment (about, one line each, without the "#"): the environment the
// informers' process starts with, for both implementations. The only
// name it knows is EnvDetector, whose value is strconv.ParseBool's, as
// client-go reads it; a file says true or false outright, since a value
// client-go would take as false is more likely a typo than a wish. A
// mistake is an error at its line (its index in about, 0-based).
func parseEnv(about []string) (detector bool, line int, err error) {
	first := -1
	for n, l := range about {
		v, ok := strings.CutPrefix(l, "Env:")
		if !ok {
			continue
		}
		if first >= 0 {
			return false, n, fmt.Errorf("a second # Env: line (the first is line %d): the process has one environment, so say it once", first+1)
		}
		first = n
		name, value, ok := strings.Cut(strings.TrimSpace(v), "=")
		switch {
		case !ok:
			return false, n, fmt.Errorf("# Env: sets an environment variable of the informers' process, as %s=true; not %q", EnvDetector, strings.TrimSpace(v))
		case name != EnvDetector:
			return false, n, fmt.Errorf("# Env: sets %s (client-go's data consistency detector) and nothing else; not %q", EnvDetector, name)
		}
		if detector, err = strconv.ParseBool(value); err != nil {
			return false, n, fmt.Errorf("# Env: %s=%q: want true or false (client-go reads it with strconv.ParseBool, and takes what it cannot parse as false)", EnvDetector, value)
		}
	}
	return detector, 0, nil
}
