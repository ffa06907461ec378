package listandwatch_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

func TestMain(m *testing.M) {
	difftest.Quiet() // the cells' reflectors report watch errors; keep them off stderr
	goleak.VerifyTestMain(m)
}
