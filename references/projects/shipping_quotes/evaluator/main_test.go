package evaluator_tests

import (
	"fmt"
	"os"
	"testing"
)

// TestMain prints the run's end marker once every test has run: the scorer
// empties a report without it (the test binary exited early or crashed). The
// marker comes from the environment, never from a file the package can read.
func TestMain(m *testing.M) {
	end := os.Getenv("COGOLF_EVALUATOR_END")
	os.Unsetenv("COGOLF_EVALUATOR_END")
	code := m.Run()
	fmt.Printf("\ncogolf-evaluator-end %s %d\n", end, code)
	os.Exit(code)
}
