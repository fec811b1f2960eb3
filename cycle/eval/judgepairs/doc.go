// Package judgepairs is the "judge-pairs" job kind of MASS's evaluation:
// every pair of a rollout (episode i of a model against episode i of the
// baseline on the same task and seed) is judged by massd's external judges,
// each with each of its seeds, and by the rollout's own models as
// self-judges. Every verdict is a file on disk in cycle/judge's result
// format; the results are win rates (wins / (wins + losses), ties
// excluded) per task and overall with intervals that resample pairs, and
// each self-judge's agreement with the external majority on the same pairs.
// Kind wires it from massd's services.Services (services.go).
package judgepairs
