// Package model holds the types of chapter 2's lab, shared by your code,
// the reference solution and the checks.
package model

// Op is one queue operation: "add", "update" or "delete" of an object
// (Key at resourceVersion RV), or "pop", which pops one item.
type Op struct {
	Kind string
	Key  string
	RV   string
}

// Delta is one entry of a popped item: "Added", "Updated" or "Deleted",
// and the object's key and resourceVersion.
type Delta struct {
	Type string
	Key  string
	RV   string
}
