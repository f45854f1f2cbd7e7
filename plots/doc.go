// Package plots draws commcal's figures with gonum.org/v1/plot: one function per
// figure, each taking plain data and returning a Figure that renders to PNG and SVG. Axes carry
// their units; text that comes from input files (node and cluster names) is escaped by the SVG
// backend and stripped of control characters.
//
// No figure panics on its data. Every axis is chosen from the values drawn on it (axes.go):
// values a log axis cannot show (zero, negative) and values no axis can (NaN, ±Inf, beyond
// 1e±300) are left out and listed in Figure.Warnings, and a figure with nothing left to draw
// shows a note instead. A panic of the plotting library while a figure is built or drawn is
// recovered at the package boundary and returned by PNG, SVG and Write as an error naming the
// figure.
package plots
