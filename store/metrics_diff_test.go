package store_test

import (
	"testing"

	. "github.com/cachelab/cachelab/internal/difftest"
)

// client-go: thread_safe_store.go Update, DeleteWithObject, Replace,
// Bookmark, Transaction, parseRVForMetricsWithTruncation; store.go
// WithStoreMetrics (S6)
//
// The gauge hears the resourceVersion whenever the store remembers one
// that parses as a number: "" is 0, a non-number is not published (the
// gauge keeps its value while the store remembers the new one), and only
// the last 15 digits count.
func TestStoreResourceVersionMetric(t *testing.T) {
	run(t, StoreConfig{DeletionHandling: true, Metered: true}, []StoreOp{
		op("add", ax1), op("add", norv), op("update", ay3),
		op("delete", bx4), op("delete", Tomb{Key: "a/y"}),
		{Kind: "bookmark", RV: "abc"}, op("rv", nil),
		{Kind: "bookmark", RV: "1234567890123456789"},
		{Kind: "replace", List: []any{c5}, RV: ""},
		{Kind: "replace", List: []any{c5}, RV: "50"},
		{Kind: "transaction", Txns: []Txn{TAdd(ax1), TDelete(ay3)}},
		{Kind: "transaction", Txns: []Txn{TAdd(Bad(1)), TAdd(ax2)}},
		op("get", ax1), op("list", nil),
	},
		"add a/x@1 → ok",
		"add a/x@1 → metric store-resource-version 1",
		"add a/z@ → ok",
		"add a/z@ → metric store-resource-version 0",
		"update a/y@3 → ok",
		"update a/y@3 → metric store-resource-version 3",
		"delete b/x@4 → ok",
		"delete b/x@4 → metric store-resource-version 4",
		"delete Tombstone(a/y: nil) → ok",
		`bookmark rv="abc" → ok`,
		`rv → "abc"`,
		`bookmark rv="1234567890123456789" → ok`,
		`bookmark rv="1234567890123456789" → metric store-resource-version 567890123456789`,
		`replace [c@5] rv="" → ok`,
		`replace [c@5] rv="" → metric store-resource-version 0`,
		`replace [c@5] rv="50" → ok`,
		`replace [c@5] rv="50" → metric store-resource-version 50`,
		"transaction [Add a/x@1, Delete a/y@3] → ok",
		"transaction [Add a/x@1, Delete a/y@3] → metric store-resource-version 3",
		"transaction [Add difftest.BadObject{ID:1}, Add a/x@2] → error: error: failed to execute (1/2) transactions failed due to: [couldn't create key for object {ID:1}: object has no meta: object does not implement the Object interfaces]",
		"transaction [Add difftest.BadObject{ID:1}, Add a/x@2] → metric store-resource-version 2",
		"get a/x@1 → a/x@2",
		"list → [a/x@2 c@5]",
	)
}
