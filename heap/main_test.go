package heap_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
