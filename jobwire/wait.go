package jobwire

// WaitKind is the built-in job kind that ticks for a while.
const WaitKind = "wait"

// WaitParams are the "wait" kind's parameters.
type WaitParams struct {
	Seconds    float64 `json:"seconds"`     // total duration; default 10
	IntervalMS int     `json:"interval_ms"` // time between ticks; default 1000
}
