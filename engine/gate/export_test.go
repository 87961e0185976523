package gate

// Blocking reports whether the result keeps the change from moving on.
func (r Result) Blocking() bool { return r.Status == StatusFail }
