// Package report builds the evaluation report of one or more generations
// from the files on disk — a rollout, its verdict files, the episodes'
// audits and the generations' summaries and training metrics — and renders
// it as one self-contained HTML page (inline SVG, no script, no network)
// or as JSON that carries every number on the page.
package report
