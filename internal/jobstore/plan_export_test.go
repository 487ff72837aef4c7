package jobstore

import (
	"database/sql"
	"strings"
)

// QueryPlan is SQLite's plan of q (EXPLAIN QUERY PLAN), one detail a line:
// what the plan tests and the benchmarks' baselines check.
func QueryPlan(db *sql.DB, q string, args ...any) (string, error) {
	rows, err := db.Query(`EXPLAIN QUERY PLAN `+q, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "\n"), rows.Err()
}
