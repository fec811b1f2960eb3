// Package stats holds the significance tests and the win rate the
// evaluation reports: Welch's t-test, Fisher's exact test on a 2×2 table,
// the exact paired sign test, and a win rate whose interval resamples
// pairs, not verdicts. Each test is checked against SciPy (testdata/).
package stats
