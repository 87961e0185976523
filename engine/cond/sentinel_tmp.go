package cond

// TEMPORARY (lead): replaced by helper's version on merge.

type SentinelEnv struct {
	Status             string  `expr:"status"`
	Activity           string  `expr:"activity"`
	Command            string  `expr:"command"`
	ActivitySeconds    float64 `expr:"activitySeconds"`
	SecondsSinceOutput float64 `expr:"secondsSinceOutput"`
	IterationSeconds   float64 `expr:"iterationSeconds"`
	Iterations         int     `expr:"iterations"`
	TokensUsed         int64   `expr:"tokensUsed"`
	TokenBudget        int64   `expr:"tokenBudget"`
	Retries            Retries `expr:"retries"`
	Restarts           int     `expr:"restarts"`
	LastExit           Exit    `expr:"lastExit"`
}

type Retries struct {
	Verify      int `expr:"verify"`
	Integration int `expr:"integration"`
}

type Exit struct {
	Code     int    `expr:"code"`
	Signal   string `expr:"signal"`
	APIError bool   `expr:"apiError"`
}

func CompileSentinel(source string) (*Condition, error) { return compile[SentinelEnv](source) }
