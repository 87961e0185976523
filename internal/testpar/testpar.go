// Package testpar sets how many parallel tests run at once in the test
// binary of a package whose tests mostly wait for the processes they
// start (git, setctl, the go command of gates, agents) rather than
// compute.
package testpar

import (
	"flag"
	"runtime"
	"strconv"
)

// Double raises go test's -test.parallel to twice GOMAXPROCS, unless the
// command line gave it: tests that spend about half their time waiting
// keep every core busy only with two at work per core. A TestMain calls
// it after flag.Parse and before m.Run. On two cores setctl's scripts
// took 74 s two at a time and 48 s four at a time (eight: 51 s), for the
// same CPU time.
func Double() {
	AtOnce(2 * runtime.GOMAXPROCS(0))
}

// AtOnce raises go test's -test.parallel to n, unless the command line
// gave it, for a package whose tests do next to nothing but wait (on fake
// engines and CLIs that answer late or never): their waits overlap
// however many run at once, so n is about how many parallel tests the
// package has, not a multiple of the cores. A TestMain calls it after
// flag.Parse and before m.Run.
func AtOnce(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if given {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
		panic("testpar: " + err.Error()) // no test.parallel flag: testing is not initialised
	}
}
