package exercise_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

func TestMain(m *testing.M) {
	// client-go reports watch errors through utilruntime, whose default
	// handlers would sleep inside a synctest bubble (REFERENCE.md).
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
