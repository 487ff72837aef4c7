// Package testkit is what bgcmd's tests share: the fixture scripts of
// testdata/, a small git repository built on demand, and the cleanup that
// stops every job of a temporary home and waits for its detached
// supervisors before the home is removed. It is for tests only.
package testkit
