package informer_test

import (
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/cachelab/cachelab/internal/difftest"
)

func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}

func podsGR() schema.GroupResource { return schema.GroupResource{Resource: "pods"} }
