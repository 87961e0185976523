package dagger

import (
	"flag"
	"os"
	"testing"

	"github.com/set-engine/set/internal/testpar"
)

// TestMain runs all the parallel tests at once (testpar.AtOnce): they
// compute next to nothing and wait, on fake engines and CLIs that answer
// late or never, up to 3 s each; four at a time, they waited in turn (6 s
// of the package's 10).
func TestMain(m *testing.M) {
	flag.Parse()
	testpar.AtOnce(16)
	os.Exit(m.Run())
}
