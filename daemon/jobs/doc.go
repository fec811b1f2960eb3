// Package jobs runs massd's durable jobs: queued → running → succeeded,
// failed, cancelled or interrupted, with bounded concurrency and a per-job
// event stream that survives daemon crashes. The kinds it runs implement
// the jobkind contract.
package jobs
