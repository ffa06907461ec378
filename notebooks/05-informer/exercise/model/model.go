// Package model holds the types of chapter 5's lab, shared by your code,
// the reference solution and the checks.
package model

// Delta is one popped delta: its Type ("Added", "Updated", "Deleted"),
// and the object's key and resourceVersion.
type Delta struct {
	Type string
	Key  string
	RV   string
}

// Call is one handler call: Method is "OnAdd", "OnUpdate" or "OnDelete".
// Old is the old object's RV (OnUpdate only), New the new object's (or the
// deleted one's, for OnDelete); InitialList is OnAdd's isInInitialList.
type Call struct {
	Method      string
	Key         string
	Old, New    string
	InitialList bool
}
