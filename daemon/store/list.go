package store

// match is one equality condition of a list query; an empty value matches
// every row. Column names are constants of this package, never user input.
type match struct{ col, v string }

// DefaultListLimit bounds a list query whose filter sets no limit.
const DefaultListLimit = 1000

// listQuery appends the non-empty conditions and the newest-first order
// with a limit to a SELECT, returning the query and its arguments.
func listQuery(sel string, ms []match, limit int) (string, []any) {
	q := sel + " WHERE 1=1"
	var args []any
	for _, m := range ms {
		if m.v != "" {
			q += " AND " + m.col + " = ?"
			args = append(args, m.v)
		}
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	return q + " ORDER BY created DESC, id DESC LIMIT ?", append(args, limit)
}
