package watchcache_test

import (
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/cells"
)

// README.md shows this chapter's cells exactly as they are here, and
// quotes the watch-cache scenarios exactly as they are in sim/scenarios.
func TestREADME(t *testing.T) { cells.Check(t, ".", "../..") }
