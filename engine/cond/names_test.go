package cond

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestEveryNameHasADoc: the help lists every field the compiler accepts,
// each with a doc and a user type, and docs names nothing that is gone.
func TestEveryNameHasADoc(t *testing.T) {
	seen := map[string]bool{}
	for _, env := range Environments() {
		if len(env.Names) == 0 {
			t.Errorf("%s: no names", env.Field)
		}
		for _, n := range env.Names {
			seen[n.Name] = true
			if n.Doc == "" {
				t.Errorf("%s: %s has no entry in docs", env.Field, n.Name)
			}
			if n.Type == "" {
				t.Errorf("%s: %s has a Go type the help cannot name", env.Field, n.Name)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		if !seen[name] {
			t.Errorf("docs describes %s, which no environment has", name)
		}
	}
}

// TestExamplesCompile: every example the help shows compiles in its
// environment, and the gate examples show both plan-time and run-time
// conditions.
func TestExamplesCompile(t *testing.T) {
	envs := Environments()
	compilers := map[string]func(string) (*Condition, error){
		envs[0].Field: CompileGate,
		envs[1].Field: CompileSentinel,
	}
	for _, env := range envs {
		if n := len(env.Examples); n < 3 || n > 5 {
			t.Errorf("%s: %d examples, want 3 to 5", env.Field, n)
		}
		for _, ex := range env.Examples {
			if ex.Means == "" {
				t.Errorf("%s: example %q says nothing", env.Field, ex.Source)
			}
			if _, err := compilers[env.Field](ex.Source); err != nil {
				t.Errorf("%s: example does not compile: %v", env.Field, err)
			}
		}
	}
	var planTime, runTime int
	for _, ex := range envs[0].Examples {
		c, _ := CompileGate(ex.Source)
		if c.RunTime() {
			runTime++
			if !strings.Contains(ex.Means, "run time") {
				t.Errorf("run-time example %q does not say it is decided at run time", ex.Source)
			}
		} else {
			planTime++
		}
	}
	if planTime == 0 || runTime == 0 {
		t.Errorf("gate examples: %d plan-time, %d run-time; want both", planTime, runTime)
	}
}

func TestEnvironmentNames(t *testing.T) {
	gate := Environments()[0]
	var got []string
	for _, n := range gate.Names {
		s := n.Name + " " + n.Type
		if n.RunTime {
			s += " (run time)"
		}
		got = append(got, s)
	}
	want := []string{
		"change.name string",
		"change.type string",
		"change.size string",
		"change.domain string",
		"change.requirements list of strings",
		"change.dependsOn list of strings",
		"change.scope list of strings",
		"userFolder bool",
		"files list of strings (run time)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("gate names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSentinelEnvironmentNames(t *testing.T) {
	sentinel := Environments()[1]
	if sentinel.Field != "sentinel: rules: NAME: when" {
		t.Fatalf("second environment is %q", sentinel.Field)
	}
	var got []string
	for _, n := range sentinel.Names {
		got = append(got, n.Name+" "+n.Type)
	}
	want := []string{
		"status string",
		"activity string",
		"command string",
		"activitySeconds number",
		"secondsSinceOutput number",
		"iterationSeconds number",
		"iterations number",
		"tokensUsed number",
		"tokenBudget number",
		"retries.verify number",
		"retries.integration number",
		"retries.conflicts number",
		"restarts number",
		"lastExit.code number",
		"lastExit.signal string",
		"lastExit.apiError bool",
	}
	if !slices.Equal(got, want) {
		t.Errorf("sentinel names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
