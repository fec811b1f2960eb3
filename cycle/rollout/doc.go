// Package rollout is the "rollout" job kind of MASS's evaluation: M
// bare-prompt episodes per held-out task (split: test) for each of several
// models, paired by index and seed, so that episode i of every model on a
// task ran with the same seed. Every episode is a durable slot with
// numbered attempts (cycle/generation's slot book): a run cut off at any
// moment resumes, a finished episode is never rerun. Kind wires it from
// massd's services.Services (services.go).
package rollout
