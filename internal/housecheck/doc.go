// Package housecheck holds the repository's house-rule checks that run as
// ordinary tests: every package has a doc comment, and no non-test function
// is longer than MaxFuncLines. It has no code of its own to import.
package housecheck
