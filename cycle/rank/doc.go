// Package rank orders a task's episodes by pairwise judgments: the ring
// schedule that decides who is compared with whom, the Bradley–Terry fit
// (MM algorithm with the paper's prior) over the verdicts, and the selection
// of the best episodes for training and validation. Everything here is a
// pure function of its inputs; reading a matches file is the only I/O.
package rank
