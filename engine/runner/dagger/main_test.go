package dagger

import (
	"flag"
	"os"
	"testing"

	"github.com/set-engine/set/internal/testpar"
)

// TestMain runs twice GOMAXPROCS parallel tests at once (testpar.Double):
// the tests mostly wait, on fake engines and CLIs that answer late or
// never.
func TestMain(m *testing.M) {
	flag.Parse()
	testpar.Double()
	os.Exit(m.Run())
}
