// Package badinput holds one test: the table of bad input across every
// public entry point of zerostat, with the exact error each returns.
package badinput
