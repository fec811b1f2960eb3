// Package generation is MASS's outer loop: one generation g trains model g
// from model g−1. Its stages — eligible tasks, collect, rank, select,
// render, train, export, serve — each write their result to a file in the
// generation's directory, so a run cut off at any moment (kill -9
// included) resumes at the first unfinished stage. Inside collect and rank
// every episode and every judgment is a slot with numbered attempts: a
// finished slot is never redone; an interrupted attempt is closed and the
// slot retried as attempt n+1.
//
// The package reaches episodes, the judge, the dataset builder, the
// trainer, the exporter and the model registry only through the small
// interfaces in iface.go. Kind and CycleKind implement them on massd's
// services.Services (services.go, servicestrain.go); the cycle calls the
// search (search.Search) and the generation (Run) as functions, inside its
// own job.
package generation
