package main

import (
	"strings"

	"github.com/cachelab/cachelab/sim/trace"
)

// layersFlag is --only: a comma-separated list of the trace's layers,
// checked as it is parsed, so that an unknown layer is a usage error that
// lists the valid ones.
type layersFlag struct{ layers []string }

func (l *layersFlag) String() string { return strings.Join(l.layers, ",") }
func (l *layersFlag) Type() string   { return "layer,..." }

func (l *layersFlag) Set(s string) error {
	layers, err := trace.ParseLayers(s)
	if err != nil {
		return err
	}
	l.layers = append(l.layers, layers...)
	return nil
}

// objectFlag is --object: one namespace/name.
type objectFlag struct{ key string }

func (o *objectFlag) String() string { return o.key }
func (o *objectFlag) Type() string   { return "namespace/name" }

func (o *objectFlag) Set(s string) error {
	key, err := trace.ParseObject(s)
	o.key = key
	return err
}

// filter is what --only and --object ask to see.
func (o *runOptions) filter() trace.Filter {
	return trace.Filter{Layers: o.only.layers, Object: o.object.key}
}
