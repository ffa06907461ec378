package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// The whole CLI runs in-process with its own streams, as the tests run it.
// Here it runs a built-in scenario with --output json, and a reader of its
// JSON lines prints each step's verdict.
func ExampleMain_Run() {
	var out bytes.Buffer
	m := NewMain()
	m.Stdout, m.Stderr = &out, io.Discard
	code := m.Run(context.Background(), []string{"run", "add-update-delete", "--output", "json"})

	dec := json.NewDecoder(&out)
	for {
		var rec struct {
			Record string
			Step   int
			Cmd    string
			Agree  bool
		}
		if err := dec.Decode(&rec); err != nil {
			break
		}
		if rec.Record == "step" {
			fmt.Printf("step %d  %-38s agree=%t\n", rec.Step, rec.Cmd, rec.Agree)
		}
	}
	fmt.Println("exit code", code)
	// Output:
	// step 1  add-handler h1                         agree=true
	// step 2  create ns0/a ns0/b labels=(app=web)    agree=true
	// step 3  start                                  agree=true
	// step 4  update ns0/a labels=(app=api)          agree=true
	// step 5  delete ns0/b                           agree=true
	// step 6  show store                             agree=true
	// exit code 0
}
