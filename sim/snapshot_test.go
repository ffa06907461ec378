package sim

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// snapshot.equal stands in for cmp.Equal on the settle path, where a
// large indexer made reflection the biggest cost (issue 28). It must see
// a difference in every field: one made in each field in turn, by
// reflection, so that a field added later is covered too.
func TestSnapshotEqualSeesEveryField(t *testing.T) {
	base := func() snapshot {
		return snapshot{Indexer: map[string]string{"ns/a": "ns/a@2"}, StoreRV: "2", LastSyncRV: "2",
			Synced: map[string]bool{"informer": true}, Calls: map[string]int{"h": 1}, Enqueued: 1, HeldInitial: map[string]bool{"h": true}}
	}
	if a, b := base(), base(); !a.equal(b) || !cmp.Equal(a, b) {
		t.Fatal("two equal snapshots are not equal")
	}
	typ := reflect.TypeOf(snapshot{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		a, b := base(), base()
		v := reflect.ValueOf(&b).Elem().Field(i)
		switch v.Kind() {
		case reflect.Map:
			v.SetMapIndex(reflect.New(f.Type.Key()).Elem(), reflect.New(f.Type.Elem()).Elem())
		case reflect.String:
			v.SetString(v.String() + "x")
		case reflect.Int:
			v.SetInt(v.Int() + 1)
		default:
			t.Fatalf("field %s: a %s; teach this test to change it", f.Name, v.Kind())
		}
		if cmp.Equal(a, b) {
			t.Fatalf("field %s: the change made no difference to cmp either", f.Name)
		}
		if a.equal(b) {
			t.Errorf("field %s differs and snapshot.equal does not see it", f.Name)
		}
	}
}
