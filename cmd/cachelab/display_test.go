package main

import "testing"

// The decisions a terminal drives, with the stand-ins tests use for one.
func TestDisplayDecisions(t *testing.T) {
	for _, tc := range []struct {
		name         string
		terminal     bool
		env          string
		progress     string
		full         bool
		wantWidth    int
		wantErr      bool
		wantProgress bool
		wantSummary  int
	}{
		{name: "a pipe", progress: "auto", wantSummary: summaryLimit},
		{name: "a buffer that says it is a terminal has no size", terminal: true, progress: "auto", wantProgress: true, wantSummary: summaryLimit},
		{name: "width from the environment", env: "60", progress: "auto", wantWidth: 60, wantSummary: summaryLimit},
		{name: "0: no wrapping", env: "0", progress: "auto", wantSummary: summaryLimit},
		{name: "not a number", env: "wide", progress: "auto", wantErr: true, wantSummary: summaryLimit},
		{name: "progress forced", progress: "always", wantProgress: true, wantSummary: summaryLimit},
		{name: "progress off on a terminal", terminal: true, progress: "never", wantSummary: summaryLimit},
		{name: "--full", progress: "auto", full: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI("", tc.terminal, map[string]string{envTermWidth: tc.env})
			o := &runOptions{full: tc.full, progress: choice{value: tc.progress}}
			st, err := c.textStyle(o)
			if (err != nil) != tc.wantErr {
				t.Fatalf("textStyle: error %v, want error %t", err, tc.wantErr)
			}
			if st.Width != tc.wantWidth || st.Summarize != tc.wantSummary {
				t.Errorf("width %d, summarize %d; want %d, %d", st.Width, st.Summarize, tc.wantWidth, tc.wantSummary)
			}
			if got := c.showProgress(o); got != tc.wantProgress {
				t.Errorf("showProgress() = %t, want %t", got, tc.wantProgress)
			}
		})
	}
}
