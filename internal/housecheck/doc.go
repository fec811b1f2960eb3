// Package housecheck holds the repository's house-rule checks that run as
// ordinary tests: every package has a doc comment, no non-test function is
// longer than MaxFuncLines, no domain package imports the daemon or SQLite
// (go list), every job kind is built from the one services.Services with no
// per-kind glue in package daemon, and "/workspace" and the path-under-root
// test are spelled once. It has no code of its own to import.
package housecheck
