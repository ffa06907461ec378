package scenario

import (
	"slices"
	"testing"

	"github.com/cachelab/cachelab/informer"
)

// start's stack= takes the words package informer reads, the default
// first: the runner turns each into an informer.Stack.
func TestStacksAreInformers(t *testing.T) {
	want := []string{string(informer.Default), string(informer.Classic)}
	if !slices.Equal(stacks, want) {
		t.Errorf("stacks = %q, want %q (informer's Default, then Classic)", stacks, want)
	}
	for _, s := range stacks {
		if _, err := informer.ParseStack(s); err != nil {
			t.Errorf("stack=%s: informer.ParseStack refuses it: %v", s, err)
		}
	}
}
