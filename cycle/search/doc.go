// Package search is MASS's inner loop for one task: a bare-task reference
// episode, the workflow v0, then for k = 1..K the optimizer proposes v(k),
// v(k) is executed and judged against the reference and against the
// champion, and a candidate that wins against the champion replaces it
// (elite of size 1). Everything is kept under one search directory with
// the reference implementation's file names (docs/formats.md, "Workflow
// search"), and a run resumes from those files: a finished episode,
// verdict or design is never redone, an episode cut off by a crash is
// closed and retried as the next attempt of its slot.
//
// The package depends on three interfaces — run an episode, call a model,
// and (through the episode result) an exported workspace — so that massd's
// composition wires it in one small file.
package search
