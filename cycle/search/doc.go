// Package search is MASS's inner loop for one task: a bare-task reference
// episode, the workflow v0, then for k = 1..K the optimizer proposes v(k),
// v(k) is executed and judged as the search's judging rule needs
// (rule.go: the released code's baseline-anchored rule by default, the
// paper's Algorithm 2, or the reference's adjacent rule), one decision
// function shared with `massctl search replay`. Everything is kept under
// one search directory with the reference implementation's file names
// (docs/formats.md, "Workflow search"), and a run resumes from those
// files: a recorded verdict or stored design is never redone, an episode
// cut off by a crash is closed and retried as the next attempt of its
// slot, and a folder the reference wrote is continued from its records.
// The optimizer's prompt is the reference's (refprompt.go, with its
// toggles in options.go), designs are accepted as the reference accepts
// them (free text after the marker), and a task's query template wraps
// every design as the reference's rendered queries do (query.go).
//
// The package depends on three interfaces — run an episode, call a model,
// and (through the episode result) an exported workspace. Kind wires them
// from massd's services.Services (services.go); NewKind takes them as an
// Env, and the cycle runs its searches through ServicesEnv.
package search
