package kubeapiserver

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/cachelab/cachelab/apistorage"
)

// apistorage's Quiescent finds the relay of each watch served over HTTP
// by its function's name in a goroutine dump: the name it looks for must
// be the relay's.
func TestQuiescentKnowsTheRelay(t *testing.T) {
	if got := runtime.FuncForPC(funcPC((*counted).run)).Name(); got != apistorage.WireRelayCode {
		t.Errorf("the relay is %s; apistorage.WireRelayCode says %s", got, apistorage.WireRelayCode)
	}
}

func funcPC(f func(*counted)) uintptr { return reflect.ValueOf(f).Pointer() }
