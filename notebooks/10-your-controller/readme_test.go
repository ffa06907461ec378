package yourcontroller_test

import (
	"testing"

	"github.com/cachelab/cachelab/notebooks/internal/cells"
)

// README.md shows this chapter's cells exactly as they are here.
func TestREADME(t *testing.T) { cells.Check(t, ".", "../..") }
