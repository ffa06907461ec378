// Package solution is the reference solution of chapter 5's lab.
package solution

import "github.com/cachelab/cachelab/notebooks/05-informer/exercise/model"

// Process is the exercise's delta processing, done.
func Process(cache map[string]string, d model.Delta, isInInitialList bool) []model.Call {
	if d.Type == "Deleted" {
		delete(cache, d.Key)
		return []model.Call{{Method: "OnDelete", Key: d.Key, New: d.RV}}
	}
	old, cached := cache[d.Key]
	cache[d.Key] = d.RV
	if cached {
		return []model.Call{{Method: "OnUpdate", Key: d.Key, Old: old, New: d.RV}}
	}
	return []model.Call{{Method: "OnAdd", Key: d.Key, New: d.RV, InitialList: isInInitialList}}
}
